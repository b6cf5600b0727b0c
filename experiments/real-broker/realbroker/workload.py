"""The workload: each producer's jobs (publish time, service demand) drawn once with Python's
random, seeded from the scenario; the same list is replayed on the broker and given to brokersim
as a trace_csv."""

import math
import random

from .subset import Unsupported

MAX_JOBS = 200000


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


def schedules_of(scn):
    seed = int(scn.get("seed", 1))
    return [make_schedule(p, seed, i, float(scn["stop"]["time_ms"]), MAX_JOBS) for i, p in enumerate(scn["producers"])]
