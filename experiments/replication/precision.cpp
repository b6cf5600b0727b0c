// The sequential replication rule (experiments/replication/precision.hpp).
#include "experiments/replication/precision.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "experiments/cli_options.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

double parse_number(const std::string& option, const std::string& text, double min, bool min_allowed,
                    const std::string& expected) {
  // Decimal only (from_chars, not strtod): "0x10" is no 16 here, nor " 1" a 1.
  double v = NAN;
  const char* first = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(first, text.data() + text.size(), v, std::chars_format::general);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v) || v < min ||
      (!min_allowed && v == min))
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

}  // namespace brokersim
