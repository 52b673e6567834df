#!/usr/bin/env bash
# sharq side by side with Slurm, in one run on this machine (issue 17):
# runs ../shared/bench/slurm-baseline.sh (Debian's Slurm, one node, 8 fake
# GPUs), stops Slurm, then repeats its shapes against a local sharq (make
# up's cluster: private containerd, 8 fake GPUs, jobs as real containers)
# and prints each figure and its ratio:
#   seq    N_SEQ sequential `qsub -h` processes            (sharq/slurm, higher is better)
#   par    P parallel loops of N_PAR `qsub -h` each         (sharq/slurm, higher is better)
#   drain  N_DRAIN one-GPU no-op jobs until the queue is empty (sharq/slurm, lower is better)
# Run as root from the repository root:
#   contrib/bench/vs-slurm.sh [N_SEQ=300] [P=16] [N_PAR=50] [N_DRAIN=200]
# SLURM_BASELINE names the Slurm script (default ../shared/bench/slurm-baseline.sh);
# SKIP_SLURM=1 only measures sharq; SHARQ_BIN=DIR takes binaries make build made.
set -euo pipefail
NS=${1:-300}; P=${2:-16}; NP=${3:-50}; ND=${4:-200}
repo=$(cd "$(dirname "$0")/../.." && pwd)
baseline=${SLURM_BASELINE:-$repo/../shared/bench/slurm-baseline.sh}
[ -f "$baseline" ] || baseline=/work/shared/bench/slurm-baseline.sh
tmp=$(mktemp -d /tmp/sharq-vs-slurm-XXXX)
chmod 755 "$tmp"
cleanup() {
  [ -f "$tmp/up.pid" ] && kill -INT "$(cat "$tmp/up.pid")" 2>/dev/null && wait "$(cat "$tmp/up.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }

# 1. Slurm's figures, then Slurm stopped so that it does not compete.
declare -A slurm
if [ "${SKIP_SLURM:-}" != 1 ]; then
  while read -r who shape value _; do
    [ "$who" = slurm ] && slurm[$shape]=$value && echo "slurm $shape $value"
  done < <(bash "$baseline" "$NS" "$P" "$NP" "$ND")
  bash "$baseline" --stop || true
fi

# 2. A local sharq: make up's cluster with one share holding all 8 GPUs.
cd "$repo"
if [ -n "${SHARQ_BIN:-}" ]; then   # binaries already built with make build
  cp -r "$SHARQ_BIN" "$tmp/bin"
else
  make -s build BIN="$tmp/bin" 2>/dev/null   # static client commands, no urfave docs
fi
sed -e '/^\[\[share\]\]/,$d' contrib/examples/local.toml >"$tmp/cluster.toml"
cat >>"$tmp/cluster.toml" <<'TOML'
[[share]]
name = "bench"
partition = "gpu"
gpus = 8
strategy = "LEND_AND_BORROW"
users = ["*"]
TOML
sed -i 's/^name = "local"$/name = "local"\ndefault_share = "bench"/' "$tmp/cluster.toml"
"$tmp/bin/sharq-up" --repo . --bin "$tmp/bin" --config "$tmp/cluster.toml" --user sharqdemo >"$tmp/up.log" 2>&1 &
echo $! >"$tmp/up.pid"
sock=$(sed -n 's/^socket = "\(.*\)"$/\1/p' "$tmp/cluster.toml")
export SHARQ_SOCKET=$sock
for _ in $(seq 600); do
  "$tmp/bin/sharqctl" show nodes 2>/dev/null | grep -q '^node1 .* up ' && break
  kill -0 "$(cat "$tmp/up.pid")" 2>/dev/null || { cat "$tmp/up.log" >&2; exit 1; }
  sleep 0.2
done
"$tmp/bin/sharqctl" show nodes | grep -q '^node1 .* up ' || { cat "$tmp/up.log" >&2; echo "node1 never came up" >&2; exit 1; }
work=$tmp/work
mkdir -p "$work" && chown sharqdemo: "$work"
printf '#!/bin/sh\ntrue\n' >"$work/noop.sh"
# Everything a user does runs in one shell as the demo user, as Slurm's
# loops run in one shell as root.
as_user() { setpriv --reuid=sharqdemo --regid=sharqdemo --init-groups env HOME="$work" SHARQ_SOCKET="$sock" PATH="$tmp/bin:$PATH" bash -c "cd $work && $1"; }

t0=$(now); as_user "for i in \$(seq $NS); do qsub -h noop.sh; done >ids.seq"; t1=$(now)
seq_rate=$(echo "$NS/($t1-$t0)" | bc)
as_user 'xargs -a ids.seq -n 500 qdel'
t0=$(now); as_user "loop() { for i in \$(seq $NP); do qsub -h noop.sh; done; }; for p in \$(seq $P); do loop >ids.par.\$p & done; wait"; t1=$(now)
par_rate=$(echo "$P*$NP/($t1-$t0)" | bc)
as_user 'cat ids.par.* | xargs -n 500 qdel'
t0=$(now)
as_user "for i in \$(seq $ND); do qsub -l ngpus=1 noop.sh; done >ids.drain; while [ -n \"\$(qstat)\" ]; do sleep 0.1; done"
t1=$(now)
drain=$(echo "$t1-$t0" | bc)

ratio() { if [ -n "${2:-}" ]; then echo "scale=2; $1/$2" | bc; else echo "-"; fi; }
echo "sharq seq $seq_rate submissions/s  ratio $(ratio "$seq_rate" "${slurm[seq]:-}") (target >= 1.5)"
echo "sharq par $par_rate submissions/s  ratio $(ratio "$par_rate" "${slurm[par]:-}") (target >= 2)"
echo "sharq drain $drain s  ratio $(ratio "$drain" "${slurm[drain]:-}") (target <= 0.25)"
