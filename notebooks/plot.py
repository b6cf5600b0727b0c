#!/usr/bin/python3
"""Charts of a brokersim sweep CSV (brokersim sweep ... --out results.csv).

    python3 notebooks/plot.py RESULTS.csv --out DIR

writes DIR/stale_work.png, DIR/time_spent.png and DIR/throughput.png. notebooks/sweep.ipynb
imports this module and draws the same figures inline.

The x axis is the varied path ending in ".prefetch" and the series the path ending in ".count"
(consumers.0.prefetch, consumers.0.count); without them, the first and second varied columns
(every column before "replications"). Other varied columns, if any, are fixed at their first value.
Bands and error bars are the 95% confidence intervals of the *_ci95 columns (empty with one
replication: no bands).
"""

import argparse
import numbers
import os
import sys

import matplotlib

if __name__ == "__main__":
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CSV = os.path.join(HERE, "..", "experiments", "sweeps", "capacity-prefetch-consumers.csv")

STALE = [
    ("fraction.expired_in_queue", "expired in the broker queue (TTL)"),
    ("fraction.expired_before_start", "expired waiting at the consumer (prefetch buffer)"),
    ("fraction.expired_in_transit", "expired in transit"),
]
WAITS = [
    ("wait_ms.queue.mean", "broker queue", "#4c72b0"),
    ("wait_ms.transit.mean", "transit", "#dd8452"),
    ("wait_ms.local.mean", "local (prefetch buffer)", "#c44e52"),
    ("wait_ms.service.mean", "execution", "#55a868"),
]


def load(path=None):
    """Read a sweep CSV; returns (data frame, varied columns)."""
    path = path or os.environ.get("BROKERSIM_SWEEP_CSV") or DEFAULT_CSV
    df = pd.read_csv(path)
    if "replications" not in df.columns:
        raise ValueError(f"{path}: not a brokersim sweep CSV (no 'replications' column)")
    varied = list(df.columns[: list(df.columns).index("replications")])
    if not varied:
        raise ValueError(f"{path}: no varied columns")
    return df, varied


def axes_of(varied):
    """(x column, series column or None) for the charts."""
    x = next((c for c in varied if c.endswith(".prefetch")), varied[0])
    rest = [c for c in varied if c != x]
    series = next((c for c in rest if c.endswith(".count")), rest[0] if rest else None)
    return x, series


def _fixed(df, varied, x, series):
    """Rows with every other varied column at its first value."""
    for c in varied:
        if c not in (x, series):
            df = df[df[c] == df[c].iloc[0]]
    return df


def _groups(df, series):
    if series is None:
        return [(None, df)]
    return [(v, g) for v, g in df.groupby(series, sort=True)]


def _label(series, value):
    if series is None:
        return None
    name = series.split(".")[-1]
    return f"{name} = {value:g}" if isinstance(value, numbers.Real) else f"{name} = {value}"


def _ci(g, metric):
    col = metric + "_ci95"
    return g[col].fillna(0) if col in g.columns else 0 * g[metric + "_mean"]


def _xaxis(ax, df, x):
    values = sorted(df[x].unique())
    if all(isinstance(v, numbers.Real) and v > 0 for v in values) and max(values) / min(values) >= 8:
        ax.set_xscale("log", base=2)
        ax.set_xticks(values)
        ax.set_xticklabels([f"{v:g}" for v in values])
    ax.set_xlabel(x + ("  (unacked deliveries per consumer)" if x.endswith(".prefetch") else ""))
    ax.grid(True, alpha=0.3)


def _title(df, varied, x, series, ci=True):
    fixed = [f"{c}={df[c].iloc[0]}" for c in varied if c not in (x, series)]
    reps = int(df["replications"].iloc[0])
    return f"{reps} replication{'s' if reps != 1 else ''} per point" + (", 95% CI" if ci else ", means") + (", " + ", ".join(fixed) if fixed else "")


def stale_work(df, varied):
    """Fractions of jobs that went stale before they started, against prefetch, per consumer count."""
    x, series = axes_of(varied)
    d = _fixed(df, varied, x, series)
    fig, axs = plt.subplots(1, len(STALE), figsize=(15, 4.6), sharex=True)
    for ax, (metric, title) in zip(axs, STALE):
        for value, g in _groups(d, series):
            g = g.sort_values(x)
            ax.errorbar(g[x], 100 * g[metric + "_mean"], yerr=100 * _ci(g, metric), marker="o", capsize=3,
                        label=_label(series, value))
        ax.set_title(title, fontsize=11)
        ax.set_ylabel("% of generated jobs")
        ax.set_ylim(bottom=0)
        _xaxis(ax, d, x)
    if series is not None:
        axs[0].legend(title="consumers" if series.endswith(".count") else series)
    fig.suptitle("Stale work: where jobs expired before starting  (" + _title(d, varied, x, series) + ")")
    fig.tight_layout()
    return fig


def time_spent(df, varied):
    """Mean time per job in each stage, stacked, per prefetch setting; one panel per consumer count."""
    x, series = axes_of(varied)
    d = _fixed(df, varied, x, series)
    groups = _groups(d, series)
    fig, axs = plt.subplots(1, len(groups), figsize=(4.2 * len(groups) + 1, 4.8), sharey=True, squeeze=False)
    for ax, (value, g) in zip(axs[0], groups):
        g = g.sort_values(x)
        labels = [f"{v:g}" if isinstance(v, numbers.Real) else str(v) for v in g[x]]
        bottom = [0.0] * len(g)
        for metric, name, color in WAITS:
            if metric + "_mean" not in g.columns:
                continue
            vals = list(g[metric + "_mean"])
            ax.bar(labels, vals, bottom=bottom, label=name, color=color)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_title(_label(series, value) if series else "", fontsize=11)
        ax.set_xlabel(x)
        ax.grid(True, axis="y", alpha=0.3)
    axs[0][0].set_ylabel("mean time per job (ms)")
    axs[0][-1].legend(loc="upper right", fontsize=9)
    fig.suptitle("Where the time goes: mean time per job in each stage  (" + _title(d, varied, x, series, ci=False) + ")")
    fig.tight_layout()
    return fig


def throughput(df, varied):
    """Throughput (completed) and goodput (completed on time) against prefetch, with 95% CI bands."""
    x, series = axes_of(varied)
    d = _fixed(df, varied, x, series)
    fig, axs = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for ax, (metric, title) in zip(axs, [("throughput_per_s", "Throughput (jobs completed)"),
                                          ("goodput_per_s", "Goodput (jobs completed on time)")]):
        for value, g in _groups(d, series):
            g = g.sort_values(x)
            mean, ci = g[metric + "_mean"], _ci(g, metric)
            line, = ax.plot(g[x], mean, marker="o", label=_label(series, value))
            ax.fill_between(g[x], mean - ci, mean + ci, color=line.get_color(), alpha=0.2)
        ax.set_title(title, fontsize=11)
        ax.set_ylabel("jobs/s")
        _xaxis(ax, d, x)
    if series is not None:
        axs[0].legend(title="consumers" if series.endswith(".count") else series)
    fig.suptitle("Throughput and goodput  (" + _title(d, varied, x, series) + ")")
    fig.tight_layout()
    return fig


CHARTS = [("stale_work.png", stale_work), ("time_spent.png", time_spent), ("throughput.png", throughput)]


def write_all(csv, out_dir):
    df, varied = load(csv)
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, chart in CHARTS:
        fig = chart(df, varied)
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main(argv=None):
    p = argparse.ArgumentParser(description="Charts of a brokersim sweep CSV")
    p.add_argument("csv", nargs="?", help="sweep CSV (default: $BROKERSIM_SWEEP_CSV or the example sweep)")
    p.add_argument("--out", required=True, help="folder for the PNG files")
    args = p.parse_args(argv)
    try:
        for path in write_all(args.csv, args.out):
            print(path)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
