#!/usr/bin/env bash
# Remote-client benchmarks (issue 11): qsub from another host (TCP client
# port, a MUNGE credential per request) against qsub on the controller
# host's Unix socket, as the median wall time of one process; and
# submissions per second from 16 parallel remote clients, every job synced
# to the spool (group commit) before its answer. The "other host" is a
# second munged with the same key and its own socket, as on a login node;
# traffic goes over loopback. Run as root from the repository root;
# clients run as uid 1000 (setpriv).
#   contrib/bench/remote.sh [RUNS] [JOBS]
set -euo pipefail
runs=${1:-50}
jobs=${2:-20000}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/sharq-rbench-XXXX)
chmod 755 "$tmp"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; [ -s "$tmp/ctld.log" ] && cat "$tmp/ctld.log" >&2; rm -rf "$tmp"' EXIT
cd "$repo"
go build -o "$tmp/bin/" ./cmd/sharqctld ./contrib/bench/submitload
CGO_ENABLED=0 go build -o "$tmp/bin/" ./cmd/qsub   # static, as make build makes it
mkdir -m 700 "$tmp/key"
head -c 128 /dev/urandom >"$tmp/key/munge.key"
chmod 600 "$tmp/key/munge.key"
for h in ctl login; do
  mkdir -p -m 755 "$tmp/munge-$h/run"
  mkdir -p -m 700 "$tmp/munge-$h/lib"
  munged --foreground --force --num-threads=8 --socket="$tmp/munge-$h/run/sock" --key-file="$tmp/key/munge.key" \
    --pid-file="$tmp/munge-$h/lib/pid" --seed-file="$tmp/munge-$h/lib/seed" --log-file="$tmp/munge-$h/lib/log" &
  pids+=($!)
done
port=$((20000 + RANDOM % 20000))
cat >"$tmp/cluster.toml" <<TOML
[cluster]
name = "bench"
spool_dir = "$tmp/spool"
socket = "$tmp/s.sock"
listen = "127.0.0.1:$((port + 1))"
controller = "127.0.0.1:$((port + 1))"
client_listen = "127.0.0.1:$port"
munge_socket = "$tmp/munge-ctl/run/sock"
secret_file = "$tmp/secret"
# one user queues 100,000 jobs here: past the default 64MiB
max_job_bytes_per_user = "1GiB"
[[partition]]
name = "gpu"
nodes = "g[0001-1000]"
default_image = "img"
[[node]]
names = "g[0001-1000]"
gpus = 8
[[share]]
name = "a"
gpus = 8000
users = ["*"]
TOML
(umask 077; echo bench-secret >"$tmp/secret")
"$tmp/bin/sharqctld" --config "$tmp/cluster.toml" --log-level warn 2>"$tmp/ctld.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && [ -S "$tmp/munge-login/run/sock" ] && break; sleep 0.1; done
[ -S "$tmp/s.sock" ] || { echo "sharqctld did not start" >&2; exit 1; }
mkdir -p "$tmp/work" && chown 1000:1000 "$tmp/work" && cd "$tmp/work"
as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups env -i PATH=/usr/bin:/bin HOME="$tmp/work" "$@"; }
local_env=(SHARQ_SOCKET="$tmp/s.sock")
remote_env=(SHARQ_SERVER="127.0.0.1:$port" SHARQ_MUNGE_SOCKET="$tmp/munge-login/run/sock" SHARQ_CONF="$tmp/none.toml")

median() { sort -n | awk -v a="$1" '{v[NR]=$1} END {printf "%s: median %.2f ms, min %.2f ms, max %.2f ms (%d runs)\n", a, v[int((NR+1)/2)]/1000, v[1]/1000, v[NR]/1000, NR}'; }
one() {
  for i in $(seq "$runs"); do
    s=$(date +%s%N); as_user env "$@" "$tmp/bin/qsub" -q a -- true >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000 ))
  done
}
echo "== one qsub process"
one "${local_env[@]}" | median "qsub, controller host (unix socket)"
one "${remote_env[@]}" | median "qsub, other host (TCP + MUNGE)   "

echo "== submissions from parallel clients (each acknowledged after a synced spool write)"
as_user "$tmp/bin/submitload" -socket "$tmp/s.sock" -share a -n "$jobs" -c 16 -reconnect
as_user "$tmp/bin/submitload" -server "127.0.0.1:$port" -munge "$tmp/munge-login/run/sock" -share a -n "$jobs" -c 16 -reconnect
as_user "$tmp/bin/submitload" -server "127.0.0.1:$port" -munge "$tmp/munge-login/run/sock" -share a -n "$jobs" -c 16
as_user "$tmp/bin/submitload" -server "127.0.0.1:$port" -munge "$tmp/munge-login/run/sock" -share a -n "$jobs" -c 16 -reconnect -precred
