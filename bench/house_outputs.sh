#!/usr/bin/env bash
# Every output a House commit must leave byte-identical (issue 40): each example's and seed
# scenario's run --json, its per-job trace and time series, the documented sweeps (CSV and
# metadata less its timing) and plans (text and --json). Run it on the parent of the first House
# commit and on the last, then `diff -r` the two folders: a House commit changes no number.
#   bench/house_outputs.sh ./build/experiments/brokersim /tmp/house-before
set -euo pipefail
bin=$(realpath "$1")
out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
cd "$root"

# The example scenarios at the settings their fingerprints use (the seeds' entries, keyed
# ../seeds/NAME, are run below with the other seeds).
python3 - "$root" > "$out/examples.list" <<'EOF'
import json, sys
prints = json.load(open(sys.argv[1] + "/experiments/scenarios/fingerprints.json"))
for name, entry in prints.items():
    if "/" in name: continue
    print(name + "\t" + "\t".join(entry["sets"]))
EOF
while IFS=$'\t' read -r name sets_line; do
  args=()
  if [ -n "$sets_line" ]; then
    IFS=$'\t' read -r -a sets <<< "$sets_line"
    for s in "${sets[@]}"; do args+=(--set "$s"); done
  fi
  base="$out/example-${name%.json}"
  "$bin" run "experiments/scenarios/$name" "${args[@]}" --json > "$base.json" 2> "$base.err" || echo "exit $?" >> "$base.err"
  "$bin" run "experiments/scenarios/$name" "${args[@]}" --trace "$base.trace.csv" > "$base.txt" 2>> "$base.err" || echo "exit $?" >> "$base.err"
done < <(cut -f1- "$out/examples.list")

for seed in experiments/seeds/*.json; do
  [ "$(basename "$seed")" = expected.json ] && continue
  base="$out/seed-$(basename "${seed%.json}")"
  "$bin" run "$seed" --json > "$base.json" 2> "$base.err" || echo "exit $?" >> "$base.err"
  "$bin" run "$seed" --trace "$base.trace.csv" > "$base.txt" 2>> "$base.err" || echo "exit $?" >> "$base.err"
done

"$bin" run experiments/scenarios/spike-autoscale.json --timeseries "$out/spike.series.csv" > /dev/null
"$bin" run experiments/scenarios/capacity-baseline.json --set stop.time_ms=60000 --set warmup_ms=10000 \
  --timeseries "$out/capacity.series.csv" > /dev/null

strip_meta() {  # a sweep's metadata less its wall-clock fields
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in [k for k in d if "wall" in k or "seconds" in k or "elapsed" in k]: del d[k]
json.dump(d, open(sys.argv[1], "w"), indent=1, sort_keys=True)' "$1"
}
sweep() {  # NAME ARGS...
  local name=$1; shift
  rm -f "$out/$name.csv" "$out/$name.csv.meta.json"
  "$bin" sweep "$@" --threads 2 --out "$out/$name.csv" 2> "$out/$name.err"
  strip_meta "$out/$name.csv.meta.json"
}
sweep capacity experiments/scenarios/capacity-baseline.json --set stop.time_ms=300000 \
  --set warmup_ms=30000 --vary consumers.0.prefetch=1,2,4,8,16,32 --vary consumers.0.count=3:6:1 \
  --replications 5
sweep cross-broker experiments/scenarios/cross-broker.json \
  --vary broker.kind=rabbitmq-classic,rabbitmq-quorum,azure-servicebus,amazon-sqs \
  --vary consumers.0.prefetch=1,4,16,32 --replications 5
sweep spike-windows experiments/scenarios/spike-autoscale.json --set consumers.0.autoscale=null \
  --set stop.time_ms=1200000 --vary consumers.0.count=6:8:1 --replications 2 --window-columns --spread
sweep precision experiments/scenarios/capacity-baseline.json --set stop.time_ms=60000 --set warmup_ms=10000 \
  --vary consumers.0.count=4:5:1 --precision 0.05

plan() {  # NAME ARGS...
  local name=$1; shift
  "$bin" plan "$@" > "$out/$name.plan.txt" 2> "$out/$name.plan.err" || echo "exit $?" >> "$out/$name.plan.err"
  "$bin" plan "$@" --json > "$out/$name.plan.json" 2>> "$out/$name.plan.err" || echo "exit $?" >> "$out/$name.plan.err"
}
plan readme experiments/scenarios/capacity-baseline.json --set stop.time_ms=300000 --set warmup_ms=30000 \
  --vary consumers.0.prefetch=1,2,4,8,16,32 --vary consumers.0.count=3:8:1 \
  --target 'fraction.expired_before_start+fraction.expired_in_queue<=0.01'
plan conservative experiments/scenarios/capacity-baseline.json --set stop.time_ms=120000 --set warmup_ms=20000 \
  --vary consumers.0.prefetch=1,2,4 --vary consumers.0.count=3:6:1 --conservative \
  --target 'fraction.expired_before_start<=0.01' --cost 'consumers.0.count*consumers.0.prefetch'
plan chance experiments/scenarios/capacity-baseline.json --set stop.time_ms=30000 --set warmup_ms=5000 \
  --vary consumers.0.count=3:6:1 --replications 59 --target 'wait_ms.sojourn.p99<=800 in 95% of runs'
plan window experiments/scenarios/spike-autoscale.json --set consumers.0.autoscale=null \
  --set stop.time_ms=1200000 --vary consumers.0.count=5:8:1 --replications 3 \
  --target 'window_max.fraction.expired_before_start<=0.01'
plan precision experiments/scenarios/capacity-baseline.json --set stop.time_ms=60000 --set warmup_ms=10000 \
  --vary consumers.0.count=3:6:1 --precision 0.1 --target 'fraction.expired_before_start<=0.02'
echo "outputs in $out: $(ls "$out" | wc -l) files"
