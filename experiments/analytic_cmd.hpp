// `brokersim analytic`: recognise scenarios that an exact queueing model describes, print the
// model's values, compare them with a simulation (`run --compare-analytic`), and the validation
// design behind `brokersim analytic --validate` and tests/test_validation.cpp.
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
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "models/simulation.hpp"

namespace brokersim {

enum class AnalyticModel { None, ErlangC, MMcD, ErlangA, PrefetchChain };

struct AnalyticFit {
  AnalyticModel model = AnalyticModel::None;
  std::string reason;          // model == None: "no closed-form model: " + the failures joined by "; "
  std::vector<std::string> failures;  // model == None: every assumption that fails, each naming its key path
  std::string name;            // e.g. "M/M/c+D"
  std::string description;     // how the scenario maps onto it
  bool exact = true;           // false: an approximation (named in `description`)
  int queue = 0;               // the queue the consumers read
  double lambda = 0;           // arrivals per second
  double mu = 0;               // service rate per consumer, per second
  int c = 1;                   // consumers
  int prefetch = 1;            // 0 = unlimited
  double D = INFINITY;         // M/M/c+D: patience (s) = min(broker TTL, deadline if admission checks it)
  double D_ttl = INFINITY;     // the broker TTL part of it (s)
  double theta = 0;            // Erlang A / prefetch chain: patience rate (1/s)
  bool at_dispatch = false;    // abandonment happens when the expired job is delivered and the
                               // consumer's admission check rejects it (no broker TTL before it)
};

AnalyticFit fit_analytic(const Scenario& s);

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

nlohmann::ordered_json analytic_json(const AnalyticFit& fit, const AnalyticValues& v);

// `run --compare-analytic`: side by side (text), or the "analytic" object of run --json.
void print_compare_analytic(std::ostream& out, const Scenario& s, const RunResult& r);
nlohmann::ordered_json compare_analytic_json(const Scenario& s, const RunResult& r);

// The names compared (AnalyticValues members), in table order, with their scale for display.
struct MetricDef {
  const char* name;
  double AnalyticValues::*member;
  double scale;  // display factor (s -> ms)
};
const std::vector<MetricDef>& analytic_metrics();

// ---- validation: simulation against exact values over independent replications
struct ValidationPoint {
  std::string label;       // "c=2 rho=1.1 D=0.1/mu"
  nlohmann::json scenario; // a complete scenario document
  int replications = 20;
};
// jobs_per_replication scales every point's run length (warm-up: 500 mean service times).
std::vector<ValidationPoint> validation_design(double jobs_per_replication, int replications);

struct MetricSamples {
  std::string name;
  double exact = NAN;
  double exact_hi = NAN;        // approximate models: the other end of the bracket [exact, exact_hi]
  std::vector<double> samples;  // one per replication (Scenario::replication = 0 .. R-1)
  double bias_bound = 0;        // documented deterministic offset allowed beside the CI (>= 0)
};
struct ValidationResult {
  AnalyticFit fit;
  std::vector<MetricSamples> metrics;  // only those with both an exact and a simulated value
  int replications = 0;
};
// With `precision` (analytic --validate --precision) the point runs replications in the rounds of
// experiments/precision.hpp until every compared metric's 95% half-width meets the rule (or the
// maximum), instead of point.replications; `replications` in the result says how many.
struct PrecisionRule;
ValidationResult run_validation(const ValidationPoint& point, const PrecisionRule* precision = nullptr);

}  // namespace brokersim
