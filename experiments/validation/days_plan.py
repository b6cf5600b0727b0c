#!/usr/bin/env python3
"""Days that differ, measured: does a fleet planned from a fitted month hold
on fresh days?

1. The 'real' system is experiments/validation/days_generator.json: one day of a queue with a
   morning peak whose volume varies from day to day (lognormal, cv 0.15). Sixty of its days, run
   with a generous fleet and traced, make a 60-day job log.
2. `brokersim fit --days` fits the log as one mean day with the days' volume spread.
3. `brokersim plan` picks the fewest consumers for TARGET on 95% of runs, once with the fitted
   spread (each run a day of its own volume) and once with it left out (every run the mean day).
4. Each chosen fleet runs on FRESH fresh days of the generator (seeds never used above); the share
   of days meeting the target, with its Clopper-Pearson 95% interval, is what the plan promised
   to be at least 95%.

Usage: days_plan.py BROKERSIM [--days 60] [--fresh 200] [--work DIR]
"""
import argparse, csv, json, math, os, subprocess, sys, tempfile, time
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "days_generator.json")
TARGET = "wait_ms.queue.p99<=20000 in 95% of runs"
METRIC, LIMIT = ("queue", "p99"), 20000.0
DAY_MS = 86_400_000
BASE_MS = 1_780_012_800_000  # a UTC midnight


def sh(args):
    return subprocess.run(args, check=True, capture_output=True, text=True)


def beta_ppf(q, a, b):
    # bisection on the regularized incomplete beta via math.lgamma continued fraction (no scipy)
    def betacf(x):
        tiny = 1e-300
        qab, qap, qam = a + b, a + 1, a - 1
        c, d = 1.0, 1 - qab * x / qap
        d = 1 / (d if abs(d) > tiny else tiny)
        h = d
        for m in range(1, 300):
            m2 = 2 * m
            aa = m * (b - m) * x / ((qam + m2) * (a + m2))
            d = 1 + aa * d; d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c if abs(1 + aa / c) > tiny else tiny
            h *= d * c
            aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
            d = 1 + aa * d; d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c if abs(1 + aa / c) > tiny else tiny
            de = d * c
            h *= de
            if abs(de - 1) < 1e-12:
                break
        return h

    def ibeta(x):
        if x <= 0: return 0.0
        if x >= 1: return 1.0
        bt = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x))
        return bt * betacf(x) / a if x < (a + 1) / (a + b + 2) else 1 - bt * beta_sym(x)

    def beta_sym(x):
        nonlocal a, b
        a, b = b, a
        try:
            return betacf(1 - x) / a
        finally:
            a, b = b, a

    lo, hi = 0.0, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if ibeta(mid) < q: lo = mid
        else: hi = mid
    return (lo + hi) / 2


def clopper_pearson(k, n):
    lo = 0.0 if k == 0 else beta_ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta_ppf(0.975, k + 1, n - k)
    return lo, hi


COLUMNS = "enqueued=enqueued_ms,started=started_ms,finished=finished_ms,worker=worker"


def make_log(b, work, days, first_seed):
    """A job log of `days` days of the generator (seeds first_seed, first_seed + 1, ...), traced
    with its 12 consumers (no backlog to speak of) and stitched at midnight: work/month.csv."""
    log = os.path.join(work, "month.csv")
    with open(log, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["enqueued_ms", "started_ms", "finished_ms", "worker"])
        for d in range(days):
            trace = os.path.join(work, "day.csv")
            sh([b, "run", GEN, "--set", f"seed={first_seed + d}", "--trace", trace])
            with open(trace) as t:
                for r in csv.DictReader(t):
                    # A job finishing after midnight would overlap the next day's first jobs on
                    # the same consumer (each day is its own run): the stitched log drops it.
                    if r["started_ms"] == "" or r["finished_ms"] == "" or float(r["finished_ms"]) >= DAY_MS:
                        continue
                    # Decimal: a float sum at 1.78e12 ms would round a finish and the next start on
                    # the same worker differently, and fit would see them overlap.
                    off = Decimal(BASE_MS + d * DAY_MS)
                    w.writerow([Decimal(r["created_ms"]) + off, Decimal(r["started_ms"]) + off,
                                Decimal(r["finished_ms"]) + off, r["consumer"]])
    return log


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("brokersim")
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--fresh", type=int, default=200)
    ap.add_argument("--work", default=None)
    o = ap.parse_args()
    work = o.work or tempfile.mkdtemp(prefix="days-plan-")
    os.makedirs(work, exist_ok=True)
    b = o.brokersim

    # 1. A 60-day log from the generator, 12 consumers (no backlog to speak of), seeds 1..60.
    log = make_log(b, work, o.days, 1)

    # 2. fit --days
    fitted = os.path.join(work, "fitted.json")
    rep = sh([b, "fit", log, "--days", "--out", fitted, "--columns", COLUMNS]).stdout
    days_line = next(l for l in rep.splitlines() if l.strip().startswith("Days:"))
    print("fit:", days_line.strip())

    # 3. plans with and without the spread; 4. the chosen fleets on fresh days.
    rows = []
    for label, sets in (("days vary (fitted cv)", []),
                        ("whole days resampled (days_csv)", ["--set", 'producers.0.arrivals={"days_csv": "fitted.days.csv"}',
                                                             "--set", 'producers.0.volume={"multiplier": 1}']),
                        ("every run the mean day", ["--set", 'producers.0.volume={"multiplier": 1}'])):
        t0 = time.time()
        p = subprocess.run([b, "plan", fitted, "--vary", "consumers.0.count=2:12:1", "--target", TARGET,
                            "--replications", "59", "--json"] + sets, capture_output=True, text=True)
        secs = time.time() - t0
        if p.returncode not in (0, 5):
            sys.exit(p.stderr)
        pj = json.loads(p.stdout)
        if not pj.get("best"):
            sys.exit(f"{label}: no setting met the target")
        count = pj["best"]["setting"]["consumers.0.count"]
        runs = pj["replications_run"]
        ok = 0
        for f in range(o.fresh):
            r = json.loads(sh([b, "run", GEN, "--json", "--set", f"seed={100000 + f}",
                               "--set", f"consumers.0.count={count}"]).stdout)
            ok += r["wait_ms"][METRIC[0]][METRIC[1]] <= LIMIT
        lo, hi = clopper_pearson(ok, o.fresh)
        rows.append((label, count, runs, secs, ok, lo, hi))
    print(f"target: {TARGET}; {o.fresh} fresh days of the generator")
    print("| plan over | consumers chosen | plan runs | plan seconds | fresh days meeting the target (95% interval) |")
    print("| --- | --- | --- | --- | --- |")
    for label, count, runs, secs, ok, lo, hi in rows:
        print(f"| {label} | {count} | {runs} | {secs:.1f} | {ok}/{o.fresh} = {100 * ok / o.fresh:.1f}% ({100 * lo:.1f} to {100 * hi:.1f}) |")


if __name__ == "__main__":
    main()
