"""The command line of compare.py: choose the cases, validate them all before a broker starts, run
or re-predict them on one private node, or print the tables, list the cases, write the grid
scenarios, run the self-test."""

import argparse
import copy
import json
import os
import signal
import subprocess
import sys

from . import HERE, REPO
from .cases import all_cases, grid_scenario, qgrid_scenario, qlimit_scenarios, write_grid_scenarios
from .client import need_pika
from .node import PrivateBroker
from .observed import classify, observed_metrics
from .results import print_table, repredict_case, run_case
from .subset import Unsupported, apply_set, brokersim_version_for, check_subset, queue_arguments


def latency_pair(text):
    if text.lower() == "none":
        return None
    if text.lower() == "auto":
        return "auto"
    a, sep, b = text.partition(",")
    if not sep:
        raise argparse.ArgumentTypeError("expected DELIVERY,ACK in ms, e.g. 1.0,0.5")
    return float(a), float(b)


def self_test():
    """--self-test: the harness's own rules without a broker (subset, queue arguments, version
    mapping, classification of returned jobs, per-delivery counting). Exit 0 if they all hold."""
    failures = []

    def check(what, got, want):
        if got != want:
            failures.append("%s: got %r, want %r" % (what, got, want))

    def refusal(scn):
        try:
            check_subset(scn)
            return None
        except Unsupported as e:
            return str(e).split(":")[0]

    q = qgrid_scenario(2, 1, 0.8)
    check("qgrid accepted", refusal(q), None)
    for scn in qlimit_scenarios():
        check("%s accepted" % scn["name"], refusal(scn), None)
    bad = copy.deepcopy(q)
    bad["broker"]["queues"]["work"]["overflow"] = "reject-publish-dlx"
    check("quorum reject-publish-dlx", refusal(bad), "broker.queues.work.overflow")
    bad = copy.deepcopy(q)
    bad["broker"]["queues"]["work"]["delivery_limit"] = -2
    check("delivery_limit -2", refusal(bad), "broker.queues.work.delivery_limit")
    bad = copy.deepcopy(q)
    bad["broker"]["queues"]["work"]["max_length"] = 10
    del bad["broker"]["queues"]["work"]["dead_letter_to"]
    check("drop-head without a target", refusal(bad), "broker.queues.work.max_length")
    bad = grid_scenario(2, 1, 0.8)
    bad["broker"]["queues"]["work"]["delivery_limit"] = 3
    check("delivery_limit on classic", refusal(bad), "broker.queues.work.delivery_limit")
    bad = copy.deepcopy(q)
    bad["consumers"][0]["on_expired"] = "drop"
    check("on_expired drop", refusal(bad), "consumers.0.on_expired")

    check("quorum args", queue_arguments({"delivery_limit": 2, "dead_letter_to": "dlq"}, "rabbitmq-quorum", "3.13"),
          {"x-queue-type": "quorum", "x-delivery-limit": 2, "x-dead-letter-exchange": "",
           "x-dead-letter-routing-key": "dlq"})
    check("4.2 default limit", queue_arguments({}, "rabbitmq-quorum", "4.2").get("x-delivery-limit"), 20)
    check("3.13 no default limit", "x-delivery-limit" in queue_arguments({}, "rabbitmq-quorum", "3.13"), False)
    check("-1 declares no limit", "x-delivery-limit" in queue_arguments({"delivery_limit": -1}, "rabbitmq-quorum", "4.2"),
          False)
    check("classic args", queue_arguments({}, "rabbitmq-classic"), {"x-queue-type": "classic"})
    for node, want in (("3.10.8", "3.13"), ("4.1.4", "4.0"), ("4.2.1", "4.2"), ("4.3.0", "4.3"), ("?", None)):
        check("version for %s" % node, brokersim_version_for(node), want)

    base = {"created": 0.0, "published": 0.1, "expires_at": 100.0}
    dl = lambda reason, t: {"t": t, "reason": reason, "from": "work", "to": "dlq", "expiration_prop": None}
    check("returned, back in the queue at T", classify(dict(base, received=1.0, requeues=1), 200)[0], "in_system")
    check("returned, then past the limit",
          classify(dict(base, received=1.0, requeues=3, dead_letters=[dl("delivery_limit", 150)]), 200)[0],
          "dead_lettered")
    check("returned, then its TTL", classify(dict(base, received=1.0, requeues=1, dead_letters=[dl("expired", 150)]),
                                             200)[0], "expired_in_queue")
    check("dead letter after T", classify(dict(base, received=1.0, requeues=1, dead_letters=[dl("delivery_limit", 250)]),
                                          200)[0], "in_system")
    check("refused publish", classify(dict(base, refused_at_publish=0.2), 200)[0], "rejected_at_publish")
    check("rejected, received stale", classify(dict(base, received=1.0, rejected=120.0, rejected_received=110.0), 200)[0],
          "expired_in_transit")

    # three deliveries of one job (two returns), the third past T: two counted, one redelivery
    job = dict(base, producer=0, scheduled=0.0, service=10.0, deliveries=3, received=1.0, requeues=2,
               consumer=0, queue_waits=[(1.0, 0.9), (5.0, 2.0), (250.0, 3.0)],
               local_waits=[(2.0, 1.0), (6.0, 1.0)])
    scn = qlimit_scenarios()[0]
    raw = {"jobs": [job], "stop_ms": 200.0, "t_end": 200.0, "stop_reason": "time", "work": "work",
           "monitor": {}, "dlq_received": {}, "consumers": [], "errors": []}
    m = observed_metrics(scn, raw)
    check("delivered by T", m["queues"]["work"]["delivered"], 2)
    check("redeliveries by T", m["redeliveries"], 1)
    check("queue waits per delivery", m["wait_ms"]["queue"]["count"], 2)
    check("delivery_limit reason kept on quorum", "delivery_limit" in m["queues"]["work"]["dead_lettered_by_reason"], True)

    for f in failures:
        print("self-test FAILED:", f, file=sys.stderr)
    print("self-test: %d failure(s)" % len(failures))
    return 1 if failures else 0


def parser(description):
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--brokersim", default=os.path.join(REPO, "build", "experiments", "brokersim"),
                    help="path to the brokersim binary (default: build/experiments/brokersim)")
    ap.add_argument("--all", action="store_true", help="run every built-in case (seed 000, the classic and quorum grids, the delivery-limit cases)")
    ap.add_argument("--case", action="append", default=[], help="run one built-in case by name (repeatable)")
    ap.add_argument("--scenario", help="replay any scenario file of the supported subset")
    ap.add_argument("--set", action="append", default=[], help="PATH=VALUE override, with --scenario")
    ap.add_argument("--name", help="case name for --scenario (default: the file name)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="result directory")
    ap.add_argument("--replications", type=int, default=20,
                    help="brokersim replications for the predicted_spread band (1: none)")
    ap.add_argument("--rabbitmq-server", default="/usr/lib/rabbitmq/bin/rabbitmq-server",
                    help="the rabbitmq-server start script (run directly, not the /usr/sbin wrapper)")
    ap.add_argument("--calibrated-latency-ms", type=latency_pair, default="auto", metavar="DELIVERY,ACK",
                    help="also predict with these broker.delivery_latency_ms,ack_latency_ms (default: what this "
                    "harness measured on loopback, 1.0,0.5 for classic and 3.5,0.5 for quorum queues; 'none' to skip)")
    ap.add_argument("--calibrated-set", action="append", default=[], metavar="PATH=VALUE",
                    help="a further override for the calibrated prediction only (repeatable), e.g. "
                    "broker.expiry_slack_ms=20")
    ap.add_argument("--repredict", action="store_true",
                    help="recompute predicted / predicted_calibrated of the chosen cases' stored results in --out "
                    "(no broker; the observed part is kept)")
    ap.add_argument("--table", nargs="?", const="", metavar="PREFIX",
                    help="print the README results table from --out (cases whose name starts with PREFIX) and exit")
    ap.add_argument("--traces", metavar="DIR", help="also write DIR/CASE.observed.csv, one row per job "
                    "(brokersim's --trace columns)")
    ap.add_argument("--keep-broker-dir", action="store_true", help="keep the node's data and logs")
    ap.add_argument("--list", action="store_true", help="list the built-in cases")
    ap.add_argument("--write-grid-scenarios", action="store_true",
                    help="(re)write experiments/real-broker/scenarios/grid-*.json and exit")
    ap.add_argument("--self-test", action="store_true",
                    help="check the harness's own rules (no broker, no brokersim) and exit")
    return ap


def main(description=__doc__):
    """compare.py's command line (its docstring is the --help description)."""
    ap = parser(description)
    args = ap.parse_args()
    if args.self_test:
        return self_test()

    if args.write_grid_scenarios:
        write_grid_scenarios()
        return 0
    cases = all_cases()
    if args.table is not None:
        print_table(args.out, args.table)
        return 0
    if args.list:
        for n, p, s in cases:
            print(n, os.path.relpath(p, REPO), " ".join(s))
        return 0
    chosen = []
    if args.all:
        chosen = cases
    for n in args.case:
        m = [c for c in cases if c[0] == n]
        if not m:
            ap.error("unknown case %r (see --list)" % n)
        chosen += m
    if args.scenario:
        chosen.append((args.name or os.path.splitext(os.path.basename(args.scenario))[0],
                       os.path.abspath(args.scenario), args.set))
    if not chosen:
        ap.error("nothing to run: give --all, --case NAME or --scenario FILE")
    if not os.access(args.brokersim, os.X_OK):
        ap.error("--brokersim %s: not an executable (build it first)" % args.brokersim)
    pika = need_pika()
    if args.repredict:
        for n, _, _ in chosen:
            try:
                repredict_case(n, args)
            except (OSError, ValueError, KeyError, RuntimeError) as e:
                print("compare.py: case %s: cannot re-predict: %s" % (n, e), file=sys.stderr)
                return 2
        return 0
    if not os.access(args.rabbitmq_server, os.X_OK):
        ap.error("--rabbitmq-server %s: not found (apt-get install -y rabbitmq-server)" % args.rabbitmq_server)
    for n, p, s in chosen:  # validate everything before starting a broker
        try:
            with open(p) as f:
                scn = json.load(f)
            for a in s:
                apply_set(scn, a)
            check_subset(scn)
        except Unsupported as e:  # an input error, as brokersim's: exit status 2
            print("compare.py: case %s: %s" % (n, e), file=sys.stderr)
            return 2
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            # brokersim itself validates the scenario; the harness only needs it readable
            print("compare.py: case %s: %s: cannot read the scenario (%s: %s); check it with brokersim run"
                  % (n, p, type(e).__name__, e), file=sys.stderr)
            return 2

    broker = PrivateBroker(args.rabbitmq_server, keep_dir=args.keep_broker_dir)

    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    failed = 0
    try:
        broker.start()
        for n, p, s in chosen:
            try:
                run_case(n, p, s, args, broker)
            except (Unsupported, RuntimeError, subprocess.SubprocessError, pika.exceptions.AMQPError) as e:
                failed += 1
                print("case %s FAILED: %s" % (n, e), file=sys.stderr, flush=True)
    except KeyboardInterrupt as e:
        print("interrupted (%s): stopping the broker" % (str(e) or "Ctrl-C"), file=sys.stderr)
        failed = 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        broker.stop()
    return 1 if failed and failed != 130 else failed
