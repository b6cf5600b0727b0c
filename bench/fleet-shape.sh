# The fleet that bench/fleet.sh and bench/fleet-cpu.sh measure, in one place: the capacity
# baseline with C consumers and the same load per consumer (19 jobs/s each, utilisation 0.95 of
# two 100 ms slots). Sourced; the caller sets $cli (the brokersim binary) and $here (the source).
# shellcheck shell=bash disable=SC2154
scenario="$here/experiments/scenarios/capacity-baseline.json"

fleet_sets() {  # the --set options of $1 consumers, $2 jobs
  echo --set "consumers.0.count=$1" --set "producers.0.arrivals={\"poisson\":{\"rate_per_s\":$((19 * $1))}}" \
    --set "stop={\"jobs\":$2}" --set warmup_ms=0
}

fleet_seconds() {  # user seconds of `run` at $1 consumers, 2,000,000 jobs
  # shellcheck disable=SC2046
  { /usr/bin/time -f %U "$cli" run "$scenario" $(fleet_sets "$1" 2000000) > /dev/null; } 2>&1 | tail -1
}
