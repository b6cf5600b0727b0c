#!/usr/bin/python3
"""Charts of a brokersim sweep CSV (brokersim sweep ... --out results.csv) or time series
(brokersim run ... --timeseries series.csv).

    python3 notebooks/plot.py RESULTS.csv --out DIR
    python3 notebooks/plot.py SERIES.csv --out DIR [--groups 4,2]

A sweep CSV gives DIR/stale_work.png, DIR/time_spent.png and DIR/throughput.png; notebooks/sweep.ipynb
imports this module and draws the same figures inline. A time series (first column time_ms) gives
DIR/queue_depth.png (ready and unacked per queue), DIR/consumers.png (jobs waiting in the local
buffers and executing, per consumer, or summed per group with --groups COUNTS, the consumer counts of
the scenario's groups in order; more than 8 consumers without --groups are summed over the fleet) and,
when the series has per-interval outcome columns (outcomes.expired_before_start, ...),
DIR/stale_work_per_interval.png.

Sweep charts:
The x axis is the varied path ending in ".prefetch" and the series the path ending in ".count"
(consumers.0.prefetch, consumers.0.count); without them, the first and second varied columns
(every column before "replications"). Other varied columns, if any, are fixed at their first value.
Bands and error bars are the 95% confidence intervals of the *_ci95 columns (empty with one
replication: no bands).
"""

import argparse
import numbers
import os
import re
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


# ---------------------------------------------------------------------------------------------
# Time series (brokersim run --timeseries): time_ms, NAME.ready / NAME.unacked per queue,
# consumer.I.local / consumer.I.executing per consumer (numbered across groups from 0), and
# possibly per-interval outcome columns outcomes.OUTCOME.

CONSUMER_COLUMN = re.compile(r"^consumer\.(\d+)\.(local|executing)$")
MAX_CONSUMER_LINES = 8
STALE_OUTCOMES = [
    ("expired_in_queue", "expired in the broker queue (TTL)"),
    ("expired_in_transit", "expired in transit"),
    ("expired_before_start", "expired waiting at the consumer"),
]


def is_timeseries(path):
    """True when the CSV's first column is time_ms (a --timeseries file, not a sweep)."""
    with open(path, newline="") as f:
        header = f.readline()
    return header.split(",")[0].strip().lstrip("\ufeff") == "time_ms"


def load_timeseries(path):
    df = pd.read_csv(path)
    if df.columns[0] != "time_ms":
        raise ValueError(f"{path}: not a brokersim time series (first column is not time_ms)")
    if df.empty:
        raise ValueError(f"{path}: no samples (the header only)")
    bad = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise ValueError(f"{path}: column {bad[0]} is not numeric")
    return df


def series_queues(df):
    """Queue names, in column order: every NAME with both NAME.ready and NAME.unacked."""
    cols = set(df.columns)
    return [c[: -len(".ready")] for c in df.columns if c.endswith(".ready") and c[: -len(".ready")] + ".unacked" in cols]


def series_consumers(df):
    """Consumer indices with both local and executing columns, ascending."""
    found = {}
    for c in df.columns:
        m = CONSUMER_COLUMN.match(c)
        if m:
            found.setdefault(int(m.group(1)), set()).add(m.group(2))
    return sorted(i for i, kinds in found.items() if kinds == {"local", "executing"})


def parse_groups(text):
    """--groups 4,2 -> [4, 2] (consumer counts of the scenario's groups, in order)."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"--groups: expected consumer counts such as 4,2, got {text!r}") from None
    if not counts or any(n < 1 for n in counts):
        raise ValueError(f"--groups: expected consumer counts >= 1 such as 4,2, got {text!r}")
    return counts


def _time_axis(df):
    """x values and label: seconds unless the span is short."""
    t = df["time_ms"]
    if t.iloc[-1] - t.iloc[0] >= 10_000:
        return t / 1000.0, "simulated time (s)"
    return t, "simulated time (ms)"


def queue_depth(df):
    """Ready and unacked messages per queue over time, one panel per queue."""
    queues = series_queues(df)
    if not queues:
        raise ValueError("the time series has no NAME.ready / NAME.unacked columns")
    x, xlabel = _time_axis(df)
    fig, axs = plt.subplots(len(queues), 1, figsize=(12, 2.6 * len(queues) + 1), sharex=True, squeeze=False)
    for ax, q in zip(axs[:, 0], queues):
        ax.step(x, df[q + ".ready"], where="post", label="ready (in the broker queue)", color="#4c72b0")
        ax.step(x, df[q + ".unacked"], where="post", label="unacked (delivered, not acked)", color="#c44e52")
        ax.set_title(f"queue {q}", fontsize=11)
        ax.set_ylabel("messages")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axs[0, 0].legend(loc="upper right", fontsize=9)
    axs[-1, 0].set_xlabel(xlabel)
    fig.suptitle("Queue depth over time (sampled every observe.every_ms)")
    fig.tight_layout()
    return fig


def consumer_lines(df, groups=None):
    """[(label, local series, executing series)]: per consumer, per group, or the whole fleet."""
    consumers = series_consumers(df)
    if not consumers:
        raise ValueError("the time series has no consumer.I.local / consumer.I.executing columns")
    if groups is not None:
        if sum(groups) != len(consumers):
            raise ValueError(f"--groups: the counts add up to {sum(groups)} but the series has "
                             f"{len(consumers)} consumers")
        lines, first = [], 0
        for g, n in enumerate(groups):
            members = consumers[first:first + n]
            first += n
            lines.append((f"group {g} ({n} consumer{'s' if n != 1 else ''})",
                          sum(df[f"consumer.{i}.local"] for i in members),
                          sum(df[f"consumer.{i}.executing"] for i in members)))
        return lines
    if len(consumers) > MAX_CONSUMER_LINES:
        return [(f"all {len(consumers)} consumers",
                 sum(df[f"consumer.{i}.local"] for i in consumers),
                 sum(df[f"consumer.{i}.executing"] for i in consumers))]
    return [(f"consumer {i}", df[f"consumer.{i}.local"], df[f"consumer.{i}.executing"]) for i in consumers]


def consumers_chart(df, groups=None):
    """Jobs waiting in the consumers' local buffers and executing, over time."""
    lines = consumer_lines(df, groups)
    x, xlabel = _time_axis(df)
    fig, axs = plt.subplots(2, 1, figsize=(12, 6.5), sharex=True)
    for label, local, executing in lines:
        axs[0].step(x, local, where="post", label=label)
        axs[1].step(x, executing, where="post", label=label)
    axs[0].set_title("received, not started (the prefetch buffer, where the broker's ready count does not see them)",
                     fontsize=11)
    axs[1].set_title("executing (busy slots)", fontsize=11)
    for ax in axs:
        ax.set_ylabel("jobs")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axs[0].legend(loc="upper right", fontsize=9, ncol=2)
    axs[1].set_xlabel(xlabel)
    fig.suptitle("Consumers over time")
    fig.tight_layout()
    return fig


def stale_columns(df):
    """[(column, label)] of the per-interval stale-work columns the series has (maybe none)."""
    return [("outcomes." + name, label) for name, label in STALE_OUTCOMES if "outcomes." + name in df.columns]


def stale_per_interval(df):
    """Jobs that went stale in each sampling interval, by where they were waiting; None without such columns."""
    cols = stale_columns(df)
    if not cols:
        return None
    x, xlabel = _time_axis(df)
    fig, ax = plt.subplots(figsize=(12, 4.2))
    # A row's count is taken to cover the interval that ends at its time_ms, hence "pre".
    for col, label in cols:
        ax.step(x, df[col], where="pre", label=label)
    ax.set_ylabel("jobs per interval")
    ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize=9)
    fig.suptitle("Stale work per sampling interval")
    fig.tight_layout()
    return fig


def timeseries_charts(df, groups=None):
    """[(file name, figure)] for a time series; the stale-work chart only when its columns exist."""
    charts = [("queue_depth.png", queue_depth(df)), ("consumers.png", consumers_chart(df, groups))]
    stale = stale_per_interval(df)
    if stale is not None:
        charts.append(("stale_work_per_interval.png", stale))
    return charts


def _save(charts, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for name, fig in charts:
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def write_all(csv, out_dir, groups=None):
    """Write the charts of a sweep CSV or a time series (told apart by the first column)."""
    if csv is not None and is_timeseries(csv):
        df = load_timeseries(csv)
        charts = []
        try:
            charts = timeseries_charts(df, groups)
            return _save(charts, out_dir)
        finally:
            for _, fig in charts:
                plt.close(fig)
    if groups is not None:
        raise ValueError("--groups applies to a time series (first column time_ms), not to a sweep CSV")
    df, varied = load(csv)
    return _save([(name, chart(df, varied)) for name, chart in CHARTS], out_dir)


def main(argv=None):
    p = argparse.ArgumentParser(description="Charts of a brokersim sweep CSV or --timeseries CSV")
    p.add_argument("csv", nargs="?",
                   help="sweep CSV or time series (default: $BROKERSIM_SWEEP_CSV or the example sweep)")
    p.add_argument("--out", required=True, help="folder for the PNG files")
    p.add_argument("--groups", help="time series: consumer counts of the scenario's groups (4,2), to sum per group")
    args = p.parse_args(argv)
    try:
        groups = parse_groups(args.groups) if args.groups is not None else None
        for path in write_all(args.csv, args.out, groups):
            print(path)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
