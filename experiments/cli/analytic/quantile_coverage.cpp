// `analytic --coverage SEEDS --quantiles` (experiments/cli/analytic/quantile_coverage.hpp).
#include "experiments/cli/analytic/quantile_coverage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <boost/math/special_functions/beta.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/text.hpp"
#include "models/analytic/mmcd.hpp"
#include "models/simulation.hpp"

namespace brokersim {

namespace {

using J = nlohmann::json;

struct QuantileModel {
  std::string label;
  double lambda;  // per second
  int c;
  double mean_ms;  // exponential service
  double ttl_ms;   // the queue's message TTL; infinity for none
  double warm_s;   // warm-up: several relaxation times, so that the start from empty (a warm-up
                   // question) does not confound the quantile estimators
};

// The scenario of one model: Poisson arrivals, c consumers of prefetch 1 and exponential service,
// the model's warm-up, then about `jobs` arrivals.
J model_scenario(const QuantileModel& m, double jobs, std::uint64_t seed) {
  const double warm_s = m.warm_s, run_s = std::ceil(jobs / m.lambda);
  J s = {
      {"name", "quantile-coverage"},
      {"seed", seed},
      {"stop", {{"time_ms", (warm_s + run_s) * 1000}}},
      {"warmup_ms", warm_s * 1000},
      {"broker", {{"queues", {{"work", J::object()}}}}},
      {"producers", J::array({{{"queue", "work"},
                               {"arrivals", {{"poisson", {{"rate_per_s", m.lambda}}}}},
                               {"service_ms", {{"exp", {{"mean", m.mean_ms}}}}}}})},
      {"consumers", J::array({{{"queue", "work"}, {"count", m.c}, {"prefetch", 1}, {"slots", 1}, {"admission", "none"}}})},
  };
  if (std::isfinite(m.ttl_ms)) s["broker"]["queues"]["work"]["message_ttl_ms"] = m.ttl_ms;
  return s;
}

// The exact q-quantile (ms) of the waiting time of served jobs (wait_ms.queue: expired jobs are
// never delivered), from the M/M/c+D law (models/analytic/mmcd.hpp; Erlang C when D is infinite),
// by bisection on its CDF: the smallest t with P(W <= t | served) >= q.
double exact_wait_quantile(const QuantileModel& m, double q) {
  const analytic::MMcD law = analytic::mmc_deadline(m.lambda, 1000 / m.mean_ms, m.c, m.ttl_ms / 1000);
  if (law.served_wait_cdf(0) >= q) return 0;
  double lo = 0, hi = 1;
  while (law.served_wait_cdf(hi) < q) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (law.served_wait_cdf(mid) >= q ? hi : lo) = mid;
  }
  return hi * 1000;
}

std::pair<double, double> clopper_pearson_95(std::uint64_t k, std::uint64_t n) {
  const double lo = k == 0 ? 0 : boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), 0.025);
  const double hi = k == n ? 1 : boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), 0.975);
  return {lo, hi};
}

struct Coverage {
  std::uint64_t covered = 0, zero_width = 0;
  double estimate_sum = 0;
  void add(const QuantileInterval& i, double exact) {
    covered += std::fabs(i.estimate - exact) <= i.half_width;
    zero_width += i.half_width == 0;
    estimate_sum += i.estimate;
  }
};

}  // namespace

double print_quantile_coverage(std::ostream& out, std::uint64_t seeds, double jobs, int replications) {
  const std::vector<QuantileModel> design{
      // Relaxation time 1 / (mu (1 - sqrt(rho))^2) = 156 s: a warm-up of 2,000 s is 13 of them.
      {"M/M/1 rho=0.95 (mean service 100 ms)", 9.5, 1, 100, INFINITY, 2000},
      // The TTL bounds every wait by 2 s: 500 service times is ample.
      {"M/M/8+D rho=0.95 mu=1/s TTL=2 s", 7.6, 8, 1000, 2000, 500},
  };
  const double qs[] = {0.50, 0.95, 0.99};
  out << "Coverage of 95% intervals for the queue wait's quantiles (wait_ms.queue.pNN) against the exact\n"
      << "steady-state quantile: " << seeds << " seeds per model, " << replications << " replications of ~" << fmt(jobs)
      << " jobs after a warm-up of 2,000 s (M/M/1) or 500 s (M/M/8+D).\n"
      << "before: mean of per-run quantiles +- Student t (what brokersim printed first); per-run: the same + the\n"
      << "mean half-bucket (it estimates the expected per-run quantile, not the steady-state one); pooled: the\n"
      << "quantile of all replications' jobs (wait_ms.STAGE.pNN_pooled), its interval by sectioning (what\n"
      << "brokersim printed before) or by CDF batching (the runs' CDFs at the estimate, Johnson's t, inverted\n"
      << "through the pooled CDF: what run and sweep print now), each + half a bucket. bias: the mean estimate\n"
      << "over seeds relative to the exact value. \"± 0\": intervals of width 0.\n\n";
  char line[320];
  std::snprintf(line, sizeof line, "| %-36s | %-4s | %10s | %-22s | %-22s | %-22s | %-22s | %-14s | %-14s | %8s |\n", "model", "q",
                "exact (ms)", "before: coverage (C-P)", "per-run: coverage", "pooled, sectioning", "pooled, CDF batching", "bias before",
                "bias pooled", "\"± 0\" before");
  out << line;
  out << "|" << std::string(38, '-') << "|" << std::string(6, '-') << "|" << std::string(12, '-') << "|" << std::string(24, '-')
      << "|" << std::string(24, '-') << "|" << std::string(24, '-') << "|" << std::string(24, '-') << "|" << std::string(16, '-') << "|"
      << std::string(16, '-') << "|" << std::string(10, '-') << "|\n";
  double lowest = 1;
  std::string notes;
  for (const QuantileModel& m : design) {
    std::vector<Coverage> before(3), per_run(3), sectioning(3), pooled(3);
    std::vector<double> lengths;  // correlation_times of each seed's runs
    for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
      Scenario s = load_scenario(model_scenario(m, jobs, seed), ".");
      std::vector<sim::Histogram> waits;
      waits.reserve(static_cast<std::size_t>(replications));
      for (int r = 0; r < replications; ++r) {
        s.replication = static_cast<std::uint64_t>(r);
        waits.push_back(simulate(s).wait(Wait::Queue));
      }
      std::vector<const sim::Histogram*> runs;
      for (const auto& h : waits) runs.push_back(&h);
      PooledWaits kept;
      for (std::size_t r = 0; r < waits.size(); ++r) kept.add(r, std::span<const sim::Histogram>(&waits[r], 1));
      lengths.push_back(correlation_times(kept, 0));
      for (std::size_t k = 0; k < 3; ++k) {
        const QuantileFigures f = quantile_figures(runs, qs[k], 0.95);
        const double exact = exact_wait_quantile(m, qs[k]);
        before[k].add(f.naive, exact);
        per_run[k].add(f.per_run, exact);
        sectioning[k].add(f.sectioning, exact);
        pooled[k].add(f.pooled, exact);
      }
    }
    std::sort(lengths.begin(), lengths.end());
    const auto flagged = std::count_if(lengths.begin(), lengths.end(), [](double k) { return warns_of_short_runs(kTailQuantile, k); });
    notes += "  " + m.label + ": the runs hold " + fmt("%.1f", lengths[lengths.size() / 2]) + " correlation times of the wait (median; 10%: " +
             fmt("%.1f", lengths[lengths.size() / 10]) + "), below " + fmt(kTailCorrelationTimes) + " (run and sweep warn of the p99) in " +
             std::to_string(flagged) + " of " + std::to_string(seeds) + " seeds\n";
    for (std::size_t k = 0; k < 3; ++k) {
      const double exact = exact_wait_quantile(m, qs[k]), n = static_cast<double>(seeds);
      const auto cell = [&](const Coverage& t) {
        const auto [lo, hi] = clopper_pearson_95(t.covered, seeds);
        return fmt("%.3f", static_cast<double>(t.covered) / n) + " (" + fmt("%.3f", lo) + "-" + fmt("%.3f", hi) + ")";
      };
      const auto bias = [&](const Coverage& t) { return fmt("%+.2f%%", (t.estimate_sum / n / exact - 1) * 100); };
      lowest = std::min(lowest, static_cast<double>(pooled[k].covered) / n);
      std::snprintf(line, sizeof line, "| %-36s | %-4s | %10s | %-22s | %-22s | %-22s | %-22s | %-14s | %-14s | %8s |\n",
                    m.label.c_str(), fmt("p%.0f", qs[k] * 100).c_str(), fmt("%.1f", exact).c_str(), cell(before[k]).c_str(),
                    cell(per_run[k]).c_str(), cell(sectioning[k]).c_str(), cell(pooled[k]).c_str(), bias(before[k]).c_str(), bias(pooled[k]).c_str(),
                    std::to_string(before[k].zero_width).c_str());
      out << line;
    }
  }
  out << "\nRun length beside the wait's correlation (correlation_times: the runs' mean within-run variance over\n"
         "the variance of their mean waits; docs/outcomes.md):\n" << notes;
  out << "\nlowest measured coverage of the pooled interval (CDF batching, as printed): " << fmt("%.3f", lowest) << '\n';
  return lowest;
}

}  // namespace brokersim
