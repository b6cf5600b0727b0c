// `analytic --coverage SEEDS --skew` (experiments/cli/analytic/skew_coverage.hpp).
#include "experiments/cli/analytic/skew_coverage.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/math/special_functions/beta.hpp>

#include "experiments/cli/analytic/validation.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using J = nlohmann::json;

struct SkewModel {
  std::string label;
  double lambda;  // per second
  int c;
  double mean_ms;  // exponential service
  double ttl_ms;   // the queue's message TTL; 0 for none
  double warm_s;   // a warm-up long past the start from empty
};

ValidationPoint skew_point(const SkewModel& m, double jobs, std::uint64_t seed, int replications) {
  const double run_s = std::ceil(jobs / m.lambda);
  ValidationPoint v;
  v.label = m.label;
  v.replications = replications;
  v.scenario = {
      {"name", "skew-coverage"},
      {"seed", seed},
      {"stop", {{"time_ms", (m.warm_s + run_s) * 1000}}},
      {"warmup_ms", m.warm_s * 1000},
      {"broker", {{"queues", {{"work", J::object()}}}}},
      {"producers", J::array({{{"queue", "work"},
                               {"arrivals", {{"poisson", {{"rate_per_s", m.lambda}}}}},
                               {"service_ms", {{"exp", {{"mean", m.mean_ms}}}}}}})},
      {"consumers", J::array({{{"queue", "work"}, {"count", m.c}, {"prefetch", 1}, {"slots", 1}, {"admission", "none"}}})},
  };
  if (m.ttl_ms > 0) v.scenario["broker"]["queues"]["work"]["message_ttl_ms"] = m.ttl_ms;
  return v;
}

std::pair<double, double> skew_clopper_pearson(std::uint64_t k, std::uint64_t n) {
  const double lo = k == 0 ? 0 : boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), 0.025);
  const double hi = k == n ? 1 : boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), 0.975);
  return {lo, hi};
}

struct MissTally {
  std::uint64_t covered = 0, low = 0, high = 0;
  double width = 0;  // sum of half-widths
  void add(double mean, double hw, double exact) {
    const bool in = std::fabs(mean - exact) <= hw;
    covered += in;
    low += !in && mean < exact;
    high += !in && mean > exact;
    width += hw;
  }
};

}  // namespace

double print_skew_coverage(std::ostream& out, std::uint64_t seeds, double jobs, int replications,
                           const PrecisionRule* precision, unsigned threads) {
  const std::vector<SkewModel> design{
      // Relaxation time 156 s: 2,000 s is 13 of them (as the quantiles' table).
      {"M/M/1 rho=0.95 (mean service 100 ms)", 9.5, 1, 100, 0, 2000},
      {"M/M/8+D rho=0.95 mu=1/s TTL=2 s", 7.6, 8, 1000, 2000, 500},
      {"M/M/3+D rho=0.9 mu=10/s TTL=200 ms", 27, 3, 100, 200, 50},
  };
  out << "Coverage of 95% intervals of means over replications on heavy-traffic exact models: " << seeds
      << " seeds per model, runs of ~" << fmt(jobs) << " jobs after a warm-up (2,000 s on M/M/1, 500 service times else);\n";
  if (precision)
    out << "each seed runs --precision " << fmt(precision->rel) << " (Stein's two stages, first stage " << precision->first
        << ", at most " << precision->max_replications << " replications, every compared metric checked).\n";
  else
    out << "each seed runs " << replications << " replications.\n";
  out << "Student t: the half-width printed before (with --precision, the larger of Stein's and Student t over all N);\n"
      << "skew-aware: the larger of that and the distance to the farther end of Johnson's (1978) modified t interval\n"
      << "where the runs' sample skewness is significant at 5% (what run, sweep and plan print now); Johnson always: the same\n"
      << "without that test. misses l/h: seeds whose interval lies below / above the exact value; width: the mean half-width\n"
      << "over the Student-t one.\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "| %-36s | %-19s | %-22s | %-9s | %-22s | %-9s | %6s | %-22s | %-9s | %6s | %7s |\n",
                "model", "metric", "Student t: coverage", "misses", "skew-aware: coverage", "misses", "width",
                "Johnson always", "misses", "width", "mean R");
  out << line << "|" << std::string(38, '-') << "|" << std::string(21, '-') << "|" << std::string(24, '-') << "|"
      << std::string(11, '-') << "|" << std::string(24, '-') << "|" << std::string(11, '-') << "|" << std::string(8, '-') << "|"
      << std::string(24, '-') << "|" << std::string(11, '-') << "|" << std::string(8, '-') << "|" << std::string(9, '-') << "|\n";
  double lowest = 1;
  for (const SkewModel& m : design) {
    std::vector<ValidationResult> got(seeds);
    std::atomic<std::uint64_t> next{0};
    const auto work = [&] {
      for (std::uint64_t i; (i = next.fetch_add(1)) < seeds;) got[i] = run_validation(skew_point(m, jobs, i + 1, replications), precision);
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    const std::size_t metrics = got[0].metrics.size();
    for (std::size_t i = 0; i < metrics; ++i) {
      MissTally t, k, a;
      double reps = 0;
      bool spread = false;
      for (const ValidationResult& v : got) {
        const MetricSamples& s = v.metrics.at(i);
        const double mean = student_t_interval(s.samples, 0.95).mean;
        const double hw = stein_half_width_of(s.samples, v.first_stage);
        t.add(mean, hw, s.exact);
        k.add(mean, std::max(hw, skew_aware_half_width(s.samples, 0.95)), s.exact);
        const SkewInterval j = johnson_interval(s.samples, 0.95);
        a.add(mean, std::max({hw, j.hi - j.mean, j.mean - j.lo}), s.exact);
        reps += v.replications;
        spread = spread || std::any_of(s.samples.begin(), s.samples.end(), [&](double x) { return x != s.samples[0]; });
      }
      if (!spread) continue;
      const double n = static_cast<double>(seeds);
      lowest = std::min(lowest, static_cast<double>(k.covered) / n);
      const auto cell = [&](const MissTally& x) {
        const auto [lo, hi] = skew_clopper_pearson(x.covered, seeds);
        return fmt("%.3f", static_cast<double>(x.covered) / n) + " (" + fmt("%.3f", lo) + "-" + fmt("%.3f", hi) + ")";
      };
      const auto misses = [](const MissTally& x) { return std::to_string(x.low) + " / " + std::to_string(x.high); };
      std::snprintf(line, sizeof line, "| %-36s | %-19s | %-22s | %-9s | %-22s | %-9s | %6s | %-22s | %-9s | %6s | %7s |\n",
                    m.label.c_str(), got[0].metrics[i].name.c_str(), cell(t).c_str(), misses(t).c_str(), cell(k).c_str(),
                    misses(k).c_str(), fmt("%.3f", k.width / t.width).c_str(), cell(a).c_str(), misses(a).c_str(),
                    fmt("%.3f", a.width / t.width).c_str(), fmt("%.1f", reps / n).c_str());
      out << line;
    }
    out.flush();
  }
  out << "\n(metrics every replication measured the same are not listed)\nlowest skew-aware coverage: " << fmt("%.3f", lowest)
      << '\n';
  return lowest;
}

}  // namespace brokersim
