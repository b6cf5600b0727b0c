// brokersim analytic: the exact queueing model a scenario fits and its values, or every
// assumption that fails (exit status 4); --validate: the validation design against the models.
#include <cmath>
#include <cstdio>
#include <ostream>

#include <boost/program_options.hpp>

#include "experiments/cli/analytic/comparison.hpp"
#include "experiments/cli/analytic/coverage.hpp"
#include "experiments/cli/analytic/quantile_coverage.hpp"
#include "experiments/cli/analytic/skew_coverage.hpp"
#include "experiments/cli/analytic/warmup_coverage.hpp"
#include "experiments/cli/analytic/fit.hpp"
#include "experiments/cli/analytic/validation.hpp"
#include "experiments/cli/analytic/values.hpp"
#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/text.hpp"

namespace po = boost::program_options;

namespace brokersim {

// --validate --jobs: at most 1e8 jobs per replication (the slowest point, 8 arrivals/s, then runs
// 1.25e10 ms of simulated time; a point of 1e8 jobs takes minutes of CPU per replication).
constexpr double kMaxValidationJobs = 1e8;

int cmd_analytic(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "usage:\n"
      "  brokersim analytic SCENARIO.json [--json] [--set PATH=VALUE ...]\n"
      "  brokersim analytic --validate [--replications R] [--jobs N]\n"
      "                [--precision REL] [--precision-abs A] [--max-replications N]\n"
      "  brokersim analytic --coverage SEEDS [--quantiles | --skew | --warmup] [--jobs N] [--replications R | --precision REL ...]\n\n"
      "Names the exact queueing model the scenario fits (Erlang C, M/M/c+D, Erlang A, prefetch CTMC)\n"
      "and prints its values, or lists every assumption that fails (exit status 4). --validate runs the\n"
      "built-in validation design and prints model | point | exact | simulated (99.9% CI); with\n"
      "--precision, each point runs replications until its metrics are that precise (column R).\n"
      "--coverage measures how often the printed 95% intervals cover the exact values, over seeds 1..SEEDS");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("json", "print one JSON object")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key (repeatable)")
      ("validate", "simulate the validation design against the exact values")
      ("coverage", po::value<std::string>(), "SEEDS: measure the coverage of the 95% intervals on exact models over this many seeds (10 to 100000)")
      ("quantiles", "with --coverage: the quantiles' table instead (p50, p95, p99 of the queue wait on M/M/1 and M/M/8+D at rho 0.95, fixed --replications, default 10)")
      ("skew", "with --coverage: heavy-traffic means instead (M/M/1 and M/M/8+D at rho 0.95, M/M/3+D), Student t beside the skew-aware interval (--replications, default 10, or --precision)")
      ("warmup", "with --coverage: warmup_ms \"auto\" instead (late consumers; M/M/1 at rho 0.95 from empty), the mean wait after a fixed warm-up, per-run MSER-5 and the pilots' MSER-5 (--replications, default 10)")
      ("replications", po::value<int>()->default_value(20), "--validate: replications per point")
      ("jobs", po::value<double>()->default_value(100000), "--validate: jobs per replication (1000 to 1e8)");
  add_precision_options(opts, false);
  const auto parsed = parse_scenario_command(args, opts, out);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  if (vm.count("coverage")) {
    const std::uint64_t seeds = parse_count("--coverage", vm["coverage"].as<std::string>(), 10);
    if (seeds > 100000) throw ScenarioError("--coverage", "an integer >= 10 and <= 100000", quote(vm["coverage"].as<std::string>()));
    const int R = vm["replications"].as<int>();
    const double jobs = vm["jobs"].defaulted() ? 2000 : vm["jobs"].as<double>();
    if (!(jobs >= 1000 && jobs <= kMaxValidationJobs))
      throw ScenarioError("--jobs: expected a number >= 1000 and <= " + fmt(kMaxValidationJobs) + ", got " + fmt(jobs));
    if (R < 2 || static_cast<std::uint64_t>(R) > kMaxReplications)
      throw ScenarioError("--replications: expected an integer >= 2 and <= " + std::to_string(kMaxReplications) +
                          ", got " + std::to_string(R));
    for (const char* o : {"validate", "scenario", "set", "json"})
      if (vm.count(o)) throw ScenarioError("analytic --coverage: expected no " + std::string(o) + " beside it (the design is built in), got one");
    if (vm.count("quantiles") + vm.count("skew") + vm.count("warmup") > 1)
      throw ScenarioError("analytic --coverage: expected at most one of --quantiles, --skew, --warmup, got more");
    if (vm.count("warmup")) {
      if (vm.count("precision")) throw ScenarioError("analytic --coverage --warmup: expected no --precision (fixed --replications), got one");
      if (!vm["jobs"].defaulted()) throw ScenarioError("analytic --coverage --warmup: expected no --jobs (the runs' lengths are the design's), got one");
      print_warmup_coverage(out, seeds, vm["replications"].defaulted() ? 10 : R, thread_count(std::nullopt));
      return 0;
    }
    if (vm.count("skew")) {
      const auto precision = read_precision_options(vm, vm["replications"].defaulted() ? 0 : static_cast<std::uint64_t>(R));
      print_skew_coverage(out, seeds, jobs, vm["replications"].defaulted() ? 10 : R, precision ? &*precision : nullptr,
                          thread_count(std::nullopt));
      return 0;
    }
    if (vm.count("quantiles")) {
      if (vm.count("precision")) throw ScenarioError("analytic --coverage --quantiles: expected no --precision (fixed --replications), got one");
      print_quantile_coverage(out, seeds, jobs, vm["replications"].defaulted() ? 10 : R);
      return 0;
    }
    const auto precision = read_precision_options(vm, vm["replications"].defaulted() ? 0 : static_cast<std::uint64_t>(R));
    print_coverage(out, seeds, jobs, R, precision ? &*precision : nullptr);
    return 0;
  }
  for (const char* o : {"quantiles", "skew", "warmup"})
    if (vm.count(o)) throw ScenarioError("--" + std::string(o) + ": expected --coverage SEEDS beside it, got none");
  if (vm.count("validate")) {
    const int R = vm["replications"].as<int>();
    const double jobs = vm["jobs"].as<double>();
    if (R < 2) throw ScenarioError("--replications: expected an integer >= 2, got " + std::to_string(R));
    // Bounded here, so that an error names --jobs and not the stop.time_ms it becomes.
    if (!(jobs >= 1000 && jobs <= kMaxValidationJobs))
      throw ScenarioError("--jobs: expected a number >= 1000 and <= " + fmt(kMaxValidationJobs) + ", got " + fmt(jobs));
    if (static_cast<std::uint64_t>(R) > kMaxReplications)
      throw ScenarioError("--replications: expected an integer >= 2 and <= " + std::to_string(kMaxReplications) +
                          ", got " + std::to_string(R));
    // The design is built in: a scenario or --set beside --validate would be ignored.
    if (vm.count("scenario"))
      throw ScenarioError("analytic --validate: expected no scenario file (the validation design is built in), got " +
                          quote(vm["scenario"].as<std::string>()));
    if (vm.count("set")) throw ScenarioError("analytic --validate: expected no --set (the validation design is built in), got one");
    if (vm.count("json")) throw ScenarioError("analytic --validate: expected no --json (it prints a table only), got --json");
    const auto precision = read_precision_options(
        vm, vm["replications"].defaulted() ? 0 : static_cast<std::uint64_t>(R));
    print_validation(out, R, jobs, precision ? &*precision : nullptr);
    return 0;
  }
  if (!vm.count("scenario")) throw ScenarioError("analytic: expected a scenario file or --validate, got nothing");
  const Scenario s = load_command_scenario(vm, "analytic");
  const AnalyticFit f = fit_analytic(s);
  const AnalyticValues v = analytic_values(f);
  if (vm.count("json")) {
    out << analytic_json(f, v).dump(2) << '\n';
  } else if (f.model == AnalyticModel::None) {
    out << failure_text(f) << '\n';
  } else {
    out << "Model: " << f.name << (f.exact ? " (exact)" : " (approximation)") << '\n' << "  " << f.description << "\n\n";
    char line[160];
    for (const auto& m : analytic_metrics()) {
      const double x = v.*m.member;
      if (std::isnan(x)) continue;
      std::snprintf(line, sizeof line, "  %-22s %s\n", m.name, fmt(x * m.scale).c_str());
      out << line;
    }
    if (!std::isnan(v.mean_wait_s)) {
      std::snprintf(line, sizeof line, "  %-22s %s\n", "mean_wait_ms", fmt(v.mean_wait_s * 1000).c_str());
      out << line;
    }
    if (!std::isnan(v.mean_queue_live)) {
      std::snprintf(line, sizeof line, "  %-22s %s\n", "mean_queue_live", fmt(v.mean_queue_live).c_str());
      out << line;
    }
  }
  (void)err;
  return f.model == AnalyticModel::None ? 4 : 0;
}

}  // namespace brokersim
