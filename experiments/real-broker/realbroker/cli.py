"""The command line of compare.py: choose the cases, validate them all before a broker starts, run
or re-predict them on one private node, or print the tables, list the cases, write the grid
scenarios, run the self-test."""

import argparse
import json
import os
import signal
import subprocess
import sys
import unittest

from . import HERE, REPO
from .cases import all_cases, write_grid_scenarios
from .client import need_pika
from .node import PrivateBroker
from .results import print_table, repredict_case, run_case
from .subset import Unsupported, apply_set, check_subset, node_settings


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
    """--self-test: the harness's own rules without a broker or brokersim, the unittest suite in
    tests/ (tests/test_harness.py). Exit 0 if they all hold."""
    suite = unittest.defaultTestLoader.discover(os.path.join(HERE, "tests"))
    result = unittest.TextTestRunner().run(suite)
    failures = len(result.failures) + len(result.errors)
    print("self-test: %d failure(s)" % failures)
    return 0 if result.wasSuccessful() and result.testsRun else 1


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
    groups = []  # [(node settings, [cases])]: one node per distinct setting, in the cases' order
    for n, p, s in chosen:  # validate everything before starting a broker
        try:
            with open(p) as f:
                scn = json.load(f)
            for a in s:
                apply_set(scn, a)
            check_subset(scn)
            settings = node_settings(scn)
            for g in groups:
                if g[0] == settings:
                    g[1].append((n, p, s))
                    break
            else:
                groups.append((settings, [(n, p, s)]))
        except Unsupported as e:  # an input error, as brokersim's: exit status 2
            print("compare.py: case %s: %s" % (n, e), file=sys.stderr)
            return 2
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            # brokersim itself validates the scenario; the harness only needs it readable
            print("compare.py: case %s: %s: cannot read the scenario (%s: %s); check it with brokersim run"
                  % (n, p, type(e).__name__, e), file=sys.stderr)
            return 2

    def on_signal(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    failed = 0
    broker = None
    try:
        # the node's settings are the scenario's (broker.dead_letter_confirm_timeout_ms): one node per
        # distinct setting, one after the other
        for settings, group in groups:
            broker = PrivateBroker(args.rabbitmq_server, keep_dir=args.keep_broker_dir, settings=settings)
            broker.start()
            for n, p, s in group:
                try:
                    run_case(n, p, s, args, broker)
                except (Unsupported, RuntimeError, subprocess.SubprocessError, pika.exceptions.AMQPError) as e:
                    failed += 1
                    print("case %s FAILED: %s" % (n, e), file=sys.stderr, flush=True)
            broker.stop()
            broker = None
    except KeyboardInterrupt as e:
        print("interrupted (%s): stopping the broker" % (str(e) or "Ctrl-C"), file=sys.stderr)
        failed = 130
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # let the clean-up finish
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if broker is not None:
            broker.stop()
    return 1 if failed and failed != 130 else failed
