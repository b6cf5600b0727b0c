#include "experiments/cli/plan/search.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "experiments/cli/plan/run_fraction.hpp"
#include "experiments/cli/plan/window_names.hpp"
#include "experiments/cli/replication/count_bound.hpp"
#include "experiments/cli/replication/precision.hpp"

namespace brokersim {

namespace {

using json = nlohmann::json;

// A target's margin (lhs - rhs) evaluated per replication: the expression need not be linear in
// the metrics, so the metrics' own ci95 do not give its interval.
std::vector<double> margins_of(const Target& t, const std::vector<std::vector<double>>& rows,
                               const std::map<std::string, std::size_t>& metric_index,
                               const std::function<double(const std::string&)>& lookup) {
  std::vector<double> margins;
  for (const auto& row : rows) {
    const auto per_rep = [&](const std::string& name) -> double {
      if (const auto it = metric_index.find(name); it != metric_index.end()) return row[it->second];
      return lookup(name);
    };
    margins.push_back(t.lhs->eval(per_rep) - t.rhs->eval(per_rep));
  }
  return margins;
}

// The margin's 95% half-width: Student t over all replications, or with a first stage n0 > 0
// (--precision) Stein's, from the first n0 (precision.hpp).
double margin_half_width(const std::vector<double>& margins, std::uint64_t n0, double confidence = 0.95) {
  return stein_half_width_of(margins, n0, confidence);
}

// A target 'FRACTION CMP EXPR' whose left-hand side is a fraction of jobs (a counted ratio
// column) and whose right-hand side names no metric: its interval is at least the fraction's
// count bound (count_bound.hpp), so that no event in a few thousand jobs is no proof that a
// fraction is under 0.0004. nullopt for any other target.
std::optional<RatioColumn> counted_target(const Target& t, const PlanGrid& grid, const std::vector<RatioColumn>& ratios) {
  if (t.in_runs || t.lhs->kind != Expr::Kind::Var) return std::nullopt;
  const auto it = grid.metric_index.find(t.lhs->var);
  if (it == grid.metric_index.end()) return std::nullopt;
  std::vector<std::string> rhs_names;
  t.rhs->names(rhs_names);
  for (const auto& n : rhs_names)
    if (grid.metric_index.count(n)) return std::nullopt;
  for (const RatioColumn& c : ratios)
    if (c.counted && c.column == it->second) return c;
  return std::nullopt;
}

// A half-width raised to the count bound of a counted target's fraction at `confidence`.
double with_count_bound(double half_width, const std::optional<RatioColumn>& counted,
                        const std::vector<const std::vector<double>*>& reps, double confidence) {
  if (!counted || reps.size() < 2 || std::isnan(half_width) || replications_identical(reps)) return half_width;
  const PooledCount pc = pooled_count(reps, *counted);
  const double h = count_half_width(pc.events, pc.jobs, confidence);
  return std::isfinite(h) ? std::max(half_width, h) : half_width;
}

// Whether a margin (lhs - rhs) satisfies the comparison: per replication for a target over runs.
bool margin_holds(Cmp cmp, double m) {
  switch (cmp) {
    case Cmp::Le: return m <= 0;
    case Cmp::Lt: return m < 0;
    case Cmp::Ge: return m >= 0;
    case Cmp::Gt: return m > 0;
  }
  return false;
}

// The targets on a point's replication rows: on the means, or (--conservative) on the margin's
// 95% bound, towards failing. `guarantee` (--precision) also decides each target: met at the
// bound towards failing, missed at the bound towards passing, else undecided.
PointResult judge_point(const PlanGrid& grid, std::size_t p, const std::vector<Target>& targets,
                        const std::vector<std::vector<double>>& rows, bool conservative, std::uint64_t first_stage = 0,
                        std::uint64_t cap = 0) {
  const bool guarantee = first_stage > 0;
  std::vector<const std::vector<double>*> reps;
  for (const auto& row : rows) reps.push_back(&row);
  PointResult res;
  const std::vector<RatioColumn> ratios = ratio_columns(grid.names);
  res.summary = guarantee ? summarize_two_stage(reps, first_stage, ratios) : summarize(reps, ratios);
  // Margins per replication on the pooled ratios, so that a target on a fraction is judged on
  // the fraction of all the replications' jobs (statistics.hpp).
  const std::vector<std::vector<double>> pooled = pool_ratios(reps, ratios);
  const auto lookup = [&](const std::string& name) -> double {
    if (const auto it = grid.metric_index.find(name); it != grid.metric_index.end()) return res.summary.mean[it->second];
    if (name == "slots_total") return grid.slots_total[p];
    return grid.axis_number(p, grid.axis_index.at(name), "--target");
  };
  res.meets = true;
  // Bonferroni: every target at 1 - 0.05/k, so that all k hold together at 95% (one target: 95%).
  const double each = bonferroni(0.95, targets.size());
  std::vector<bool> run_ok(rows.size(), true);  // each replication: every target held on its own figures
  for (const auto& t : targets) {
    const double l = t.lhs->eval(lookup), r = t.rhs->eval(lookup);
    res.lhs.push_back(l);
    res.rhs.push_back(r);
    // Whether each run met it: its own figures. The interval of the mean margin: the pooled ratios.
    const std::vector<double> run_margins = margins_of(t, rows, grid.metric_index, lookup);
    const std::vector<double> margins = margins_of(t, pooled, grid.metric_index, lookup);
    std::uint64_t met = 0;
    std::vector<std::uint64_t> met_by;  // runs 0..i that met it
    for (std::size_t i = 0; i < run_margins.size(); ++i) {
      const bool held = margin_holds(t.cmp, run_margins[i]);
      met += held;
      met_by.push_back(met);
      run_ok[i] = run_ok[i] && held;
    }
    res.runs_met.push_back(met);
    res.runs_judged.push_back(rows.size());
    res.fraction_confidence.push_back(each);
    const bool below = t.cmp == Cmp::Le || t.cmp == Cmp::Lt;
    const double margin = below ? r - l : l - r;  // inside the threshold when positive
    res.margin.push_back(margin);
    // A miss as a fraction of the threshold's size, or absolute where the threshold is 0.
    const auto relative_miss = [&](double m) { return r == 0 ? std::max(-m, 0.0) : std::max(-m, 0.0) / std::fabs(r); };
    if (t.in_runs) {
      // Over runs: the exact lower bound on the fraction of runs meeting it must reach P; it is
      // missed when even the upper bound falls short (--precision: decided either way, at the
      // first of its looks that decides it, run_fraction.hpp; else at all the runs).
      const double p_req = *t.in_runs;
      const RunLooks looks = guarantee ? run_looks(p_req, each, first_stage, std::max(first_stage, cap))
                                       : RunLooks{{rows.size()}, {each}};
      const RunLook look = judge_runs(looks, p_req, met_by);
      res.runs_met.back() = look.met;
      res.runs_judged.back() = look.runs;
      res.fraction_confidence.back() = looks.confidence[look.index];
      const double n = static_cast<double>(look.runs), lower = look.lower;
      const bool ok = look.met_target;
      // The run at the P quantile: ceil(P n) runs must meet it, so the ceil(P n)-th best run's
      // margin (a run whose figure is missing counts as missing it).
      std::vector<double> run_inside;
      for (double m : std::vector<double>(run_margins.begin(), run_margins.begin() + static_cast<std::ptrdiff_t>(look.runs)))
        run_inside.push_back(std::isnan(m) ? -std::numeric_limits<double>::infinity() : below ? -m : m);
      std::sort(run_inside.begin(), run_inside.end(), std::greater<>());
      const auto need = static_cast<std::size_t>(std::ceil(p_req * n - 1e-9));
      const double at_quantile = run_inside.empty() ? NAN : run_inside[std::min(std::max<std::size_t>(need, 1), run_inside.size()) - 1];
      res.margin_at_run_quantile.push_back(at_quantile);
      res.count_events.push_back(NAN);
      res.count_jobs.push_back(NAN);
      res.margin_ci95.push_back(NAN);
      res.margin_bound.push_back(NAN);
      res.margin_at_bound.push_back(NAN);
      res.fraction_bound.push_back(lower);
      res.safety.push_back((lower - p_req) / p_req);
      res.holds.push_back(ok);
      if (guarantee) res.decided.push_back(ok || look.missed);
      if (!ok) {
        res.meets = false;
        res.violation += std::isfinite(at_quantile) ? relative_miss(at_quantile) : std::numeric_limits<double>::infinity();
        res.runs_shortfall += (p_req - lower) / p_req + 1e-12;
      }
      if (std::isnan(l) || std::isnan(r) || n == 0) res.violation = std::numeric_limits<double>::infinity();
      continue;
    }
    res.fraction_bound.push_back(NAN);
    res.margin_at_run_quantile.push_back(NAN);
    const std::optional<RatioColumn> counted = counted_target(t, grid, ratios);
    // NaN where no count bound applies (another target, one replication, identical replications).
    const bool bounded = counted && rows.size() > 1 && !replications_identical(reps);
    const PooledCount pc = bounded ? pooled_count(reps, *counted) : PooledCount{NAN, NAN};
    res.count_events.push_back(pc.events);
    res.count_jobs.push_back(pc.jobs);
    const double ci95 = rows.size() > 1 ? with_count_bound(margin_half_width(margins, first_stage), counted, reps, 0.95) : NAN;
    const double half_width =
        rows.size() > 1 ? with_count_bound(margin_half_width(margins, first_stage, each), counted, reps, each) : NAN;
    res.margin_ci95.push_back(ci95);
    res.margin_bound.push_back(half_width);
    const double hw0 = std::isnan(half_width) ? 0 : half_width;
    res.margin_at_bound.push_back(margin - half_width);
    // Relative to the threshold, or absolute where it is 0 (never divided by 0).
    res.safety.push_back(r == 0 ? margin - hw0 : (margin - hw0) / std::fabs(r));
    const double slack = (conservative || guarantee) && rows.size() > 1 ? half_width : 0;
    bool ok = false;
    double shortfall = 0;
    switch (t.cmp) {
      case Cmp::Le: ok = l + slack <= r; shortfall = l + slack - r; break;
      case Cmp::Lt: ok = l + slack < r; shortfall = l + slack - r; break;
      case Cmp::Ge: ok = l - slack >= r; shortfall = r - (l - slack); break;
      case Cmp::Gt: ok = l - slack > r; shortfall = r - (l - slack); break;
    }
    res.holds.push_back(ok);
    if (guarantee) {
      bool missed = false;  // at the bound towards passing
      switch (t.cmp) {
        case Cmp::Le: missed = !(l - half_width <= r); break;
        case Cmp::Lt: missed = !(l - half_width < r); break;
        case Cmp::Ge: missed = !(l + half_width >= r); break;
        case Cmp::Gt: missed = !(l + half_width > r); break;
      }
      res.decided.push_back(ok || missed);
    }
    if (!ok) {
      res.meets = false;
      res.violation += relative_miss(-shortfall) + (shortfall <= 0 ? 1e-12 : 0);
    }
    if (std::isnan(l) || std::isnan(r)) res.violation = std::numeric_limits<double>::infinity();
  }
  for (bool ok : run_ok) res.runs_missed += !ok;
  res.rows = rows;
  res.replications = rows.size();
  if (guarantee && !res.meets) {
    bool any_missed = false, all_decided = true;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      any_missed = any_missed || (res.decided[i] && !res.holds[i]);
      all_decided = all_decided && res.decided[i];
    }
    res.undecided = !any_missed && !all_decided;
  }
  return res;
}

// A target side that is NaN (0/0, a metric with no value) or infinite (a division by zero) at a
// setting cannot be compared: an error naming the setting, not a silent miss.
void check_target_values(const PlanGrid& grid, std::size_t p, const std::vector<Target>& targets, const PointResult& res) {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      const double v = side == 0 ? res.lhs[i] : res.rhs[i];
      if (std::isfinite(v)) continue;
      const std::string label = grid.space.point_label(p);
      std::vector<std::string> used;
      (side == 0 ? targets[i].lhs : targets[i].rhs)->names(used);
      const bool thin = std::isnan(v) && std::any_of(used.begin(), used.end(), is_window_percentile);
      if (thin && targets[i].in_runs) continue;  // judged run by run: a run without the figure missed it
      throw ScenarioError("--target: the " + std::string(side == 0 ? "left" : "right") + "-hand side of target " +
                          std::to_string(i + 1) + " (" + targets[i].text + ") is " +
                          (std::isnan(v) ? "not a number (0/0, or a metric without a value)" : "infinite (a division by zero, or a value past the largest number, 1.8e308)") +
                          " at " + (label.empty() ? std::string("the scenario's setting") : label) +
                          (thin ? " (" + window_percentile_rule() + ": a wider observe.window_ms, or a target in runs, " +
                                      "'... in P% of runs', which counts such a run as missing it)"
                                : std::string()));
    }
  }
}

}  // namespace

const PointResult& PointRunner::evaluate(std::size_t p) {
  if (const auto it = results_.find(p); it != results_.end()) return it->second;
  PointResult res;
  if (o_.precision) {
    // Spend replications where the decision is close: a setting clearly on one side of every
    // target stops after the first stage; one that straddles a target gets a second.
    const std::vector<const Scenario*> points{&grid_.scenarios[p]};
    std::size_t incomplete = 0;
    spent_ += run_two_stage(
        points, *o_.precision, o_.threads, grid_.names,
        [&](std::size_t, const std::vector<std::vector<double>>& first) { return needed(p, first); },
        [&](std::size_t, const std::vector<std::vector<double>>& rows, std::size_t bad) {
          res = judge_point(grid_, p, targets_, rows, o_.conservative, o_.precision->first,
                            o_.precision->max_replications);
          incomplete = bad;
        },
        &stats_, [&](std::size_t, const std::vector<std::vector<double>>& rows) { return needed_later(p, rows); },
        [&](const std::vector<RunTask>& tasks, TaskRunStats* st) {
          return executor_.run(p, volume_step_, tasks, grid_.names, st);
        });
    res.incomplete = incomplete;
  } else {
    std::vector<RunTask> tasks;
    for (std::uint64_t r = 0; r < o_.replications; ++r) tasks.push_back({&grid_.scenarios[p], r});
    const auto rows = executor_.run(p, volume_step_, tasks, grid_.names, &stats_);
    spent_ += tasks.size();
    res = judge_point(grid_, p, targets_, rows, o_.conservative);
    for (const auto& why : stats_.incomplete) res.incomplete += !why.empty();
  }
  // A replication stopped by a limit or that measured nothing (every outcome 0) cannot show a
  // target is met: "0 stale jobs" of a run that counted no job is no answer.
  if (res.incomplete > 0) {
    res.meets = false;
    res.undecided = false;  // rejected: no answer from it, whatever more replications would say
    res.violation = std::numeric_limits<double>::infinity();
  }
  if (res.incomplete == 0) check_target_values(grid_, p, targets_, res);
  tried_.push_back(p);
  progress_.update(tried_.size());
  return results_.emplace(p, std::move(res)).first->second;
}

// Stein's second stage for a setting: each target's margin m0 +- its first-stage spread needs a
// half-width h small enough to decide it, h = max(|m0| / 2, REL x |rhs|, ABS): a margin far from
// 0 is decided by the first stage, one that straddles 0 gets replications until the target is
// known to within REL of its threshold (then, if still straddling, it is reported undecided).
std::uint64_t PointRunner::needed(std::size_t p, const std::vector<std::vector<double>>& first) const {
  const PrecisionRule& rule = *o_.precision;
  const auto n0 = static_cast<std::uint64_t>(first.size());
  std::vector<const std::vector<double>*> reps;
  for (const auto& row : first) reps.push_back(&row);
  const std::vector<std::vector<double>> pooled = pool_ratios(reps, ratio_columns(grid_.names));
  const Summary s = summarize(reps, ratio_columns(grid_.names));
  const auto lookup = [&](const std::string& name) -> double {
    if (const auto it = grid_.metric_index.find(name); it != grid_.metric_index.end()) return s.mean[it->second];
    if (name == "slots_total") return grid_.slots_total[p];
    return grid_.axis_number(p, grid_.axis_index.at(name), "--target");
  };
  std::uint64_t n = n0;
  for (const auto& t : targets_) {
    if (t.in_runs) continue;  // decided by its count of runs, its first stage already long enough (plan.cpp)
    const std::vector<double> margins = margins_of(t, pooled, grid_.metric_index, lookup);
    const MeanInterval ci = student_t_interval(margins, 0.95);
    if (!std::isfinite(ci.mean) || !std::isfinite(ci.half_width)) continue;
    const double sd = ci.half_width / student_t_quantile(n0 - 1, 0.95) * std::sqrt(static_cast<double>(n0));
    // With k targets each is judged at 1 - 0.05/k (Bonferroni, judge_point): plan the second
    // stage for that wider bound (stein_replications uses the 95% quantile); 1 for one target.
    const double widen = student_t_quantile(n0 - 1, bonferroni(0.95, targets_.size())) / student_t_quantile(n0 - 1, 0.95);
    PrecisionRule decide = rule;
    decide.rel = 0;
    decide.abs = std::max({std::fabs(ci.mean) / 2, rule.rel * std::fabs(t.rhs->eval(lookup)), rule.abs});
    n = std::max(n, stein_replications(decide, n0, 0.0, sd * widen));
  }
  return std::max(n, needed_later(p, first));
}

// After the second stage: a target on a rare fraction runs on until its pooled events decide it
// (or the maximum), at the same h as Stein's second stage asked of it.
std::uint64_t PointRunner::needed_later(std::size_t p, const std::vector<std::vector<double>>& rows) const {
  const PrecisionRule& rule = *o_.precision;
  const auto n = static_cast<std::uint64_t>(rows.size());
  std::vector<const std::vector<double>*> reps;
  for (const auto& row : rows) reps.push_back(&row);
  if (n < 2) return n;
  const bool identical = replications_identical(reps);  // no count bound (but looks at runs still)
  const std::vector<RatioColumn> ratios = ratio_columns(grid_.names);
  const Summary s = summarize(reps, ratios);
  const auto lookup = [&](const std::string& name) -> double {
    if (const auto it = grid_.metric_index.find(name); it != grid_.metric_index.end()) return s.mean[it->second];
    if (name == "slots_total") return grid_.slots_total[p];
    return grid_.axis_number(p, grid_.axis_index.at(name), "--target");
  };
  const double each = bonferroni(0.95, targets_.size());
  std::uint64_t need = n;
  for (const auto& t : targets_) {
    if (t.in_runs) {
      // Undecided at its last look: on to the next one (run_fraction.hpp).
      const RunLooks looks = run_looks(*t.in_runs, each, rule.first, std::max(rule.first, rule.max_replications));
      std::vector<std::uint64_t> met_by;
      for (double m : margins_of(t, rows, grid_.metric_index, lookup))
        met_by.push_back((met_by.empty() ? 0 : met_by.back()) + (margin_holds(t.cmp, m) ? 1 : 0));
      const RunLook look = judge_runs(looks, *t.in_runs, met_by);
      if (!look.met_target && !look.missed && look.index + 1 < looks.at.size())
        need = std::max(need, looks.at[look.index + 1]);
      continue;
    }
    const std::optional<RatioColumn> counted = counted_target(t, grid_, ratios);
    if (!counted || identical) continue;
    const PooledCount pc = pooled_count(reps, *counted);
    if (!(pc.jobs > 0)) continue;
    const double r = t.rhs->eval(lookup), m0 = pc.events / pc.jobs - r;
    const double h = std::max({std::fabs(m0) / 2, rule.rel * std::fabs(r), rule.abs});
    need = std::max(need, count_replications(pc.events, pc.jobs, n, h, each, rule.max_replications));
  }
  return need;
}

std::optional<std::size_t> search_by_bisection(const PlanGrid& grid, std::size_t axis, PointRunner& runner) {
  std::optional<std::size_t> best;
  const auto cheaper = [&](std::size_t x, std::size_t y) { return grid.cheaper(x, y); };
  auto lines = lines_along(grid, axis);
  for (auto& line : lines) std::sort(line.begin(), line.end(), cheaper);
  std::sort(lines.begin(), lines.end(), [&](const auto& x, const auto& y) { return cheaper(x[0], y[0]); });
  for (const auto& line : lines) {
    std::size_t hi = 0;  // points of this line cheaper than the best so far
    while (hi < line.size() && (!best || cheaper(line[hi], *best))) ++hi;
    if (hi == 0 || !runner.evaluate(line[hi - 1]).meets) continue;
    std::size_t lo = 0, h = hi - 1;  // line[h] meets; find the first that does
    while (lo < h) {
      const std::size_t mid = lo + (h - lo) / 2;
      if (runner.evaluate(line[mid]).meets)
        h = mid;
      else
        lo = mid + 1;
    }
    best = line[h];
  }
  return best;
}

std::optional<std::size_t> search_in_cost_order(const PlanGrid& grid, PointRunner& runner) {
  std::vector<std::size_t> order(grid.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return grid.cheaper(x, y); });
  for (std::size_t p : order)
    if (runner.evaluate(p).meets) return p;
  return std::nullopt;
}

std::optional<std::size_t> search_by_measured_cost(PlanGrid& grid, const Expr& cost_expr, PointRunner& runner,
                                                   std::uint64_t first_stage) {
  grid.cost_ci95.assign(grid.size(), NAN);
  for (std::size_t p = 0; p < grid.size(); ++p) {
    const PointResult& res = runner.evaluate(p);
    const json doc = grid.space.point_doc(p);
    const auto cost_on = [&](const std::vector<double>& metrics) {
      return cost_expr.eval([&](const std::string& name) -> double {
        if (const auto it = grid.metric_index.find(name); it != grid.metric_index.end()) return metrics[it->second];
        if (name == "slots_total") return grid.slots_total[p];
        if (const auto it = grid.axis_index.find(name); it != grid.axis_index.end())
          return grid.axis_number(p, it->second, "--cost");
        std::string got;
        if (const auto v = scenario_number(doc, grid.scenarios[p], name, &got)) return *v;
        bad_cost_name(grid, doc, name, got);
      });
    };
    grid.cost[p] = cost_on(res.summary.mean);
    check_cost_value(grid, p);
    // The cost per replication (it need not be linear in the metrics), and its interval as for a
    // target's margin: Student t, or Stein's from the first stage with --precision.
    if (res.rows.size() > 1) {
      std::vector<double> per_run;
      for (const auto& row : res.rows) per_run.push_back(cost_on(row));
      grid.cost_ci95[p] = stein_half_width_of(per_run, first_stage);
    }
  }
  return search_in_cost_order(grid, runner);
}

std::vector<std::size_t> resolve_cost_ties(const PlanGrid& grid, const PointRunner& runner,
                                           std::optional<std::size_t>& best) {
  if (!best) return {};
  if (!grid.cost_from_metrics || grid.cost_ci95.size() != grid.size()) return {};  // a cost known exactly: no ties
  const auto overlaps = [&](std::size_t x, std::size_t y) {
    const double hx = std::isnan(grid.cost_ci95[x]) ? 0 : grid.cost_ci95[x];
    const double hy = std::isnan(grid.cost_ci95[y]) ? 0 : grid.cost_ci95[y];
    return grid.cost[x] - hx <= grid.cost[y] + hy && grid.cost[y] - hy <= grid.cost[x] + hx;
  };
  const std::size_t cheapest = *best;
  std::vector<std::size_t> tied;
  for (std::size_t p : runner.tried()) {
    const PointResult& r = runner.results().at(p);
    if (r.meets && overlaps(p, cheapest)) tied.push_back(p);
  }
  std::sort(tied.begin(), tied.end(), [&](std::size_t x, std::size_t y) { return grid.cheaper(x, y); });
  for (std::size_t p : tied) {
    const double s = runner.results().at(p).worst_safety(), b = runner.results().at(*best).worst_safety();
    if (s > b) best = p;  // in cost order: a cheaper one keeps it on equal safety
  }
  return tied;
}

std::optional<std::size_t> closest_tried(const PlanGrid& grid, const PointRunner& runner) {
  std::optional<std::size_t> closest;
  const auto& results = runner.results();
  for (std::size_t p : runner.tried()) {
    const PointResult& r = results.at(p);
    if (!closest) {
      closest = p;
      continue;
    }
    const PointResult& c = results.at(*closest);
    if (r.violation < c.violation ||
        (r.violation == c.violation &&
         (r.runs_shortfall < c.runs_shortfall || (r.runs_shortfall == c.runs_shortfall && grid.cheaper(p, *closest)))))
      closest = p;
  }
  return closest;
}

}  // namespace brokersim
