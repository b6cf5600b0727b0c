"""The observed side: each replayed job classified at stop.time_ms by brokersim's rules, the
observed metrics in `run --json` shape, and the per-job trace in brokersim's --trace columns."""

import math
import statistics

OUTCOMES = ["rejected_at_publish", "expired_in_queue", "expired_in_transit", "expired_before_start",
            "completed_on_time", "completed_late", "timed_out", "failed", "lost", "dead_lettered", "in_system"]


def quantile(sorted_xs, p):
    if not sorted_xs:
        return 0.0
    x = p * (len(sorted_xs) - 1)
    lo = int(math.floor(x))
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (x - lo)


def summary(xs):
    xs = sorted(xs)
    if not xs:
        return {"count": 0, "mean": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}
    return {"count": len(xs), "mean": round(statistics.fmean(xs), 3), "p50": round(quantile(xs, 0.5), 3),
            "p95": round(quantile(xs, 0.95), 3), "p99": round(quantile(xs, 0.99), 3), "max": round(xs[-1], 3)}


def overlap(a, b, lo, hi):
    return max(0.0, min(b, hi) - max(a, lo))


def classify(r, T):
    """(outcome, outcome time) at stop time T, from events with time <= T (brokersim's rules)."""
    dl = r.get("dead_letters", [])
    exp = r.get("expires_at")
    if "rejected_at_publish" in r:
        return "rejected_at_publish", r["rejected_at_publish"]
    if "refused_at_publish" in r:  # overflow reject-publish: the broker nacked it
        return "rejected_at_publish", r["refused_at_publish"]
    if r.get("started") is not None and r["started"] <= T:
        f = r.get("finished")
        if f is not None and f <= T:
            return ("completed_on_time" if exp is None or f < exp else "completed_late"), f
        return "in_system", None
    if r.get("rejected") is not None and r["rejected"] <= T:
        received = r.get("rejected_received", r["received"])
        return ("expired_in_transit" if exp is not None and received >= exp else "expired_before_start"), r["rejected"]
    # a job requeued by a consumer (on_expired requeue) is back in the queue: the broker decides next
    back_in_queue = r.get("received") is None or r.get("requeues")
    for d in dl:
        if d.get("by"):  # seen by a consumer reading the dead-letter target: decided above, by it
            continue
        if d["reason"] == "expired" and d["t"] <= T and back_in_queue:
            return "expired_in_queue", d["t"]
        if d["reason"] in ("maxlen", "delivery_limit") and d["t"] <= T and back_in_queue:
            return "dead_lettered", d["t"]
    return "in_system", None


def absent_intervals(monitor):
    """Per queue, the [first, last] sample times (ms) of each run of samples in which the queue did not
    exist (the monitor's passive declare found none): when x-expires had deleted it."""
    out = {}
    for name, samples in monitor.items():
        runs, cur = [], None
        for t, n in samples:
            if n is None:
                cur = [round(t, 1), round(t, 1)] if cur is None else [cur[0], round(t, 1)]
            elif cur is not None:
                runs.append(cur)
                cur = None
        if cur is not None:
            runs.append(cur)
        if runs:
            out[name] = runs
    return out


SMALL_RUN_JOBS = 50


def observed_jobs(raw):
    """For a run of at most SMALL_RUN_JOBS jobs, each job's times (ms) and outcome at T: the per-job
    comparison with brokersim's --trace (predict.predicted_jobs), matched by (producer, index)."""
    if len(raw["jobs"]) > SMALL_RUN_JOBS:
        return None
    T = raw["stop_ms"]
    out, seen = [], {}
    def r3(x):
        return None if x is None else round(x, 1)
    for r in raw["jobs"]:
        k = seen[r["producer"]] = seen.get(r["producer"], -1) + 1
        o, t = classify(r, T)
        out.append({"producer": r["producer"], "index": k, "created": r3(r["created"]),
                    "published": r3(r.get("published")), "refused_at_publish": r3(r.get("refused_at_publish")),
                    "dead_letters": [{"reason": d["reason"], "from": d["from"], "to": d["to"], "t": r3(d["t"])}
                                     for d in r.get("dead_letters", [])],
                    "received": r3(r.get("received")), "started": r3(r.get("started")),
                    "finished": r3(r.get("finished")), "outcome": o, "ended": r3(t)})
    return out


def observed_schedules(jobs, schedules):
    """The producers' jobs at the times the broker got them: each job's observed publish time (its
    creation if it was never published) with its service demand, per producer, from observed_jobs.
    brokersim on these (predicted_at_observed_times) leaves out the harness's publish lag, which a
    publisher in confirm mode makes milliseconds long (each publish waits for its confirm)."""
    out = [list(s) for s in schedules]
    for j in jobs:
        t = j["published"] if j["published"] is not None else j["created"]
        out[j["producer"]][j["index"]] = (t, schedules[j["producer"]][j["index"]][1])
    for s in out:
        for k in range(1, len(s)):  # a trace is in time order
            if s[k][0] < s[k - 1][0]:
                s[k] = (s[k - 1][0], s[k][1])
    return out


def write_observed_trace(path, scn, raw):
    """Per-job CSV in brokersim's --trace column order (observed times; delivered_ms is not seen)."""
    T = raw["stop_ms"]
    work = raw["work"]
    def f(x):
        return "" if x is None else "%.3f" % x
    with open(path, "w") as out:
        out.write("job,producer,queue,consumer,created_ms,expires_at_ms,published_ms,delivered_ms,received_ms,"
                  "started_ms,finished_ms,ended_ms,outcome,redeliveries\n")
        for j, r in enumerate(raw["jobs"]):
            o, t = classify(r, T)
            out.write(",".join([str(j), str(r["producer"]), work, str(r.get("consumer", "")), f(r["created"]),
                                f(r.get("expires_at")), f(r.get("published")), "", f(r.get("received")),
                                f(r.get("started")), f(r.get("finished")), f(t), o,
                                str(max(0, r.get("deliveries", 0) - 1))]) + "\n")


def observed_metrics(scn, raw):
    T = raw["stop_ms"]  # as brokersim: outcomes and averages judged at stop.time_ms, also when drained
    warm = float(scn.get("warmup_ms", 0))
    work = raw["work"]
    source = raw.get("source", work)  # the producers' queue (a dead-letter reader: not the consumed one)
    scn_queues = scn["broker"].get("queues", {})
    quorum = scn["broker"].get("kind") == "rabbitmq-quorum"
    jobs = [r for r in raw["jobs"] if r["created"] >= warm]
    out = {k: 0 for k in OUTCOMES}
    waits = {"queue": [], "local": [], "service": [], "sojourn": []}
    reasons = ("expired", "rejected", "maxlen") + (("delivery_limit",) if quorum else ())
    dl_by_reason = {name: {k: 0 for k in reasons} for name in scn_queues}
    published = delivered = redeliveries = abe = rbv = 0
    busy = unacked = 0.0
    ttl_lateness = []
    for r in jobs:
        o, t = classify(r, T)
        out[o] += 1
        if t is not None:
            waits["sojourn"].append(t - r["created"])
        if r.get("published") is not None and r["published"] <= T:
            published += 1
        receipts = [(t, w) for (t, w) in r.get("queue_waits", []) if t <= T]
        delivered += len(receipts)
        redeliveries += max(0, len(receipts) - 1)
        waits["queue"] += [w for (_, w) in receipts]
        ends = sorted(r.get("local_waits", []))
        waits["local"] += [w for (t, w) in ends if t <= T]
        # unacked ~ receipt .. settle sent, per delivery (transit and the ack's way back not seen);
        # a job has one delivery out at a time, so receipts and local ends pair up in order
        for k, (rec, _) in enumerate(receipts):
            settle = ends[k][0] if k < len(ends) else None
            if settle is not None and settle == r.get("started"):
                settle = r.get("finished")
            unacked += overlap(rec, settle if settle is not None else T, warm, T)
        if r.get("started") is not None and r["started"] <= T:
            f = r.get("finished")
            if f is not None and f <= T:
                waits["service"].append(f - r["started"])
            busy += overlap(r["started"], f if f is not None else T, warm, T)
            if r.get("admitted_but_expired"):
                abe += 1
        rbv += sum(1 for t in r.get("rejected_but_valid", []) if t <= T)
        for d in r.get("dead_letters", []):
            if d["t"] <= T and d["reason"] in dl_by_reason.get(d["from"], {}):
                dl_by_reason[d["from"]][d["reason"]] += 1
            if d["reason"] == "expired" and r.get("published") is not None and d.get("by") is None:
                ttls = [x for x in (r.get("msg_ttl"), scn_queues.get(d["from"], {}).get("message_ttl_ms"))
                        if x is not None]
                if ttls:
                    ttl_lateness.append(d["t"] - (r["published"] + min(ttls)))
    out["generated"] = len(jobs)
    span_s = max(1e-9, (T - warm) / 1000.0)
    slots = sum(int(c.get("count", 1)) * int(c.get("slots", 1)) for c in scn["consumers"])
    queues = {}
    for name in sorted(scn["broker"].get("queues", {})):
        # None: the queue did not exist at that sample (x-expires deleted it)
        samples = [n for (t, n) in raw["monitor"].get(name, []) if warm <= t <= T and n is not None]
        q = {"published": 0, "delivered": 0, "dead_lettered_by_reason": dl_by_reason[name],
             "max_ready": max(samples) if samples else 0,
             "mean_ready": round(statistics.fmean(samples), 3) if samples else 0.0}
        into = sum(1 for r in jobs for d in r.get("dead_letters", []) if d["to"] == name and d["t"] <= T)
        if name == source:
            q["published"] = published
        if name == work:
            q.update(delivered=delivered, mean_unacked=round(unacked / (T - warm), 3))
            if work != source:  # dead letters the consumers received from it by T
                q["published"] = into
        if name not in (work, source):
            q["published"] = into
            q["delivered_to_observer"] = into
        queues[name] = q
    # per consumer: receipt of the next delivery - settle of the previous, when the next one was
    # already in the broker (published) before the previous was settled: the prefetch-window gap
    gaps = []
    by_consumer = {}
    for r in jobs:
        if r.get("received") is not None and r.get("consumer") is not None:
            by_consumer.setdefault(r["consumer"], []).append(r)
    for rs in by_consumer.values():
        rs.sort(key=lambda r: r["received"])
        for a, b in zip(rs, rs[1:]):
            end = a.get("finished") if a.get("started") is not None else a.get("rejected")
            if end is not None and b.get("published") is not None and b["published"] < end < b["received"]:
                gaps.append(b["received"] - end)
    completed = out["completed_on_time"] + out["completed_late"]
    pub_lag = [r["published"] - r["scheduled"] for r in jobs if r.get("published") is not None]
    return {
        "outcomes": out,
        "fraction": {k: (out[k] / len(jobs) if jobs else 0.0) for k in OUTCOMES},
        "wait_ms": {k: summary(v) for k, v in waits.items()},
        "throughput_per_s": round(completed / span_s, 4),
        "goodput_per_s": round(out["completed_on_time"] / span_s, 4),
        "slot_utilization": round(busy / (slots * (T - warm)), 4),
        "admitted_but_expired": abe,
        "rejected_but_valid": rbv,
        "redeliveries": redeliveries,
        "queues": queues,
        "run": {"simulated_ms": T, "measured_s": span_s, "real_ms_run": round(raw["t_end"], 1),
                "stop_reason": raw["stop_reason"]},
        "harness": {
            "publish_lag_ms": summary(pub_lag),
            "dead_letter_after_ttl_ms": summary(ttl_lateness),
            "settle_to_next_receipt_ms": summary(gaps),
            "consumers": raw["consumers"],
            "client_errors": raw["errors"],
            "queue_absent_ms": absent_intervals(raw["monitor"]),
            "declares": raw.get("declares", []),
            "notes": [
                "wait_ms.queue is publish -> receipt by the consumer's pika callback (brokersim's queue + transit)",
                "expired_in_queue times are when the dead-letter observer received the dead letter",
                "mean_ready is sampled every 100 ms by a passive queue.declare (message_count)",
                "mean_unacked is receipt -> ack sent; slot_utilization is service time / slot time",
            ] + ([
                "dead-letter reader: wait_ms.queue is publish into %s -> receipt from %s (the time in %s, with its "
                "dead-letter worker and in %s); brokersim's queue wait starts when the job enters %s, not "
                "observable here: compare the per-job times (jobs)" % (source, work, source, work, work),
            ] if work != source else []),
        },
    }
