"""The real-broker harness behind compare.py: replay a brokersim scenario on a private RabbitMQ node.

cases      the built-in cases and the capacity grid (scenarios/*.json)
subset     what of a scenario the harness replays, and the queue arguments it declares
workload   the producers' jobs, drawn once and replayed on both sides
node       a private RabbitMQ node: start, stop
client     the one place that imports pika (lazily: the tests and --help run without it)
workers    the real producers, consumers, dead-letter observer and ready-count monitor
replay     one scenario on the node, with those workers
observed   the returned jobs classified by brokersim's rules, and the observed metrics
predict    brokersim on the same jobs, calibrated, and with its own streams
results    one case's result file, and the README tables from stored results
cli        the command line of compare.py
"""

import os

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # experiments/real-broker
REPO = os.path.dirname(os.path.dirname(HERE))
