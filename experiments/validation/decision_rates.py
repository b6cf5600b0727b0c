#!/usr/bin/env python3
"""How often `plan` takes a wrong (or a right) decision, over many seeds.

  experiments/validation/decision_rates.py rare BINARY [SEEDS]
  experiments/validation/decision_rates.py chance BINARY [SEEDS]

M/M/4+D (rare_outcome.json beside this file): the exact fraction of jobs expiring in the queue is
0.000501 (`brokersim analytic experiments/validation/rare_outcome.json`), 25% over the target
`fraction.expired_in_queue<=0.0004`, so every acceptance is a wrong decision; and with the target
`fraction.expired_in_queue<=0.001`, twice the truth, every acceptance is right. Each seed is one
user's plan of that single setting; the script counts the seeds whose plan accepts it (exit 0)
for each way of judging.

chance: one consumer fed Poisson arrivals at 10/s for 10 s (chance_target.json): the jobs a run
counts, outcomes.generated, are Poisson with mean 100, so P(generated <= 124) = 0.99123 and
P(generated <= 116) = 0.94778 exactly. `plan --precision 0.1` with the target
'outcomes.generated<=124 in 95% of runs' should accept (its true chance is about 99%), and with
'outcomes.generated<=116 in 95% of runs' (true chance 94.8%, under 95%) accept at most 5% of
the time.

Each rate is printed with its 95% Clopper-Pearson interval. The measured figures are in the README
("Intervals you can bet on"). Not a test: a few hundred seeds take minutes.
"""
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))


def binomial_tail(n, k, p):
    """P(X >= k) for X ~ Binomial(n, p), summed exactly (n is a count of seeds, small)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1))


def clopper_pearson(k, n):
    """The two-sided 95% Clopper-Pearson interval of k in n, by bisection on the binomial tails."""
    def solve(f):
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            (lo, hi) = (mid, hi) if f(mid) else (lo, mid)
        return (lo + hi) / 2
    lower = 0.0 if k == 0 else solve(lambda p: binomial_tail(n, k, p) < 0.025)
    upper = 1.0 if k == n else solve(lambda p: 1 - binomial_tail(n, k + 1, p) > 0.025)
    return lower, upper


def plan(binary, scenario, seed, args):
    """One user's plan of the scenario's single setting: (accepted, replications run)."""
    r = subprocess.run([binary, "plan", scenario, "--vary", "consumers.0.count=" + COUNT[scenario], "--seed", str(seed),
                        "--threads", "1", "--json"] + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if r.returncode not in (0, 5):
        raise SystemExit(f"seed {seed}: exit {r.returncode}")
    j = json.loads(r.stdout)
    return r.returncode == 0, j.get("replications_run", 0)


def rate(binary, scenario, args, seeds, label):
    with ThreadPoolExecutor(max_workers=os.cpu_count()) as pool:
        got = list(pool.map(lambda s: plan(binary, scenario, s, args), range(1, seeds + 1)))
    accepted = sum(1 for a, _ in got if a)
    lo, hi = clopper_pearson(accepted, seeds)
    reps = sum(n for _, n in got) / seeds
    print(f"{label:66s} accepted in {accepted} of {seeds} seeds: {100 * accepted / seeds:.1f}% "
          f"(95% CI {100 * lo:.1f}-{100 * hi:.1f}%), mean replications {reps:.1f}")


RARE = os.path.join(HERE, "rare_outcome.json")
CHANCE = os.path.join(HERE, "chance_target.json")
COUNT = {RARE: "4", CHANCE: "1"}


def rare(binary, seeds):
    # <= 0.0004: every acceptance is wrong; <= 0.001 (twice the truth): every acceptance is right.
    for threshold in ("0.0004", "0.001"):
        target = ["--target", "fraction.expired_in_queue<=" + threshold]
        for label, args in (("--precision 0.1", ["--precision", "0.1"]),
                            ("--conservative --replications 10", ["--conservative", "--replications", "10"]),
                            ("--conservative --replications 30", ["--conservative", "--replications", "30"])):
            rate(binary, RARE, target + args, seeds, f"true 0.000501, target <= {threshold}, " + label)


def chance(binary, seeds):
    for threshold, truth in ((124, "0.99123"), (116, "0.94778")):
        target = ["--target", f"outcomes.generated<={threshold} in 95% of runs", "--precision", "0.1"]
        rate(binary, CHANCE, target, seeds, f"true chance {truth}, asked 95% of runs, --precision 0.1")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("rare", "chance"):
        raise SystemExit(__doc__)
    seeds = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    {"rare": rare, "chance": chance}[sys.argv[1]](sys.argv[2], seeds)


if __name__ == "__main__":
    main()
