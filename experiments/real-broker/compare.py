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

import argparse
import copy
import datetime
import functools
import json
import math
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import deque

import logging

# The broker client is imported only where a real broker is used (need_pika): the self-test and
# --help run without python3-pika.
pika = None


def need_pika():
    global pika
    if pika is not None:
        return pika
    try:
        import pika as client
    except ImportError:  # pyenv / venv python without Debian's python3-pika: retry with the system one
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
                and not os.environ.get("BROKERSIM_CMP_REEXEC"):
            os.environ["BROKERSIM_CMP_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.exit("compare.py: the 'pika' module is missing: apt-get install -y python3-pika")
    logging.getLogger("pika").setLevel(logging.CRITICAL)  # pika logs connection teardown noise at ERROR
    pika = client
    return pika


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LOOPBACK = "127.0.0.1"
MAX_JOBS = 200000

# ------------------------------------------------------------------------------------------ cases

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


# ------------------------------------------------------------------------------- scenario subset

class Unsupported(Exception):
    pass


# The queue keys the harness can declare, by broker kind.
CLASSIC_QUEUE_KEYS = ("message_ttl_ms", "dead_letter_to", "max_length", "overflow", "expires_ms")
KINDS = {
    "rabbitmq-classic": CLASSIC_QUEUE_KEYS,
    "rabbitmq-quorum": CLASSIC_QUEUE_KEYS + ("delivery_limit", "dead_letter_strategy"),
}


def effective_delivery_limit(q, version):
    """brokersim's rule (RabbitMqQuorum::delivery_limit): the key, else 20 from 4.0 on, none
    (-1) on 3.13.  The harness declares this on the real queue, so a scenario that leaves the
    key out gets the limit brokersim assumes for its version, whatever version the node is."""
    limit = q.get("delivery_limit")
    if limit is not None:
        return int(limit)
    return -1 if str(version) == "3.13" else 20


def parse_value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def apply_set(scn, assignment):
    """--set PATH=VALUE, the way brokersim reads it (dots, integer indices)."""
    path, sep, value = assignment.partition("=")
    if not sep:
        raise Unsupported("--set %r: expected PATH=VALUE" % assignment)
    keys = path.split(".")
    node = scn
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node.setdefault(k, {})
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = parse_value(value)
    else:
        node[last] = parse_value(value)


def dist_sampler(spec, rng, path):
    """A sampler for a brokersim distribution (durations truncated at 0)."""
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        v = float(spec)
        return lambda: v
    if not isinstance(spec, dict) or len(spec) != 1:
        raise Unsupported("%s: expected a number or a one-key distribution object, got %r" % (path, spec))
    (kind, p), = spec.items()
    if kind == "const":
        v = float(p)
        return lambda: v
    if kind == "exp":
        m = float(p["mean"])
        return lambda: rng.expovariate(1.0 / m) if m > 0 else 0.0
    if kind == "uniform":
        a, b = float(p["min"]), float(p["max"])
        return lambda: rng.uniform(a, b)
    if kind == "normal":
        m, s = float(p["mean"]), float(p["sd"])
        return lambda: max(0.0, rng.gauss(m, s))
    if kind == "lognormal":
        m, cv = float(p["mean"]), float(p["cv"])
        if m <= 0:
            return lambda: 0.0
        s2 = math.log(1.0 + cv * cv)
        mu = math.log(m) - s2 / 2.0
        sd = math.sqrt(s2)
        return lambda: rng.lognormvariate(mu, sd)
    if kind == "empirical":
        xs = [float(x) for x in p]
        return lambda: rng.choice(xs)
    raise Unsupported("%s: distribution %r is not supported by the real-broker harness" % (path, kind))


def check_subset(scn):
    """Refuse, with the key path, whatever the harness cannot replay faithfully."""
    b = scn.get("broker", {})
    kind = b.get("kind", "rabbitmq-classic")
    if kind not in KINDS:
        raise Unsupported("broker.kind: only %s can be replayed, got %r" % (" and ".join(KINDS), kind))
    queues = b.get("queues", {})
    read = sorted({c["queue"] for c in scn["consumers"]})
    if len(read) != 1:
        raise Unsupported("consumers: exactly one queue read by consumers is supported, got %r" % read)
    work = read[0]
    for i, p in enumerate(scn["producers"]):
        if p["queue"] != work:
            raise Unsupported("producers.%d.queue: must be the consumed queue %r" % (i, work))
        for k in ("publish_delay_ms", "clock_offset_ms"):
            if p.get(k) not in (None, 0):
                raise Unsupported("producers.%d.%s: not supported" % (i, k))
        a = p["arrivals"]
        if not (isinstance(a, dict) and len(a) == 1 and next(iter(a)) in ("poisson", "periodic", "at_ms")):
            raise Unsupported("producers.%d.arrivals: only poisson, periodic, at_ms are supported" % i)
        e = p.get("expiration_ms")
        if not (e is None or e == "remaining-budget" or isinstance(e, (int, float))):
            raise Unsupported("producers.%d.expiration_ms: number, null or \"remaining-budget\"" % i)
    for i, c in enumerate(scn["consumers"]):
        if c.get("exec_timeout") is not None:
            raise Unsupported("consumers.%d.exec_timeout: not supported" % i)
        if c.get("failure_probability", 0) not in (0, 0.0):
            raise Unsupported("consumers.%d.failure_probability: not supported" % i)
        if c.get("on_expired", "ack") not in ("ack", "reject", "requeue"):
            raise Unsupported("consumers.%d.on_expired: ack, reject or requeue, got %r" % (i, c.get("on_expired")))
    for name, q in queues.items():
        for k in q:
            if k not in KINDS[kind]:
                raise Unsupported("broker.queues.%s.%s: not supported by the harness on %s" % (name, k, kind))
        if name != work and name in read:
            raise Unsupported("broker.queues.%s: a consumed dead-letter queue is not supported" % name)
        overflow = q.get("overflow", "drop-head")
        if kind == "rabbitmq-quorum" and overflow == "reject-publish-dlx":
            raise Unsupported("broker.queues.%s.overflow: quorum queues do not support reject-publish-dlx" % name)
        if q.get("max_length") is not None and overflow == "drop-head" and not q.get("dead_letter_to"):
            # the broker drops the head silently: brokersim says lost, the harness could not tell
            raise Unsupported("broker.queues.%s.max_length: with overflow drop-head the harness needs dead_letter_to "
                              "(a dropped message is otherwise not observable)" % name)
        limit = q.get("delivery_limit")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < -1):
            raise Unsupported("broker.queues.%s.delivery_limit: an integer >= -1 or null, got %r" % (name, limit))
        if q.get("dead_letter_strategy", "at-most-once") not in ("at-most-once", "at-least-once"):
            raise Unsupported("broker.queues.%s.dead_letter_strategy: at-most-once or at-least-once, got %r"
                              % (name, q.get("dead_letter_strategy")))
    for i, f in enumerate(scn.get("faults", [])):
        if set(f) != {"at_ms", "consumer", "stall_ms"}:
            raise Unsupported("faults.%d: only {at_ms, consumer, stall_ms} (stall) is supported" % i)
    stop = scn["stop"]
    if "time_ms" not in stop:
        raise Unsupported("stop.time_ms: required by the harness (real time must be bounded)")
    return work


# --------------------------------------------------------------------------------- private broker

def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]
    finally:
        s.close()


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class PrivateBroker:
    """A private RabbitMQ node: own node name, ports, epmd, data/log dirs, cookie (HOME)."""

    def __init__(self, server_script, keep_dir=False, start_timeout_s=120.0):
        self.server_script = server_script
        self.keep_dir = keep_dir
        self.start_timeout_s = start_timeout_s
        self.proc = None
        self.epmd = None
        self.beam_pid = None
        self.dir = None
        self.version = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="brokersim-cmp-")
        d = self.dir
        for sub in ("home", "mnesia", "log", "plugins-expand"):
            os.makedirs(os.path.join(d, sub))
        self.amqp_port, self.dist_port, self.epmd_port = free_port(), free_port(), free_port()
        while len({self.amqp_port, self.dist_port, self.epmd_port}) < 3:
            self.dist_port, self.epmd_port = free_port(), free_port()
        self.nodename = "brokersim-cmp-%d@localhost" % os.getpid()
        with open(os.path.join(d, "rabbitmq.conf"), "w") as f:
            f.write("listeners.tcp.default = %s:%d\n" % (LOOPBACK, self.amqp_port))
            f.write("loopback_users.guest = true\n")
            f.write("log.console = false\n")
            f.write("log.file.level = info\n")
        with open(os.path.join(d, "enabled_plugins"), "w") as f:
            f.write("[].\n")
        open(os.path.join(d, "rabbitmq-env.conf"), "w").close()  # do not read /etc/rabbitmq/rabbitmq-env.conf
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RABBITMQ_", "ERL_"))}
        env.update({
            "HOME": os.path.join(d, "home"),  # a private .erlang.cookie
            "RABBITMQ_CONF_ENV_FILE": os.path.join(d, "rabbitmq-env.conf"),
            "RABBITMQ_NODENAME": self.nodename,
            "RABBITMQ_NODE_IP_ADDRESS": LOOPBACK,
            "RABBITMQ_NODE_PORT": str(self.amqp_port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_MNESIA_BASE": os.path.join(d, "mnesia"),
            "RABBITMQ_LOG_BASE": os.path.join(d, "log"),
            "RABBITMQ_CONFIG_FILE": os.path.join(d, "rabbitmq.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": os.path.join(d, "enabled_plugins"),
            "RABBITMQ_PLUGINS_EXPAND_DIR": os.path.join(d, "plugins-expand"),
            "RABBITMQ_PID_FILE": os.path.join(d, "rabbitmq.pid"),
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1}",
            "ERL_EPMD_ADDRESS": LOOPBACK,
            "ERL_EPMD_PORT": str(self.epmd_port),
        })
        # Our own epmd, in the foreground (not -daemon), so we hold its pid and stop it ourselves.
        self.epmd_log = open(os.path.join(d, "epmd.log"), "w")
        self.epmd = subprocess.Popen(["epmd", "-address", LOOPBACK, "-port", str(self.epmd_port)],
                                     env=env, stdout=self.epmd_log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while not self._port_open(self.epmd_port):
            if self.epmd.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("epmd did not start on %s:%d (see %s)" % (LOOPBACK, self.epmd_port, self.epmd_log.name))
            time.sleep(0.05)
        self.stdout = open(os.path.join(d, "rabbitmq-server.out"), "w")
        self.proc = subprocess.Popen([self.server_script], env=env, cwd=d, stdout=self.stdout,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        print("  starting RabbitMQ node %s on %s:%d (dist %d, epmd %d), data in %s"
              % (self.nodename, LOOPBACK, self.amqp_port, self.dist_port, self.epmd_port, d), flush=True)
        t_start = time.monotonic()
        deadline = t_start + self.start_timeout_s
        last_err = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("rabbitmq-server exited with status %s during start-up:\n%s"
                                   % (self.proc.returncode, self._tail()))
            if self._port_open(self.amqp_port):
                try:
                    c = pika.BlockingConnection(self.params(socket_timeout=2))
                    props = getattr(c._impl, "server_properties", {}) or {}
                    v = props.get("version", b"?")
                    self.version = v.decode() if isinstance(v, bytes) else str(v)
                    c.close()
                    self._read_pid()
                    print("  RabbitMQ %s ready after %.1f s (beam pid %s)"
                          % (self.version, time.monotonic() - t_start, self.beam_pid), flush=True)
                    return
                except Exception as e:  # not ready yet
                    last_err = e
            time.sleep(0.25)
        raise RuntimeError("RabbitMQ did not accept connections within %.0f s (last error: %r):\n%s"
                           % (self.start_timeout_s, last_err, self._tail()))

    def params(self, socket_timeout=5):
        return pika.ConnectionParameters(host=LOOPBACK, port=self.amqp_port, heartbeat=0,
                                         connection_attempts=1, socket_timeout=socket_timeout,
                                         blocked_connection_timeout=30)

    def _port_open(self, port):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(0.5)
        try:
            return s.connect_ex((LOOPBACK, port)) == 0
        finally:
            s.close()

    def _read_pid(self):
        try:
            with open(os.path.join(self.dir, "rabbitmq.pid")) as f:
                self.beam_pid = int(f.read().strip())
        except (OSError, ValueError):
            self.beam_pid = None

    def _tail(self, n=40):
        out = []
        for p in (os.path.join(self.dir, "rabbitmq-server.out"),
                  os.path.join(self.dir, "log", self.nodename + ".log")):
            try:
                with open(p, errors="replace") as f:
                    out.append("--- %s\n%s" % (p, "".join(f.readlines()[-n:])))
            except OSError:
                pass
        return "\n".join(out)

    def stop(self):
        """Stop the node by pid (TERM, then KILL), then our epmd. Safe to call twice."""
        if self.proc is not None:
            self._read_pid()
            pids = [p for p in (self.beam_pid, self.proc.pid) if p]
            for p in pids:
                try:
                    os.kill(p, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
                try:
                    self.proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            if any(pid_alive(p) for p in pids):
                try:  # our own session (start_new_session): the script, beam, erl_child_setup
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                for p in pids:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None
            print("  RabbitMQ node stopped", flush=True)
        if self.epmd is not None:
            self.epmd.terminate()
            try:
                self.epmd.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.epmd.kill()
                self.epmd.wait(timeout=5)
            self.epmd = None
        if self.dir and not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        elif self.dir:
            print("  broker data and logs kept in", self.dir)


# ----------------------------------------------------------------------------------- real clients

class Clock:
    def __init__(self):
        self.t0 = None

    def now_ms(self):
        return (time.monotonic() - self.t0) * 1000.0


def us(ms):
    return int(round(ms * 1000.0))


def sleep_until(clock, t_ms, stop):
    """Sleep until clock time t_ms (bounded by stop)."""
    while not stop.is_set():
        dt = (t_ms - clock.now_ms()) / 1000.0
        if dt <= 0:
            return True
        time.sleep(min(dt, 0.05))
    return False


def arrival_times(spec, rng):
    (kind, p), = spec["arrivals"].items()
    if kind == "at_ms":
        for t in sorted(float(x) for x in p):
            yield t
    elif kind == "periodic":
        t, every = 0.0, float(p["every_ms"])
        while True:
            yield t
            t += every
    elif kind == "poisson":
        t, rate = 0.0, float(p["rate_per_s"]) / 1000.0
        while True:
            t += rng.expovariate(rate)
            yield t


def make_schedule(spec, seed, index, stop_ms, max_jobs):
    """The producer's jobs: [(publish_ms, service_ms)], drawn with Python's random (seeded).
    The same list is replayed on the real broker and fed to brokersim as a trace_csv."""
    arr_rng = random.Random("%d:producers.%d.arrivals" % (seed, index))
    svc = dist_sampler(spec["service_ms"], random.Random("%d:producers.%d.service" % (seed, index)),
                       "producers.%d.service_ms" % index)
    out = []
    for t in arrival_times(spec, arr_rng):
        if t > stop_ms or len(out) >= max_jobs:
            break
        out.append((t, svc()))
    return out


def write_trace(path, schedule):
    with open(path, "w") as f:
        f.write("publish_ms,service_ms\n")
        for t, svc in schedule:
            f.write("%.6f,%.6f\n" % (t, svc))


class Producer(threading.Thread):
    def __init__(self, index, spec, schedule, broker, clock, jobs, jobs_lock, stop, go, confirm=False):
        super().__init__(daemon=True, name="producer-%d" % index)
        self.confirm = confirm
        self.index, self.spec, self.schedule, self.broker, self.clock = index, spec, schedule, broker, clock
        self.jobs, self.jobs_lock, self.stop, self.go = jobs, jobs_lock, stop, go
        self.done = threading.Event()
        self.error = None
        self.connected = threading.Event()

    def run(self):
        conn = None
        try:
            conn = pika.BlockingConnection(self.broker.params())
            ch = conn.channel()
            if self.confirm:
                # overflow reject-publish: only a publisher in confirm mode learns of the refusal
                # (brokersim's rejected_at_publish); each publish then waits for its confirm
                ch.confirm_delivery()
            self.connected.set()
            if not self.go.wait(60):
                return
            queue = self.spec["queue"]
            deadline = self.spec.get("deadline_ms")
            expiration = self.spec.get("expiration_ms")
            for t, service in self.schedule:
                if not sleep_until(self.clock, t, self.stop):
                    break
                now = self.clock.now_ms()
                rec = {"producer": self.index, "scheduled": t, "created": now,
                       "expires_at": now + deadline if deadline is not None else None,
                       "service": service, "deliveries": 0}
                with self.jobs_lock:
                    job = len(self.jobs)
                    self.jobs.append(rec)
                ttl = None
                if expiration == "remaining-budget" and rec["expires_at"] is not None:
                    ttl = rec["expires_at"] - self.clock.now_ms()
                elif isinstance(expiration, (int, float)):
                    ttl = float(expiration)
                now = self.clock.now_ms()
                if rec["expires_at"] is not None and rec["expires_at"] <= now:
                    rec["rejected_at_publish"] = now
                    continue
                # pika 1.2 cannot encode floats in a header table: integer microseconds there,
                # milliseconds (floats) in the JSON body
                headers = {"job": job, "created_us": us(rec["created"]), "service_us": us(rec["service"])}
                if rec["expires_at"] is not None:
                    headers["expires_at_us"] = us(rec["expires_at"])
                props = pika.BasicProperties(headers=headers, delivery_mode=1,
                                             expiration=None if ttl is None else str(max(0, int(math.floor(ttl)))))
                rec["msg_ttl"] = None if ttl is None else max(0, int(math.floor(ttl)))
                rec["published"] = self.clock.now_ms()
                try:
                    ch.basic_publish(exchange="", routing_key=queue, properties=props,
                                     body=json.dumps({"job": job, "created_ms": rec["created"],
                                                      "expires_at_ms": rec["expires_at"],
                                                      "service_ms": rec["service"]}).encode())
                except pika.exceptions.NackError:
                    rec["refused_at_publish"] = self.clock.now_ms()
        except Exception as e:
            self.error = e
            traceback.print_exc()
        finally:
            self.done.set()
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass


class RealConsumer:
    """One consumer: its own connection/channel, basic_qos(prefetch), a local FIFO and `slots`
    worker threads.  Acks go through the connection's thread (add_callback_threadsafe)."""

    def __init__(self, index, spec, broker, clock, jobs, stop, stalls, clock_offset, go):
        self.index, self.spec, self.broker, self.clock, self.jobs = index, spec, broker, clock, jobs
        self.stop, self.stalls, self.offset, self.go = stop, stalls, clock_offset, go
        self.local = deque()
        self.cond = threading.Condition()
        self.ready = threading.Event()
        self.consuming = threading.Event()
        self.error = None
        self.conn = None
        self.ch = None
        self.admission = spec.get("admission", "check-before-start")
        self.uncertainty = float(spec.get("uncertainty_ms", 0))
        self.min_window = float(spec.get("min_window_ms", 0))
        self.on_expired = spec.get("on_expired", "ack")
        self.conn_thread = threading.Thread(target=self._conn_loop, daemon=True, name="consumer-%d" % index)
        self.slot_threads = [threading.Thread(target=self._slot_loop, daemon=True, name="consumer-%d-slot-%d" % (index, s))
                             for s in range(int(spec.get("slots", 1)))]

    def start(self):
        self.conn_thread.start()
        for t in self.slot_threads:
            t.start()

    def join(self, timeout):
        end = time.monotonic() + timeout
        for t in [self.conn_thread] + self.slot_threads:
            t.join(max(0.0, end - time.monotonic()))

    # connection thread ------------------------------------------------------------------------
    def _conn_loop(self):
        try:
            self.conn = pika.BlockingConnection(self.broker.params())
            self.ch = self.conn.channel()
            self.ch.basic_qos(prefetch_count=int(self.spec.get("prefetch", 0)))
            self.ready.set()
            if not self.go.wait(60) or self.stop.is_set():
                return
            start_ms = float(self.spec.get("start_ms", 0))
            if start_ms > 0 and not sleep_until(self.clock, start_ms, self.stop):
                return  # start_ms 0: attach at once, before t0
            args = {"x-priority": int(self.spec["priority"])} if self.spec.get("priority") else None
            self.ch.basic_consume(queue=self.spec["queue"], on_message_callback=self._on_message,
                                  auto_ack=False, arguments=args)
            self.consuming.set()
            while not self.stop.is_set():
                self.conn.process_data_events(time_limit=0.05)
        except Exception as e:
            if not self.stop.is_set():
                self.error = e
                traceback.print_exc()
        finally:
            self.ready.set()
            if self.conn is not None:
                try:
                    self.conn.close()
                except Exception:
                    pass

    def _on_message(self, ch, method, props, body):
        t = self.clock.now_ms()
        job = int(props.headers["job"])
        rec = self.jobs[job]
        rec["deliveries"] = rec.get("deliveries", 0) + 1
        rec.setdefault("received", t)
        # per delivery, as brokersim's queue wait: from (re-)entering the queue to this receipt
        rec.setdefault("queue_waits", []).append((t, t - rec.get("requeued_last", rec["published"])))
        rec["consumer"] = self.index
        if self.admission == "check-at-receive-and-start" and not self._admits(props.headers, t):
            self._reject_locally(rec, method.delivery_tag, t, t)
            return
        with self.cond:
            self.local.append((method.delivery_tag, job, props.headers, t))
            self.cond.notify()

    def _settle(self, tag, how):
        try:
            if how == "reject":
                self.ch.basic_reject(delivery_tag=tag, requeue=False)
            elif how == "requeue":  # what brokersim's Job::Ack::Requeue stands for
                self.ch.basic_nack(delivery_tag=tag, multiple=False, requeue=True)
            else:
                self.ch.basic_ack(delivery_tag=tag)
        except Exception:
            if not self.stop.is_set():
                raise

    def _send_settle(self, tag, how="ack"):
        try:
            self.conn.add_callback_threadsafe(functools.partial(self._settle, tag, how))
        except Exception:
            if not self.stop.is_set():
                raise

    # slot threads -----------------------------------------------------------------------------
    def _stall_left_ms(self, now):
        left = 0.0
        for a, b in self.stalls:
            if a <= now < b:
                left = max(left, b - now)
        return left

    def _admits(self, headers, t):
        exp = headers.get("expires_at_us")
        if exp is None:
            return True
        exp = exp / 1000.0
        remaining = exp - (t + self.offset) - self.uncertainty
        return not (remaining <= 0 or remaining < self.min_window)

    def _reject_locally(self, rec, tag, t, received):
        rec.setdefault("local_waits", []).append((t, t - received))
        exp = rec.get("expires_at")
        if exp is not None and exp - t > self.min_window:
            rec.setdefault("rejected_but_valid", []).append(t)
        if self.on_expired == "requeue":
            # not decided yet: it is decided again at its next delivery (or dead-lettered)
            rec["requeues"] = rec.get("requeues", 0) + 1
            rec["requeued_last"] = t
            rec["requeued_last_received"] = received
            self._send_settle(tag, "requeue")
            return
        rec["rejected"] = t
        rec["rejected_received"] = received
        self._send_settle(tag, self.on_expired)

    def _slot_loop(self):
        try:
            while not self.stop.is_set():
                with self.cond:
                    item = None
                    while not self.stop.is_set():
                        stall = self._stall_left_ms(self.clock.now_ms()) if self.clock.t0 is not None else 0.0
                        if stall > 0:
                            self.cond.wait(timeout=min(0.05, stall / 1000.0))
                            continue
                        if self.local:
                            item = self.local.popleft()
                            break
                        self.cond.wait(timeout=0.05)
                    if item is None:
                        return
                tag, job, headers, received = item
                rec = self.jobs[job]
                t = self.clock.now_ms()
                if self.admission != "none" and not self._admits(headers, t):
                    self._reject_locally(rec, tag, t, received)
                    continue
                rec.setdefault("local_waits", []).append((t, t - received))
                rec["started_received"] = received
                rec["started"] = t
                if rec.get("expires_at") is not None and self.admission != "none" and t >= rec["expires_at"]:
                    rec["admitted_but_expired"] = True
                time.sleep(headers["service_us"] / 1e6)
                rec["finished"] = self.clock.now_ms()
                self._send_settle(tag)
        except Exception as e:
            self.error = e
            traceback.print_exc()


class DeadLetterObserver(threading.Thread):
    """Consumes the dead-letter queues (auto-ack) and records each job's x-death reason."""

    def __init__(self, broker, clock, jobs, queues, stop):
        super().__init__(daemon=True, name="dlx-observer")
        self.broker, self.clock, self.jobs, self.queues, self.stop = broker, clock, jobs, queues, stop
        self.ready = threading.Event()
        self.error = None
        self.received = {q: 0 for q in queues}

    def run(self):
        conn = None
        try:
            conn = pika.BlockingConnection(self.broker.params())
            ch = conn.channel()
            for q in self.queues:
                ch.basic_consume(queue=q, on_message_callback=functools.partial(self._on_message, q), auto_ack=True)
            self.ready.set()
            while not self.stop.is_set():
                conn.process_data_events(time_limit=0.05)
        except Exception as e:
            self.error = e
            traceback.print_exc()
        finally:
            self.ready.set()
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass

    def _on_message(self, qname, ch, method, props, body):
        t = self.clock.now_ms()
        h = props.headers or {}
        deaths = h.get("x-death") or []
        d = deaths[0] if deaths else {}
        reason = d.get("reason", b"?")
        reason = reason.decode() if isinstance(reason, bytes) else str(reason)
        src = d.get("queue", b"?")
        src = src.decode() if isinstance(src, bytes) else str(src)
        self.received[qname] += 1
        job = h.get("job")
        if job is None:
            return
        rec = self.jobs[int(job)]
        rec.setdefault("dead_letters", []).append({"t": t, "reason": reason, "from": src, "to": qname,
                                                   "expiration_prop": props.expiration})


class Monitor(threading.Thread):
    """Samples each queue's ready count (passive declare) every 100 ms."""

    def __init__(self, broker, clock, queues, stop, every_ms=100.0):
        super().__init__(daemon=True, name="monitor")
        self.broker, self.clock, self.queues, self.stop, self.every = broker, clock, queues, stop, every_ms
        self.samples = {q: [] for q in queues}
        self.error = None

    def run(self):
        conn = None
        try:
            conn = pika.BlockingConnection(self.broker.params())
            ch = conn.channel()
            while self.clock.t0 is None and not self.stop.is_set():
                time.sleep(0.01)
            k = 0
            while not self.stop.is_set():
                t = self.clock.now_ms()
                for q in self.queues:
                    m = ch.queue_declare(queue=q, passive=True).method
                    self.samples[q].append((t, m.message_count))
                k += 1
                sleep_until(self.clock, k * self.every, self.stop)
        except Exception as e:
            if not self.stop.is_set():
                self.error = e
                traceback.print_exc()
        finally:
            if conn is not None:
                try:
                    conn.close()
                except Exception:
                    pass


# ------------------------------------------------------------------------------------ one replay

def queue_arguments(q, kind="rabbitmq-classic", version="4.2"):
    args = {"x-queue-type": "quorum" if kind == "rabbitmq-quorum" else "classic"}
    if kind == "rabbitmq-quorum":
        limit = effective_delivery_limit(q, version)
        if limit >= 0:
            args["x-delivery-limit"] = limit
        if q.get("dead_letter_strategy"):
            args["x-dead-letter-strategy"] = q["dead_letter_strategy"]
    if q.get("message_ttl_ms") is not None:
        args["x-message-ttl"] = int(q["message_ttl_ms"])
    if q.get("dead_letter_to"):
        args["x-dead-letter-exchange"] = ""
        args["x-dead-letter-routing-key"] = q["dead_letter_to"]
    if q.get("max_length") is not None:
        args["x-max-length"] = int(q["max_length"])
    if q.get("overflow"):
        args["x-overflow"] = q["overflow"]
    if q.get("expires_ms") is not None:
        args["x-expires"] = int(q["expires_ms"])
    return args


def replay(scn, broker, schedules):
    work = check_subset(scn)
    kind = scn["broker"].get("kind", "rabbitmq-classic")
    version = scn["broker"].get("version", "4.2")
    queues = scn["broker"].get("queues", {})
    stop_ms = float(scn["stop"]["time_ms"])
    seed = int(scn.get("seed", 1))
    dl_targets = sorted({q.get("dead_letter_to") for q in queues.values() if q.get("dead_letter_to")})

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
            consumers.append(RealConsumer(k, cspec, broker, clock, jobs, stop_clients, stalls, offset, go))
            k += 1
    producers = [Producer(i, p, schedules[i], broker, clock, jobs, jobs_lock, stop_clients, go,
                          confirm=queues.get(p["queue"], {}).get("overflow") == "reject-publish")
                 for i, p in enumerate(scn["producers"])]
    observer = DeadLetterObserver(broker, clock, jobs, dl_targets, stop_observers) if dl_targets else None
    monitor = Monitor(broker, clock, sorted(queues), stop_observers)

    threads_ok = True
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
        threads_ok = False
        raise
    finally:
        stop_clients.set()
        go.set()
        for c in consumers:
            with c.cond:
                c.cond.notify_all()
        stop_observers.set()
        for t in producers + ([observer] if observer else []) + [monitor]:
            if t.is_alive() or t.ident:
                t.join(10)
        for c in consumers:
            c.join(10)
    errors = [repr(x.error) for x in consumers + producers + [monitor] + ([observer] if observer else []) if x.error]
    raw = {"jobs": jobs, "stop_ms": stop_ms, "t_end": t_end, "stop_reason": stop_reason, "work": work,
           "monitor": monitor.samples, "dlq_received": observer.received if observer else {},
           "consumers": [{"index": c.index, "clock_offset_ms": c.offset} for c in consumers],
           "errors": errors}
    return raw


def settled(r):
    return ("finished" in r or "rejected" in r or "rejected_at_publish" in r or "refused_at_publish" in r
            or any(d["reason"] in ("expired", "delivery_limit", "maxlen") for d in r.get("dead_letters", [])))


# ----------------------------------------------------------------------------------- the metrics

OUTCOMES = ["rejected_at_publish", "expired_in_queue", "expired_in_transit", "expired_before_start",
            "completed_on_time", "completed_late", "timed_out", "failed", "lost", "dead_lettered", "in_system"]


def quantile(sorted_xs, p):
    if not sorted_xs:
        return 0.0
    x = p * (len(sorted_xs) - 1)
    lo = int(math.floor(x))
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (x - lo)


def summary(xs):
    xs = sorted(xs)
    if not xs:
        return {"count": 0, "mean": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}
    return {"count": len(xs), "mean": round(statistics.fmean(xs), 3), "p50": round(quantile(xs, 0.5), 3),
            "p95": round(quantile(xs, 0.95), 3), "p99": round(quantile(xs, 0.99), 3), "max": round(xs[-1], 3)}


def overlap(a, b, lo, hi):
    return max(0.0, min(b, hi) - max(a, lo))


def classify(r, T):
    """(outcome, outcome time) at stop time T, from events with time <= T (brokersim's rules)."""
    dl = r.get("dead_letters", [])
    exp = r.get("expires_at")
    if "rejected_at_publish" in r:
        return "rejected_at_publish", r["rejected_at_publish"]
    if "refused_at_publish" in r:  # overflow reject-publish: the broker nacked it
        return "rejected_at_publish", r["refused_at_publish"]
    if r.get("started") is not None and r["started"] <= T:
        f = r.get("finished")
        if f is not None and f <= T:
            return ("completed_on_time" if exp is None or f < exp else "completed_late"), f
        return "in_system", None
    if r.get("rejected") is not None and r["rejected"] <= T:
        received = r.get("rejected_received", r["received"])
        return ("expired_in_transit" if exp is not None and received >= exp else "expired_before_start"), r["rejected"]
    # a job requeued by a consumer (on_expired requeue) is back in the queue: the broker decides next
    back_in_queue = r.get("received") is None or r.get("requeues")
    for d in dl:
        if d["reason"] == "expired" and d["t"] <= T and back_in_queue:
            return "expired_in_queue", d["t"]
        if d["reason"] in ("maxlen", "delivery_limit") and d["t"] <= T and back_in_queue:
            return "dead_lettered", d["t"]
    return "in_system", None


def write_observed_trace(path, scn, raw):
    """Per-job CSV in brokersim's --trace column order (observed times; delivered_ms is not seen)."""
    T = raw["stop_ms"]
    work = raw["work"]
    def f(x):
        return "" if x is None else "%.3f" % x
    with open(path, "w") as out:
        out.write("job,producer,queue,consumer,created_ms,expires_at_ms,published_ms,delivered_ms,received_ms,"
                  "started_ms,finished_ms,ended_ms,outcome,redeliveries\n")
        for j, r in enumerate(raw["jobs"]):
            o, t = classify(r, T)
            out.write(",".join([str(j), str(r["producer"]), work, str(r.get("consumer", "")), f(r["created"]),
                                f(r.get("expires_at")), f(r.get("published")), "", f(r.get("received")),
                                f(r.get("started")), f(r.get("finished")), f(t), o,
                                str(max(0, r.get("deliveries", 0) - 1))]) + "\n")


def observed_metrics(scn, raw):
    T = raw["stop_ms"]  # as brokersim: outcomes and averages judged at stop.time_ms, also when drained
    warm = float(scn.get("warmup_ms", 0))
    work = raw["work"]
    quorum = scn["broker"].get("kind") == "rabbitmq-quorum"
    jobs = [r for r in raw["jobs"] if r["created"] >= warm]
    out = {k: 0 for k in OUTCOMES}
    waits = {"queue": [], "local": [], "service": [], "sojourn": []}
    reasons = ("expired", "rejected", "maxlen") + (("delivery_limit",) if quorum else ())
    dl_by_reason = {k: 0 for k in reasons}
    published = delivered = redeliveries = abe = rbv = 0
    busy = unacked = 0.0
    ttl_lateness = []
    for r in jobs:
        o, t = classify(r, T)
        out[o] += 1
        if t is not None:
            waits["sojourn"].append(t - r["created"])
        if r.get("published") is not None and r["published"] <= T:
            published += 1
        receipts = [(t, w) for (t, w) in r.get("queue_waits", []) if t <= T]
        delivered += len(receipts)
        redeliveries += max(0, len(receipts) - 1)
        waits["queue"] += [w for (_, w) in receipts]
        ends = sorted(r.get("local_waits", []))
        waits["local"] += [w for (t, w) in ends if t <= T]
        # unacked ~ receipt .. settle sent, per delivery (transit and the ack's way back not seen);
        # a job has one delivery out at a time, so receipts and local ends pair up in order
        for k, (rec, _) in enumerate(receipts):
            settle = ends[k][0] if k < len(ends) else None
            if settle is not None and settle == r.get("started"):
                settle = r.get("finished")
            unacked += overlap(rec, settle if settle is not None else T, warm, T)
        if r.get("started") is not None and r["started"] <= T:
            f = r.get("finished")
            if f is not None and f <= T:
                waits["service"].append(f - r["started"])
            busy += overlap(r["started"], f if f is not None else T, warm, T)
            if r.get("admitted_but_expired"):
                abe += 1
        rbv += sum(1 for t in r.get("rejected_but_valid", []) if t <= T)
        for d in r.get("dead_letters", []):
            if d["from"] == work and d["t"] <= T and d["reason"] in dl_by_reason:
                dl_by_reason[d["reason"]] += 1
            if d["reason"] == "expired" and r.get("published") is not None:
                ttls = [x for x in (r.get("msg_ttl"), scn["broker"]["queues"][work].get("message_ttl_ms")) if x is not None]
                if ttls:
                    ttl_lateness.append(d["t"] - (r["published"] + min(ttls)))
    out["generated"] = len(jobs)
    span_s = max(1e-9, (T - warm) / 1000.0)
    slots = sum(int(c.get("count", 1)) * int(c.get("slots", 1)) for c in scn["consumers"])
    queues = {}
    for name in sorted(scn["broker"].get("queues", {})):
        samples = [n for (t, n) in raw["monitor"].get(name, []) if warm <= t <= T]
        q = {"published": 0, "delivered": 0, "dead_lettered_by_reason": {k: 0 for k in reasons},
             "max_ready": max(samples) if samples else 0,
             "mean_ready": round(statistics.fmean(samples), 3) if samples else 0.0}
        if name == work:
            q.update(published=published, delivered=delivered, dead_lettered_by_reason=dl_by_reason,
                     mean_unacked=round(unacked / (T - warm), 3))
        else:
            q["published"] = sum(1 for r in jobs for d in r.get("dead_letters", []) if d["to"] == name and d["t"] <= T)
            q["delivered_to_observer"] = q["published"]
        queues[name] = q
    # per consumer: receipt of the next delivery - settle of the previous, when the next one was
    # already in the broker (published) before the previous was settled: the prefetch-window gap
    gaps = []
    by_consumer = {}
    for r in jobs:
        if r.get("received") is not None and r.get("consumer") is not None:
            by_consumer.setdefault(r["consumer"], []).append(r)
    for rs in by_consumer.values():
        rs.sort(key=lambda r: r["received"])
        for a, b in zip(rs, rs[1:]):
            end = a.get("finished") if a.get("started") is not None else a.get("rejected")
            if end is not None and b.get("published") is not None and b["published"] < end < b["received"]:
                gaps.append(b["received"] - end)
    completed = out["completed_on_time"] + out["completed_late"]
    pub_lag = [r["published"] - r["scheduled"] for r in jobs if r.get("published") is not None]
    return {
        "outcomes": out,
        "fraction": {k: (out[k] / len(jobs) if jobs else 0.0) for k in OUTCOMES},
        "wait_ms": {k: summary(v) for k, v in waits.items()},
        "throughput_per_s": round(completed / span_s, 4),
        "goodput_per_s": round(out["completed_on_time"] / span_s, 4),
        "slot_utilization": round(busy / (slots * (T - warm)), 4),
        "admitted_but_expired": abe,
        "rejected_but_valid": rbv,
        "redeliveries": redeliveries,
        "queues": queues,
        "run": {"simulated_ms": T, "measured_s": span_s, "real_ms_run": round(raw["t_end"], 1),
                "stop_reason": raw["stop_reason"]},
        "harness": {
            "publish_lag_ms": summary(pub_lag),
            "dead_letter_after_ttl_ms": summary(ttl_lateness),
            "settle_to_next_receipt_ms": summary(gaps),
            "consumers": raw["consumers"],
            "client_errors": raw["errors"],
            "notes": [
                "wait_ms.queue is publish -> receipt by the consumer's pika callback (brokersim's queue + transit)",
                "expired_in_queue times are when the dead-letter observer received the dead letter",
                "mean_ready is sampled every 100 ms by a passive queue.declare (message_count)",
                "mean_unacked is receipt -> ack sent; slot_utilization is service time / slot time",
            ],
        },
    }


# ------------------------------------------------------------------------------------- brokersim

def predict(brokersim, scenario_path, sets, replications):
    def run(rep):
        cmd = [brokersim, "run", scenario_path, "--json"] + sum((["--set", s] for s in sets), [])
        if rep:
            cmd += ["--replication", str(rep)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
        return json.loads(p.stdout)
    base = run(0)
    spread = None
    if replications > 1:
        fr = {k: [] for k in OUTCOMES}
        extra = {"wait_ms.sojourn.p95": [], "wait_ms.queue.mean": [], "wait_ms.local.mean": [], "goodput_per_s": []}
        for rep in range(replications):
            j = base if rep == 0 else run(rep)
            for k in OUTCOMES:
                fr[k].append(j.get("fraction", {}).get(k, 0.0))
            extra["wait_ms.sojourn.p95"].append(j["wait_ms"]["sojourn"]["p95"])
            extra["wait_ms.queue.mean"].append(j["wait_ms"]["queue"]["mean"])
            extra["wait_ms.local.mean"].append(j["wait_ms"]["local"]["mean"])
            extra["goodput_per_s"].append(j["goodput_per_s"])
        def band(xs):
            xs = sorted(xs)
            return {"mean": round(statistics.fmean(xs), 5), "p2.5": round(quantile(xs, 0.025), 5),
                    "p97.5": round(quantile(xs, 0.975), 5)}
        spread = {"replications": replications,
                  "fraction": {k: band(v) for k, v in fr.items() if any(v)},
                  **{k: band(v) for k, v in extra.items()}}
    return base, spread


# ------------------------------------------------------------------------------------------ main

def git_head():
    try:
        return subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception:
        return None


def git_modified():
    try:
        out = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                             capture_output=True, text=True, timeout=10).stdout
        return sorted(line[3:] for line in out.splitlines())
    except Exception:
        return None


def brokersim_version_for(node_version):
    """The brokersim broker.version whose rules the node follows: 3.x -> 3.13 (the oldest brokersim
    models; for quorum queues 3.10-3.13 share its rules: no default delivery limit, every return
    counts), 4.0 / 4.1 -> 4.0, 4.2 -> 4.2, 4.3 and later -> 4.3."""
    try:
        major, minor = (int(x) for x in str(node_version).split(".")[:2])
    except ValueError:
        return None
    if major < 4:
        return "3.13"
    if major == 4 and minor < 2:
        return "4.0"
    return "4.2" if (major, minor) == (4, 2) else "4.3"


def schedules_of(scn):
    seed = int(scn.get("seed", 1))
    return [make_schedule(p, seed, i, float(scn["stop"]["time_ms"]), MAX_JOBS) for i, p in enumerate(scn["producers"])]


# What this harness measured on loopback (README): classic, the settle-to-next-receipt gap of
# prefetch 1 (~1.5 ms); quorum, publish to receipt with credit to spare (~3.7 ms, the Raft commit
# of the enqueue before the queue delivers) and the same ~0.5 ms for the settle to reach the queue.
CALIBRATED_LATENCY_MS = {"rabbitmq-classic": (1.0, 0.5), "rabbitmq-quorum": (3.5, 0.5)}


def calibrated_latency(args, scn):
    if args.calibrated_latency_ms == "auto":
        return CALIBRATED_LATENCY_MS[scn["broker"].get("kind", "rabbitmq-classic")]
    return args.calibrated_latency_ms


def calibration_sets(args, scn):
    out = []
    pair = calibrated_latency(args, scn)
    if pair:
        out += ["broker.delivery_latency_ms=%g" % pair[0], "broker.ack_latency_ms=%g" % pair[1]]
    return out + list(args.calibrated_set)


def calibration_record(args, scn):
    pair = calibrated_latency(args, scn)
    return {"delivery": pair[0], "ack": pair[1]} if pair else None


def same_jobs_predictions(scenario_path, sets, scn, schedules, args):
    """brokersim on exactly the replayed jobs (as written, and with the calibration overrides)."""
    tracedir = tempfile.mkdtemp(prefix="brokersim-cmp-trace-")
    try:
        trace_sets = []
        for i, sch in enumerate(schedules):
            path = os.path.join(tracedir, "producer-%d.csv" % i)
            write_trace(path, sch)
            trace_sets.append("producers.%d.arrivals=%s" % (i, json.dumps({"trace_csv": path})))
        predicted, _ = predict(args.brokersim, scenario_path, sets + trace_sets, 1)
        calibrated = None
        if calibration_sets(args, scn):
            calibrated, _ = predict(args.brokersim, scenario_path, sets + trace_sets + calibration_sets(args, scn), 1)
    finally:
        shutil.rmtree(tracedir, ignore_errors=True)
    return predicted, calibrated


def repredict_case(name, args):
    """--repredict: recompute the same-jobs predictions of a stored result (the schedule is a
    function of the scenario's seed), keeping what the broker did; no broker is started."""
    path = os.path.join(args.out, name + ".json")
    with open(path) as f:
        result = json.load(f)
    scenario_path = os.path.join(REPO, result["scenario"])
    scn = result["scenario_resolved"]
    predicted, calibrated = same_jobs_predictions(scenario_path, result["set"], scn, schedules_of(scn), args)
    result["predicted"], result["predicted_calibrated"] = predicted, calibrated
    result["predicted_calibrated_latency_ms"] = calibration_record(args, scn)
    result["predicted_calibrated_set"] = calibration_sets(args, scn)
    result["repredicted"] = {"when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                             "brokersim": os.path.abspath(args.brokersim), "git_head": git_head()}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    print("  re-predicted", os.path.relpath(path, REPO), flush=True)


def run_case(name, scenario_path, sets, args, broker):
    with open(scenario_path) as f:
        scn = json.load(f)
    for s in sets:
        apply_set(scn, s)
    check_subset(scn)
    print("case %s: %s %s" % (name, os.path.relpath(scenario_path, REPO), " ".join(sets)), flush=True)
    matching = brokersim_version_for(broker.version)
    scenario_version = str(scn["broker"].get("version", "4.2"))
    if scn["broker"].get("kind") == "rabbitmq-quorum" and matching and scenario_version != matching:
        # the delivery-limit counting rule (and the default limit) differ between these versions
        print("  warning: broker.version is %s but the node is RabbitMQ %s (brokersim %s); the quorum "
              "delivery-limit rules may differ" % (scenario_version, broker.version, matching), flush=True)
    schedules = schedules_of(scn)
    predicted, calibrated = same_jobs_predictions(scenario_path, sets, scn, schedules, args)
    own, spread = predict(args.brokersim, scenario_path, sets, args.replications)
    # the machine may be shared (other builds): its load during the replay explains timing noise
    load_before = os.getloadavg()
    raw = replay(scn, broker, schedules)
    load_after = os.getloadavg()
    observed = observed_metrics(scn, raw)
    if args.traces:
        os.makedirs(args.traces, exist_ok=True)
        write_observed_trace(os.path.join(args.traces, name + ".observed.csv"), scn, raw)
    result = {
        "case": name,
        "scenario": os.path.relpath(scenario_path, REPO),
        "set": sets,
        "scenario_resolved": scn,
        "when": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "environment": {"rabbitmq": broker.version, "brokersim_version_for_node": matching,
                        "scenario_broker_version": scenario_version, "pika": pika.__version__,
                        "python": platform.python_version(), "host_cpus": os.cpu_count(),
                        "loadavg_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
                        "brokersim": os.path.abspath(args.brokersim), "git_head": git_head(),
                        "git_modified_tracked_files": git_modified()},
        "observed": observed,
        "predicted": predicted,
        "predicted_calibrated": calibrated,
        "predicted_calibrated_latency_ms": calibration_record(args, scn),
        "predicted_calibrated_set": calibration_sets(args, scn),
        "predicted_own_streams": {k: own[k] for k in ("outcomes", "fraction", "wait_ms", "throughput_per_s",
                                                      "goodput_per_s", "slot_utilization") if k in own},
        "predicted_spread": spread,
        "how": ["predicted: brokersim run on exactly the jobs replayed on the broker (same publish times and "
                "service demands, given to brokersim as producers.I.arrivals.trace_csv)",
                "predicted_calibrated: the same, with broker.delivery_latency_ms / ack_latency_ms set to the "
                "values measured for this harness (--calibrated-latency-ms)",
                "predicted_own_streams: brokersim with its own random streams (scenario as written), replication 0",
                "predicted_spread: mean and 2.5/97.5 percentiles over that many brokersim replications of the "
                "scenario as written: the sampling noise of one run of this length"],
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, name + ".json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    o, p = observed["outcomes"], predicted["outcomes"]
    keys = [k for k in OUTCOMES if o.get(k) or p.get(k)]
    print("  %-22s %10s %10s" % ("outcome", "observed", "predicted"))
    for k in keys + ["generated"]:
        print("  %-22s %10d %10d" % (k, o.get(k, 0), p.get(k, 0)))
    print("  wrote", os.path.relpath(path, REPO), flush=True)
    return result


def latency_pair(text):
    if text.lower() == "none":
        return None
    if text.lower() == "auto":
        return "auto"
    a, sep, b = text.partition(",")
    if not sep:
        raise argparse.ArgumentTypeError("expected DELIVERY,ACK in ms, e.g. 1.0,0.5")
    return float(a), float(b)


def short_outcomes(result):
    names = {"expired_in_queue": "queue", "expired_in_transit": "transit", "expired_before_start": "before-start",
             "completed_on_time": "on-time", "completed_late": "late", "in_system": "in-sys",
             "rejected_at_publish": "rej-pub", "dead_lettered": "dl", "lost": "lost"}
    o = result["outcomes"]
    text = " ".join("%s %d" % (names.get(k, k), o[k]) for k in OUTCOMES if o.get(k))
    if result.get("redeliveries"):  # requeues (on_expired requeue): what the delivery limit counts
        text += " (redeliveries %d)" % result["redeliveries"]
    return text


def print_table(out_dir, prefix=""):
    names = [n for n, _, _ in all_cases() if n.startswith(prefix)]
    results = []
    for n in names:
        p = os.path.join(out_dir, n + ".json")
        if os.path.exists(p):
            with open(p) as f:
                results.append((n, json.load(f)))
    versions = sorted({d["environment"]["rabbitmq"] for _, d in results}) or ["?"]
    print("| case | observed (RabbitMQ %s) | brokersim, same jobs | brokersim, calibrated latency | "
          "queue wait mean obs / pred / cal (ms) | local wait mean obs / pred (ms) | 95%% band of on-time, own streams |" %
          ", ".join(versions))
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n, d in results:
        o, pr, cal = d["observed"], d["predicted"], d.get("predicted_calibrated")
        band = (d.get("predicted_spread") or {}).get("fraction", {}).get("completed_on_time")
        print("| %s | %s | %s | %s | %.1f / %.1f / %s | %.1f / %.1f | %s |" % (
            n, short_outcomes(o), short_outcomes(pr), short_outcomes(cal) if cal else "-",
            o["wait_ms"]["queue"]["mean"], pr["wait_ms"]["queue"]["mean"] + pr["wait_ms"].get("transit", {}).get("mean", 0),
            "%.1f" % (cal["wait_ms"]["queue"]["mean"] + cal["wait_ms"].get("transit", {}).get("mean", 0)) if cal else "-",
            o["wait_ms"]["local"]["mean"], pr["wait_ms"]["local"]["mean"],
            "%.1f-%.1f%% (obs %.1f%%)" % (100 * band["p2.5"], 100 * band["p97.5"], 100 * o["fraction"]["completed_on_time"])
            if band else "-"))


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    need_pika()
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


if __name__ == "__main__":
    sys.exit(main())
