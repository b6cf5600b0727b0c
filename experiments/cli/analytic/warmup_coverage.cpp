// `analytic --coverage SEEDS --warmup` (experiments/cli/analytic/warmup_coverage.hpp).
#include "experiments/cli/analytic/warmup_coverage.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/math/special_functions/beta.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/replication/warmup.hpp"
#include "experiments/cli/text.hpp"
#include "models/analytic/mmcd.hpp"
#include "models/simulation.hpp"

namespace brokersim {

namespace {

using J = nlohmann::json;

struct StartUp {
  std::string label;
  double lambda;   // per second
  int c;
  double mean_ms;  // exponential service
  double start_s;  // when the consumers attach (0: from the start)
  double stop_s;   // stop.time_ms
  double fixed_s;  // the reference's fixed warm-up
};

J start_up_scenario(const StartUp& m, std::uint64_t seed) {
  J s = {
      {"name", "warmup-coverage"},
      {"seed", seed},
      {"stop", {{"time_ms", m.stop_s * 1000}}},
      {"warmup_ms", "auto"},
      {"broker", {{"queues", {{"work", J::object()}}}}},
      {"producers", J::array({{{"queue", "work"},
                               {"arrivals", {{"poisson", {{"rate_per_s", m.lambda}}}}},
                               {"service_ms", {{"exp", {{"mean", m.mean_ms}}}}}}})},
      {"consumers", J::array({{{"queue", "work"}, {"count", m.c}, {"prefetch", 1}, {"slots", 1}, {"admission", "none"}}})},
  };
  if (m.start_s > 0) s["consumers"][0]["start_ms"] = m.start_s * 1000;
  return s;
}

std::pair<double, double> warmup_clopper_pearson(std::uint64_t k, std::uint64_t n) {
  const double lo = k == 0 ? 0 : boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), 0.025);
  const double hi = k == n ? 1 : boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), 0.975);
  return {lo, hi};
}

// What one rule gave for one seed: the pooled mean queue wait's interval (as run, sweep and plan
// print it: the jobs of all replications together, delta-method Student t), the warm-ups used
// (s, one per replication) and how many replications were flagged run.warmup_doubtful.
struct RuleResult {
  MeanInterval ci;
  std::vector<double> cuts_s;
  int doubtful = 0;
};

MeanInterval pooled_mean_wait(const std::vector<std::vector<double>>& rows) {
  std::vector<const std::vector<double>*> reps;
  for (const auto& r : rows) reps.push_back(&r);
  const auto pooled = pool_ratios(reps, {RatioColumn{0, 1}});
  std::vector<double> z;
  for (const auto& r : pooled) z.push_back(r[0]);
  return student_t_interval(z, 0.95);
}

std::vector<double> wait_row(const RunResult& r) {
  const sim::Histogram& h = r.wait(Wait::Queue);
  return {h.mean() / sim::kNsPerMsF, static_cast<double>(h.count())};
}

enum class Rule { Fixed, PerRun, Pilots };

RuleResult run_rule(const Scenario& base, const StartUp& m, Rule rule, int replications) {
  RuleResult out;
  Scenario point = base;
  if (rule == Rule::Fixed) {
    point.auto_warmup.reset();
    point.warmup = static_cast<Time>(std::llround(m.fixed_s * 1000)) * sim::kNsPerMs;
  } else if (rule == Rule::Pilots) {
    choose_auto_warmup(point, 1);
  }
  std::vector<std::vector<double>> rows;
  for (int r = 0; r < replications; ++r) {
    Scenario s = point;
    s.replication = static_cast<std::uint64_t>(r);
    if (rule == Rule::PerRun) choose_auto_warmup_per_run(s);
    rows.push_back(wait_row(simulate(s)));
    out.cuts_s.push_back(sim::to_ms(s.warmup) / 1000);
    out.doubtful += s.auto_warmup && (!s.auto_warmup->steady || s.auto_warmup->trending);
  }
  out.ci = pooled_mean_wait(rows);
  return out;
}

}  // namespace

double print_warmup_coverage(std::ostream& out, std::uint64_t seeds, int replications, unsigned threads) {
  const std::vector<StartUp> design{
      // 30 s of arrivals before any consumer: about 1,080 jobs, drained at c mu - lambda = 4/s in
      // about 270 s (fluid), then 900 s more.
      {"M/M/4 rho=0.9 mean service 100 ms, consumers attach at 30 s", 36, 4, 100, 30, 1200, 400},
      // From empty; relaxation time 1 / (mu (1 - sqrt(rho))^2) = 156 s, a run of 6.4 of them.
      {"M/M/1 rho=0.95 mean service 100 ms, from empty", 9.5, 1, 100, 0, 1000, 400},
  };
  out << "Coverage of the 95% interval of the mean queue wait (wait_ms.queue.mean, pooled over the jobs of all\n"
      << "replications, as run, sweep and plan print it) against the exact Erlang C value, after three warm-up rules: "
      << seeds << " seeds per model,\n"
      << replications << " replications each; every rule judged on the same replications (the same streams).\n"
      << "fixed: a warm-up of 400 s, long past the transient; per-run MSER-5: warmup_ms \"auto\" before issue 44 (each\n"
      << "replication's own series chose its cut); pilots: warmup_ms \"auto\" now (one cut for all from " << kWarmupPilots
      << " pilot replications:\nMSER-5 on their average, or where a new replication settles at 99%, if later). bias: the mean estimate over\n"
      << "seeds relative to the exact value, with its standard error over the seeds; misses low/high: seeds whose interval\n"
      << "lies below / above it; cut: the median warm-up over all replications (s); doubtful: the fraction of replications\n"
      << "with run.warmup_doubtful 1.\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "| %-60s | %-16s | %10s | %-22s | %-16s | %-11s | %8s | %9s |\n", "model", "warm-up rule",
                "exact (ms)", "coverage (C-P)", "bias (se)", "misses l/h", "cut (s)", "doubtful");
  out << line << "|" << std::string(62, '-') << "|" << std::string(18, '-') << "|" << std::string(12, '-') << "|"
      << std::string(24, '-') << "|" << std::string(18, '-') << "|" << std::string(13, '-') << "|" << std::string(10, '-') << "|"
      << std::string(11, '-') << "|\n";
  double lowest = 1;
  const Rule rules[] = {Rule::Fixed, Rule::PerRun, Rule::Pilots};
  const char* names[] = {"fixed 400 s", "per-run MSER-5", "pilots MSER-5"};
  for (const StartUp& m : design) {
    const double exact = analytic::mmc_deadline(m.lambda, 1000 / m.mean_ms, m.c, INFINITY).mean_wait_served * 1000;
    // Every seed's three rules, seeds on the threads; stored by seed, summed in seed order.
    std::vector<std::vector<RuleResult>> got(seeds);
    std::atomic<std::uint64_t> next{0};
    const auto work = [&] {
      for (std::uint64_t i; (i = next.fetch_add(1)) < seeds;) {
        const Scenario base = load_scenario(start_up_scenario(m, i + 1), ".");
        for (Rule r : rules) got[i].push_back(run_rule(base, m, r, replications));
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < std::max(1u, threads); ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
    for (std::size_t k = 0; k < 3; ++k) {
      std::uint64_t covered = 0, low = 0, high = 0;
      double doubtful = 0;
      std::vector<double> cuts, relative;  // relative: each seed's estimate / exact - 1
      for (const auto& seed : got) {
        const RuleResult& g = seed[k];
        const bool in = std::fabs(g.ci.mean - exact) <= g.ci.half_width;
        covered += in;
        low += !in && g.ci.mean < exact;
        high += !in && g.ci.mean > exact;
        relative.push_back(g.ci.mean / exact - 1);
        doubtful += g.doubtful;
        cuts.insert(cuts.end(), g.cuts_s.begin(), g.cuts_s.end());
      }
      const MeanInterval bias = student_t_interval_with(relative, 1.0);  // half_width: the standard error
      const double n = static_cast<double>(seeds), c = static_cast<double>(covered) / n;
      if (rules[k] == Rule::Pilots) lowest = std::min(lowest, c);
      const auto [lo, hi] = warmup_clopper_pearson(covered, seeds);
      std::snprintf(line, sizeof line, "| %-60s | %-16s | %10s | %-22s | %-16s | %-11s | %8s | %9s |\n", m.label.c_str(), names[k],
                    fmt("%.1f", exact).c_str(), (fmt("%.3f", c) + " (" + fmt("%.3f", lo) + "-" + fmt("%.3f", hi) + ")").c_str(),
                    (fmt("%+.2f%%", bias.mean * 100) + " (" + fmt("%.2f%%", bias.half_width * 100) + ")").c_str(),
                    (std::to_string(low) + " / " + std::to_string(high)).c_str(),
                    fmt("%.0f", empirical_quantile(cuts, 0.5)).c_str(),
                    fmt("%.3f", doubtful / static_cast<double>(cuts.size())).c_str());
      out << line;
    }
    out.flush();
  }
  out << "\nlowest measured coverage under the pilots' rule: " << fmt("%.3f", lowest) << '\n';
  return lowest;
}

}  // namespace brokersim
