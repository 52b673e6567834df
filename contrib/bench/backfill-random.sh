#!/bin/sh
# Issue 30 item 5: EASY backfill when part of the jobs name no walltime.
# For seeds 1 to 7 at offered loads 0.8 to 1.6 (0.8 + (seed-1) x 0.8/6),
# contrib/bench/randtrace writes a random trace on 128 GPUs (16 nodes of
# 8), three shares, 40% of the jobs without a walltime on a 48 h
# default_walltime; sharq-sim --compare runs it, and this prints each
# trace's utilization, makespan and p95 wait per job size with backfill
# on (as configured) and off, then the mean utilization. The same seeds give the
# same figures.
#
#   contrib/bench/backfill-random.sh [SEEDS...]
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
go build -o "$tmp/sharq-sim" ./cmd/sharq-sim
go build -o "$tmp/randtrace" ./contrib/bench/randtrace

seeds=${*:-1 2 3 4 5 6 7}
printf '%-4s %-5s %-13s | %-13s | %-13s | %-13s | %-13s\n' seed load 'utilization' 'makespan' 'p95 1 GPU' 'p95 2-8 GPUs' 'p95 9-32 GPUs'
printf '%-4s %-5s %6s %6s | %6s %6s | %6s %6s | %6s %6s | %6s %6s\n' '' '' on off on off on off on off on off
for seed in $seeds; do
	load=$(awk -v s="$seed" 'BEGIN { printf "%.3f", 0.8 + (s - 1) * 0.8 / 6 }')
	"$tmp/randtrace" -seed "$seed" -load "$load" -trace "$tmp/t.csv" -config "$tmp/c.toml"
	"$tmp/sharq-sim" --config "$tmp/c.toml" --trace "$tmp/t.csv" --compare >"$tmp/out.txt"
	# Columns: as configured (backfill on), then no backfill; every
	# value of these rows is one field.
	row() { awk -v r="$1" '{ l = $0; sub(/^ +/, "", l) } index(l, r) == 1 && substr(l, length(r) + 1, 2) == "  " { print $(NF-4), $(NF-3) }' "$tmp/out.txt"; }
	set -- $(row utilization) $(row makespan) $(row 'p95 wait 1 GPU') $(row 'p95 wait 2-8 GPUs') $(row 'p95 wait 9-32 GPUs')
	[ $# -eq 10 ] || { echo "backfill-random.sh: unexpected sharq-sim --compare output" >&2; cat "$tmp/out.txt" >&2; exit 1; }
	printf '%-4s %-5s %6s %6s | %6s %6s | %6s %6s | %6s %6s | %6s %6s\n' "$seed" "$load" "$@"
	echo "$1 $2" >>"$tmp/util"
done
awk '{ on += $1; off += $2; n++ } END { printf "mean utilization: backfill %.1f%%, no backfill %.1f%% (%d traces)\n", on / n, off / n, n }' "$tmp/util"
