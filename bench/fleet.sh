#!/usr/bin/env bash
# What a fleet's size costs per job (issue 45): the capacity baseline (prefetch 4, two slots,
# latencies, skewed clocks, TTL and dead-lettering) with the same load per consumer (19 jobs/s
# each, utilisation 0.95 of two 100 ms slots) at 4, 40, 400 and 4,000 consumers.
#
#   bench/fleet.sh [BUILD_DIR] [COUNTS...]        (default: build; 4 40 400 4000)
#
# Per fleet size, three figures, each per job and reported, never asserted:
#   - instructions: callgrind, marginal between 100,000 and 200,000 jobs (start-up cancels);
#   - cache misses: cachegrind's simulation of a 32 KB first level and a 512 KB last level, both
#     8-way (--D1=32768,8,64 --LL=524288,8,64: a core's own first and second levels on the
#     development machine, deterministic whatever else runs and whatever host runs it; without
#     --D1 cachegrind takes the host's first level, and a 48 KB one counts far fewer misses),
#     data read + write misses, marginal between 150,000 and 300,000 jobs;
#   - CPU: user seconds of `run` over 2,000,000 jobs, the median of 3, sizes interleaved (each
#     round runs every size once), so a neighbour's load falls on all sizes alike.
# Needs valgrind.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(4 40 400 4000)
cli="$build/experiments/brokersim"
# shellcheck source=bench/fleet-shape.sh
. "$here/bench/fleet-shape.sh"
command -v valgrind > /dev/null || { echo "bench/fleet.sh: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

instructions() {  # callgrind total of C consumers, N jobs
  # shellcheck disable=SC2046
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$cli" run "$scenario" $(fleet_sets "$1" "$2") > /dev/null 2>&1
  awk '/^(summary|totals):/ { print $2; exit }' "$tmp/cg"
}

misses() {  # cachegrind "D1 LL" data misses (read + write) of C consumers, N jobs
  # shellcheck disable=SC2046
  valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=524288,8,64 --cachegrind-out-file="$tmp/cc" "$cli" run "$scenario" \
    $(fleet_sets "$1" "$2") > /dev/null 2>&1
  awk '/^events:/ { for (i = 2; i <= NF; ++i) col[$i] = i }
       /^summary:/ { print $col["D1mr"] + $col["D1mw"], $col["DLmr"] + $col["DLmw"] }' "$tmp/cc"
}

declare -A cpu
for _ in 1 2 3; do
  for c in "${counts[@]}"; do
    cpu[$c]="${cpu[$c]:-} $(fleet_seconds "$c")"
  done
done

echo "| consumers | instructions per job | first-level misses per job | last-level misses per job | CPU s per 2,000,000 jobs (median of 3) | CPU per job vs ${counts[0]} |"
echo "| --- | --- | --- | --- | --- | --- |"
base=""
for c in "${counts[@]}"; do
  i1=$(instructions "$c" 100000); i2=$(instructions "$c" 200000)
  read -r d1a lla < <(misses "$c" 150000)
  read -r d1b llb < <(misses "$c" 300000)
  med=$(echo "${cpu[$c]}" | tr ' ' '\n' | grep . | sort -g | sed -n 2p)
  [ -n "$base" ] || base=$med
  awk -v c="$c" -v i1="$i1" -v i2="$i2" -v d1a="$d1a" -v d1b="$d1b" -v lla="$lla" -v llb="$llb" -v med="$med" -v base="$base" \
    'BEGIN { printf "| %s | %.0f | %.1f | %.2f | %.2f | %.2fx |\n", c, (i2 - i1) / 100000, (d1b - d1a) / 150000,
             (llb - lla) / 150000, med, med / base }'
done
