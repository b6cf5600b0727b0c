#!/usr/bin/env python3
"""The real-broker harness's own rules, checked without a broker, brokersim or pika: the refusals of
the scenario subset, the queue arguments, the version mapping, how a returned job is classified and
what is counted per delivery; and that none of it (nor --help, --list) needs the broker client.

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
from realbroker.cases import grid_scenario, qgrid_scenario, qlimit_scenarios  # noqa: E402
from realbroker.observed import classify, observed_metrics  # noqa: E402
from realbroker.subset import Unsupported, brokersim_version_for, check_subset, queue_arguments  # noqa: E402


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


class GeneratedScenarios(unittest.TestCase):
    def test_scenarios_dir_is_what_write_grid_scenarios_writes(self):
        generated = [grid_scenario(c, p, u) for c, p, u in cases.GRID] + \
            [qgrid_scenario(c, p, u) for c, p, u in cases.GRID] + qlimit_scenarios()
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
