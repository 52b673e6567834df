#!/bin/sh
# Replays synthetic traces of issue 30 item 9's scale through sharq-sim: a
# 16,000-GPU cluster (2,000 nodes x 8) with 200 shares, fair share, fair
# preemption and backfill (contrib/bench/simgen writes the configuration
# and the traces, seeded), with 100,000 and 500,000 jobs by default, under
# /usr/bin/time -v: wall time, CPU time (user + system) and peak memory of
# each run, then the run's first report lines. Targets: 100,000 jobs in at
# most 60 s, 500,000 in at most 5 minutes, on 2 cores.
#
#   contrib/bench/sim-scale.sh [JOBS...]      (default: 100000 500000)
#   SEED=2 SIM=path/to/sharq-sim contrib/bench/sim-scale.sh 20000
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
seed=${SEED:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ $# -gt 0 ] || set -- 100000 500000

cd "$root"
go build -o "$tmp/simgen" ./contrib/bench/simgen
sim=${SIM:-}
if [ -z "$sim" ]; then
	go build -o "$tmp/sharq-sim" ./cmd/sharq-sim
	sim=$tmp/sharq-sim
fi
"$tmp/simgen" -jobs 1 -config-out "$tmp/scale.toml" -o /dev/null

for n in "$@"; do
	"$tmp/simgen" -jobs "$n" -seed "$seed" -o "$tmp/trace-$n.csv.gz"
	echo "== sharq-sim, $n jobs (seed $seed), 16,000 GPUs, 200 shares"
	/usr/bin/time -v "$sim" --config "$tmp/scale.toml" --trace "$tmp/trace-$n.csv.gz" --report \
		>"$tmp/report.txt" 2>"$tmp/time.txt" || { cat "$tmp/time.txt"; exit 1; }
	head -3 "$tmp/report.txt"
	awk -F': ' '
		/User time/ {u=$2} /System time/ {s=$2}
		/Elapsed \(wall clock\)/ {w=$2} /Maximum resident set size/ {m=$2}
		END {printf "wall %s  cpu %.1fs (user %s, sys %s)  max RSS %.0f MiB\n", w, u+s, u, s, m/1024}' "$tmp/time.txt"
done
