#!/usr/bin/env python3
"""Charts of `brokersim fit --out FILE.json`: per queue, the service times (histogram with every
fitted density, and a QQ plot of each fit against the sample) and the arrivals over time (the
rate_schedule with its 95% intervals, and the fleet when the log had a worker column).

    /usr/bin/python3 experiments/fit/plot_fit.py FILE.plot.json --out charts/

Every number is computed by brokersim (the densities on a grid, the model quantiles); this script
only draws them, with matplotlib.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def service_chart(q, path):
    s = q["service"]
    fig, (hist, qq) = plt.subplots(1, 2, figsize=(12, 4.8))
    edges, density = s["histogram"]["edges"], s["histogram"]["density"]
    hist.stairs(density, edges, fill=True, alpha=0.3, color="grey", label="log (%d jobs)" % s["n"])
    for f in s["fits"]:
        if f["x"]:
            width = 2.5 if f["name"] == s["chosen"] else 1.2
            hist.plot(f["x"], f["pdf"], lw=width, label="%s (KS %.3f)" % (f["name"], f["ks"]))
    hist.set_xlabel("service time (ms)")
    hist.set_ylabel("density")
    hist.set_title("queue %s: service times and fitted densities" % q["name"])
    hist.legend(fontsize=8)
    top = 0
    for f in s["fits"]:
        qq.plot(f["qq_model"], f["qq_sample"], ".", ms=3, label=f["name"])
        top = max(top, max(f["qq_model"] + f["qq_sample"]))
    qq.plot([0, top], [0, top], "k-", lw=0.8)
    qq.set_xlabel("fitted quantile (ms)")
    qq.set_ylabel("log quantile (ms)")
    qq.set_title("QQ plot (the line: a perfect fit)")
    qq.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def arrivals_chart(q, path):
    a, fleet = q["arrivals"], q["fleet"]
    fig, ax = plt.subplots(figsize=(12, 4.2))
    t = [x / 1000.0 for x in a["from_ms"]]
    ax.step(t, a["rate_per_s"], where="post", lw=0.8, label="arrivals per second, per interval")
    ax.fill_between(t, a["lo"], a["hi"], step="post", alpha=0.25, label="95% interval")
    ts = [x / 1000.0 for x in a["schedule_from_ms"]] + [a["span_ms"] / 1000.0]
    rs = a["schedule_rate_per_s"] + a["schedule_rate_per_s"][-1:]
    ax.step(ts, rs, where="post", lw=2.5, color="k", label="the fitted rate_schedule")
    ax.set_xlabel("time since the first enqueue (s)")
    ax.set_ylabel("jobs per second")
    ax.set_title("queue %s: %s" % (q["name"], "Poisson" if a["poisson"] else "NOT Poisson (see the report)"))
    ax2 = ax.twinx()
    n = len(t)
    ax2.step(t, fleet["busy"][:n], where="post", color="C2", label="executions in progress (mean)")
    if fleet["from_workers"]:
        ax2.step(t, fleet["active"][:n], where="post", color="C3", label="workers")
    ax2.set_ylabel("workers / executions")
    ax2.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("plot_json")
    p.add_argument("--out", required=True, help="folder for the PNGs")
    args = p.parse_args()
    with open(args.plot_json) as f:
        data = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    for q in data["queues"]:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in q["name"])
        service_chart(q, os.path.join(args.out, safe + "-service.png"))
        arrivals_chart(q, os.path.join(args.out, safe + "-arrivals.png"))
        print(os.path.join(args.out, safe + "-service.png"))
        print(os.path.join(args.out, safe + "-arrivals.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
