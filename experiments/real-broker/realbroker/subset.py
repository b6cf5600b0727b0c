"""The scenario subset the harness replays faithfully (anything else is refused with the key path
before a broker starts), --set as brokersim reads it, the queue arguments declared for a scenario's
queues, and the brokersim version whose rules a RabbitMQ node follows."""

import json


class Unsupported(Exception):
    pass


# The queue keys the harness can declare, by broker kind.
CLASSIC_QUEUE_KEYS = ("message_ttl_ms", "dead_letter_to", "max_length", "overflow", "expires_ms")
KINDS = {
    "rabbitmq-classic": CLASSIC_QUEUE_KEYS,
    # declare_at_ms / declare_every_ms: a client (the harness's declarer) declares the queue at those
    # times; on quorum queues that only re-creates a deleted queue, as brokersim says (declares, and
    # the monitor's passive ones, do not renew a quorum queue's x-expires lease: rabbit_fifo's
    # last_active moves only with consumers). On classic queues every declare renews the lease,
    # the monitor's passive declare every 100 ms too, so x-expires could never fire there.
    "rabbitmq-quorum": CLASSIC_QUEUE_KEYS + ("delivery_limit", "dead_letter_strategy", "declare_at_ms",
                                             "declare_every_ms"),
}
# broker keys besides kind, version, latencies and queues that the harness replays, by kind: they
# go into the node's configuration (advanced.config), so a node runs the scenario's setting
BROKER_NODE_KEYS = {"rabbitmq-quorum": ("dead_letter_confirm_timeout_ms",)}
# brokersim key -> the rabbit application setting a node is started with
NODE_SETTINGS = {"dead_letter_confirm_timeout_ms": "dead_letter_worker_publisher_confirm_timeout"}


def effective_delivery_limit(q, version):
    """brokersim's rule (QuorumRules::delivery_limit in models/brokers/rabbitmq_quorum.cpp): the key, else 20 from 4.0 on, none
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
    source = source_queue(scn, work)
    for i, p in enumerate(scn["producers"]):
        if p["queue"] != source:
            raise Unsupported("producers.%d.queue: must be the consumed queue %r, or one queue whose dead_letter_to "
                              "it is" % (i, work))
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
    for k in BROKER_NODE_KEYS.get(kind, ()):
        v = b.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
            # the node's setting is an integer number of milliseconds
            raise Unsupported("broker.%s: a whole number of milliseconds > 0 (the node's %s), got %r"
                              % (k, NODE_SETTINGS[k], v))
    if source != work:
        # dead-letter reader: the consumers read the dead-letter target of the producers' queue
        if queues.get(work, {}).get("dead_letter_to"):
            raise Unsupported("broker.queues.%s.dead_letter_to: not on the consumed dead-letter target" % work)
        if any(o.get("dead_letter_to") == work for n, o in queues.items() if n != source):
            raise Unsupported("broker.queues.%s: dead-lettered into by a queue other than %r" % (work, source))
        target, src = queues.get(work, {}), queues.get(source, {})
        at_least_once = (src.get("dead_letter_strategy") == "at-least-once" and src.get("overflow") == "reject-publish")
        for k in ("max_length", "expires_ms"):
            if target.get(k) is None:
                continue
            if kind != "rabbitmq-quorum":
                # a classic target drops what it refuses, unseen; and the monitor's passive declare
                # renews a classic queue's x-expires lease
                raise Unsupported("broker.queues.%s.%s: on a dead-letter target only with rabbitmq-quorum" % (work, k))
            if k == "expires_ms" and not at_least_once:
                # at-most-once dead letters into a deleted target are dropped: brokersim says lost, the
                # harness cannot see them
                raise Unsupported("broker.queues.%s.expires_ms: on a dead-letter target only when %s dead-letters "
                                  "at-least-once (dead_letter_strategy at-least-once, overflow reject-publish)"
                                  % (work, source))
    for name, q in queues.items():
        for k in q:
            if k not in KINDS[kind]:
                raise Unsupported("broker.queues.%s.%s: not supported by the harness on %s" % (name, k, kind))
        for k in ("declare_at_ms", "declare_every_ms"):
            if q.get(k) is not None and q.get("expires_ms") is None:
                raise Unsupported("broker.queues.%s.%s: only with expires_ms (a declare re-creates the deleted "
                                  "queue)" % (name, k))
        ats = q.get("declare_at_ms")
        if ats is not None and not (isinstance(ats, list) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in ats)):
            raise Unsupported("broker.queues.%s.declare_at_ms: an array of times >= 0, got %r" % (name, ats))
        every = q.get("declare_every_ms")
        if every is not None and (isinstance(every, bool) or not isinstance(every, (int, float)) or every < 1):
            raise Unsupported("broker.queues.%s.declare_every_ms: a duration >= 1, got %r" % (name, every))
        if name != work and name in read:
            raise Unsupported("broker.queues.%s: a consumed dead-letter queue is not supported" % name)
        if name != work and any(o.get("dead_letter_to") == name for o in queues.values()):
            for k in ("max_length", "expires_ms"):
                if q.get(k) is not None:
                    # the dead-letter observer consumes it from time zero: on the broker it never
                    # fills and never expires, while brokersim (no reader) fills or deletes it
                    raise Unsupported("broker.queues.%s.%s: not on an observed dead-letter queue (the harness's "
                                      "observer reads it from time zero, so the broker never reaches it; let the "
                                      "consumers read it, from their start_ms, instead)" % (name, k))
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
    for i, c in enumerate(scn["consumers"]):
        if float(c.get("start_ms", 0) or 0) < 0:
            raise Unsupported("consumers.%d.start_ms: >= 0" % i)
    stop = scn["stop"]
    if "time_ms" not in stop:
        raise Unsupported("stop.time_ms: required by the harness (real time must be bounded)")
    return work


def source_queue(scn, work):
    """The queue the producers publish to: the consumed queue itself, or (a dead-letter reader) the one
    queue whose dead_letter_to is the consumed queue; then the consumers read what that queue
    dead-letters, from their start_ms, and the target may fill (max_length) or be deleted and
    declared again (expires_ms, declare_at_ms) as brokersim models it."""
    targets = sorted({p["queue"] for p in scn["producers"]})
    if targets == [work] or len(targets) != 1:
        return work
    q = scn["broker"].get("queues", {}).get(targets[0], {})
    return targets[0] if q.get("dead_letter_to") == work else work


def declare_times(q, stop_ms):
    """The times (ms) a client declares the queue: declare_at_ms, and every declare_every_ms from
    that period on (brokersim: "a client re-declares the queue this often")."""
    out = [float(t) for t in (q.get("declare_at_ms") or []) if float(t) <= stop_ms]
    every = q.get("declare_every_ms")
    if every:
        k = 1
        while k * float(every) <= stop_ms:
            out.append(k * float(every))
            k += 1
    return sorted(set(out))


def node_settings(scn):
    """The rabbit application settings the node must run this scenario with ({} for the defaults):
    broker.dead_letter_confirm_timeout_ms -> dead_letter_worker_publisher_confirm_timeout."""
    b = scn.get("broker", {})
    out = {}
    for k in BROKER_NODE_KEYS.get(b.get("kind", "rabbitmq-classic"), ()):
        if b.get(k) is not None:
            out[NODE_SETTINGS[k]] = int(b[k])
    return out


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
