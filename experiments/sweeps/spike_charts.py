#!/usr/bin/env python3
"""Charts of the autoscaler example (experiments/scenarios/spike-autoscale.json).

usage: spike_charts.py [--dir experiments/sweeps] [--out experiments/sweeps/charts]

Reads, from --dir: spike-autoscale-series.csv and spike-fixed7-series.csv (run --timeseries of
the autoscaled scenario and of a fixed fleet of 7), spike-autoscale.csv and spike-fixed.csv (the
sweeps); writes spike_over_time.png (replicas and stale work per interval, autoscaled against
fixed) and spike_cost.png (worst-minute stale work against replica-hours, every setting).
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

STALE = "window_max.fraction.expired_before_start_mean"
STALE_CI = "window_max.fraction.expired_before_start_ci95"
COST = "fleet.consumer_seconds_mean"
TARGET = "consumers.0.autoscale.target_per_replica"
LATENCY = "consumers.0.autoscale.start_latency_ms.lognormal.mean"
MIN = "consumers.0.autoscale.min"


def over_time(auto, fixed):
    fig, axs = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    for df, label, color in [(auto, "autoscaled (target 2/replica, min 6, start ~30 s)", "#4c72b0"),
                             (fixed, "fixed fleet of 7", "#c44e52")]:
        minutes = df["time_ms"] / 60000
        axs[0].step(minutes, df["group.0.replicas"], where="post", label=label, color=color)
        axs[1].step(minutes, df["outcomes.expired_before_start"], where="pre", label=label, color=color)
    axs[0].set_ylabel("replicas")
    axs[0].set_title("Replicas (requested and not yet gone)", fontsize=11)
    axs[1].set_ylabel("jobs per 15 s")
    axs[1].set_title("Jobs that went stale before they started, per 15 s", fontsize=11)
    axs[1].set_xlabel("simulated minutes (load 18 jobs/s, 30 jobs/s from minute 30 to 40)")
    for ax in axs:
        ax.axvspan(30, 40, color="#dddddd", alpha=0.5, lw=0)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=9)
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    return fig


def cost(auto, fixed):
    fig, ax = plt.subplots(figsize=(10, 6))
    hours = 3600.0
    ax.errorbar(fixed[COST] / hours, 100 * fixed[STALE], yerr=100 * fixed[STALE_CI].fillna(0), fmt="k-o",
                label="fixed fleets (5-10 replicas)", capsize=3)
    for n, row in fixed.iterrows():
        ax.annotate(str(int(row["consumers.0.count"])), (row[COST] / hours, 100 * row[STALE]),
                    textcoords="offset points", xytext=(4, 4), fontsize=8)
    markers = {10000: "o", 30000: "s", 60000: "^"}
    colors = {2: "#4c72b0", 4: "#dd8452", 8: "#55a868"}
    for (target, latency), group in auto.groupby([TARGET, LATENCY]):
        ax.scatter(group[COST] / hours, 100 * group[STALE], marker=markers.get(latency, "x"),
                   color=colors.get(target, "gray"), s=40,
                   label=f"autoscaled: target {target}/replica, start {latency / 1000:.0f} s (min 4-6)")
    ax.axhline(1.0, color="gray", ls="--", lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("replica-hours over the 55 measured minutes (fleet.consumer_seconds / 3600)")
    ax.set_ylabel("worst one-minute window: % stale before start (window_max)")
    ax.set_title("Stale work in the worst minute against what the fleet cost (means of 5 replications)", fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    return fig


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", default=os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--out", default=None)
    a = p.parse_args()
    out = a.out or os.path.join(a.dir, "charts")
    os.makedirs(out, exist_ok=True)
    read = lambda name: pd.read_csv(os.path.join(a.dir, name))
    charts = [("spike_over_time.png", over_time(read("spike-autoscale-series.csv"), read("spike-fixed7-series.csv"))),
              ("spike_cost.png", cost(read("spike-autoscale.csv"), read("spike-fixed.csv")))]
    for name, fig in charts:
        fig.savefig(os.path.join(out, name), dpi=100)
        print(os.path.join(out, name))


if __name__ == "__main__":
    main()
