// The sequential replication rule and warmup_ms "auto" (experiments/precision.hpp).
#include "experiments/precision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "experiments/cli_options.hpp"
#include "experiments/commands.hpp"
#include "experiments/scenario_load.hpp"
#include "experiments/text.hpp"
#include "models/simulation.hpp"
#include "sim/mser.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

double parse_number(const std::string& option, const std::string& text, double min, bool min_allowed,
                    const std::string& expected) {
  char* end = nullptr;
  const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < min || (!min_allowed && v == min))
    throw ScenarioError(option, expected, "\"" + text + "\"");
  return v;
}

}  // namespace

std::uint64_t next_round(const PrecisionRule& rule, std::uint64_t n) {
  return std::min(rule.max_replications, n + std::max<std::uint64_t>(1, n / 2));
}

bool is_precise(const PrecisionRule& rule, double mean, double half_width) {
  if (std::isnan(half_width) || std::isnan(mean)) return false;
  return half_width <= rule.abs || half_width <= rule.rel * std::fabs(mean);
}

void add_precision_options(po::options_description& opts, bool with_metric) {
  opts.add_options()
      ("precision", po::value<std::string>(), "REL: add replications (at least 3) until each metric's 95% half-width is within REL of its mean")
      ("precision-abs", po::value<std::string>(), "with --precision: or within this absolute half-width, for fractions near 0 (default 0.001)")
      ("max-replications", po::value<std::string>(), "with --precision: at most this many replications per point (default 100)");
  if (with_metric)
    opts.add_options()("precision-metric", po::value<std::vector<std::string>>()->composing(),
                       "with --precision: a metric that must be precise (repeatable; default goodput_per_s and the stale fractions)");
}

std::optional<PrecisionRule> read_precision_options(const po::variables_map& vm, std::uint64_t replications) {
  if (!vm.count("precision")) {
    for (const char* o : {"precision-abs", "max-replications", "precision-metric"})
      if (vm.count(o)) throw ScenarioError(std::string("--") + o, "--precision REL beside it", "no --precision");
    return std::nullopt;
  }
  PrecisionRule rule;
  rule.rel = parse_number("--precision", vm["precision"].as<std::string>(), 0, false,
                          "a relative precision > 0 (0.05 for a half-width of 5% of the mean)");
  if (vm.count("precision-abs"))
    rule.abs = parse_number("--precision-abs", vm["precision-abs"].as<std::string>(), 0, true, "a number >= 0");
  if (vm.count("max-replications")) {
    rule.max_replications = parse_count("--max-replications", vm["max-replications"].as<std::string>(),
                                        kMinSequentialReplications);
    // A bound a run can reach: a metric that never gets precise would otherwise run for ever.
    if (rule.max_replications > kMaxSequentialReplications)
      throw ScenarioError("--max-replications", "an integer >= 3 and <= " + std::to_string(kMaxSequentialReplications),
                          "\"" + vm["max-replications"].as<std::string>() + "\"");
  }
  rule.first = std::max(kMinSequentialReplications, replications);
  if (rule.first > rule.max_replications)
    throw ScenarioError("--replications", "at most --max-replications (" + std::to_string(rule.max_replications) +
                                              ") with --precision", std::to_string(replications));
  if (vm.count("precision-metric")) rule.metrics = vm["precision-metric"].as<std::vector<std::string>>();
  return rule;
}

std::vector<std::string> default_precision_metrics() {
  return {"goodput_per_s", "fraction.expired_in_queue", "fraction.expired_in_transit", "fraction.expired_before_start"};
}

std::vector<std::size_t> precision_metric_columns(const PrecisionRule& rule, const std::vector<std::string>& names) {
  const std::vector<std::string> wanted = rule.metrics.empty() ? default_precision_metrics() : rule.metrics;
  std::vector<std::size_t> columns;
  for (const auto& w : wanted) {
    const auto it = std::find(names.begin(), names.end(), w);
    if (it == names.end())
      throw ScenarioError("--precision-metric", "a metric name (`brokersim metrics SCENARIO.json` lists them)",
                          "\"" + w + "\"");
    const auto c = static_cast<std::size_t>(it - names.begin());
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  }
  return columns;
}

std::uint64_t run_sequential(const std::vector<const Scenario*>& points, const PrecisionRule& rule, unsigned threads,
                             const std::vector<std::string>& names, const PointDecision& decide,
                             const PointFinished& done, TaskRunStats* stats) {
  std::vector<std::vector<std::vector<double>>> rows(points.size());
  std::vector<std::size_t> incomplete(points.size(), 0);
  std::vector<std::size_t> active(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) active[i] = i;
  std::uint64_t target = rule.first, spent = 0;
  TaskRunStats local;
  TaskRunStats& st = stats ? *stats : local;
  while (!active.empty()) {
    // One round: every active point from its current count up to `target`, all in one pool.
    std::vector<RunTask> tasks;
    std::vector<std::size_t> owner;
    for (std::size_t i : active)
      for (std::uint64_t r = rows[i].size(); r < target; ++r) {
        tasks.push_back({points[i], r});
        owner.push_back(i);
      }
    auto got = run_tasks(tasks, threads, names, {}, &st);
    spent += tasks.size();
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      rows[owner[t]].push_back(std::move(got[t]));
      incomplete[owner[t]] += !st.incomplete[t].empty();
    }
    std::vector<std::size_t> still;
    for (std::size_t i : active) {
      if (target >= rule.max_replications || decide(i, rows[i])) {
        if (done) done(i, rows[i], incomplete[i]);
        rows[i].clear();
        rows[i].shrink_to_fit();
      } else {
        still.push_back(i);
      }
    }
    active = std::move(still);
    target = next_round(rule, target);
  }
  return spent;
}

void choose_auto_warmup(Scenario& s) {
  if (!s.auto_warmup || s.auto_warmup->chosen) return;
  Scenario pilot = s;
  pilot.warmup = 0;
  std::vector<JobSample> samples;
  RunOptions o;
  o.job_series = &samples;
  o.job_series_stale = s.auto_warmup->stale;
  simulate(pilot, o);
  // Jobs still in the system at the end have no value yet: the series is the jobs with an outcome.
  std::vector<double> series;
  std::vector<Time> created;
  for (const auto& js : samples)
    if (js.created >= 0) {
      series.push_back(js.value);
      created.push_back(js.created);
    }
  const sim::MserResult m = sim::mser(series);
  s.warmup = m.truncate > 0 && m.truncate < created.size() ? created[m.truncate] : 0;
  s.auto_warmup->chosen = true;
  s.auto_warmup->steady = m.steady;
  s.auto_warmup->jobs_discarded = m.truncate;
}

RunResult simulate_with_warmup(Scenario& s, const RunOptions& options) {
  choose_auto_warmup(s);
  return simulate(s, options);
}

int run_with_precision(const Scenario& scenario, const PrecisionRule& rule, bool json, std::ostream& out,
                       std::ostream& err) {
  const std::vector<std::string> names = metric_names(scenario);
  const std::vector<std::size_t> columns = precision_metric_columns(rule, names);
  Summary summary;
  std::uint64_t used = 0;
  bool reached = false;
  std::size_t incomplete = 0;
  TaskRunStats stats;
  const std::vector<const Scenario*> points{&scenario};
  run_sequential(
      points, rule, 1, names,
      [&](std::size_t, const std::vector<std::vector<double>>& rows) {
        std::vector<const std::vector<double>*> reps;
        for (const auto& r : rows) reps.push_back(&r);
        const Summary s = summarize(reps);
        return std::all_of(columns.begin(), columns.end(), [&](std::size_t c) { return is_precise(rule, s.mean[c], s.ci95[c]); });
      },
      [&](std::size_t, const std::vector<std::vector<double>>& rows, std::size_t bad) {
        std::vector<const std::vector<double>*> reps;
        for (const auto& r : rows) reps.push_back(&r);
        summary = summarize(reps);
        used = rows.size();
        incomplete = bad;
        reached = std::all_of(columns.begin(), columns.end(),
                              [&](std::size_t c) { return is_precise(rule, summary.mean[c], summary.ci95[c]); });
      },
      &stats);
  std::vector<std::string> checked;
  for (std::size_t c : columns) checked.push_back(names[c]);
  if (json) {
    nlohmann::ordered_json j;
    j["scenario"] = scenario.name;
    j["seed"] = scenario.seed;
    j["replications"] = used;
    j["precision"] = {{"rel", rule.rel}, {"abs", rule.abs}, {"max_replications", rule.max_replications},
                      {"metrics", checked}, {"reached", reached}};
    j["incomplete_runs"] = incomplete;
    auto& m = j["metrics"];
    m = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < names.size(); ++i) {
      m[names[i]]["mean"] = summary.mean[i];
      m[names[i]]["ci95"] = summary.ci95[i];
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
    std::vector<std::string> shown = checked;
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
    out << "(every metric, with its ci95: --json)\n";
  }
  if (!reached)
    err << "brokersim: warning: the precision asked was not reached in " << used
        << " replications (--max-replications): the intervals above are wider than asked\n";
  return warn_incomplete_runs(err, stats);
}

}  // namespace brokersim
