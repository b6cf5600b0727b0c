"""The real clients of one replay, each on its own pika connection: producers publishing the
scheduled jobs, consumers with a local FIFO and worker slots, a dead-letter observer recording
x-death reasons and a monitor sampling ready counts."""

import functools
import json
import math
import threading
import time
import traceback
from collections import deque

from .client import need_pika


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
        pika = need_pika()
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

    def __init__(self, index, spec, broker, clock, jobs, stop, stalls, clock_offset, go, declare=None):
        self.index, self.spec, self.broker, self.clock, self.jobs = index, spec, broker, clock, jobs
        # (durable, arguments): declare the queue before consuming from it, as brokersim's consumer
        # attaching re-declares a queue with x-expires (None: the queue is declared up front only)
        self.declare = declare
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
        pika = need_pika()
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
            if self.declare is not None:
                self.ch.queue_declare(queue=self.spec["queue"], durable=self.declare[0], arguments=self.declare[1])
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
        death = dead_letter_record(props, self.spec["queue"], t, by="consumer")
        if death is not None:  # a dead-letter reader: what brought the job here, seen at receipt
            rec.setdefault("dead_letters", []).append(death)
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
        pika = need_pika()
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
        self.received[qname] += 1
        job = h.get("job")
        if job is None:
            return
        rec = self.jobs[int(job)]
        rec.setdefault("dead_letters", []).append(dead_letter_record(props, qname, t))


def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def dead_letter_record(props, qname, t, by="observer"):
    """The latest x-death of a message received from qname at t (None if it has none); `by`
    tells the observer's records (the job rests there: decided) from a reader consumer's (the job
    is being decided again)."""
    deaths = (props.headers or {}).get("x-death") or []
    if not deaths and by != "observer":
        return None
    d = deaths[0] if deaths else {}
    out = {"t": t, "reason": text(d.get("reason", b"?")), "from": text(d.get("queue", b"?")), "to": qname,
           "expiration_prop": props.expiration}
    if by != "observer":
        out["by"] = by
    return out


class Monitor(threading.Thread):
    """Samples each queue's ready count (passive declare) every 100 ms."""

    def __init__(self, broker, clock, queues, stop, every_ms=100.0):
        super().__init__(daemon=True, name="monitor")
        self.broker, self.clock, self.queues, self.stop, self.every = broker, clock, queues, stop, every_ms
        self.samples = {q: [] for q in queues}
        self.error = None

    def run(self):
        pika = need_pika()
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
                    try:
                        m = ch.queue_declare(queue=q, passive=True).method
                        self.samples[q].append((t, m.message_count))
                    except pika.exceptions.ChannelClosedByBroker as e:
                        if e.reply_code != 404:
                            raise
                        # the queue does not exist (x-expires deleted it): None, and a new channel
                        self.samples[q].append((t, None))
                        ch = conn.channel()
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


class Declarer(threading.Thread):
    """Declares queues at stated times (brokersim's declare_at_ms / declare_every_ms), with the
    queue's own arguments: a client re-creating a queue that x-expires deleted.  Records, per
    declare, whether the queue existed just before (a passive declare)."""

    def __init__(self, broker, clock, plan, stop):
        super().__init__(daemon=True, name="declarer")
        # plan: [(time_ms, queue, durable, arguments)]
        self.broker, self.clock, self.plan, self.stop = broker, clock, sorted(plan, key=lambda x: x[0]), stop
        self.done = []
        self.error = None

    def run(self):
        pika = need_pika()
        conn = None
        try:
            conn = pika.BlockingConnection(self.broker.params())
            ch = conn.channel()
            while self.clock.t0 is None and not self.stop.is_set():
                time.sleep(0.01)
            for at, q, durable, args in self.plan:
                if not sleep_until(self.clock, at, self.stop):
                    break
                t = self.clock.now_ms()
                try:
                    ch.queue_declare(queue=q, passive=True)
                    existed = True
                except pika.exceptions.ChannelClosedByBroker as e:
                    if e.reply_code != 404:
                        raise
                    existed = False
                    ch = conn.channel()
                ch.queue_declare(queue=q, durable=durable, arguments=args)
                self.done.append({"at_ms": at, "t": t, "declared": self.clock.now_ms(), "queue": q,
                                  "existed": existed})
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
