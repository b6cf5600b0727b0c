"""brokersim's predictions: `brokersim run --json` on exactly the replayed jobs (as written and
with the calibrated latencies), and with its own random streams over replications (the band)."""

import csv
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from .observed import OUTCOMES, SMALL_RUN_JOBS, quantile
from .workload import write_trace


def predict(brokersim, scenario_path, sets, replications, trace=None):
    def run(rep):
        cmd = [brokersim, "run", scenario_path, "--json"] + sum((["--set", s] for s in sets), [])
        if trace and not rep:
            cmd += ["--trace", trace]
        if rep:
            cmd += ["--replication", str(rep)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
        return json.loads(p.stdout)
    base = run(0)
    spread = None
    if replications > 1:
        fr = {k: [] for k in OUTCOMES}
        extra = {"wait_ms.sojourn.p95": [], "wait_ms.queue.mean": [], "wait_ms.local.mean": [], "goodput_per_s": []}
        for rep in range(replications):
            j = base if rep == 0 else run(rep)
            for k in OUTCOMES:
                fr[k].append(j.get("fraction", {}).get(k, 0.0))
            extra["wait_ms.sojourn.p95"].append(j["wait_ms"]["sojourn"]["p95"])
            extra["wait_ms.queue.mean"].append(j["wait_ms"]["queue"]["mean"])
            extra["wait_ms.local.mean"].append(j["wait_ms"]["local"]["mean"])
            extra["goodput_per_s"].append(j["goodput_per_s"])
        def band(xs):
            xs = sorted(xs)
            return {"mean": round(statistics.fmean(xs), 5), "p2.5": round(quantile(xs, 0.025), 5),
                    "p97.5": round(quantile(xs, 0.975), 5)}
        spread = {"replications": replications,
                  "fraction": {k: band(v) for k, v in fr.items() if any(v)},
                  **{k: band(v) for k, v in extra.items()}}
    return base, spread



# What this harness measured on loopback (README): classic, the settle-to-next-receipt gap of
# prefetch 1 (~1.5 ms); quorum, publish to receipt with credit to spare (~3.7 ms, the Raft commit
# of the enqueue before the queue delivers) and the same ~0.5 ms for the settle to reach the queue.
CALIBRATED_LATENCY_MS = {"rabbitmq-classic": (1.0, 0.5), "rabbitmq-quorum": (3.5, 0.5)}


def calibrated_latency(args, scn):
    if args.calibrated_latency_ms == "auto":
        return CALIBRATED_LATENCY_MS[scn["broker"].get("kind", "rabbitmq-classic")]
    return args.calibrated_latency_ms


def calibration_sets(args, scn):
    out = []
    pair = calibrated_latency(args, scn)
    if pair:
        out += ["broker.delivery_latency_ms=%g" % pair[0], "broker.ack_latency_ms=%g" % pair[1]]
    return out + list(args.calibrated_set)


def calibration_record(args, scn):
    pair = calibrated_latency(args, scn)
    return {"delivery": pair[0], "ack": pair[1]} if pair else None


def same_jobs_predictions(scenario_path, sets, scn, schedules, args, calibrate=True):
    """brokersim on exactly the replayed jobs (as written, and with the calibration overrides)."""
    tracedir = tempfile.mkdtemp(prefix="brokersim-cmp-trace-")
    try:
        trace_sets = []
        for i, sch in enumerate(schedules):
            path = os.path.join(tracedir, "producer-%d.csv" % i)
            write_trace(path, sch)
            trace_sets.append("producers.%d.arrivals=%s" % (i, json.dumps({"trace_csv": path})))
        small = sum(len(sch) for sch in schedules) <= SMALL_RUN_JOBS
        job_trace = os.path.join(tracedir, "jobs.csv") if small else None
        predicted, _ = predict(args.brokersim, scenario_path, sets + trace_sets, 1, trace=job_trace)
        if small:
            predicted["jobs"] = predicted_jobs(job_trace)
        calibrated = None
        if calibrate and calibration_sets(args, scn):
            calibrated, _ = predict(args.brokersim, scenario_path, sets + trace_sets + calibration_sets(args, scn), 1)
    finally:
        shutil.rmtree(tracedir, ignore_errors=True)
    return predicted, calibrated


def predicted_jobs(path):
    """brokersim's --trace of a small run, per job: the columns the per-job comparison uses (ms),
    numbered (producer, index) as observed.observed_jobs numbers the replayed ones."""
    def num(x):
        return None if x in ("", None) else round(float(x), 1)
    out, seen = [], {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            p = int(row["producer"])
            k = seen[p] = seen.get(p, -1) + 1
            out.append({"producer": p, "index": k, "queue": row["queue"], "created": num(row["created_ms"]),
                        "published": num(row["published_ms"]), "delivered": num(row["delivered_ms"]),
                        "received": num(row["received_ms"]), "started": num(row["started_ms"]),
                        "finished": num(row["finished_ms"]), "outcome": row["outcome"],
                        "ended": num(row["ended_ms"]), "dead_letterings": int(row.get("dead_letterings") or 0)})
    return out
