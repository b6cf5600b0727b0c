#!/usr/bin/env bash
# Seed corpus for fuzz_inputs from the project's own inputs: every scenario in experiments/
# (mode byte 0), some --set assignments (1), --vary lists (2), trace files (3), plan targets (4),
# costs (5), a shard's metadata as sweep writes it (6) and broker configurations for import (7).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: make_corpus.sh DIR}
mkdir -p "$out"
n=0
put() { printf "\\x$1" > "$out/seed-$n"; cat >> "$out/seed-$n"; n=$((n + 1)); }
while IFS= read -r f; do put 00 < "$f"; done < <(find "$top/experiments" -name '*.json' -not -name '*.meta.json' -not -path '*/results/*' | sort)
# The importer's examples once more, for the importer (mode 7).
for f in "$top"/experiments/import/examples/*.json "$top"/experiments/import/real-node/*/definitions-*.json; do put 07 < "$f"; done
for s in 'consumers.0.prefetch=8' 'broker.queues.work.overflow=reject-publish' 'producers.0.arrivals={"at_ms": [0, 5]}' \
         'faults=[{"at_ms": 0, "consumer": 1, "crash": true, "restart_after_ms": 10}]' 'consumers.0.exec_timeout="remaining-budget"'; do
  printf '%s' "$s" | put 01
done
for v in 'consumers.0.prefetch=1,2,4,8' 'consumers.0.count=2:8:2' 'producers.0.arrivals.poisson.rate_per_s=0.5:2.5:0.5'; do
  printf '%s' "$v" | put 02
done
printf 'publish_ms,deadline_ms,service_ms\n0,100,5\n10,,7\n' | put 03
printf 'service_ms,publish_ms\r\n3,0\r\n' | put 03
for t in 'fraction.expired_before_start+fraction.expired_in_queue<=0.01' '(wait_ms.local.p95)*2 < -(-100)' 'throughput_per_s>=1e3' \
         'wait_ms.sojourn.p99<=120000 in 95% of runs' 'windows.3.wait_ms.sojourn.p99 <= 2 in 99.5 % of runs'; do
  printf '%s' "$t" | put 04
done
for c in 'consumers.0.count*consumers.0.slots' 'slots_total/(1+consumers.0.prefetch)' 'fleet.consumer_seconds'; do
  printf '%s' "$c" | put 05
done
cat <<'EOF' | put 06
{"brokersim_version": "0", "scenario": "s", "scenario_hash": "0123456789abcdef", "seed": 3, "replications": 2,
 "set": [], "vary": ["consumers.0.prefetch=1,2", "consumers.0.count=1,2"],
 "grid": [{"path": "consumers.0.prefetch", "values": [1, 2], "labels": ["1", "2"]},
          {"path": "consumers.0.count", "values": [1, 2], "labels": ["1", "2"]}],
 "points": 4, "shard": {"index": 1, "count": 2}, "rows": [1, 3], "csv_rows": 2, "csv_fnv1a64": "cbf29ce484222325"}
EOF
echo "$n seeds in $out"
