#!/bin/sh
# Replays the whole Microsoft ITP trace (69,351 jobs, walltimes from
# import-itp's model) on the 1,280-GPU example cluster
# (contrib/examples/itp.toml) with --report and --compare, under
# /usr/bin/time -v: wall time, peak memory, the report and the comparison
# table; then the same with every share LEND_AND_BORROW
# (contrib/examples/itp-lend-borrow.toml), the second configuration of
# issue 14's targets. The trace is read from shared/ beside the repository.
#
#   contrib/bench/sim-itp.sh [TRACE]
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
raw=${1:-$root/../shared/traces/itp/itp_raw_all_clusters.csv.gz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
go build -o "$tmp/sharq-sim" ./cmd/sharq-sim
"$tmp/sharq-sim" import-itp "$raw" -o "$tmp/itp.csv.gz"

echo "== sharq-sim --report --compare (whole ITP trace, 1,280 GPUs)"
/usr/bin/time -v "$tmp/sharq-sim" --config contrib/examples/itp.toml --trace "$tmp/itp.csv.gz" \
	--report --compare --plot "$tmp/itp.svg" 2>"$tmp/time.txt"
grep -E 'Elapsed \(wall clock\)|Maximum resident set size|User time|System time' "$tmp/time.txt"

echo "== sharq-sim --compare, every share LEND_AND_BORROW"
/usr/bin/time -v "$tmp/sharq-sim" --config contrib/examples/itp-lend-borrow.toml --trace "$tmp/itp.csv.gz" \
	--compare 2>"$tmp/time.txt"
grep -E 'Elapsed \(wall clock\)|Maximum resident set size' "$tmp/time.txt"

echo "== go benchmark: first 10,000 ITP rows, one run"
go test -run '^$' -bench BenchmarkRunITP -benchmem ./sim/
