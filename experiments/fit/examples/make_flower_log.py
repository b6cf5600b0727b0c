#!/usr/bin/env python3
"""Writes flower-tasks.csv: a Celery task log in the shape of Flower's task list (GET /api/tasks,
one row per task uuid with its latest state and the timestamps of its events, epoch seconds as the
worker's or client's clock gave them). Three pods with four slots each; arrivals Poisson at 8 /s for
a minute; gamma service times (shape 2, mean 200 ms). `sent` is the client's clock, `received`,
`started`, `succeeded` and `failed` the worker's: pod-c's clock is 6 ms behind, so many of its quick
starts come out before their `sent`. About 5% of tasks fail with a failed time, 2% fail without one
(the worker was lost), 2% are waiting to be retried (state RETRY, no finish time), and the log is
taken while the last tasks are still STARTED or PENDING. Deterministic (fixed seed).

    /usr/bin/python3 experiments/fit/examples/make_flower_log.py > experiments/fit/examples/flower-tasks.csv
"""
import heapq
import random
import uuid

rng = random.Random(39)
T0 = 1733239723.0
SKEW = {"celery@pod-a": 0.0, "celery@pod-b": 0.0004, "celery@pod-c": -0.006}
SLOTS = 4
END = 60.0

free = []  # (time free, worker, slot)
for w in SKEW:
    for s in range(SLOTS):
        heapq.heappush(free, (0.0, w, s))
rows = []
t = 0.0
while True:
    t += rng.expovariate(8.0)
    if t >= END:
        break
    free_at, worker, slot = heapq.heappop(free)
    received = max(t, free_at) + rng.uniform(0.0003, 0.0012)  # the broker's delivery
    start = received + rng.uniform(0.0001, 0.0004)
    service = rng.gammavariate(2.0, 0.1)
    finish = start + service
    u = rng.random()
    if u < 0.05:
        state = "FAILURE"
    elif u < 0.07:
        state = "FAILURE_LOST"
    elif u < 0.09:
        state = "RETRY"
    else:
        state = "SUCCESS"
    if start >= END:  # not started when the log was taken
        rows.append((t, worker, None, None, None, None, "PENDING"))
        heapq.heappush(free, (free_at, worker, slot))
        continue
    if finish >= END:
        state = "STARTED"
    heapq.heappush(free, (finish, worker, slot))
    rows.append((t, worker, received, start, finish, service, state))

# The log is taken as the last tasks run: the last one not yet started, the two before it running.
t, worker, *_ = rows[-1]
rows[-1] = (t, worker, None, None, None, None, "PENDING")
for i in (-3, -2):
    t, worker, received, start, finish, service, _ = rows[i]
    rows[i] = (t, worker, received, start, finish, service, "STARTED")

sk = lambda w, x: "" if x is None else f"{T0 + x + SKEW[w]:.6f}"
print("uuid,name,state,sent,received,started,succeeded,failed,retries,worker,runtime")
names = ["app.tasks.resize_image", "app.tasks.send_email", "app.tasks.render_pdf"]
for (t, worker, received, start, finish, service, state) in rows:
    tid = uuid.UUID(int=rng.getrandbits(128), version=4)
    name = rng.choice(names)
    succeeded = failed = ""
    runtime = ""
    shown = state
    if state == "SUCCESS":
        succeeded = sk(worker, finish)
        runtime = f"{service:.6f}"
    elif state == "FAILURE":
        failed = sk(worker, finish)
    elif state == "FAILURE_LOST":
        shown = "FAILURE"  # WorkerLostError: no failed time from the worker
    if state == "PENDING":
        print(f"{tid},{name},PENDING,{T0 + t:.6f},,,,,0,,")
        continue
    retries = 1 if state == "RETRY" else 0
    print(f"{tid},{name},{shown},{T0 + t:.6f},{sk(worker, received)},{sk(worker, start)},{succeeded},{failed},{retries},{worker},{runtime}")
