"""One case's result file (results/CASE.json): run the case (replay and predictions), re-predict a
stored one, and print the README tables from the stored results."""

import datetime
import json
import os
import platform
import subprocess

from . import REPO
from .cases import all_cases
from .client import need_pika
from .observed import OUTCOMES, SMALL_RUN_JOBS, observed_jobs, observed_metrics, observed_schedules, write_observed_trace
from .predict import calibration_record, calibration_sets, predict, same_jobs_predictions
from .replay import replay
from .subset import apply_set, brokersim_version_for, check_subset
from .workload import schedules_of


def git_head():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception:
        return None


def git_modified():
    try:
        out = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True, timeout=10).stdout
        return sorted(line[3:] for line in out.splitlines())
    except Exception:
        return None


def repredict_case(name, args):
    """--repredict: recompute the same-jobs predictions of a stored result (the schedule is a
    function of the scenario's seed), keeping what the broker did; no broker is started."""
    path = os.path.join(args.out, name + ".json")
    with open(path) as f:
        result = json.load(f)
    scenario_path = os.path.join(REPO, result["scenario"])
    scn = result["scenario_resolved"]
    predicted, calibrated = same_jobs_predictions(scenario_path, result["set"], scn, schedules_of(scn), args)
    result["predicted"], result["predicted_calibrated"] = predicted, calibrated
    if result["observed"].get("jobs") is not None:
        result["predicted_at_observed_times"], _ = same_jobs_predictions(
            scenario_path, result["set"], scn, observed_schedules(result["observed"]["jobs"], schedules_of(scn)), args,
            calibrate=False)
    result["predicted_calibrated_latency_ms"] = calibration_record(args, scn)
    result["predicted_calibrated_set"] = calibration_sets(args, scn)
    result["repredicted"] = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                             "brokersim": os.path.abspath(args.brokersim), "git_head": git_head()}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print("  re-predicted", os.path.relpath(path, REPO), flush=True)


def run_case(name, scenario_path, sets, args, broker):
    with open(scenario_path) as f:
        scn = json.load(f)
    for s in sets:
        apply_set(scn, s)
    check_subset(scn)
    print("case %s: %s %s" % (name, os.path.relpath(scenario_path, REPO), " ".join(sets)), flush=True)
    matching = brokersim_version_for(broker.version)
    scenario_version = str(scn["broker"].get("version", "4.2"))
    if scn["broker"].get("kind") == "rabbitmq-quorum" and matching and scenario_version != matching:
        # the delivery-limit counting rule (and the default limit) differ between these versions
        print("  warning: broker.version is %s but the node is RabbitMQ %s (brokersim %s); the quorum "
              "delivery-limit rules may differ" % (scenario_version, broker.version, matching), flush=True)
    schedules = schedules_of(scn)
    predicted, calibrated = same_jobs_predictions(scenario_path, sets, scn, schedules, args)
    own, spread = predict(args.brokersim, scenario_path, sets, args.replications)
    # the machine may be shared (other builds): its load during the replay explains timing noise
    load_before = os.getloadavg()
    raw = replay(scn, broker, schedules)
    load_after = os.getloadavg()
    observed = observed_metrics(scn, raw)
    per_job = observed_jobs(raw)
    at_observed = None
    if per_job is not None:
        observed["jobs"] = per_job
        at_observed, _ = same_jobs_predictions(scenario_path, sets, scn, observed_schedules(per_job, schedules),
                                               args, calibrate=False)
    if args.traces:
        os.makedirs(args.traces, exist_ok=True)
        write_observed_trace(os.path.join(args.traces, name + ".observed.csv"), scn, raw)
    result = {
        "case": name,
        "scenario": os.path.relpath(scenario_path, REPO),
        "set": sets,
        "scenario_resolved": scn,
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "environment": {"rabbitmq": broker.version, "node_settings": broker.settings, "brokersim_version_for_node": matching,
                        "scenario_broker_version": scenario_version, "pika": need_pika().__version__,
                        "python": platform.python_version(), "host_cpus": os.cpu_count(),
                        "loadavg_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
                        "brokersim": os.path.abspath(args.brokersim), "git_head": git_head(),
                        "git_modified_tracked_files": git_modified()},
        "observed": observed,
        "predicted": predicted,
        "predicted_calibrated": calibrated,
        "predicted_calibrated_latency_ms": calibration_record(args, scn),
        "predicted_calibrated_set": calibration_sets(args, scn),
        "predicted_at_observed_times": at_observed,
        "predicted_own_streams": {k: own[k] for k in ("outcomes", "fraction", "wait_ms", "throughput_per_s",
                                                      "goodput_per_s", "slot_utilization") if k in own},
        "predicted_spread": spread,
        "how": ["predicted: brokersim run on exactly the jobs replayed on the broker (same publish times and "
                "service demands, given to brokersim as producers.I.arrivals.trace_csv)",
                "predicted_calibrated: the same, with broker.delivery_latency_ms / ack_latency_ms set to the "
                "values measured for this harness (--calibrated-latency-ms)",
                "predicted_at_observed_times (runs of at most %d jobs): the same jobs at the times the broker got "
                "them (each job's observed publish time), without the harness's publish lag" % SMALL_RUN_JOBS,
                "predicted_own_streams: brokersim with its own random streams (scenario as written), replication 0",
                "predicted_spread: mean and 2.5/97.5 percentiles over that many brokersim replications of the "
                "scenario as written: the sampling noise of one run of this length"],
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, name + ".json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    o, p = observed["outcomes"], predicted["outcomes"]
    keys = [k for k in OUTCOMES if o.get(k) or p.get(k)]
    print("  %-22s %10s %10s" % ("outcome", "observed", "predicted"))
    for k in keys + ["generated"]:
        print("  %-22s %10d %10d" % (k, o.get(k, 0), p.get(k, 0)))
    print("  wrote", os.path.relpath(path, REPO), flush=True)
    return result


def short_outcomes(result):
    names = {"expired_in_queue": "queue", "expired_in_transit": "transit", "expired_before_start": "before-start",
             "completed_on_time": "on-time", "completed_late": "late", "in_system": "in-sys",
             "rejected_at_publish": "rej-pub", "dead_lettered": "dl", "lost": "lost"}
    o = result["outcomes"]
    text = " ".join("%s %d" % (names.get(k, k), o[k]) for k in OUTCOMES if o.get(k))
    if result.get("redeliveries"):  # requeues (on_expired requeue): what the delivery limit counts
        text += " (redeliveries %d)" % result["redeliveries"]
    return text


def print_table(out_dir, prefix=""):
    names = [n for n, _, _ in all_cases() if n.startswith(prefix)]
    results = []
    for n in names:
        p = os.path.join(out_dir, n + ".json")
        if os.path.exists(p):
            with open(p) as f:
                results.append((n, json.load(f)))
    versions = sorted({d["environment"]["rabbitmq"] for _, d in results}) or ["?"]
    print("| case | observed (RabbitMQ %s) | brokersim, same jobs | brokersim, calibrated latency | "
          "queue wait mean obs / pred / cal (ms) | local wait mean obs / pred (ms) | 95%% band of on-time, own streams |" %
          ", ".join(versions))
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, d in results:
        o, pr, cal = d["observed"], d["predicted"], d.get("predicted_calibrated")
        band = (d.get("predicted_spread") or {}).get("fraction", {}).get("completed_on_time")
        print("| %s | %s | %s | %s | %.1f / %.1f / %s | %.1f / %.1f | %s |" % (
            n, short_outcomes(o), short_outcomes(pr), short_outcomes(cal) if cal else "-",
            o["wait_ms"]["queue"]["mean"], pr["wait_ms"]["queue"]["mean"] + pr["wait_ms"].get("transit", {}).get("mean", 0),
            "%.1f" % (cal["wait_ms"]["queue"]["mean"] + cal["wait_ms"].get("transit", {}).get("mean", 0)) if cal else "-",
            o["wait_ms"]["local"]["mean"], pr["wait_ms"]["local"]["mean"],
            "%.1f-%.1f%% (obs %.1f%%)" % (100 * band["p2.5"], 100 * band["p97.5"], 100 * o["fraction"]["completed_on_time"])
            if band else "-"))
