#!/usr/bin/env bash
# What a fleet's size costs per job in CPU time, set beside what it costs the hand-written loop
# (issue 45: "CPU per job within 1.6x of 4 consumers on a quiet machine; interleaved medians; the
# hand loop's own ratio"). On a machine shared with other virtual machines a large fleet's run
# lives in the shared last-level cache, and a neighbour's load slows it far more than a small
# fleet's: only figures taken in the same minutes compare. So each round runs, one after the
# other:
#   - brokersim, the capacity baseline (bench/fleet-shape.sh, as bench/fleet.sh) at 4 and at 4,000 consumers,
#     2,000,000 jobs each: user seconds (/usr/bin/time);
#   - the minimal hand-written loop (bench/bench_minimal_mmcd.cpp) at 100 and at 10,000 servers:
#     CPU nanoseconds per job (its jobs_per_s, a rate per CPU-second).
# It prints each figure's median over the rounds, each fleet's ratio of the medians (large over
# small) and the median of the per-round ratios. Reported, never asserted.
#
#   bench/fleet-cpu.sh [BUILD_DIR] [ROUNDS]        (default: build, 9 rounds; about 5 s a round)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
rounds=${2:-9}
cli="$build/experiments/brokersim"
bench="$build/bench/brokersim_bench"
# shellcheck source=bench/fleet-shape.sh
. "$here/bench/fleet-shape.sh"
for f in "$cli" "$bench"; do [ -x "$f" ] || { echo "bench/fleet-cpu.sh: $f is not built" >&2; exit 2; }; done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "bench/fleet-cpu.sh: ROUNDS: expected a positive whole number, got '$rounds'" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

loop_ns_per_job() {  # the hand loop at S servers: CPU ns per job
  "$bench" --benchmark_filter="^BM_MinimalMMcD_Fleet$1\$" --benchmark_format=json > "$tmp/b.json" 2> /dev/null
  python3 -c 'import json, sys; print(1e9 / json.load(open(sys.argv[1]))["benchmarks"][0]["jobs_per_s"])' "$tmp/b.json"
}

for ((r = 1; r <= rounds; ++r)); do
  echo "brokersim4 $(fleet_seconds 4)"
  echo "brokersim4000 $(fleet_seconds 4000)"
  echo "loop100 $(loop_ns_per_job 100)"
  echo "loop10000 $(loop_ns_per_job 10000)"
done > "$tmp/raw"

python3 - "$tmp/raw" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    k, v = line.split()
    d[k].append(float(v))
print('| program | small fleet, median | large fleet, median | ratio of the medians | median of the per-round ratios | per-round ratios |')
print('| --- | --- | --- | --- | --- | --- |')
for name, small, large, unit in (('brokersim, 4 vs 4,000 consumers', 'brokersim4', 'brokersim4000', 's per 2,000,000 jobs'),
                                 ('hand-written loop, 100 vs 10,000 servers', 'loop100', 'loop10000', 'ns per job')):
    a, b = d[small], d[large]
    per_round = [y / x for x, y in zip(a, b)]
    print('| %s | %.3g %s | %.3g %s | %.2fx | %.2fx | %s |' % (
        name, statistics.median(a), unit, statistics.median(b), unit, statistics.median(b) / statistics.median(a),
        statistics.median(per_round), ' '.join('%.2f' % x for x in per_round)))
PY
