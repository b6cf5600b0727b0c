#include "experiments/cli/analytic/coverage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <boost/math/distributions/beta.hpp>

#include "experiments/cli/analytic/validation.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using J = nlohmann::json;

// How a point's jobs abandon: not at all, by the broker's TTL, or by the consumer's deadline
// check before start (times in nanoseconds: no whole-millisecond rounding between the model and
// the broker's timers, which the validation table allows for separately).
enum class PatienceRule { None, QueueTtl, DeadlineCheck };

// One exact point: lambda, c servers of exponential service (mean_ms), prefetch 1.
ValidationPoint exact_point(const std::string& label, double lambda, int c, double mean_ms, double patience_ms,
                            PatienceRule how, double jobs) {
  const double warm_s = 500 * mean_ms / 1000, run_s = std::ceil(jobs / lambda);
  ValidationPoint v;
  v.label = label;
  v.scenario = {
      {"name", "coverage"},
      {"seed", 1},
      {"stop", {{"time_ms", (warm_s + run_s) * 1000}}},
      {"warmup_ms", warm_s * 1000},
      {"broker", {{"queues", {{"work", J::object()}}}}},
      {"producers", J::array({{{"queue", "work"},
                               {"arrivals", {{"poisson", {{"rate_per_s", lambda}}}}},
                               {"service_ms", {{"exp", {{"mean", mean_ms}}}}}}})},
      {"consumers", J::array({{{"queue", "work"}, {"count", c}, {"prefetch", 1}, {"slots", 1}, {"admission", "none"}}})},
  };
  if (how == PatienceRule::QueueTtl) v.scenario["broker"]["queues"]["work"]["message_ttl_ms"] = patience_ms;
  if (how == PatienceRule::DeadlineCheck) {
    v.scenario["producers"][0]["deadline_ms"] = patience_ms;
    v.scenario["consumers"][0]["admission"] = "check-before-start";
  }
  return v;
}

// Clopper-Pearson 95% interval of a binomial proportion k / n.
std::pair<double, double> clopper_pearson(std::uint64_t k, std::uint64_t n) {
  const double lo = k == 0 ? 0 : boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), 0.025);
  const double hi = k == n ? 1 : boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), 0.975);
  return {lo, hi};
}

}  // namespace

double print_coverage(std::ostream& out, std::uint64_t seeds, double jobs, int replications, const PrecisionRule* precision) {
  const std::vector<ValidationPoint> design{
      // The issue's point: rho 1.5, deterministic patience of a tenth of a service time.
      exact_point("M/M/4+D lambda=6/s mu=1/s TTL=100 ms", 6, 4, 1000, 100, PatienceRule::QueueTtl, jobs),
      exact_point("M/M/2+D rho=1.1 deadline=0.5/mu", 22, 2, 100, 50, PatienceRule::DeadlineCheck, jobs),
      exact_point("Erlang C c=10 rho=0.8", 80, 10, 100, 0, PatienceRule::None, jobs),
      exact_point("M/M/1 rho=0.8", 8, 1, 100, 0, PatienceRule::None, jobs),
  };
  out << "Coverage of brokersim's 95% intervals on exact models: " << seeds << " seeds per point, runs of ~" << fmt(jobs)
      << " jobs after a warm-up of 500 mean service times;\n";
  if (precision)
    out << "each seed runs --precision " << fmt(precision->rel) << " (Stein's two stages, first stage " << precision->first
        << ", at most " << precision->max_replications << " replications) and reports mean +- its 95% half-width.\n\n";
  else
    out << "each seed runs " << replications << " replications and reports mean +- the 95% Student-t half-width.\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "| %-38s | %-18s | %5s | %7s | %8s | %-15s | %9s |\n", "model", "metric", "seeds", "nominal",
                "measured", "95% CI (C-P)", "mean R");
  out << line << "|" << std::string(40, '-') << "|" << std::string(20, '-') << "|" << std::string(7, '-') << "|"
      << std::string(9, '-') << "|" << std::string(10, '-') << "|" << std::string(17, '-') << "|" << std::string(11, '-') << "|\n";
  double lowest = 1;
  for (const ValidationPoint& base : design) {
    std::vector<std::string> names;
    std::vector<std::uint64_t> covered;
    std::vector<bool> spread;  // some seed's replications differed: there was an interval to judge
    double reps = 0;
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      ValidationPoint p = base;
      p.scenario["seed"] = seed;
      p.replications = replications;
      const ValidationResult v = run_validation(p, precision);
      reps += v.replications;
      if (names.empty()) {
        for (const auto& m : v.metrics) names.push_back(m.name);
        covered.assign(names.size(), 0);
        spread.assign(names.size(), false);
      }
      for (std::size_t i = 0; i < v.metrics.size() && i < names.size(); ++i) {
        const auto& m = v.metrics[i];
        MeanInterval ci = student_t_interval(m.samples, 0.95);
        ci.half_width = stein_half_width_of(m.samples, v.first_stage);
        covered[i] += std::fabs(ci.mean - m.exact) <= ci.half_width;
        spread[i] = spread[i] || std::any_of(m.samples.begin(), m.samples.end(), [&](double x) { return x != m.samples[0]; });
      }
    }
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!spread[i]) continue;  // always exactly its value (p_abandon_local of a model without it)
      const double c = static_cast<double>(covered[i]) / static_cast<double>(seeds);
      lowest = std::min(lowest, c);
      const auto [lo, hi] = clopper_pearson(covered[i], seeds);
      std::snprintf(line, sizeof line, "| %-38s | %-18s | %5llu | %7s | %8s | %-15s | %9s |\n", base.label.c_str(),
                    names[i].c_str(), static_cast<unsigned long long>(seeds), "0.95", fmt("%.3f", c).c_str(),
                    (fmt("%.3f", lo) + "-" + fmt("%.3f", hi)).c_str(), fmt("%.1f", reps / static_cast<double>(seeds)).c_str());
      out << line;
    }
  }
  out << "\n(metrics every replication measured the same, such as a probability that is 0, are not listed)\n"
      << "lowest measured coverage: " << fmt("%.3f", lowest) << '\n';
  return lowest;
}

}  // namespace brokersim
