#!/usr/bin/env python3
"""Charts of the cross-broker example (experiments/scenarios/cross-broker.json).

usage: cross_broker_charts.py [--dir experiments/sweeps] [--out experiments/sweeps/charts]

Reads, from --dir: cross-broker.csv (broker.kind x consumers.0.prefetch) and, when present,
cross-broker-servicebus-lock.csv and cross-broker-sqs-visibility.csv (the lock and visibility
settings at each prefetch); writes cross_broker.png (what became of the jobs, per broker and
prefetch) and, with the other two, cross_broker_clocks.png (stale work and duplicate executions
against the lock or visibility timeout).
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

KINDS = ["rabbitmq-classic", "rabbitmq-quorum", "azure-servicebus", "amazon-sqs"]
PARTS = [  # (column, label, colour): what became of the jobs, as fractions of those generated
    ("fraction.completed_on_time_mean", "completed on time", "#55a868"),
    ("fraction.completed_late_mean", "completed late", "#8c8c8c"),
    ("fraction.expired_in_queue_mean", "stale in the broker queue", "#4c72b0"),
    ("expired_before_start_by_cause.fraction_on_receipt_mean", "stale on receipt (waited at the broker)", "#64b5cd"),
    ("expired_before_start_by_cause.fraction_in_local_buffer_mean", "stale in the client's buffer", "#c44e52"),
    ("fraction.dead_lettered_mean", "dead-lettered (delivery count)", "#8172b3"),
    ("fraction.in_system_mean", "still in the system at the end", "#e5e5e5"),
]
PREFETCH = "consumers.0.prefetch"


def value(row, column):
    v = row.get(column)
    return 0.0 if v is None or pd.isna(v) else float(v)


def outcomes_chart(df, out):
    kinds = [k for k in KINDS if k in set(df["broker.kind"])]
    fig, axs = plt.subplots(1, len(kinds), figsize=(3.6 * len(kinds), 4.6), sharey=True)
    axs = axs if len(kinds) > 1 else [axs]
    for ax, kind in zip(axs, kinds):
        rows = df[df["broker.kind"] == kind].sort_values(PREFETCH)
        x = [str(p) for p in rows[PREFETCH]]
        bottom = [0.0] * len(rows)
        for column, label, colour in PARTS:
            h = [value(r, column) for _, r in rows.iterrows()]
            ax.bar(x, h, bottom=bottom, color=colour, label=label, width=0.7)
            bottom = [b + v for b, v in zip(bottom, h)]
        dup = [value(r, "duplicate_executions_mean") / max(1.0, value(r, "outcomes.generated_mean")) for _, r in rows.iterrows()]
        ax.plot(x, dup, "k^--", label="duplicate executions (per job)")
        ax.set_title(kind, fontsize=11)
        ax.set_xlabel("prefetch")
        ax.set_ylim(0, 1.05)
    axs[0].set_ylabel("fraction of jobs")
    handles, labels = axs[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle("One workload on four brokers: where the stale work goes as prefetch grows", fontsize=12)
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    fig.savefig(os.path.join(out, "cross_broker.png"), dpi=110)
    plt.close(fig)


def clocks_chart(lock, vis, out):
    fig, axs = plt.subplots(1, 2, figsize=(12, 4.2))
    for ax, df, column, title in [
        (axs[0], lock, "broker.queues.work.lock_duration_ms", "azure-servicebus: lock duration"),
        (axs[1], vis, "broker.queues.work.visibility_timeout_ms", "amazon-sqs: visibility timeout"),
    ]:
        for prefetch, rows in df.groupby(PREFETCH):
            rows = rows.sort_values(column)
            seconds = rows[column] / 1000
            stale = rows["expired_before_start_by_cause.fraction_in_local_buffer_mean"] + rows["fraction.dead_lettered_mean"].fillna(0)
            ax.plot(seconds, stale, "o-", label=f"prefetch {prefetch}: stale in buffer + dead-lettered")
            ax.plot(seconds, rows["duplicate_executions_mean"] / rows["outcomes.generated_mean"], "x:",
                    label=f"prefetch {prefetch}: duplicate executions per job")
        ax.set_xscale("log")
        ticks = sorted(set(df[column] / 1000))
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{t:g}" for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("seconds (the workload's deadline is 60 s)")
        ax.set_ylabel("fraction of jobs")
        ax.set_title(title, fontsize=11)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "cross_broker_clocks.png"), dpi=110)
    plt.close(fig)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", default=here)
    p.add_argument("--out", default=os.path.join(here, "charts"))
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    outcomes_chart(pd.read_csv(os.path.join(a.dir, "cross-broker.csv")), a.out)
    lock = os.path.join(a.dir, "cross-broker-servicebus-lock.csv")
    vis = os.path.join(a.dir, "cross-broker-sqs-visibility.csv")
    if os.path.exists(lock) and os.path.exists(vis):
        clocks_chart(pd.read_csv(lock), pd.read_csv(vis), a.out)


if __name__ == "__main__":
    main()
