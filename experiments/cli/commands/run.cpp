// brokersim run: one scenario, one replication (the summary or --json, a trace, a time series,
// the exact model beside it), or replications until --precision holds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/analytic/comparison.hpp"
#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/offered_load.hpp"
#include "experiments/cli/output_file.hpp"
#include "experiments/cli/outputs/timeseries_csv.hpp"
#include "experiments/cli/outputs/trace_csv.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/replication/run_checks.hpp"
#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/replication/warmup.hpp"
#include "experiments/cli/report.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/text.hpp"
#include "models/metrics.hpp"
#include "models/simulation.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

// The steady-state quantiles of the pooled jobs (docs/outcomes.md, "Quantiles: per run and
// steady state"): for each wait with samples and each of p50, p95, p99, the merged histogram's
// quantile with its interval by CDF batching over the replications' own histograms, named
// wait_ms.STAGE.pNN_pooled.
// With each, how many correlation times of its wait the runs hold (correlation_times).
struct PooledQuantile {
  std::string name;
  QuantileInterval interval;
  double q, correlation_times;
};
std::vector<PooledQuantile> pooled_quantiles(const PooledWaits& pooled, const std::vector<std::string>& names) {
  const std::vector<PooledQuantileColumn> columns = pooled_quantile_columns(names);
  const std::vector<QuantileInterval> intervals = pooled_quantiles(columns, pooled);
  std::vector<PooledQuantile> out;
  // One figure per wait: pooled_quantile_columns groups the columns by wait.
  std::size_t wait = kWaitCount;
  double times = 0;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    if (std::isnan(intervals[k].estimate)) continue;
    if (columns[k].wait != wait) {
      wait = columns[k].wait;
      times = correlation_times(pooled, wait);
    }
    out.push_back({columns[k].name, intervals[k], columns[k].q, times});
  }
  return out;
}

// `run --precision`: replications until the rule holds, then mean +- ci95 per metric (text, or
// --json: {scenario, seed, replications, precision {...}, metrics {NAME: {mean, ci95}}}).
int run_with_precision(const Scenario& scenario, const PrecisionRule& rule, bool json, std::ostream& out,
                       std::ostream& err) {
  const std::vector<std::string> names = metric_names(scenario);
  const std::vector<std::size_t> columns = precision_metric_columns(rule, names);
  const std::vector<PooledQuantileColumn> steady_checked = pooled_precision_columns(rule, names);
  Summary summary;
  std::uint64_t used = 0;
  bool reached = false;
  std::size_t incomplete = 0;
  TaskRunStats stats;
  std::vector<PooledWaits> pooled;  // one set: the scenario's
  stats.pooled_waits = &pooled;
  std::vector<PooledQuantile> steady;
  const std::vector<const Scenario*> points{&scenario};
  std::uint64_t needed = 0;
  run_two_stage(
      points, rule, 1, names,
      [&](std::size_t, const std::vector<std::vector<double>>& first) {
        static const PooledWaits none;
        return needed = std::max(needed_for_columns(rule, first, columns, ratio_columns(names)),
                                 needed_for_pooled(rule, first, steady_checked, pooled.empty() ? none : pooled[0]));
      },
      [&](std::size_t, const std::vector<std::vector<double>>& rows, std::size_t bad) {
        std::vector<const std::vector<double>*> reps;
        for (const auto& r : rows) reps.push_back(&r);
        summary = summarize_two_stage(reps, rule.first, ratio_columns(names));
        static const PooledWaits none;
        steady = pooled_quantiles(pooled.empty() ? none : pooled[0], names);
        used = rows.size();
        incomplete = bad;
        // Reached: every checked interval printed is within what was asked. (Stein's N is capped
        // at --max-replications, so the count needed alone never said "not reached".)
        const auto within = [&](double mean, double half) {
          return !(half > std::max(rule.abs, rule.rel * std::fabs(mean)) * (1 + 1e-12));
        };
        reached = needed <= rule.max_replications;
        for (std::size_t c : columns) reached = reached && within(summary.mean[c], summary.ci95[c]);
        for (const auto& q : steady_checked)
          for (const auto& p : steady)
            if (p.name == q.name) reached = reached && within(p.interval.estimate, p.interval.half_width);
      },
      &stats,
      // Later stages: the rare fractions' events (Stein's N stays the first stage's).
      [&](std::size_t, const std::vector<std::vector<double>>& rows) {
        const std::uint64_t count = count_needed_for_columns(rule, rows, columns, ratio_columns(names));
        needed = std::max(std::min(needed, rule.max_replications), count);
        return count;
      });
  std::vector<std::string> checked;
  for (std::size_t c : columns) checked.push_back(names[c]);
  for (const auto& q : steady_checked) checked.push_back(q.name);
  if (json) {
    nlohmann::ordered_json j;
    j["scenario"] = scenario.name;
    j["seed"] = scenario.seed;
    j["replications"] = used;
    j["precision"] = {{"rel", rule.rel},           {"abs", rule.abs},         {"first_stage", rule.first},
                      {"max_replications", rule.max_replications}, {"metrics", checked}, {"reached", reached}};
    j["incomplete_runs"] = incomplete;
    auto& m = j["metrics"];
    m = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < names.size(); ++i) {
      m[names[i]]["mean"] = summary.mean[i];
      m[names[i]]["ci95"] = summary.ci95[i];
    }
    // Not metrics of a run: figures of the pooled jobs, beside them.
    auto& sq = j["steady_state_quantiles"];
    sq = nlohmann::ordered_json::object();
    for (const auto& p : steady) {
      sq[p.name] = {{"estimate", p.interval.estimate}, {"ci95", p.interval.half_width}};
      // null where it is not a number: one run, or runs whose mean waits agree exactly.
      sq[p.name]["correlation_times"] = std::isfinite(p.correlation_times) ? nlohmann::ordered_json(p.correlation_times) : nullptr;
    }
    out << j.dump(2) << '\n';
  } else {
    out << "brokersim " << BROKERSIM_VERSION << ": scenario \"" << scenario.name << "\", seed " << scenario.seed << ", "
        << used << " replications (replication 0.." << used - 1 << ")\n";
    out << "Precision asked: 95% half-width within " << fmt(rule.rel * 100) << "% of the mean or within " << fmt(rule.abs)
        << ", for ";
    for (std::size_t i = 0; i < checked.size(); ++i) out << (i ? ", " : "") << checked[i];
    out << ": " << (reached ? "reached" : "NOT reached within --max-replications " + std::to_string(rule.max_replications))
        << "\n\n";
    char line[200];
    std::snprintf(line, sizeof line, "  %-40s %14s %14s\n", "metric", "mean", "ci95");
    out << line;
    std::vector<std::string> shown;
    for (std::size_t c : columns) shown.push_back(names[c]);
    for (const char* extra : {"throughput_per_s", "slot_utilization", "wait_ms.queue.mean", "wait_ms.local.mean",
                              "wait_ms.sojourn.mean", "wait_ms.sojourn.p99", "run.warmup_ms"})
      if (std::find(names.begin(), names.end(), extra) != names.end() &&
          std::find(shown.begin(), shown.end(), extra) == shown.end())
        shown.emplace_back(extra);
    for (const auto& name : shown) {
      const std::size_t i = static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
      std::snprintf(line, sizeof line, "  %-40s %14s %14s\n", name.c_str(), fmt(summary.mean[i]).c_str(),
                    ("± " + fmt(summary.ci95[i])).c_str());
      out << line;
    }
    for (const auto& p : steady)
      if (p.name == "wait_ms.sojourn.p99_pooled" || std::find(checked.begin(), checked.end(), p.name) != checked.end()) {
        std::snprintf(line, sizeof line, "  %-40s %14s %14s\n", p.name.c_str(), fmt(p.interval.estimate).c_str(),
                      ("± " + fmt(p.interval.half_width)).c_str());
        out << line;
      }
    out << "(wait_ms.STAGE.pNN: the expected per-run quantile, its ci95 including the histogram's buckets;\n"
           " pNN_pooled: the steady-state quantile of all replications' jobs, its ci95 from the runs' CDFs: docs/outcomes.md)\n";
    out << "(every metric, with its ci95: --json; a fraction of jobs' ci95 is at least the exact binomial\n"
           " (Clopper-Pearson) half-width of the events counted in all the replications' jobs: no event in n\n"
           " jobs is 1 - 0.025^(1/n), about 3.7/n, never 0)\n";
  }
  if (!reached)
    err << "brokersim: warning: the precision asked was not reached in " << used
        << " replications (--max-replications): the intervals above are wider than asked\n";
  std::vector<std::pair<std::string, double>> tails;
  for (const auto& p : steady)
    if (warns_of_short_runs(p.q, p.correlation_times))
      tails.emplace_back(p.name, p.correlation_times);
  if (!tails.empty()) err << "brokersim: warning: " << short_tails_warning(tails, runs_are_days(scenario));
  return warn_incomplete_runs(err, stats);
}

}  // namespace

int cmd_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "usage:\n"
      "  brokersim run SCENARIO.json [--json] [--seed N] [--replication R] [--set PATH=VALUE ...]\n"
      "                [--trace jobs.csv] [--timeseries series.csv] [--compare-analytic] [--progress]\n"
      "                [--precision REL] [--precision-abs A] [--precision-metric NAME ...] [--max-replications N]\n"
      "\n"
      "options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("json", "print the result as one JSON object instead of the summary table")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replication", po::value<std::string>(), "replication number (selects independent random streams)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key (repeatable)")
      ("trace", po::value<std::string>(), "write one CSV row per job to this file")
      ("timeseries", po::value<std::string>(), "write the observe.every_ms time series to this CSV file")
      ("compare-analytic", "also print the exact queueing model's values beside the simulated ones, where one fits")
      ("progress", "report progress on stderr (every ~4 million events)");
  add_precision_options(opts, true);
  const auto parsed = parse_scenario_command(args, opts, out);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  Scenario scenario = load_command_scenario(vm, "run");
  if (vm.count("seed")) scenario.seed = parse_count("--seed", vm["seed"].as<std::string>(), 0);
  if (vm.count("replication")) scenario.replication = parse_count("--replication", vm["replication"].as<std::string>(), 0);
  if (const auto rule = read_precision_options(vm, 0)) {
    // Replications 0..R-1 are chosen by the rule: one trace or series, or one replication
    // number, would describe none of them.
    for (const char* o : {"trace", "timeseries", "replication", "compare-analytic"})
      if (vm.count(o)) throw ScenarioError(std::string("--") + o, "no --precision beside it (a single run's option)", "both");
    for (const auto& w : scenario_warnings(scenario)) err << "brokersim: warning: " << w << '\n';
    return run_with_precision(scenario, *rule, vm.count("json") > 0, out, err);
  }
  if (vm.count("timeseries") && !scenario.observe_every)
    throw ScenarioError("--timeseries needs observe.every_ms in the scenario (e.g. --set observe.every_ms=1000)");

  // Every file named must be distinct before anything is written: a trace over the scenario, or two
  // outputs into one file, would destroy what was there.
  std::vector<NamedPath> inputs{{"the scenario file", vm["scenario"].as<std::string>()}};
  for (std::size_t i = 0; i < scenario.producers.size(); ++i)
    if (scenario.producers[i].arrivals.kind == ArrivalSpec::Kind::Trace)
      inputs.push_back({"producers." + std::to_string(i) + ".arrivals." +
                            (scenario.producers[i].arrivals.days() ? "days_csv" : "trace_csv"),
                        scenario.producers[i].arrivals.trace_path});
  std::vector<NamedPath> outputs;
  if (vm.count("trace")) outputs.push_back({"--trace", vm["trace"].as<std::string>()});
  if (vm.count("timeseries")) outputs.push_back({"--timeseries", vm["timeseries"].as<std::string>()});
  check_distinct_files(outputs, inputs);
  // "-" shares stdout with the summary, which then follows the CSV; --json would no longer parse.
  for (const auto& o : outputs)
    if (is_standard_output(o.path) && vm.count("json"))
      throw ScenarioError(o.role, "a file (stdout carries the --json object)", "\"" + o.path + "\"");

  std::optional<OutputFile> trace, series;
  std::optional<TraceCsv> trace_writer;
  std::optional<TimeseriesCsv> series_writer;
  RunOptions options;
  if (vm.count("trace")) {
    trace.emplace(vm["trace"].as<std::string>(), &out);
    trace->stream() << kTraceHeader << '\n';
    options.job_observer = &trace_writer.emplace(trace->stream(), scenario);
  }
  if (vm.count("timeseries")) {
    series.emplace(vm["timeseries"].as<std::string>(), &out);
    options.state_observer = &series_writer.emplace(series->stream());
  }
  if (vm.count("progress")) options.progress = &err;
  // Likely unit mistakes: said before the run, which still goes ahead (exit status unchanged).
  for (const auto& w : scenario_warnings(scenario)) err << "brokersim: warning: " << w << '\n';
  // The warm-up pilots (warmup_ms "auto") run on every core: the choice is the same for any count.
  const RunResult result = simulate_with_warmup(scenario, options, thread_count(std::nullopt));
  if (trace) trace->commit();
  if (series) series->commit();

  if (vm.count("json")) {
    nlohmann::ordered_json j = result_json(scenario, result);
    if (vm.count("compare-analytic")) j["analytic"] = compare_analytic_json(scenario, result);
    out << j.dump(2) << '\n';
  } else {
    print_summary(out, scenario, result);
    if (vm.count("compare-analytic")) print_compare_analytic(out, scenario, result);
  }

  if (!incomplete_run(scenario, result).empty()) {
    err << "brokersim: warning: " << incomplete_run_warning(scenario, result) << '\n';
    return 3;
  }
  return 0;
}

}  // namespace brokersim
