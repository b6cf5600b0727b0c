"""The built-in cases: seed 000's prefetch boundary, the capacity grid on classic and quorum queues,
and the delivery-limit cases; --write-grid-scenarios writes the generated ones to scenarios/."""

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


def all_cases():
    seed = os.path.join(REPO, "experiments", "scenarios", "prefetch-boundary.json")
    cases = [
        ("prefetch-boundary-p1", seed, ["consumers.0.prefetch=1"]),
        ("prefetch-boundary-p3", seed, ["consumers.0.prefetch=3"]),
    ]
    names = [grid_name(c, p, u) for c, p, u in GRID] + [qgrid_name(c, p, u) for c, p, u in GRID] + \
        [s["name"] for s in qlimit_scenarios()]
    for name in names:
        cases.append((name, os.path.join(HERE, "scenarios", name + ".json"), []))
    return cases


def write_grid_scenarios():
    d = os.path.join(HERE, "scenarios")
    os.makedirs(d, exist_ok=True)
    scenarios = [grid_scenario(c, p, u) for c, p, u in GRID] + [qgrid_scenario(c, p, u) for c, p, u in GRID] + \
        qlimit_scenarios()
    for scn in scenarios:
        path = os.path.join(d, scn["name"] + ".json")
        with open(path, "w") as f:
            json.dump(scn, f, indent=2)
            f.write("\n")
        print("wrote", os.path.relpath(path, REPO))
