// plan's search: each setting run and judged against the targets (on the replication means, at
// their 95% bound with --conservative, or decided with --precision), and the three orders of
// search: bisection along a cost-monotone axis, cost order, and every point when the cost is measured.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "experiments/cli/plan/expression.hpp"
#include "experiments/cli/plan/costed_grid.hpp"
#include "experiments/cli/plan/executor.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/progress.hpp"
#include "experiments/cli/replication/statistics.hpp"

namespace brokersim {

struct PointResult {
  Summary summary;
  std::vector<double> lhs;  // each target's left-hand side, on the means
  std::vector<double> rhs;
  std::vector<double> margin_ci95;  // each target's margin (lhs - rhs) 95% half-width; NaN for 1 replication
  std::vector<bool> holds;          // each target, as judged (on the mean or, --conservative, its bound)
  bool meets = false;
  // --precision: some target's interval still straddles it (neither met nor missed at its bound)
  // and no target is missed at its bound: the setting is neither accepted nor rejected.
  bool undecided = false;
  std::vector<bool> decided;        // --precision: each target, its bound on one side
  std::uint64_t replications = 0;   // replications run for this setting
  // How far the setting misses, for choosing the closest when none meets the targets: the sum
  // over the targets it misses of the metric's shortfall relative to the threshold (absolute where
  // the threshold is 0), at its bound when judged there; a target over runs by the metric of the
  // run at its P quantile (margin_at_run_quantile); 0 when every target is met.
  double violation = 0;
  // Then, among equal misses, the targets over runs' shortfall of the Clopper-Pearson bound from
  // P, relative to P (0 met out of n is 1 at every fleet: no way to tell settings apart).
  double runs_shortfall = 0;
  std::size_t incomplete = 0;  // replications stopped by a limit or that measured nothing: never met
  // Each target's half-width at its Bonferroni-corrected bound (95% jointly over k targets: each
  // at 1 - 0.05/k; = margin_ci95 for one target); NaN for a target over runs.
  std::vector<double> margin_bound;
  // Each target, the replications in which it held on that replication's own figures (a target
  // over runs is judged on these; for the others they are what a single run would see).
  std::vector<std::uint64_t> runs_met;
  // Each target, the runs it was judged on: all the replications, but for a target over runs
  // under --precision the runs of the look that decided it (run_fraction.hpp), whose count
  // runs_met then is; and the confidence of its Clopper-Pearson bound at that look.
  std::vector<std::uint64_t> runs_judged;
  std::vector<double> fraction_confidence;
  // A target over runs: the Clopper-Pearson lower bound on the fraction of runs in which it
  // holds, at the target's corrected confidence; NaN for the others.
  std::vector<double> fraction_bound;
  // Each target's margin: how far its metric (the left-hand side, on the means) is inside its
  // threshold (the right-hand side), in the metric's units, negative when it misses: rhs - lhs
  // for <= and <, lhs - rhs for >= and >. Every target has one, a target over runs too.
  std::vector<double> margin;
  // The margin less the half-width at the target's bound (margin_bound); NaN for a target over
  // runs (judged by its runs, not a mean's interval) and for a single replication.
  std::vector<double> margin_at_bound;
  // A target over runs: the margin of the run at its P quantile (the ceil(P n)-th best run's own
  // figure): >= 0 when at least ceil(P n) runs met it; NaN for the others.
  std::vector<double> margin_at_run_quantile;
  // Each target's margin at its bound as a fraction of |threshold|, positive when safe; where the
  // threshold is 0 the absolute margin at its bound (never a division by 0); for a target over runs
  // the Clopper-Pearson bound's margin over P, (bound - P) / P. The smallest is how close the
  // setting came to missing (ties on a measured cost are decided on it).
  std::vector<double> safety;
  // A target on a fraction of jobs (search.cpp, counted_target): the events and jobs pooled over
  // the replications, whose exact binomial bound its interval is at least; NaN for the others
  // and where no bound applies (one replication, or replications identical in every figure).
  std::vector<double> count_events, count_jobs;
  std::uint64_t runs_missed = 0;  // replications in which some target failed on its own figures
  std::vector<std::vector<double>> rows;  // the replication rows (a measured cost is evaluated on them)
  double worst_safety() const {
    double w = std::numeric_limits<double>::infinity();
    for (double s : safety) w = std::min(w, std::isnan(s) ? -std::numeric_limits<double>::infinity() : s);
    return w;
  }
  // The target whose safety is worst_safety() (the first on equal ones).
  std::size_t worst_target() const {
    std::size_t worst = 0;
    for (std::size_t i = 1; i < safety.size(); ++i)
      if (std::isnan(safety[i]) ? !std::isnan(safety[worst]) : safety[i] < safety[worst]) worst = i;
    return worst;
  }
};

// Runs each point at most once (R replications through the executor: this machine's threads, or
// task files) and remembers the order run. `volume_step`: the --headroom look whose volume the
// grid's scenarios carry (0: the plan's own), which names the runs to the executor.
class PointRunner {
 public:
  PointRunner(const PlanGrid& grid, const std::vector<Target>& targets, const PlanOptions& o, std::ostream* progress,
              PlanExecutor& executor, std::size_t volume_step = 0)
      : grid_(grid), targets_(targets), o_(o), progress_(progress, grid.size(), "plan (grid points)"),
        executor_(executor), volume_step_(volume_step) {
    progress_.update(0);
  }

  // The point's result, running it the first time (R replications over the pool, or the rounds
  // of --precision until the setting is decided).
  const PointResult& evaluate(std::size_t p);
  void finish() { progress_.finish(); }

  const std::map<std::size_t, PointResult>& results() const { return results_; }
  const std::vector<std::size_t>& tried() const { return tried_; }
  const TaskRunStats& stats() const { return stats_; }
  std::uint64_t replications_spent() const { return spent_; }

 private:
  // --precision: the replications a setting needs in all after its first stage (Stein's second
  // stage): enough to decide each target (met, or missed at its bound), or to know it to within
  // REL of its threshold: more would only resolve a difference smaller than the user cares about.
  std::uint64_t needed(std::size_t p, const std::vector<std::vector<double>>& first_stage) const;
  // --precision, after the second stage (and any later one), from all the rows so far: what a
  // target on a rare fraction needs for its count bound to decide it (count_bound.hpp).
  std::uint64_t needed_later(std::size_t p, const std::vector<std::vector<double>>& rows) const;

  const PlanGrid& grid_;
  const std::vector<Target>& targets_;
  const PlanOptions& o_;
  Progress progress_;
  PlanExecutor& executor_;
  std::size_t volume_step_;
  std::map<std::size_t, PointResult> results_;
  std::vector<std::size_t> tried_;
  TaskRunStats stats_;
  std::uint64_t spent_ = 0;
};

// For each line along the axis (cheapest line first), bisect among the points cheaper than the
// best so far, assuming a costlier value never misses a target a cheaper one meets.
std::optional<std::size_t> search_by_bisection(const PlanGrid& grid, std::size_t axis, PointRunner& runner);

// The points in cost order, up to the first that meets the targets.
std::optional<std::size_t> search_in_cost_order(const PlanGrid& grid, PointRunner& runner);

// A cost that names metrics: run every point, cost it on its means (and per replication, for its
// interval: grid.cost_ci95; first_stage as in judge_point, 0 without --precision), then take the
// cheapest that meets the targets (no bisection: the cost's order is unknown before the runs).
std::optional<std::size_t> search_by_measured_cost(PlanGrid& grid, const Expr& cost_expr, PointRunner& runner,
                                                   std::uint64_t first_stage);

// A measured cost is noisy: the settings that meet the targets and whose cost interval overlaps
// the cheapest one's are tied with it (in cost order, the cheapest first), and `best` becomes the
// one among them with the safest worst target margin at its bound (the cheaper on equal safety).
// Returns the tied settings (just `best` when none is tied; none without a best or a measured cost).
std::vector<std::size_t> resolve_cost_ties(const PlanGrid& grid, const PointRunner& runner,
                                           std::optional<std::size_t>& best);

// A margin as a fraction of its threshold's size; NaN where the threshold is 0 (the absolute margin
// is all there is: plan never divides by a zero threshold).
inline double relative_to_threshold(double margin, double threshold) {
  return threshold == 0 ? std::numeric_limits<double>::quiet_NaN() : margin / std::fabs(threshold);
}

// The setting tried that misses the targets by the least (violation: the metrics' shortfall
// relative to their thresholds; then runs_shortfall), cheaper first on ties.
std::optional<std::size_t> closest_tried(const PlanGrid& grid, const PointRunner& runner);

}  // namespace brokersim
