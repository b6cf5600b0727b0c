// The validation design: points where a model is exact (or brackets the simulation), each
// simulated over independent replications and compared with the model's values; behind
// `brokersim analytic --validate` and tests/test_validation.cpp.
#pragma once

#include <cmath>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/analytic/fit.hpp"

namespace brokersim {

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
  std::uint64_t first_stage = 0;  // --precision: Stein's first stage n0 (the intervals use its spread)
};
// With `precision` (analytic --validate --precision) the point runs Stein's two stages of
// experiments/cli/replication/precision.hpp (the replications every compared metric needs, at most
// the maximum) instead of point.replications; `replications` in the result says how many.
struct PrecisionRule;
ValidationResult run_validation(const ValidationPoint& point, const PrecisionRule* precision = nullptr);

// `analytic --validate`: the validation design against the exact values, as a markdown table
// (R replications of about `jobs` jobs per point, or the rounds of `precision`).
void print_validation(std::ostream& out, int R, double jobs, const PrecisionRule* precision);

}  // namespace brokersim
