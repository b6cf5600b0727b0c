#!/usr/bin/env python3
"""A month of per-message worker logs from a batched Azure Function (a known truth for docs/tutorial-functions.md).

The true system: orders arrive as a Poisson stream whose rate differs by day (a day's volume is
lognormal around 0.6/s, cv 0.15); 4 instances each run one invocation at a time, receiving up to
100 waiting messages and running them in turn (a batched function's loop); service lognormal, mean
4 s, cv 0.5. 1% of attempts fail at once and 0.3% part-way; the failed message is abandoned and
delivered again (a row per attempt, the same message_id). Each worker's clock is a few ms off the
producer's.

    python3 make_functions_log.py OUT.csv [--days 28] [--seed 1]
"""
import argparse
import heapq
import math
import random


def lognormal(rng, mean, cv):
    s2 = math.log(1 + cv * cv)
    return rng.lognormvariate(math.log(mean) - s2 / 2, math.sqrt(s2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--days", type=int, default=28)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    workers = 4
    batch = 100
    skew = [0.004, -0.003, 0.0015, -0.002]  # s, each worker's clock against the producer's
    # Arrivals, day by day: (time, message id, attempt).
    arrivals = []
    n = 0
    for d in range(a.days):
        rate = lognormal(rng, 0.6, 0.15)
        t = d * 86400.0 + rng.expovariate(rate)
        while t < (d + 1) * 86400.0:
            arrivals.append((t, n))
            n += 1
            t += rng.expovariate(rate)
    queue = []  # (enqueue time, id), FIFO by enqueue time
    heapq.heapify(queue)
    for t, m in arrivals:
        heapq.heappush(queue, (t, m))
    free = [(0.0, w) for w in range(workers)]  # when each instance is free
    heapq.heapify(free)
    rows = []
    while queue:
        now, w = heapq.heappop(free)
        first = queue[0][0]
        now = max(now, first)
        taken = []
        while queue and queue[0][0] <= now and len(taken) < batch:
            taken.append(heapq.heappop(queue))
        t = now
        for enq, m in taken:
            u = rng.random()
            if u < 0.01:  # fails at once: delivered again after the batch
                dur = 0.005
                status = "retry"
            elif u < 0.013:  # fails part-way
                dur = lognormal(rng, 4.0, 0.5) * rng.random()
                status = "error"
            else:
                dur = lognormal(rng, 4.0, 0.5)
                status = "success"
            rows.append((m, enq, t + skew[w], t + dur + skew[w], f"func-orders-{w}", status))
            t += dur
            if status != "success":
                heapq.heappush(queue, (t, m))  # its next attempt enqueued when this one failed
        heapq.heappush(free, (t, w))
    # A retry's row keeps the message's first enqueue: the log writes when the message was sent.
    first_enqueue = {}
    for m, enq, *_ in sorted(rows, key=lambda r: r[1]):
        first_enqueue.setdefault(m, enq)
    rows.sort(key=lambda r: (r[2], r[0]))
    with open(a.out, "w") as f:
        f.write("message_id,enqueued_at,started_at,finished_at,worker,status\n")
        for m, enq, s, e, w, st in rows:
            f.write(f"{m},{first_enqueue[m]:.3f},{s:.3f},{e:.3f},{w},{st}\n")


if __name__ == "__main__":
    main()
