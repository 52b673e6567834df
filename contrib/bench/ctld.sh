#!/usr/bin/env bash
# Controller benchmarks (issue 3): submissions per second over the socket
# from concurrent clients (every job synced to the spool before its answer),
# the wall time of one qsub process, and qstat over 100,000 jobs.
# Run as root from the repository root; clients run as uid 1000 (setpriv).
#   contrib/bench/ctld.sh [TOTAL_JOBS]
set -euo pipefail
total=${1:-100000}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/sharq-bench-XXXX)
chmod 755 "$tmp"
trap 'kill $(cat "$tmp/pid" 2>/dev/null) 2>/dev/null || true; cat "$tmp/ctld.log" >&2; rm -rf "$tmp"' EXIT
cd "$repo"
go build -o "$tmp/bin/" ./cmd/sharqctld ./cmd/qsub ./cmd/qstat ./contrib/bench/submitload
cat >"$tmp/cluster.toml" <<TOML
[cluster]
name = "bench"
spool_dir = "$tmp/spool"
socket = "$tmp/s.sock"
listen = "127.0.0.1:$((20000 + RANDOM % 20000))"
controller = "127.0.0.1:1"
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
echo $! >"$tmp/pid"
for _ in $(seq 100); do [ -S "$tmp/s.sock" ] && break; sleep 0.1; done
[ -S "$tmp/s.sock" ] || { echo "sharqctld did not start" >&2; exit 1; }
mkdir -p "$tmp/work" && chown 1000:1000 "$tmp/work" && cd "$tmp/work"
as_user() { setpriv --reuid=1000 --regid=1000 --clear-groups env SHARQ_SOCKET="$tmp/s.sock" "$@"; }

echo "== submissions over the socket (each acknowledged after a synced spool write)"
as_user "$tmp/bin/submitload" -share a -n 5000 -c 1
as_user "$tmp/bin/submitload" -share a -n 20000 -c 16
as_user "$tmp/bin/submitload" -share a -n 20000 -c 64
as_user "$tmp/bin/submitload" -share a -n 5000 -c 64 -reconnect

echo "== one qsub process, 50 runs"
for i in $(seq 50); do
  s=$(date +%s%N); as_user "$tmp/bin/qsub" -q a -- true >/dev/null; e=$(date +%s%N)
  echo $(( (e - s) / 1000 ))
done | sort -n | awk '{a[NR]=$1} END {printf "qsub wall time: median %.2f ms, min %.2f ms, max %.2f ms\n", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000}'

have=$(as_user "$tmp/bin/qstat" | tail -n +3 | wc -l)
if [ "$have" -lt "$total" ]; then
  as_user "$tmp/bin/submitload" -share a -n $((total - have)) -c 64 >/dev/null
fi
echo "== qstat over $(as_user "$tmp/bin/qstat" | tail -n +3 | wc -l) jobs, 5 runs each"
for args in "" "-a"; do
  for i in 1 2 3 4 5; do
    s=$(date +%s%N); as_user "$tmp/bin/qstat" $args >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  done | sort -n | awk -v a="qstat $args" '{v[NR]=$1} END {printf "%s: median %d ms (min %d, max %d)\n", a, v[3], v[1], v[5]}'
done
echo "== controller memory: $(grep VmHWM /proc/$(cat "$tmp/pid")/status)"
