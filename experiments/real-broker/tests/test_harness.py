#!/usr/bin/env python3
"""The real-broker harness's own rules, checked without a broker, brokersim or pika: the refusals of
the scenario subset, the queue arguments, the version mapping, how a returned job is classified and
what is counted per delivery, the dead-letter reader (issue 21 items 10 and 11: the consumers read
the dead-letter target from their start_ms, declares at stated times, the node's retry period);
and that none of it (nor --help, --list) needs the broker client.

Run: python3 experiments/real-broker/tests/test_harness.py (ctest runs it with a stand-in pika
that fails to import, tests/stand-ins/pika), or compare.py --self-test."""

import copy
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # experiments/real-broker
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import realbroker  # noqa: E402 (after the path)
from realbroker import cases, client  # noqa: E402
from realbroker.cases import dlx_scenarios, generated_scenarios, grid_scenario, qgrid_scenario, qlimit_scenarios  # noqa: E402,E501
from realbroker.node import advanced_config  # noqa: E402
from realbroker.observed import absent_intervals, classify, observed_metrics, observed_schedules  # noqa: E402
from realbroker.replay import settled  # noqa: E402
from realbroker.subset import (Unsupported, brokersim_version_for, check_subset, declare_times,  # noqa: E402
                               node_settings, queue_arguments, source_queue)


def refusal(scn):
    """The key path a scenario is refused at, or None if the harness replays it."""
    try:
        check_subset(scn)
        return None
    except Unsupported as e:
        return str(e).split(":")[0]


class Subset(unittest.TestCase):
    def test_built_in_quorum_cases_accepted(self):
        self.assertIsNone(refusal(qgrid_scenario(2, 1, 0.8)), "qgrid accepted")
        for scn in qlimit_scenarios():
            self.assertIsNone(refusal(scn), "%s accepted" % scn["name"])

    def test_refusals_name_the_key(self):
        q = qgrid_scenario(2, 1, 0.8)
        bad = copy.deepcopy(q)
        bad["broker"]["queues"]["work"]["overflow"] = "reject-publish-dlx"
        self.assertEqual(refusal(bad), "broker.queues.work.overflow", "quorum reject-publish-dlx")
        bad = copy.deepcopy(q)
        bad["broker"]["queues"]["work"]["delivery_limit"] = -2
        self.assertEqual(refusal(bad), "broker.queues.work.delivery_limit", "delivery_limit -2")
        bad = copy.deepcopy(q)
        bad["broker"]["queues"]["work"]["max_length"] = 10
        del bad["broker"]["queues"]["work"]["dead_letter_to"]
        self.assertEqual(refusal(bad), "broker.queues.work.max_length", "drop-head without a target")
        bad = grid_scenario(2, 1, 0.8)
        bad["broker"]["queues"]["work"]["delivery_limit"] = 3
        self.assertEqual(refusal(bad), "broker.queues.work.delivery_limit", "delivery_limit on classic")
        for k, v in (("max_length", 1), ("expires_ms", 1000)):
            bad = copy.deepcopy(q)
            bad["broker"]["queues"]["dlq"] = {k: v, "overflow": "reject-publish"}
            self.assertEqual(refusal(bad), "broker.queues.dlq.%s" % k, "%s on the observed dead-letter queue" % k)
        bad = copy.deepcopy(q)
        bad["consumers"][0]["on_expired"] = "drop"
        self.assertEqual(refusal(bad), "consumers.0.on_expired", "on_expired drop")


class QueueArguments(unittest.TestCase):
    def test_quorum(self):
        self.assertEqual(queue_arguments({"delivery_limit": 2, "dead_letter_to": "dlq"}, "rabbitmq-quorum", "3.13"),
                         {"x-queue-type": "quorum", "x-delivery-limit": 2, "x-dead-letter-exchange": "",
                          "x-dead-letter-routing-key": "dlq"})

    def test_default_delivery_limit_by_version(self):
        self.assertEqual(queue_arguments({}, "rabbitmq-quorum", "4.2").get("x-delivery-limit"), 20, "4.2 default limit")
        self.assertNotIn("x-delivery-limit", queue_arguments({}, "rabbitmq-quorum", "3.13"), "3.13 no default limit")
        self.assertNotIn("x-delivery-limit", queue_arguments({"delivery_limit": -1}, "rabbitmq-quorum", "4.2"),
                         "-1 declares no limit")

    def test_classic(self):
        self.assertEqual(queue_arguments({}, "rabbitmq-classic"), {"x-queue-type": "classic"})


class VersionMapping(unittest.TestCase):
    def test_brokersim_version_for_node(self):
        for node_version, want in (("3.10.8", "3.13"), ("4.1.4", "4.0"), ("4.2.1", "4.2"), ("4.3.0", "4.3"),
                                   ("?", None)):
            self.assertEqual(brokersim_version_for(node_version), want, "version for %s" % node_version)


BASE = {"created": 0.0, "published": 0.1, "expires_at": 100.0}


def dead_letter(reason, t):
    return {"t": t, "reason": reason, "from": "work", "to": "dlq", "expiration_prop": None}


class Classification(unittest.TestCase):
    def outcome(self, **job):
        return classify(dict(BASE, **job), 200)[0]

    def test_returned_job_is_decided_again(self):
        self.assertEqual(self.outcome(received=1.0, requeues=1), "in_system", "returned, back in the queue at T")
        self.assertEqual(self.outcome(received=1.0, requeues=3, dead_letters=[dead_letter("delivery_limit", 150)]),
                         "dead_lettered", "returned, then past the limit")
        self.assertEqual(self.outcome(received=1.0, requeues=1, dead_letters=[dead_letter("expired", 150)]),
                         "expired_in_queue", "returned, then its TTL")
        self.assertEqual(self.outcome(received=1.0, requeues=1, dead_letters=[dead_letter("delivery_limit", 250)]),
                         "in_system", "dead letter after T")

    def test_refused_publish(self):
        self.assertEqual(self.outcome(refused_at_publish=0.2), "rejected_at_publish")

    def test_rejected_received_stale(self):
        self.assertEqual(self.outcome(received=1.0, rejected=120.0, rejected_received=110.0), "expired_in_transit")


class PerDelivery(unittest.TestCase):
    def test_three_deliveries_the_third_past_T(self):
        # one job, two returns: two deliveries counted by T, one redelivery
        job = dict(BASE, producer=0, scheduled=0.0, service=10.0, deliveries=3, received=1.0, requeues=2,
                   consumer=0, queue_waits=[(1.0, 0.9), (5.0, 2.0), (250.0, 3.0)],
                   local_waits=[(2.0, 1.0), (6.0, 1.0)])
        raw = {"jobs": [job], "stop_ms": 200.0, "t_end": 200.0, "stop_reason": "time", "work": "work",
               "monitor": {}, "dlq_received": {}, "consumers": [], "errors": []}
        m = observed_metrics(qlimit_scenarios()[0], raw)
        self.assertEqual(m["queues"]["work"]["delivered"], 2, "delivered by T")
        self.assertEqual(m["redeliveries"], 1, "redeliveries by T")
        self.assertEqual(m["wait_ms"]["queue"]["count"], 2, "queue waits per delivery")
        self.assertIn("delivery_limit", m["queues"]["work"]["dead_lettered_by_reason"],
                      "delivery_limit reason kept on quorum")


def dlx(name):
    return copy.deepcopy(next(s for s in dlx_scenarios() if s["name"] == name))


class DeadLetterReader(unittest.TestCase):
    """Issue 21 items 10 and 11: the consumers read the dead-letter target of the producers' queue."""

    def test_cases_accepted_and_the_queues_they_read(self):
        for scn in dlx_scenarios():
            self.assertIsNone(refusal(scn), "%s accepted" % scn["name"])
            read = "q" if scn["name"] == "qdlx-publish-over-limit" else "dlq"
            self.assertEqual(check_subset(scn), read, "%s: the consumers read %s" % (scn["name"], read))
            self.assertEqual(source_queue(scn, read), "q", "%s: the producers publish to q" % scn["name"])
        q = qgrid_scenario(2, 1, 0.8)
        self.assertEqual(source_queue(q, "work"), "work", "the grid: producers and consumers on one queue")

    def test_refusals_name_the_key(self):
        bad = dlx("qdlx-deleted-target")
        bad["broker"]["queues"]["q"]["dead_letter_strategy"] = "at-most-once"
        self.assertEqual(refusal(bad), "broker.queues.dlq.expires_ms",
                         "a deleted target under at-most-once: the dead letter is dropped unseen")
        bad = dlx("qdlx-deleted-target")
        bad["broker"]["queues"]["q"]["overflow"] = "drop-head"
        self.assertEqual(refusal(bad), "broker.queues.dlq.expires_ms", "at-least-once needs reject-publish")
        bad = dlx("qdlx-full-target-alo")
        bad["broker"]["kind"] = "rabbitmq-classic"
        for k in ("dead_letter_strategy",):
            bad["broker"]["queues"]["q"].pop(k)
        bad["broker"].pop("dead_letter_confirm_timeout_ms")
        self.assertEqual(refusal(bad), "broker.queues.dlq.max_length", "a full classic target drops unseen")
        bad = dlx("qdlx-deleted-target")
        del bad["broker"]["queues"]["dlq"]["expires_ms"]
        self.assertEqual(refusal(bad), "broker.queues.dlq.declare_at_ms", "a declare without expires_ms")
        bad = dlx("qdlx-deleted-target")
        bad["broker"]["queues"]["dlq"]["declare_at_ms"] = [-1]
        self.assertEqual(refusal(bad), "broker.queues.dlq.declare_at_ms", "a negative declare time")
        bad = dlx("qdlx-deleted-target")
        bad["broker"]["queues"]["dlq"]["declare_every_ms"] = 0
        self.assertEqual(refusal(bad), "broker.queues.dlq.declare_every_ms", "declare_every_ms 0")
        for v in (0, 2.5, "10 s", True):
            bad = dlx("qdlx-deleted-target")
            bad["broker"]["dead_letter_confirm_timeout_ms"] = v
            self.assertEqual(refusal(bad), "broker.dead_letter_confirm_timeout_ms", "retry period %r" % (v,))
        bad = dlx("qdlx-full-target-alo")
        bad["broker"]["queues"]["dlq"]["dead_letter_to"] = "q"
        self.assertEqual(refusal(bad), "broker.queues.dlq.dead_letter_to", "a consumed target dead-lettering on")
        bad = dlx("qdlx-full-target-alo")
        bad["broker"]["queues"]["other"] = {}
        bad["producers"][1]["queue"] = "other"
        self.assertEqual(refusal(bad), "producers.0.queue", "producers to two queues")
        bad = dlx("qdlx-full-target-alo")
        bad["broker"]["queues"]["q"]["dead_letter_to"] = "elsewhere"
        bad["broker"]["queues"]["elsewhere"] = {}
        self.assertEqual(refusal(bad), "producers.0.queue", "q does not dead-letter into the consumed queue")

    def test_declare_times_and_node_settings(self):
        self.assertEqual(declare_times({"declare_at_ms": [20000, 5000, 40000]}, 30000), [5000.0, 20000.0])
        self.assertEqual(declare_times({"declare_every_ms": 10000, "declare_at_ms": [10000, 15000]}, 30000),
                         [10000.0, 15000.0, 20000.0, 30000.0])
        self.assertEqual(declare_times({}, 30000), [])
        self.assertEqual(node_settings(dlx("qdlx-deleted-target")),
                         {"dead_letter_worker_publisher_confirm_timeout": cases.DLX_RETRY_MS})
        self.assertEqual(node_settings(qgrid_scenario(2, 1, 0.8)), {}, "the node's defaults")
        self.assertEqual(advanced_config({"dead_letter_worker_publisher_confirm_timeout": 30000}),
                         "[{rabbit, [{dead_letter_worker_publisher_confirm_timeout, 30000}]}].\n")
        self.assertEqual(advanced_config({}), "[{rabbit, []}].\n")
        with self.assertRaises(ValueError):
            advanced_config({"x}]}.": 1})

    def test_queue_arguments_of_the_target(self):
        self.assertEqual(queue_arguments({"expires_ms": 1000, "declare_at_ms": [20000]}, "rabbitmq-quorum", "3.13"),
                         {"x-queue-type": "quorum", "x-expires": 1000}, "declare_at_ms is no queue argument")
        self.assertEqual(queue_arguments({"max_length": 1, "overflow": "reject-publish"}, "rabbitmq-quorum", "3.13"),
                         {"x-queue-type": "quorum", "x-max-length": 1, "x-overflow": "reject-publish"})

    def test_a_job_read_from_the_target_is_decided_by_its_reader(self):
        read = {"t": 5000.0, "reason": "expired", "from": "q", "to": "dlq", "expiration_prop": "1000", "by": "consumer"}
        job = dict(BASE, expires_at=None, received=5000.0, started=5000.1, finished=5010.0, dead_letters=[read])
        self.assertEqual(classify(job, 25000)[0], "completed_on_time", "read from dlq and completed")
        self.assertTrue(settled(job), "finished: settled")
        waiting = dict(BASE, expires_at=None, received=5000.0, dead_letters=[read])
        self.assertEqual(classify(waiting, 25000)[0], "in_system", "received from dlq, not yet started")
        self.assertFalse(settled(waiting), "its dead letter, seen by the reader, does not settle it")
        held = dict(BASE, expires_at=None)
        self.assertEqual(classify(held, 25000)[0], "in_system", "held by the dead-letter worker at T")
        observed = dict(BASE, expires_at=None, dead_letters=[dict(read, by=None)])
        del observed["dead_letters"][0]["by"]
        self.assertEqual(classify(observed, 25000)[0], "expired_in_queue", "the observer's record decides")

    def test_metrics_of_a_reader_run(self):
        scn = dlx("qdlx-deleted-target")
        read = {"t": 26000.0, "reason": "expired", "from": "q", "to": "dlq", "expiration_prop": "6000", "by": "consumer"}
        job = dict(BASE, expires_at=None, producer=0, scheduled=0.0, service=10.0, deliveries=1, received=26000.0,
                   started=26000.1, finished=26010.0, consumer=0, queue_waits=[(26000.0, 25999.9)],
                   local_waits=[(26000.1, 0.1)], dead_letters=[read])
        monitor = {"dlq": [(0.0, 0), (4000.0, None), (4100.0, None), (20100.0, 0)], "q": [(0.0, 1), (100.0, 1)]}
        raw = {"jobs": [job], "stop_ms": 30000.0, "t_end": 30000.0, "stop_reason": "time", "work": "dlq",
               "source": "q", "monitor": monitor, "dlq_received": {}, "consumers": [], "errors": [], "declares": []}
        m = observed_metrics(scn, raw)
        self.assertEqual(m["outcomes"]["completed_on_time"], 1)
        self.assertEqual(m["queues"]["q"]["published"], 1, "published into the producers' queue")
        self.assertEqual(m["queues"]["q"]["dead_lettered_by_reason"]["expired"], 1, "q's dead letter, seen at dlq")
        self.assertEqual(m["queues"]["dlq"]["published"], 1, "dead letters the reader got from dlq")
        self.assertEqual(m["queues"]["dlq"]["delivered"], 1)
        self.assertEqual(m["queues"]["dlq"]["max_ready"], 0, "samples of a deleted queue are left out")
        self.assertEqual(m["harness"]["queue_absent_ms"], {"dlq": [[4000.0, 4100.0]]})
        self.assertEqual(m["harness"]["dead_letter_after_ttl_ms"]["count"], 0, "a reader's receipt is no TTL lateness")

    def test_absent_intervals(self):
        self.assertEqual(absent_intervals({"a": [(0, 1), (1, None), (2, None), (3, 0), (4, None)], "b": [(0, 0)]}),
                         {"a": [[1, 2], [4, 4]]})

    def test_observed_schedules(self):
        schedules = [[(0.0, 10.0), (0.0, 11.0)], [(2000.0, 12.0)]]
        jobs = [{"producer": 0, "index": 0, "created": 0.1, "published": 0.9},
                {"producer": 0, "index": 1, "created": 0.2, "published": None},
                {"producer": 1, "index": 0, "created": 2000.1, "published": 2000.6}]
        self.assertEqual(observed_schedules(jobs, schedules), [[(0.9, 10.0), (0.9, 11.0)], [(2000.6, 12.0)]],
                         "observed publish times, kept in time order, with the drawn service demands")


class GeneratedScenarios(unittest.TestCase):
    def test_scenarios_dir_is_what_write_grid_scenarios_writes(self):
        generated = generated_scenarios()
        self.assertEqual(len(generated), 2 * len(cases.GRID) + len(qlimit_scenarios()) + len(dlx_scenarios()))
        for scn in generated:
            with open(os.path.join(HERE, "scenarios", scn["name"] + ".json")) as f:
                self.assertEqual(f.read(), json.dumps(scn, indent=2) + "\n", scn["name"])


class WithoutPika(unittest.TestCase):
    def test_no_module_imports_pika(self):
        # pika is loaded only by client.need_pika(), where a real broker is used
        for m in pkgutil.iter_modules(realbroker.__path__):
            importlib.import_module("realbroker." + m.name)
        self.assertNotIn("pika", sys.modules)
        self.assertIsNone(client.pika)

    def compare_py(self, *args):
        # the stand-in pika fails to import, as on a machine without python3-pika
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tests", "stand-ins"), BROKERSIM_CMP_REEXEC="1")
        return subprocess.run([sys.executable, os.path.join(HERE, "compare.py")] + list(args), env=env,
                              capture_output=True, text=True, timeout=60)

    def test_help_and_list(self):
        p = self.compare_py("--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--self-test", p.stdout)
        p = self.compare_py("--list")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([line.split()[0] for line in p.stdout.splitlines()], [n for n, _, _ in cases.all_cases()])


if __name__ == "__main__":
    unittest.main()
