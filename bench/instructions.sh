#!/usr/bin/env bash
# Instructions per job, events per job and instructions per event (issue 23), measured without
# timing noise: callgrind counts instructions exactly, whatever else the machine runs.
#
#   bench/instructions.sh [BUILD_DIR]        (default: build; or: cmake --build build --target bench_instructions)
#
# brokersim: the marginal cost between two run lengths (100,000 and 200,000 jobs), so start-up
# and the end-of-run report cancel. The minimal hand-written loop (bench/bench_minimal_mmcd.cpp):
# only its benchmark function is counted (--toggle-collect, libm included), divided by the jobs it
# simulated: one iteration of 100,000 jobs (under valgrind it outlasts --benchmark_min_time, so
# Google Benchmark runs the function once). A standalone build of the same loop measured the same
# way as brokersim (marginal, 100,000 to 200,000 jobs) gives 280 instructions per job (2026-12-05).
# Needs valgrind. Reported, never asserted.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
cli="$build/experiments/brokersim"
bench="$build/bench/brokersim_bench"
scenario="$here/experiments/scenarios/mm10-prefetch1.json"
command -v valgrind > /dev/null || { echo "bench/instructions.sh: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The total instructions of one callgrind output file.
instructions() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }

# brokersim run of N jobs, extra --set arguments after N: prints "instructions events".
run_cost() {
  local n=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$n" "$cli" run "$scenario" --json "$@" \
    --set "stop={\"jobs\":$n}" > "$tmp/run.$n.json" 2> /dev/null
  echo "$(instructions "$tmp/cg.$n") $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['run']['events'])" "$tmp/run.$n.json")"
}

# Marginal per job between 100,000 and 200,000 jobs: "label instr/job events/job instr/event".
marginal() {
  local label=$1; shift
  read -r i1 e1 < <(run_cost 100000 "$@")
  read -r i2 e2 < <(run_cost 200000 "$@")
  awk -v l="$label" -v i1="$i1" -v i2="$i2" -v e1="$e1" -v e2="$e2" 'BEGIN {
    i = (i2 - i1) / 100000; e = (e2 - e1) / 100000
    printf "| %s | %.0f | %.3f | %.0f |\n", l, i, e, i / e }'
}

echo "| model | instructions per job | events per job | instructions per event |"
echo "| --- | --- | --- | --- |"
# The minimal loop's benchmark NAME under callgrind (only its function counted): prints its row.
minimal() {
  local name=$1 label=$2
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$name" --toggle-collect="*${name}*" \
    "$bench" --benchmark_filter="${name}\$" --benchmark_min_time=0.05 --benchmark_format=json \
    > "$tmp/$name.json" 2> /dev/null
  python3 - "$tmp/$name.json" "$(instructions "$tmp/cg.$name")" "$name" "$label" <<'EOF'
import json, sys
b = [x for x in json.load(open(sys.argv[1]))["benchmarks"] if x["name"] == sys.argv[3]][0]
jobs, events = b["jobs"], b["events_per_job"]
i = int(sys.argv[2]) / jobs
print(f"| {sys.argv[4]} | {i:.0f} | {events:.3f} | {i / events:.0f} |")
EOF
}

if [ -x "$bench" ]; then
  minimal BM_MinimalMMcD "minimal hand-written M/M/10+D loop"
  minimal BM_MinimalMMcD_Fleet100 "minimal loop, the same at utilisation 0.95 with 100 servers"
  minimal BM_MinimalMMcD_Fleet10000 "minimal loop, the same with 10,000 servers"
else
  echo "| minimal loop: not built ($bench; configure with -DBROKERSIM_BENCH=ON) | | | |"
fi
marginal "brokersim, M/M/10+D (prefetch 1, zero latencies, TTL 500 ms)"
marginal "brokersim, the same at utilisation 0.95 with 100 consumers" \
  --set consumers.0.count=100 --set 'producers.0.arrivals={"poisson":{"rate_per_s":95}}'
marginal "brokersim, the same with 10,000 consumers" \
  --set consumers.0.count=10000 --set 'producers.0.arrivals={"poisson":{"rate_per_s":9500}}'
