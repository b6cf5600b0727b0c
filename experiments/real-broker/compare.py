#!/usr/bin/env python3
"""Replay a brokersim scenario against a real, private RabbitMQ node and compare.

For each case: start (once per invocation) a private RabbitMQ node on loopback, declare the
scenario's queues, run real producers / consumers / a dead-letter observer for the scenario's
duration, classify every job the way brokersim does, run `brokersim run SCENARIO --json` with the
same overrides, and write {"observed": ..., "predicted": ...} to results/CASE.json.

Python 3 standard library + pika only.  Usage (from the repository root):

    python3 experiments/real-broker/compare.py --brokersim build/experiments/brokersim --all

See experiments/real-broker/README.md.
"""

import sys

from realbroker.cli import main  # realbroker/ beside this file (the script's directory is on sys.path)

if __name__ == "__main__":
    sys.exit(main(__doc__))
