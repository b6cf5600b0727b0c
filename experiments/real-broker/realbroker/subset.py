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
    "rabbitmq-quorum": CLASSIC_QUEUE_KEYS + ("delivery_limit", "dead_letter_strategy"),
}


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
        if name != work and any(o.get("dead_letter_to") == name for o in queues.values()):
            for k in ("max_length", "expires_ms"):
                if q.get(k) is not None:
                    # the dead-letter observer consumes it from time zero: on the broker it never
                    # fills and never expires, while brokersim (no reader) fills or deletes it
                    raise Unsupported("broker.queues.%s.%s: not on a dead-letter queue (the harness's observer reads "
                                      "it from time zero, so the broker never reaches it)" % (name, k))
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
