// The sequential replication rule (experiments/cli/replication/precision.hpp).
#include "experiments/cli/replication/precision.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "experiments/cli/options.hpp"
#include "experiments/cli/replication/count_bound.hpp"
#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/replication/warmup.hpp"
#include "sim/time.hpp"

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

std::uint64_t stein_replications(const PrecisionRule& rule, std::uint64_t n0, double mean0, double sd0) {
  if (std::isnan(mean0) || std::isnan(sd0) || sd0 == 0) return n0;
  const double h = std::max(rule.abs, rule.rel * std::fabs(mean0));
  if (h <= 0) return rule.max_replications;
  const double n = std::ceil(std::pow(student_t_quantile(n0 - 1, 0.95) * sd0 / h, 2));
  if (!(n < static_cast<double>(rule.max_replications))) return std::max(n0, rule.max_replications);
  return std::max(n0, static_cast<std::uint64_t>(n));
}

double stein_half_width(std::uint64_t n0, double sd0, std::uint64_t n) {
  if (n0 < 2) return NAN;
  return student_t_quantile(n0 - 1, 0.95) * sd0 / std::sqrt(static_cast<double>(n));
}

double stein_half_width_of(const std::vector<double>& x, std::uint64_t n0, double confidence) {
  const double all = student_t_interval(x, confidence).half_width;
  if (n0 < 2 || n0 >= x.size()) return all;
  const std::vector<double> first(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n0));
  // t * s0 / sqrt(n0), rescaled to sqrt(N); never narrower than all N replications say.
  const double stein =
      student_t_interval(first, confidence).half_width * std::sqrt(static_cast<double>(n0) / static_cast<double>(x.size()));
  return std::max(stein, all);
}

Summary summarize_two_stage(const std::vector<const std::vector<double>*>& reps, std::uint64_t n0,
                            const std::vector<RatioColumn>& ratios) {
  // The count bounds come last, on all N replications' counts: the first stage's, rescaled by
  // sqrt(n0 / N) as Stein's spread is, would overstate them.
  Summary s = summarize(reps, ratios, false);
  // No skew-aware widening here: --precision stops once Stein's half-width is within REL, and a
  // half-width widened after that could exceed it (test_precision's M/M/4+D); see README.
  if (n0 >= reps.size() || n0 < 2) {
    apply_count_bounds(s, reps, ratios);
    apply_quantization(s, reps, ratios);
    return s;
  }
  const std::vector<const std::vector<double>*> first(reps.begin(), reps.begin() + static_cast<std::ptrdiff_t>(n0));
  const Summary f = summarize(first, ratios, false);
  const double root_n0 = std::sqrt(static_cast<double>(n0)), root_n = std::sqrt(static_cast<double>(reps.size()));
  // f.ci95 = t * s0 / sqrt(n0): Stein's is f.ci95 * sqrt(n0 / N); the larger of it and the
  // all-replication interval (see stein_half_width_of). A column equal in every replication keeps 0.
  for (std::size_t j = 0; j < s.ci95.size(); ++j)
    if (s.ci95[j] != 0 && !std::isnan(f.ci95[j])) s.ci95[j] = std::max(s.ci95[j], f.ci95[j] * root_n0 / root_n);
  apply_count_bounds(s, reps, ratios);
  apply_quantization(s, reps, ratios);
  return s;
}

namespace {

// stein_replications for an interval that is Stein's part plus `fixed`, a half-width more
// replications do not shrink (a histogram's half-bucket): Stein's part gets what is left of the
// precision asked, and none left (REL below about 0.4-0.8%) asks for the maximum.
std::uint64_t stein_replications_beside(const PrecisionRule& rule, std::uint64_t n0, double mean0, double sd0, double fixed) {
  const double h = std::max(rule.abs, rule.rel * std::fabs(mean0)) - fixed;
  if (!(h > 0)) return rule.max_replications;
  PrecisionRule rest = rule;
  rest.rel = 0;
  rest.abs = h;
  return stein_replications(rest, n0, mean0, sd0);
}

}  // namespace

std::uint64_t needed_for_columns(const PrecisionRule& rule, const std::vector<std::vector<double>>& first_stage,
                                 const std::vector<std::size_t>& columns, const std::vector<RatioColumn>& ratios) {
  const auto n0 = static_cast<std::uint64_t>(first_stage.size());
  std::uint64_t n = n0;
  std::vector<const std::vector<double>*> reps;
  for (const auto& r : first_stage) reps.push_back(&r);
  const auto pooled = pool_ratios(reps, ratios);
  std::vector<double> x(first_stage.size());
  for (std::size_t c : columns) {
    for (std::size_t r = 0; r < pooled.size(); ++r) x[r] = pooled[r][c];
    const MeanInterval ci = student_t_interval(x, 0.95);
    const double sd = ci.half_width / student_t_quantile(n0 - 1, 0.95) * std::sqrt(static_cast<double>(n0));
    const bool quantile = std::any_of(ratios.begin(), ratios.end(), [&](const RatioColumn& q) { return q.quantile && q.column == c; });
    if (!quantile || sd == 0) {
      n = std::max(n, stein_replications(rule, n0, ci.mean, sd));
      continue;
    }
    // A per-run quantile's interval is Stein's plus its quantization (apply_quantization).
    n = std::max(n, stein_replications_beside(rule, n0, ci.mean, sd, quantization_half_width(x)));
  }
  return std::max(n, count_needed_for_columns(rule, first_stage, columns, ratios));
}

std::vector<PooledQuantileColumn> pooled_precision_columns(const PrecisionRule& rule, const std::vector<std::string>& names) {
  std::vector<PooledQuantileColumn> out;
  for (const auto& q : pooled_quantile_columns(names))
    if (std::find(rule.metrics.begin(), rule.metrics.end(), q.name) != rule.metrics.end()) out.push_back(q);
  return out;
}

std::uint64_t needed_for_pooled(const PrecisionRule& rule, const std::vector<std::vector<double>>& first_stage,
                                const std::vector<PooledQuantileColumn>& columns, const PooledWaits& waits) {
  std::uint64_t n = static_cast<std::uint64_t>(first_stage.size());
  for (const auto& c : columns) {
    const PooledSpread s = pooled_spread(c, waits, 0.95);
    if (s.runs < 2 || !(s.sd > 0)) continue;
    // The interval adds half the pooled estimate's bucket, as a per-run quantile's its quantization.
    n = std::max(n, stein_replications_beside(rule, s.runs, s.estimate, s.sd,
                                              sim::Histogram::half_bucket(s.estimate * sim::kNsPerMsF) / sim::kNsPerMsF));
  }
  return n;
}

std::uint64_t count_needed_for_columns(const PrecisionRule& rule, const std::vector<std::vector<double>>& rows,
                                       const std::vector<std::size_t>& columns, const std::vector<RatioColumn>& ratios) {
  const auto n = static_cast<std::uint64_t>(rows.size());
  std::vector<const std::vector<double>*> reps;
  for (const auto& r : rows) reps.push_back(&r);
  if (n < 2 || replications_identical(reps)) return n;
  std::uint64_t need = n;
  for (const RatioColumn& c : ratios) {
    if (!c.counted || std::find(columns.begin(), columns.end(), c.column) == columns.end()) continue;
    const PooledCount pc = pooled_count(reps, c);
    if (!(pc.jobs > 0)) continue;
    const double h = std::max(rule.abs, rule.rel * pc.events / pc.jobs);
    need = std::max(need, count_replications(pc.events, pc.jobs, n, h, 0.95, rule.max_replications));
  }
  return need;
}

bool is_precise(const PrecisionRule& rule, double mean, double half_width) {
  if (std::isnan(half_width) || std::isnan(mean)) return false;
  return half_width <= rule.abs || half_width <= rule.rel * std::fabs(mean);
}

void add_precision_options(po::options_description& opts, bool with_metric) {
  opts.add_options()
      ("precision", po::value<std::string>(), "REL: run as many replications as each metric needs for a 95% half-width within REL of its mean (Stein's two-stage rule: a first stage of 10, or --replications)")
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
  rule.first = replications ? std::max(kMinSequentialReplications, replications)
                             : std::min(kDefaultFirstStage, rule.max_replications);
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
  const std::vector<PooledQuantileColumn> steady = pooled_quantile_columns(names);
  for (const auto& w : wanted) {
    // A steady-state quantile (pooled_precision_columns) is no column of a run.
    if (std::any_of(steady.begin(), steady.end(), [&](const PooledQuantileColumn& q) { return q.name == w; })) continue;
    const auto it = std::find(names.begin(), names.end(), w);
    if (it == names.end())
      throw ScenarioError("--precision-metric", "a metric name (`brokersim metrics SCENARIO.json` lists them)",
                          "\"" + w + "\"");
    const auto c = static_cast<std::size_t>(it - names.begin());
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) columns.push_back(c);
  }
  return columns;
}

std::uint64_t run_two_stage(const std::vector<const Scenario*>& points, const PrecisionRule& rule, unsigned threads,
                            const std::vector<std::string>& names, const PointNeeds& needs, const PointFinished& done,
                            TaskRunStats* stats, const PointNeeds& more, const TaskRunner& run) {
  // warmup_ms "auto": each point's cut chosen once here, not again in every stage (warmup.hpp).
  // Not with `run` (plan's task files): the process that runs the tasks chooses it, identically.
  std::vector<const Scenario*> pts = points;
  std::vector<Scenario> chosen;
  chosen.reserve(points.size());
  if (!run)
    for (const Scenario*& p : pts)
      if (p->auto_warmup && !p->auto_warmup->chosen) {
        chosen.push_back(*p);
        choose_auto_warmup(chosen.back(), threads);
        p = &chosen.back();
      }
  std::vector<std::vector<std::vector<double>>> rows(points.size());
  std::vector<std::size_t> incomplete(points.size(), 0);
  std::vector<std::uint64_t> total(points.size(), rule.first);
  std::vector<bool> finished(points.size(), false);
  TaskRunStats local;
  TaskRunStats& st = stats ? *stats : local;
  std::uint64_t spent = 0;
  // Every stage either finishes a point or raises its total (at most to the maximum): it ends.
  for (int stage = 0;; ++stage) {
    std::vector<RunTask> tasks;
    std::vector<std::size_t> owner;
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::uint64_t r = rows[i].size(); !finished[i] && r < total[i]; ++r) {
        tasks.push_back({pts[i], r, i});
        owner.push_back(i);
      }
    if (tasks.empty() && stage > 0) break;
    auto got = run ? run(tasks, &st) : run_tasks(tasks, threads, names, {}, &st);
    spent += tasks.size();
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      rows[owner[t]].push_back(std::move(got[t]));
      incomplete[owner[t]] += !st.incomplete[t].empty();
    }
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (finished[i] || rows[i].size() != total[i]) continue;
      if (stage == 0)
        total[i] = std::clamp(needs(i, rows[i]), rule.first, rule.max_replications);
      else if (more)
        total[i] = std::clamp(more(i, rows[i]), total[i], std::max(total[i], rule.max_replications));
      // A point whose stage is enough is done now (a sweep's journal keeps it at once).
      if (rows[i].size() != total[i]) continue;
      finished[i] = true;
      if (done) done(i, rows[i], incomplete[i]);
      rows[i].clear();
      rows[i].shrink_to_fit();
    }
  }
  return spent;
}

}  // namespace brokersim
