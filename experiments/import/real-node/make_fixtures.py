#!/usr/bin/env python3
"""Builds a topology on a real RabbitMQ node, exports it both ways, and records what the node does.

Run by hand (as root, on Debian: apt-get install rabbitmq-server); the test suite reads only what it
writes (experiments/import/real-node/rabbitmq-VERSION/), never a node:

    python3 experiments/import/real-node/make_fixtures.py

It starts a private node (its own name, ports and data folder under a temporary directory, bound to
127.0.0.1, the management plugin on), declares the topology below through the HTTP API, then writes

  definitions-cli.json   `rabbitmqctl export_definitions`
  definitions-http.json  `GET /api/definitions`
  effective.json         per queue, as the node reports it (`GET /api/queues`): type, arguments, the
                         policy and operator policy it applied, effective_policy_definition; and
                         `dead_letters_reach`: the queues a dead letter from it actually reached,
                         measured by publishing one message and rejecting it (requeue false)

and stops the node. The topology exercises what a real node showed: operator policies
(exported as runtime parameters), policies a queue type cannot take (skipped for the next by
priority), dead letters through direct, fanout, topic, headers and exchange-to-exchange routes and
an alternate exchange set by an exchange policy, two vhosts, one with default_queue_type quorum.
"""
import base64
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
NODE = "brokersim-fixtures@localhost"
HTTP_PORT = 25674
AUTH = "Basic " + base64.b64encode(b"guest:guest").decode()


def api(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{HTTP_PORT}/api/{path}", data=data, method=method,
                                 headers={"Authorization": AUTH, "content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read()
        return json.loads(text) if text else None


def q(name):
    return urllib.parse.quote(name, safe="")


def vh(vhost):
    return q(vhost)


def start_node(base):
    env = dict(os.environ,
               RABBITMQ_NODENAME=NODE, RABBITMQ_NODE_IP_ADDRESS="127.0.0.1", RABBITMQ_NODE_PORT="25672",
               RABBITMQ_DIST_PORT="25673", RABBITMQ_MNESIA_BASE=str(base / "mnesia"),
               RABBITMQ_LOG_BASE=str(base / "log"), RABBITMQ_ENABLED_PLUGINS_FILE=str(base / "enabled_plugins"),
               RABBITMQ_CONFIG_FILE=str(base / "rabbitmq"))
    (base / "mnesia").mkdir()
    (base / "log").mkdir()
    (base / "enabled_plugins").write_text("[rabbitmq_management].\n")
    # Statistics every 500 ms: the message counts the probes read follow the node closely.
    (base / "rabbitmq.conf").write_text(f"management.tcp.port = {HTTP_PORT}\nmanagement.tcp.ip = 127.0.0.1\n"
                                        "collect_statistics_interval = 500\n")
    # Debian's wrapper runs the node as the rabbitmq user: it must own the folder.
    shutil.chown(base, "rabbitmq", "rabbitmq")
    for p in base.rglob("*"):
        shutil.chown(p, "rabbitmq", "rabbitmq")
    server = subprocess.Popen(["rabbitmq-server"], env=env, stdout=open(base / "server.out", "w"), stderr=subprocess.STDOUT)
    for _ in range(120):
        try:
            api("GET", "overview")
            return server, env
        except Exception:
            time.sleep(1)
    raise SystemExit("the node did not start: see " + str(base / "server.out"))


def topology():
    """Declares everything. Queue names say what each one tests."""
    api("PUT", "vhosts/shop", {"default_queue_type": "quorum", "description": "quorum by default"})
    api("PUT", "permissions/shop/guest", {"configure": ".*", "write": ".*", "read": ".*"})

    def exchange(vhost, name, type_, **args):
        api("PUT", f"exchanges/{vh(vhost)}/{q(name)}", {"type": type_, "durable": True, "arguments": args})

    def queue(vhost, name, **args):
        api("PUT", f"queues/{vh(vhost)}/{q(name)}", {"durable": True, "arguments": args})

    def bind(vhost, source, dest, key="", dtype="q", **args):
        api("POST", f"bindings/{vh(vhost)}/e/{q(source)}/{dtype}/{q(dest)}", {"routing_key": key, "arguments": args})

    def policy(vhost, name, pattern, definition, priority=0, apply_to="queues", operator=False):
        kind = "operator-policies" if operator else "policies"
        api("PUT", f"{kind}/{vh(vhost)}/{q(name)}",
            {"pattern": pattern, "definition": definition, "priority": priority, "apply-to": apply_to})

    v = "/"
    exchange(v, "dlx-direct", "direct")
    exchange(v, "dlx-fanout", "fanout")
    exchange(v, "dlx-topic", "topic")
    exchange(v, "dlx-headers-any", "headers")
    exchange(v, "dlx-headers-keyed", "headers")
    exchange(v, "dlx-e2e", "direct")
    exchange(v, "dlx-e2e-fanout", "fanout")
    exchange(v, "dlx-ae", "direct")
    exchange(v, "ae", "fanout")
    exchange(v, "dlx-unbound", "direct")

    # Direct, with a dead-letter routing key.
    queue(v, "orders", **{"x-dead-letter-exchange": "dlx-direct", "x-dead-letter-routing-key": "orders.dead"})
    queue(v, "orders-dlq")
    bind(v, "dlx-direct", "orders-dlq", "orders.dead")
    # Fanout from a quorum queue with a delivery limit, capped by an operator policy.
    queue(v, "payments", **{"x-queue-type": "quorum", "x-delivery-limit": 5, "x-dead-letter-exchange": "dlx-fanout"})
    queue(v, "payments-dlq", **{"x-queue-type": "quorum"})
    bind(v, "dlx-fanout", "payments-dlq")
    # Topic.
    queue(v, "emails", **{"x-dead-letter-exchange": "dlx-topic", "x-dead-letter-routing-key": "dead.emails"})
    queue(v, "dead-letters")
    bind(v, "dlx-topic", "dead-letters", "dead.#")
    # Headers, x-match all with no header to match: every message.
    queue(v, "reports", **{"x-dead-letter-exchange": "dlx-headers-any"})
    queue(v, "reports-dlq")
    bind(v, "dlx-headers-any", "reports-dlq", "", **{"x-match": "all"})
    # Headers that depend on the message: the node's answer depends on headers brokersim cannot know.
    queue(v, "audit", **{"x-dead-letter-exchange": "dlx-headers-keyed"})
    queue(v, "audit-dlq")
    bind(v, "dlx-headers-keyed", "audit-dlq", "", **{"x-match": "all", "kind": "audit"})
    # Exchange to exchange.
    queue(v, "invoices", **{"x-dead-letter-exchange": "dlx-e2e", "x-dead-letter-routing-key": "inv"})
    queue(v, "invoices-dlq")
    bind(v, "dlx-e2e", "dlx-e2e-fanout", "inv", dtype="e")
    bind(v, "dlx-e2e-fanout", "invoices-dlq")
    # An alternate exchange (from an exchange policy) catches what dlx-ae cannot route.
    queue(v, "shipments", **{"x-dead-letter-exchange": "dlx-ae", "x-dead-letter-routing-key": "nobody"})
    queue(v, "unrouted")
    bind(v, "ae", "unrouted")
    policy(v, "ae-for-dlx", "^dlx-ae$", {"alternate-exchange": "ae"}, apply_to="exchanges")
    # A dead-letter exchange with no binding for the key and no alternate exchange: dropped.
    queue(v, "lost-letters", **{"x-dead-letter-exchange": "dlx-unbound", "x-dead-letter-routing-key": "none"})
    # Policies a queue type cannot take: skipped for the next one by priority.
    queue(v, "qmode-quorum", **{"x-queue-type": "quorum"})
    queue(v, "dl-classic")
    policy(v, "lazy-fast", "^qmode-", {"queue-mode": "lazy", "message-ttl": 1000}, priority=10)
    policy(v, "limit-classic", "^dl-", {"delivery-limit": 3, "max-length": 10}, priority=10)
    policy(v, "ttl-all", ".*", {"message-ttl": 60000, "overflow": "reject-publish"}, priority=0)
    policy(v, "payments-cap", "^payments", {"max-length": 100000}, priority=5)
    # Operator policies: exported as runtime parameters, merged per key with the policy.
    policy(v, "op-cap", ".*", {"max-length": 5000, "message-ttl": 120000}, priority=0, operator=True)
    policy(v, "op-payments", "^payments$", {"delivery-limit": 2, "max-length": 20000}, priority=1, operator=True)

    v = "shop"
    exchange(v, "shop-dlx", "direct")
    queue(v, "carts", **{"x-dead-letter-exchange": "shop-dlx", "x-dead-letter-routing-key": "carts"})  # quorum by default
    queue(v, "carts-dlq")
    queue(v, "carts-classic", **{"x-queue-type": "classic"})
    bind(v, "shop-dlx", "carts-dlq", "carts")
    policy(v, "shop-ttl", ".*", {"message-ttl": 30000, "expires": 86400000}, priority=0)
    policy(v, "shop-op", "^carts$", {"max-length-bytes": 1048576}, operator=True)


def counts():
    return {(x["vhost"], x["name"]): x.get("messages", 0) for x in api("GET", "queues?columns=vhost,name,messages")}


def probe_dead_letters(queues):
    """Which queues a dead letter from each queue reaches: one message published to it, then
    rejected without requeue; the queues whose count rises within 10 s (statistics every 500 ms)."""
    reached = {}
    for src in queues:
        if "x-dead-letter-exchange" not in src["arguments"]:
            continue
        vhost, name = src["vhost"], src["name"]
        for x in queues:
            api("DELETE", f"queues/{vh(x['vhost'])}/{q(x['name'])}/contents")
        time.sleep(3)
        before = counts()
        api("POST", f"exchanges/{vh(vhost)}/amq.default/publish",
            {"properties": {}, "routing_key": name, "payload": "probe", "payload_encoding": "string"})
        got = []
        for _ in range(20):
            got = api("POST", f"queues/{vh(vhost)}/{q(name)}/get",
                      {"count": 1, "ackmode": "reject_requeue_false", "encoding": "auto"})
            if got:
                break
            time.sleep(0.5)
        if not got:
            raise SystemExit(f"probe: the message published to {vhost} {name} never arrived")
        landed = []
        for _ in range(20):
            time.sleep(0.5)
            after = counts()
            landed = sorted(n for (v, n), m in after.items() if v == vhost and n != name and m > before.get((v, n), 0))
        reached[(vhost, name)] = landed
    return reached


def main():
    base = pathlib.Path(tempfile.mkdtemp(prefix="brokersim-rmq-"))
    server, env = start_node(base)
    try:
        version = api("GET", "overview")["rabbitmq_version"]
        out = HERE / f"rabbitmq-{version}"
        out.mkdir(exist_ok=True)
        topology()
        time.sleep(15)  # policies are applied, and reported, asynchronously
        cli = base / "definitions-cli.json"
        subprocess.run(["rabbitmqctl", "-n", NODE, "export_definitions", str(cli)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        (out / "definitions-cli.json").write_text(json.dumps(json.loads(cli.read_text()), indent=2, sort_keys=True) + "\n")
        (out / "definitions-http.json").write_text(json.dumps(api("GET", "definitions"), indent=2, sort_keys=True) + "\n")
        queues = api("GET", "queues")
        reached = probe_dead_letters(queues)
        effective = []
        for x in sorted(queues, key=lambda x: (x["vhost"], x["name"])):
            row = {k: x.get(k) for k in ("vhost", "name", "type", "arguments", "policy", "operator_policy",
                                         "effective_policy_definition")}
            if (x["vhost"], x["name"]) in reached:
                row["dead_letters_reach"] = reached[(x["vhost"], x["name"])]
            effective.append(row)
        (out / "effective.json").write_text(json.dumps({"rabbitmq_version": version, "queues": effective}, indent=2) + "\n")
        print("wrote", out)
    finally:
        subprocess.run(["rabbitmqctl", "-n", NODE, "stop"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server.wait(timeout=60)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
