"""One replay: declare the scenario's queues on the node, run its producers, consumers and
observers until stop.time_ms (or until every job is settled), and hand back what they recorded."""

import random
import threading
import time

from .client import need_pika
from .subset import check_subset, declare_times, queue_arguments, source_queue
from .workers import Clock, DeadLetterObserver, Declarer, Monitor, Producer, RealConsumer
from .workload import dist_sampler


def replay(scn, broker, schedules):
    pika = need_pika()
    work = check_subset(scn)
    kind = scn["broker"].get("kind", "rabbitmq-classic")
    version = scn["broker"].get("version", "4.2")
    queues = scn["broker"].get("queues", {})
    stop_ms = float(scn["stop"]["time_ms"])
    seed = int(scn.get("seed", 1))
    source = source_queue(scn, work)
    # the observer reads the dead-letter queues no consumer reads (from time zero); a dead-letter
    # target the consumers read (a dead-letter reader, source != work) is theirs, from their start_ms
    dl_targets = sorted({q.get("dead_letter_to") for q in queues.values() if q.get("dead_letter_to")} - {work})
    durable = kind == "rabbitmq-quorum"

    conn = pika.BlockingConnection(broker.params())
    ch = conn.channel()
    for name in sorted(queues):
        ch.queue_delete(queue=name)
    for name in sorted(queues):  # quorum queues must be durable (the broker refuses durable=False)
        ch.queue_declare(queue=name, durable=(kind == "rabbitmq-quorum"),
                         arguments=queue_arguments(queues[name], kind, version))
    conn.close()

    clock = Clock()
    jobs, jobs_lock = [], threading.Lock()
    stop_clients = threading.Event()   # consumers and producers
    stop_observers = threading.Event()  # dead-letter observer and monitor, a little later
    go = threading.Event()

    consumers = []
    k = 0
    for g, cspec in enumerate(scn["consumers"]):
        for m in range(int(cspec.get("count", 1))):
            stalls = [(float(f["at_ms"]), float(f["at_ms"]) + float(f["stall_ms"]))
                      for f in scn.get("faults", []) if int(f["consumer"]) == k]
            off_spec = cspec.get("clock_offset_ms", 0)
            off_rng = random.Random("%d:consumers.%d.%d.clock" % (seed, g, m))
            if isinstance(off_spec, dict) and "normal" in off_spec:  # an offset may be negative
                offset = off_rng.gauss(float(off_spec["normal"]["mean"]), float(off_spec["normal"]["sd"]))
            else:
                offset = dist_sampler(off_spec, off_rng, "consumers.%d.clock_offset_ms" % g)()
            declare = None
            if queues.get(cspec["queue"], {}).get("expires_ms") is not None:
                declare = (durable, queue_arguments(queues[cspec["queue"]], kind, version))
            consumers.append(RealConsumer(k, cspec, broker, clock, jobs, stop_clients, stalls, offset, go, declare))
            k += 1
    producers = [Producer(i, p, schedules[i], broker, clock, jobs, jobs_lock, stop_clients, go,
                          confirm=queues.get(p["queue"], {}).get("overflow") == "reject-publish")
                 for i, p in enumerate(scn["producers"])]
    observer = DeadLetterObserver(broker, clock, jobs, dl_targets, stop_observers) if dl_targets else None
    monitor = Monitor(broker, clock, sorted(queues), stop_observers)
    plan = [(t, name, durable, queue_arguments(queues[name], kind, version))
            for name in sorted(queues) for t in declare_times(queues[name], stop_ms)]
    declarer = Declarer(broker, clock, plan, stop_clients) if plan else None

    try:
        if observer:
            observer.start()
            observer.ready.wait(30)
        for c in consumers:
            c.start()
        for p in producers:
            p.start()
        for c in consumers:
            if not c.ready.wait(30) or c.error:
                raise RuntimeError("consumer %d could not connect: %r" % (c.index, c.error))
        for p in producers:
            if not p.connected.wait(30) or p.error:
                raise RuntimeError("producer %d could not connect: %r" % (p.index, p.error))
        # t0 a little in the future, so every consumer with start_ms 0 is attached before it.
        clock.t0 = time.monotonic() + 1.0
        go.set()
        for c in consumers:
            if float(c.spec.get("start_ms", 0)) == 0 and not c.consuming.wait(5):
                raise RuntimeError("consumer %d did not attach" % c.index)
        late = clock.now_ms()
        if late > 0:
            print("  warning: consumers attached %.1f ms after t0" % late)
        monitor.start()
        if declarer:
            declarer.start()
        # run until stop.time_ms, or earlier once everything is settled (brokersim: "drained")
        stop_reason = "time"
        while clock.now_ms() < stop_ms:
            time.sleep(0.02)
            if any(c.error for c in consumers) or any(p.error for p in producers):
                raise RuntimeError("a client failed: %r" % ([c.error for c in consumers] + [p.error for p in producers]))
            if all(p.done.is_set() for p in producers) and jobs and all(settled(r) for r in list(jobs)):
                stop_reason = "drained"
                break
        t_end = clock.now_ms()
        stop_clients.set()
        # keep the observer a moment: dead letters of expiries just before stop.time_ms
        time.sleep(0.5)
    except BaseException:
        raise
    finally:
        stop_clients.set()
        go.set()
        for c in consumers:
            with c.cond:
                c.cond.notify_all()
        stop_observers.set()
        for t in producers + ([observer] if observer else []) + [monitor] + ([declarer] if declarer else []):
            if t.is_alive() or t.ident:
                t.join(10)
        for c in consumers:
            c.join(10)
    errors = [repr(x.error) for x in consumers + producers + [monitor] + ([observer] if observer else []) +
              ([declarer] if declarer else []) if x.error]
    raw = {"jobs": jobs, "stop_ms": stop_ms, "t_end": t_end, "stop_reason": stop_reason, "work": work,
           "source": source, "declares": declarer.done if declarer else [],
           "monitor": monitor.samples, "dlq_received": observer.received if observer else {},
           "consumers": [{"index": c.index, "clock_offset_ms": c.offset} for c in consumers],
           "errors": errors}
    return raw


def settled(r):
    return ("finished" in r or "rejected" in r or "rejected_at_publish" in r or "refused_at_publish" in r
            or any(d["reason"] in ("expired", "delivery_limit", "maxlen") and d.get("by") is None
                   for d in r.get("dead_letters", [])))
