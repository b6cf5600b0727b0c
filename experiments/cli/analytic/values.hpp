// The values of the model a scenario fits, and the same quantities measured by a run.
//
// What brokersim quantity each model value means (all per generated job, after warm-up):
//   p_abandon        (expired_in_queue + expired_in_transit + expired_before_start) / generated
//   p_abandon_queue  expired_in_queue / generated;  p_abandon_local: the other two
//   p_wait           jobs_waited / generated: jobs not started at the instant they were created
//   mean_wait_served wait_ms.queue mean (prefetch 1: delivery = start), plus wait_ms.local for a
//                    single consumer with prefetch > 1 and no expiry; not measurable when expired
//                    jobs are delivered and rejected (their queue waits mix in), then NaN
//   throughput       completed / measured time
//   mean_ready       queues.Q.mean_ready (time average of the ready list, expired messages that
//                    wait behind a live head included); mean_unacked likewise
#pragma once

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/analytic/fit.hpp"
#include "models/results.hpp"

namespace brokersim {

// NaN: the model does not give the value, or (simulated_values) brokersim does not measure it in
// the model's sense.
struct AnalyticValues {
  double p_abandon = NAN, p_abandon_queue = NAN, p_abandon_local = NAN, p_wait = NAN;
  double mean_wait_served_s = NAN, mean_wait_s = NAN, throughput_per_s = NAN;
  double mean_ready = NAN, mean_unacked = NAN, utilization = NAN;
  double mean_queue_live = NAN;  // live waiting jobs in the broker queue (models with exp patience)
};

// `uniform_dispatch`: the prefetch chain with UniformWithCredit dispatch instead of FewestUnacked
// (for c > 1 brokersim's round-robin is neither; the simulation lies between the two, see
// experiments/validation/README.md). Ignored by the other models.
AnalyticValues analytic_values(const AnalyticFit& fit, bool uniform_dispatch = false);
AnalyticValues simulated_values(const AnalyticFit& fit, const RunResult& r);

// A value as JSON, null where it is NaN (a value the model does not give).
nlohmann::ordered_json nan_as_null(double v);

// The model, its parameters and values as JSON (`analytic --json`; values in the table's units).
nlohmann::ordered_json analytic_json(const AnalyticFit& fit, const AnalyticValues& v);

// The names compared (AnalyticValues members), in table order, with their scale for display.
struct MetricDef {
  const char* name;
  double AnalyticValues::*member;
  double scale;  // display factor (s -> ms)
};
const std::vector<MetricDef>& analytic_metrics();

}  // namespace brokersim
