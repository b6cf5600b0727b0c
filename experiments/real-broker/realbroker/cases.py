"""The built-in cases: seed 000's prefetch boundary, the capacity grid on classic and quorum queues,
the delivery-limit cases and the dead-lettering cases; --write-grid-scenarios writes the generated ones to scenarios/."""

import copy
import json
import os

from . import HERE, REPO

GRID = [(c, p, u) for c in (2, 4) for p in (1, 16) for u in (0.8, 1.1)]
GRID_SERVICE_MEAN_MS = 50.0
GRID_TTL_MS = 250
GRID_STOP_MS = 25000
GRID_WARMUP_MS = 1000


def grid_name(consumers, prefetch, util):
    return "grid-c%d-p%d-u%s" % (consumers, prefetch, ("%.1f" % util).replace(".", "_"))


def grid_scenario(consumers, prefetch, util):
    slots = 1
    rate = util * consumers * slots / (GRID_SERVICE_MEAN_MS / 1000.0)
    return {
        "name": grid_name(consumers, prefetch, util),
        "seed": 1,
        "stop": {"time_ms": GRID_STOP_MS},
        "warmup_ms": GRID_WARMUP_MS,
        "broker": {
            "kind": "rabbitmq-classic",
            "version": "3.13",
            "delivery_latency_ms": 0.3,
            "ack_latency_ms": 0.3,
            "queues": {
                "work": {"message_ttl_ms": GRID_TTL_MS, "dead_letter_to": "dlq"},
                "dlq": {},
            },
        },
        "producers": [{
            "queue": "work",
            "arrivals": {"poisson": {"rate_per_s": round(rate, 6)}},
            "deadline_ms": GRID_TTL_MS,
            "expiration_ms": None,
            "service_ms": {"exp": {"mean": GRID_SERVICE_MEAN_MS}},
        }],
        "consumers": [{
            "queue": "work", "count": consumers, "prefetch": prefetch, "slots": slots,
            "uncertainty_ms": 0, "admission": "check-before-start", "on_expired": "ack",
        }],
    }


def qgrid_name(consumers, prefetch, util):
    return "q" + grid_name(consumers, prefetch, util)


def qgrid_scenario(consumers, prefetch, util):
    """The grid on quorum queues.  Version 3.13: Debian 12 ships RabbitMQ 3.10, whose quorum rules
    are brokersim's 3.13 ones (no default delivery limit, every return counts)."""
    scn = grid_scenario(consumers, prefetch, util)
    scn["name"] = qgrid_name(consumers, prefetch, util)
    scn["broker"]["kind"] = "rabbitmq-quorum"
    return scn


def qlimit_scenarios():
    """Two cases for the delivery limit: stale jobs requeued (on_expired requeue) until the
    quorum queue dead-letters them with reason delivery_limit."""
    # seed 000's shape: three jobs at t=0, the consumer stalled past their deadline, no queue TTL;
    # after the stall each job is rejected and requeued three times, the third return passes the
    # limit of 2 and it is dead-lettered.
    stall = {
        "name": "qlimit-stall",
        "seed": 7,
        "stop": {"time_ms": 3000},
        "broker": {
            "kind": "rabbitmq-quorum",
            "version": "3.13",
            "delivery_latency_ms": 0.3,
            "ack_latency_ms": 0.3,
            "queues": {"work": {"delivery_limit": 2, "dead_letter_to": "dlq"}, "dlq": {}},
        },
        "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 0, 0]}, "deadline_ms": 600,
                       "service_ms": 100}],
        "consumers": [{"queue": "work", "count": 1, "prefetch": 3, "slots": 1,
                       "admission": "check-before-start", "on_expired": "requeue"}],
        "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 1050}],
    }
    # the overloaded prefetch-16 grid point with requeue instead of ack and a limit of 2: stale
    # jobs cycle through the returns (served first) before they are dead-lettered.
    load = grid_scenario(2, 16, 1.1)
    load["name"] = "qlimit-c2-p16-u1_1"
    load["broker"]["kind"] = "rabbitmq-quorum"
    load["broker"]["queues"]["work"] = {"delivery_limit": 2, "dead_letter_to": "dlq"}
    load["consumers"][0]["on_expired"] = "requeue"
    # no limit (-1): where does a return go?  One stale job at the head and two fresh ones behind
    # it, prefetch 1: served first, the stale job comes straight back and the fresh ones wait
    # behind it until the run stops; at the tail, the fresh ones run between its returns.
    order = copy.deepcopy(stall)
    order["name"] = "qrequeue-nolimit"
    order["broker"]["queues"]["work"] = {"delivery_limit": -1}
    order["broker"]["queues"].pop("dlq")
    order["producers"] = [
        {"queue": "work", "arrivals": {"at_ms": [0]}, "deadline_ms": 100, "service_ms": 100},
        {"queue": "work", "arrivals": {"at_ms": [1, 2]}, "deadline_ms": 10000, "service_ms": 100},
    ]
    order["consumers"][0]["prefetch"] = 1
    order["faults"] = [{"at_ms": 0, "consumer": 0, "stall_ms": 500}]
    return [stall, load, order]


# The dead-letter worker's retry period the issue 21 cases run with, on both sides: the node's
# dead_letter_worker_publisher_confirm_timeout (advanced.config) and brokersim's
# broker.dead_letter_confirm_timeout_ms (the default, 180 s, would make each case minutes long).
DLX_RETRY_MS = 10000


def dlx_scenarios():
    """Issue 21 items 10 and 11: quorum dead-lettering into a target that cannot take the message,
    replayed with the consumers reading the dead-letter target from their start_ms (the harness's
    dead-letter reader), so the target can fill or be deleted first.  The shapes are brokersim's own
    tests (tests/test_quorum_dlx.cpp), at a 10 s retry period and with the instants spread 100 ms
    apart (a real broker's notices take milliseconds)."""
    def base(name, stop_ms, queues, producers, start_ms):
        return {
            "name": name,
            "seed": 21,
            # follow_ms 0: brokersim's outcomes at stop.time_ms, a snapshot, as the harness classifies
            "stop": {"time_ms": stop_ms, "follow_ms": 0},
            "broker": {"kind": "rabbitmq-quorum", "version": "3.13", "delivery_latency_ms": 0.3,
                       "ack_latency_ms": 0.3, "dead_letter_confirm_timeout_ms": DLX_RETRY_MS, "queues": queues},
            "producers": producers,
            "consumers": [{"queue": "dlq", "count": 1, "prefetch": 1, "slots": 1, "start_ms": start_ms}],
        }
    alo = {"dead_letter_to": "dlq", "dead_letter_strategy": "at-least-once", "overflow": "reject-publish"}
    # item 10: one message expiring at 6000 into dlq, which x-expires (1 s, checked on the quorum
    # queue's 5 s tick) has deleted; a client declares dlq again at 20000 and its reader attaches at
    # 21000.  The worker holds the dead letter from 6000, its timer finds no dlq at 16000, and
    # delivers it at 26000: not at the re-declare, not when the reader attaches.
    deleted = base("qdlx-deleted-target", 30000,
                   {"q": dict(alo), "dlq": {"expires_ms": 1000, "declare_at_ms": [20000]}},
                   [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 6000, "service_ms": 10}], 21000)
    # item 11: four messages expiring at 1000, 1100, 1200 and 1300 into dlq (max_length 1,
    # reject-publish), read from 5000; three more published into q (max_length 4) at 2000.
    # at-least-once: the first two get in (the second puts dlq over its limit), the third and
    # fourth are refused and held in q (counting toward its max_length), the timer republishes them
    # 10 s after their refusal, one firing apart.
    full_q = dict(alo, max_length=4)
    full_producers = [
        {"queue": "q", "arrivals": {"at_ms": [0, 100, 200, 300]}, "expiration_ms": 1000, "service_ms": 10},
        {"queue": "q", "arrivals": {"at_ms": [2000, 2000, 2000]}, "service_ms": 10},
    ]
    full = base("qdlx-full-target-alo", 25000, {"q": full_q, "dlq": {"max_length": 1, "overflow": "reject-publish"}},
                full_producers, 5000)
    # at-most-once: untracked enqueues, never refused: all four get in past the limit of 1
    most = copy.deepcopy(full)
    most["name"] = "qdlx-full-target-amo"
    most["broker"]["queues"]["q"]["dead_letter_strategy"] = "at-most-once"
    # at-least-once, the four messages published (and so expiring) together: brokersim's "dead
    # letters of one instant all get in"; on the broker the instant is the few ms the four
    # confirmed publishes take
    batch = copy.deepcopy(full)
    batch["name"] = "qdlx-full-target-batch"
    batch["producers"][0]["arrivals"] = {"at_ms": [0, 0, 0, 0]}
    # the rule behind item 11 for an ordinary publisher: q (max_length 2, reject-publish) read only
    # from 900 ms, four confirmed publishes 10 ms apart; rabbit_fifo takes an enqueue until the
    # queue is over its limit, so the third gets in and the fourth is refused
    publish = {
        "name": "qdlx-publish-over-limit",
        "seed": 21,
        "stop": {"time_ms": 2000, "follow_ms": 0},
        "broker": {"kind": "rabbitmq-quorum", "version": "3.13", "delivery_latency_ms": 0.3, "ack_latency_ms": 0.3,
                   "queues": {"q": {"max_length": 2, "overflow": "reject-publish"}}},
        "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 10, 20, 30]}, "service_ms": 10}],
        "consumers": [{"queue": "q", "count": 1, "prefetch": 1, "slots": 1, "start_ms": 900}],
    }
    return [deleted, full, most, batch, publish]


def generated_scenarios():
    """Every scenario in scenarios/, as --write-grid-scenarios writes it."""
    return [grid_scenario(c, p, u) for c, p, u in GRID] + [qgrid_scenario(c, p, u) for c, p, u in GRID] + \
        qlimit_scenarios() + dlx_scenarios()


def all_cases():
    seed = os.path.join(REPO, "experiments", "scenarios", "prefetch-boundary.json")
    cases = [
        ("prefetch-boundary-p1", seed, ["consumers.0.prefetch=1"]),
        ("prefetch-boundary-p3", seed, ["consumers.0.prefetch=3"]),
    ]
    names = [s["name"] for s in generated_scenarios()]
    for name in names:
        cases.append((name, os.path.join(HERE, "scenarios", name + ".json"), []))
    return cases


def write_grid_scenarios():
    d = os.path.join(HERE, "scenarios")
    os.makedirs(d, exist_ok=True)
    for scn in generated_scenarios():
        path = os.path.join(d, scn["name"] + ".json")
        with open(path, "w") as f:
            json.dump(scn, f, indent=2)
            f.write("\n")
        print("wrote", os.path.relpath(path, REPO))
