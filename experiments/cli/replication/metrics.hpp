// The metrics a run is reduced to for sweeps, plans and --precision: the metric registry's
// (experiments/cli/metrics/registry.hpp), named as run --json's keys joined with dots
// ("wait_ms.queue.p95"), in its order; read off the run's result as numbers, never from its text.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "experiments/cli/metrics/registry.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

struct SweepSpace;

// The per-window figures of a scenario with observe.window_ms, as in run --json's `windows`
// list (from_ms, outcomes.generated, fraction.expired_before_start, wait_ms.sojourn.p99, ...).
std::vector<std::string> window_metric_names(const Scenario& scenario);

// The metric names of a scenario. They depend only on the scenario's queues.
std::vector<std::string> metric_names(const Scenario& scenario);
// The metrics of a grid: the union over its points, in order of first appearance (point 0's
// first). Points may differ: the dead-letter reasons are the broker kind's own, so a sweep over
// broker.kind has a column for each kind's reasons, empty in the rows of the other kinds.
std::vector<std::string> metric_names(const SweepSpace& space);

// Where one grid point's metrics go in a row of the grid's columns, lined up once per point by
// index into its registry (not by name per run). A column the point has no metric for is NaN
// (an empty CSV cell); a windows.K.NAME column (plan's per-window targets, --window-columns) is
// window K's figure, NaN when the run has no window K or the figure is missing.
class PointColumns {
 public:
  // Throws InvariantError when the point has a metric `names` lacks (a grid built wrong).
  PointColumns(const Scenario& point, const std::vector<std::string>& names,
               const std::unordered_map<std::string, std::size_t>& column_of);
  // `run` is the run's own scenario (its replication, its chosen warm-up).
  void fill(const Scenario& run, const RunResult& result, std::vector<double>& row) const;

 private:
  struct WindowColumn {
    std::size_t column, window, metric;
  };
  MetricRegistry registry_;
  std::size_t width_;
  std::vector<std::size_t> column_;  // per registry metric
  std::vector<WindowColumn> windows_;
};

}  // namespace brokersim
