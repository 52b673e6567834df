#!/usr/bin/env bash
# sharq side by side with Slurm, in one run on this machine (issue 17):
# runs ../shared/bench/slurm-baseline.sh (Debian's Slurm, one node, 8 fake
# GPUs), stops Slurm, then repeats its shapes against a local sharq (make
# up's cluster: private containerd, 8 fake GPUs, jobs as real containers)
# and prints each figure and its ratio:
#   seq    N_SEQ sequential `qsub -h` processes            (sharq/slurm, higher is better)
#   par    P parallel loops of N_PAR `qsub -h` each         (sharq/slurm, higher is better)
#   floor  par with contrib/bench/floorclient for qsub: a Go client that
#          only sends a prepared request, the most any Go qsub could do
#   drain  N_DRAIN one-GPU no-op jobs until the queue is empty (sharq/slurm, lower is better)
# A shape with a count of 0 is skipped.
# The drain is bound by CPU (a container start costs far more than a
# submission) on a shared machine, so its wall time follows the machine's
# load; the script also prints the load average and the CPU time per drained
# job, which the load changes much less, from cgroup CPU accounting (v1
# cpuacct or v2 cpu.stat): the cluster's processes (make up's daemons,
# containerd, its shims, runc), the jobs' containers, and the user's shell
# loops (qsub, qstat).
# Run as root from the repository root:
#   contrib/bench/vs-slurm.sh [N_SEQ=300] [P=16] [N_PAR=50] [N_DRAIN=200]
# SLURM_BASELINE names the Slurm script (default ../shared/bench/slurm-baseline.sh);
# SKIP_SLURM=1 only measures sharq; SHARQ_BIN=DIR takes binaries make build made.
# The sharq cluster is private to the run: its sockets, spool, containerd and
# fake GPUs live in a mktemp directory, its TCP ports are free ones the run
# picks, its containerd namespace (and so its containers' cgroups and runc
# state) is named after the run. Slurm's baseline is one per machine, and two
# runs at once would measure each other's load, so a run takes
# /run/lock/sharq-vs-slurm.lock and refuses to start while another holds it
# (VS_SLURM_WAIT=1 waits for it instead). Everything is removed on exit,
# Ctrl-C or SIGTERM.
set -euo pipefail
NS=${1:-300}; P=${2:-16}; NP=${3:-50}; ND=${4:-200}
repo=$(cd "$(dirname "$0")/../.." && pwd)
baseline=${SLURM_BASELINE:-$repo/../shared/bench/slurm-baseline.sh}
[ -f "$baseline" ] || baseline=/work/shared/bench/slurm-baseline.sh

lockfile=/run/lock/sharq-vs-slurm.lock
mkdir -p "$(dirname "$lockfile")"
exec 9<>"$lockfile"
if [ "${VS_SLURM_WAIT:-}" = 1 ]; then
  flock 9
elif ! flock -n 9; then
  echo "vs-slurm.sh: another run (pid $(head -c 20 "$lockfile")) holds $lockfile;" \
    "two runs at once would measure each other (and share Slurm's one baseline)." \
    "Wait for it, or set VS_SLURM_WAIT=1 to start when it ends." >&2
  exit 3
fi
echo $$ >"$lockfile"
# What may leave a daemon running after the run (Slurm's baseline starts
# munged when none runs; make up's cluster) is started with the lock's
# descriptor closed (9>&-): a daemon holding it would refuse every later run.

tmp=$(mktemp -d /tmp/sharq-vs-slurm-XXXX)
chmod 755 "$tmp"
ns=sharqbench$$

# CPU accounting: cgroups of their own for the cluster and the user's loops;
# the jobs' containers are in the runtime's namespace cgroup (/$ns).
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cgroot=/sys/fs/cgroup
  cpu_ns() { [ -f "$1/cpu.stat" ] && echo $(($(sed -n 's/^usage_usec //p' "$1/cpu.stat") * 1000)) || echo 0; }
else
  cgroot=/sys/fs/cgroup/cpuacct
  cpu_ns() { cat "$1/cpuacct.usage" 2>/dev/null || echo 0; }
fi
cg_cluster=$cgroot/sharq-bench-cluster-$$ cg_user=$cgroot/sharq-bench-user-$$ cg_jobs=$cgroot/$ns
mkdir -p "$cg_cluster" "$cg_user" 2>/dev/null || cg_cluster= cg_user=
# in_cgroup CGROUP CMD...: runs CMD in CGROUP (a subshell that execs it).
in_cgroup() { ( if [ -n "$cg_cluster" ]; then echo "$BASHPID" >"$1/cgroup.procs"; fi; exec "${@:2}" ); }

# cleanup stops the cluster (sharq-up removes its containers, mounts and
# sockets) and removes the run's directory and cgroups. --one-file-system:
# should anything still be mounted below the directory, rm does not go into it.
cleanup() {
  trap '' INT TERM HUP
  if [ -f "$tmp/up.pid" ]; then
    kill -INT "$(cat "$tmp/up.pid")" 2>/dev/null && wait "$(cat "$tmp/up.pid")" 2>/dev/null || true
  fi
  if grep -q " $tmp/" /proc/self/mountinfo; then
    echo "vs-slurm.sh: mounts left under $tmp; not removing it" >&2
  else
    rm -rf --one-file-system "$tmp"
  fi
  for g in $cg_cluster $cg_user $cg_jobs; do [ -n "$g" ] && rmdir "$g" 2>/dev/null || true; done
  : >"$lockfile"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP
now() { date +%s.%N; }

# 1. Slurm's figures, then Slurm stopped so that it does not compete.
declare -A slurm
if [ "${SKIP_SLURM:-}" != 1 ]; then
  while read -r who shape value _; do
    [ "$who" = slurm ] && slurm[$shape]=$value && echo "slurm $shape $value"
  done < <(bash "$baseline" "$NS" "$P" "$NP" "$ND" 9>&-)
  bash "$baseline" --stop 9>&- || true
fi

# 2. A local sharq: make up's cluster with one share holding all 8 GPUs.
cd "$repo"
if [ -n "${SHARQ_BIN:-}" ]; then   # binaries already built with make build
  cp -r "$SHARQ_BIN" "$tmp/bin"
else
  make -s build BIN="$tmp/bin" 2>/dev/null   # static client commands, no urfave docs
fi
# The parallel shape's floor: floorclient sends a request line that
# submitload writes (see "floor" below).
floor=1
CGO_ENABLED=0 "${GO:-go}" build -trimpath -o "$tmp/bin/" ./contrib/bench/floorclient ./contrib/bench/submitload ||
  { floor=; echo "vs-slurm.sh: cannot build contrib/bench/floorclient; no floor figure" >&2; }
# free_port: a TCP port of 20000-31999 nothing listens on, and not one
# this run already took (the daemons fail at start should one be taken
# between this check and their bind, and the run stops with their log).
taken=" "
free_port() {
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 12000))
    case $taken in *" $p "*) continue ;; esac
    if [ -z "$(ss -Htln "sport = :$p")" ]; then echo "$p"; return; fi
  done
  echo "vs-slurm.sh: no free TCP port found" >&2; return 1
}
port_listen=$(free_port); taken="$taken$port_listen "
port_metrics=$(free_port); taken="$taken$port_metrics "
port_client=$(free_port); taken="$taken$port_client "
port_session=$(free_port); taken="$taken$port_session "
# make up's configuration with the run's directories, ports and namespace.
sed -e '/^\[\[share\]\]/,$d' \
  -e "s|/run/sharq-local/|$tmp/run/|g; s|/var/lib/sharq-local/|$tmp/state/|g" \
  -e "s|^listen = \"127.0.0.1:[0-9]*\"$|listen = \"127.0.0.1:$port_listen\"|" \
  -e "s|^metrics = \"127.0.0.1:[0-9]*\"$|metrics = \"127.0.0.1:$port_metrics\"|" \
  -e "s|^client_listen = \"127.0.0.1:[0-9]*\"$|client_listen = \"127.0.0.1:$port_client\"\nsession_listen = \"127.0.0.1:$port_session\"|" \
  -e "s|^namespace = \"sharq\"$|namespace = \"$ns\"|" \
  contrib/examples/local.toml >"$tmp/cluster.toml"
for want in "listen = \"127.0.0.1:$port_listen\"" "metrics = \"127.0.0.1:$port_metrics\"" \
  "session_listen = \"127.0.0.1:$port_session\"" "namespace = \"$ns\""; do
  grep -qxF "$want" "$tmp/cluster.toml" || { echo "vs-slurm.sh: contrib/examples/local.toml changed: cannot set $want" >&2; exit 1; }
done
if grep -v '^#' "$tmp/cluster.toml" | grep -q 'sharq-local'; then
  echo "vs-slurm.sh: contrib/examples/local.toml has a path outside /run/sharq-local/ and /var/lib/sharq-local/" >&2; exit 1
fi
cat >>"$tmp/cluster.toml" <<'TOML'
[[share]]
name = "bench"
partition = "gpu"
gpus = 8
strategy = "LEND_AND_BORROW"
users = ["*"]
TOML
sed -i 's/^name = "local"$/name = "local"\ndefault_share = "bench"/' "$tmp/cluster.toml"
# The node as Slurm's baseline declares it: 16 CPUs (whatever this machine
# has), so that eight one-CPU GPU jobs run at once there as in Slurm; with
# the node's own count (2 here) the core would run two at a time.
sed -i '/^\[\[node\]\]/,/^\[\[share\]\]/ s/^gpus = 8$/gpus = 8\ncpus = 16/' "$tmp/cluster.toml"
(
  if [ -n "$cg_cluster" ]; then echo "$BASHPID" >"$cg_cluster/cgroup.procs"; fi
  exec "$tmp/bin/sharq-up" --repo . --bin "$tmp/bin" --config "$tmp/cluster.toml" --user sharqdemo \
    --run-dir "$tmp/run" --state-dir "$tmp/state"
) >"$tmp/up.log" 2>&1 9>&- &
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
as_user() { in_cgroup "$cg_user" setpriv --reuid=sharqdemo --regid=sharqdemo --init-groups env HOME="$work" SHARQ_SOCKET="$sock" PATH="$tmp/bin:$PATH" bash -c "cd $work && $1"; }

ratio() { if [ -n "${2:-}" ]; then echo "scale=2; $1/$2" | bc; else echo "-"; fi; }
# The controller's spool writes (sum of seconds, count) from its /metrics:
# what each acknowledged submission waits for on the disk.
metrics=$(sed -n 's/^metrics = "\(.*\)"$/\1/p' "$tmp/cluster.toml")
spool_writes() { curl -s "http://$metrics/metrics" 2>/dev/null | awk '/^sharq_spool_write_seconds_sum/ {s=$2} /^sharq_spool_write_seconds_count/ {n=$2} END {print s+0, n+0}'; }
if [ "$NS" -gt 0 ]; then
  read -r w0 n0 < <(spool_writes)
  t0=$(now); as_user "for i in \$(seq $NS); do qsub -h noop.sh; done >ids.seq"; t1=$(now)
  read -r w1 n1 < <(spool_writes)
  seq_rate=$(echo "$NS/($t1-$t0)" | bc)
  as_user 'xargs -a ids.seq -n 500 qdel'
  echo "sharq seq $seq_rate submissions/s  ratio $(ratio "$seq_rate" "${slurm[seq]:-}") (target >= 1.5)"
  if [ -n "$metrics" ] && [ "$n1" -gt "$n0" ]; then
    echo "sharq seq spool writes: $((n1-n0)), mean $(echo "scale=3; ($w1-$w0)*1000/($n1-$n0)" | bc) ms  load average $(cut -d' ' -f1-3 /proc/loadavg)"
  fi
fi
if [ "$P" -gt 0 ] && [ "$NP" -gt 0 ]; then
  # par_loops CMD TAG: P loops of NP runs of CMD as the user, each loop's
  # job ids in ids.TAG.N; prints the submissions per second.
  par_loops() {
    local t0 t1
    t0=$(now); as_user "loop() { for i in \$(seq $NP); do $1; done; }; for p in \$(seq $P); do loop >ids.$2.\$p & done; wait"; t1=$(now)
    echo "$P*$NP/($t1-$t0)" | bc
  }
  c0=$(cpu_ns "$cg_cluster") u0=$(cpu_ns "$cg_user")
  par_rate=$(par_loops "qsub -h noop.sh" par)
  c1=$(cpu_ns "$cg_cluster") u1=$(cpu_ns "$cg_user")
  as_user 'cat ids.par.* | xargs -n 500 qdel'
  echo "sharq par $par_rate submissions/s  ratio $(ratio "$par_rate" "${slurm[par]:-}") (target >= 2)"
  if [ -n "$cg_cluster" ]; then
    us() { echo "scale=0; ($2-$1)/1000/($P*$NP)" | bc; }
    echo "sharq par CPU per submission: cluster $(us "$c0" "$c1") us, shell loops with qsub $(us "$u0" "$u1") us"
  fi
  # The floor: the same loops with floorclient, which only sends a held
  # submission prepared beforehand (no flags, no configuration, no JSON),
  # instead of qsub: about the most any Go qsub could reach on this machine.
  if [ -n "$floor" ]; then
    as_user "submitload -request-out floor.req -share bench -script noop.sh"
    floor_rate=$(par_loops "floorclient floor.req" floor)
    as_user 'cat ids.floor.* | xargs -n 500 qdel'
    echo "sharq floor $floor_rate submissions/s  ratio $(ratio "$floor_rate" "${slurm[par]:-}") (par with floorclient, a Go client that only sends a prepared request)"
  fi
fi
if [ "$ND" -gt 0 ]; then
  c0=$(cpu_ns "$cg_cluster") j0=$(cpu_ns "$cg_jobs") u0=$(cpu_ns "$cg_user")
  t0=$(now)
  as_user "for i in \$(seq $ND); do qsub -l ngpus=1 noop.sh; done >ids.drain; while [ -n \"\$(qstat)\" ]; do sleep 0.1; done"
  t1=$(now)
  c1=$(cpu_ns "$cg_cluster") j1=$(cpu_ns "$cg_jobs") u1=$(cpu_ns "$cg_user")
  drain=$(echo "$t1-$t0" | bc)
  echo "sharq drain $drain s  ratio $(ratio "$drain" "${slurm[drain]:-}") (target <= 0.25)  load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ -n "$cg_cluster" ]; then
    ms() { echo "scale=1; ($2-$1)/1000000/$ND" | bc; }
    echo "sharq drain CPU per job: cluster $(ms "$c0" "$c1") ms, job containers $(ms "$j0" "$j1") ms, qsub/qstat loops $(ms "$u0" "$u1") ms"
  fi
fi
