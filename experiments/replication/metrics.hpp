// The metrics a run is reduced to for sweeps, plans and --precision: every numeric leaf of
// result_json() flattened with dots ("wait_ms.queue.p95"), except `seed` and `replication`, in
// result_json's order.
#pragma once

#include <string>
#include <vector>

#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

struct SweepSpace;

// The names and values of one run's metrics (either may be null). `with_windows` adds every
// window's figures as windows.K.NAME (K from 0), after the others: plan's per-window targets ask
// for them; sweeps never do (a column per window would make the CSV's columns depend on the run).
void run_metrics(const Scenario& scenario, const RunResult& result, std::vector<std::string>* names,
                 std::vector<double>* values, bool with_windows = false);

// The per-window figures of a scenario with observe.window_ms, as in run --json's `windows`
// list (from_ms, outcomes.generated, fraction.expired_before_start, wait_ms.sojourn.p99, ...).
std::vector<std::string> window_metric_names(const Scenario& scenario);

// The metric names of a scenario. They depend only on the scenario's queues.
std::vector<std::string> metric_names(const Scenario& scenario);
// The metrics of a grid: the union over its points, in order of first appearance (point 0's
// first). Points may differ: the dead-letter reasons are the broker kind's own, so a sweep over
// broker.kind has a column for each kind's reasons, empty in the rows of the other kinds.
std::vector<std::string> metric_names(const SweepSpace& space);

}  // namespace brokersim
