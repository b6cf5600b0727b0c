// The metric registry: every figure a run reports, once, as a name with its unit, what it counts
// and how to read it off the run's result. `run --json` is written by walking it, and sweep
// columns, plan targets, --precision and `metrics` take their names and numbers from it, so they
// cannot drift apart and no one builds the JSON to read its numbers back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/metrics/billing.hpp"
#include "experiments/cli/offered_load.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// n events over a span of `seconds`, per second; 0 for an empty span.
inline double per_s(std::uint64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

// How a number is written in run --json: a count as an integer; a real as nlohmann writes a
// double; a figure that may be missing (a window's percentile on too few samples) is NaN in sweep
// rows and null in the JSON. A Field is JSON that is no metric (the scenario's name, the stop
// reason, the frameworks): it keeps run --json's key order but is no sweep column.
enum class MetricKind : unsigned char { Count, Real, MaybeReal, Field };

// What a run-level extractor reads: the run's scenario (after its warm-up was chosen), its result
// and the offered loads with the run's fleet (computed once per run, not per metric).
struct RunView {
  const Scenario& scenario;
  const RunResult& result;
  const std::vector<QueueLoad>& loads;
};

template <class Ctx>
struct MetricEntry {
  std::vector<std::string> path;  // JSON keys from the top: {"queues", "jobs", "published"}
  std::string name;               // the path joined with dots: sweep's column, plan's target
  MetricKind kind = MetricKind::Real;
  std::string unit;               // "jobs", "ms", "fraction", ... ("" for a Field)
  std::string counts;             // what it counts, in a planner's words
  std::function<double(const Ctx&)> value;                    // metrics
  std::function<nlohmann::ordered_json(const Ctx&)> json;     // fields
};

using RunMetric = MetricEntry<RunView>;
using WindowMetric = MetricEntry<WindowResult>;

// The figures of one window of observe.window_ms, in the order of run --json's `windows` entries.
const std::vector<WindowMetric>& window_metrics();

// The run-level metrics of one scenario (they depend on its queues, broker kind, consumer groups
// and observe/stop/warm-up settings, never on the run), in run --json's key order.
class MetricRegistry {
 public:
  explicit MetricRegistry(const Scenario& scenario);

  // Every entry, fields included: what the JSON writer walks.
  const std::vector<RunMetric>& entries() const { return entries_; }
  // The numeric ones (no Field), in order: the metric indices sweeps and plans line up by.
  const std::vector<std::size_t>& metric_entries() const { return metrics_; }
  const RunMetric& metric(std::size_t i) const { return entries_[metrics_[i]]; }
  std::size_t size() const { return metrics_.size(); }
  std::vector<std::string> names() const;

  // Metric i's value for each i, into out[0 .. size()); `scenario` is the run's own.
  void values(const Scenario& scenario, const RunResult& result, double* out) const;
  // run --json, less what run.cpp adds (analytic).
  nlohmann::ordered_json json(const Scenario& scenario, const RunResult& result) const;

 private:
  std::vector<RunMetric> entries_;
  std::vector<std::size_t> metrics_;
};

// One window's JSON object (from_ms, to_ms, jobs, outcomes, fraction, wait_ms, throughput).
nlohmann::ordered_json window_json(const WindowResult& window);

// The dead-letter reasons a broker's queues can give: its kind's, and a RabbitMQ classic broker
// holding a quorum queue (broker.queues.NAME.type) gives a quorum queue's too (delivery_limit). A
// broker whose queues are all of the kind's type keeps the kind's columns.
std::span<const DeathReason> reported_death_reasons(const BrokerSpec& broker);

// What a count of a wait (wait_ms.NAME.count, the summary's row) counts: docs/outcomes.md,
// "Waits and their populations" (a job delivered twice is two deliveries).
const char* wait_unit(Wait w);

}  // namespace brokersim
