// Answers with a stated precision: the sequential replication rule shared by run, sweep, plan
// and analytic --validate.
//
// The rule: Stein's two-stage procedure (C. Stein, "A two-sample test for a linear hypothesis
// whose power is independent of the variance", Ann. Math. Statist. 16 (1945) 243-258; A. M. Law,
// Simulation Modeling and Analysis, 5th ed., section 9.4.1). A point first runs n0 replications
// (10, or --replications when given). From their sample standard deviation s0 and mean m0, each
// checked metric needs N = ceil((t * s0 / h)^2) replications, t the 97.5% Student-t quantile with
// n0 - 1 degrees of freedom and h = max(REL x |m0|, ABS); the point runs up to the largest N
// (at most --max-replications) and reports the mean of all N with the half-width t * s0 / sqrt(N).
//
// Why not "add rounds until the 95% interval is narrow enough": looking at the interval after
// every round and stopping when it is narrow selects the runs whose variance came out low, and
// the interval then covers less often than it says (measured 88% at nominal 95% on M/M/4+D).
// Stein's interval is exact for normal replication means: s0 comes from the first stage alone,
// the sample mean of normal data is independent of its sample variance, so N (a function of s0)
// says nothing about the mean, and (mean_N - mu) * sqrt(N) / s0 is Student-t with n0 - 1 degrees
// of freedom. Replication means of runs of many jobs are close to normal; the README has the
// measured coverage.
//
// The absolute floor ABS is what lets a fraction near 0 (0 stale jobs in most replications) stop
// at all, since no relative precision can be reached around a mean of 0.
//
// Replication r always draws the streams of (seed, r), and N depends on the point's own first
// stage only, so a point's numbers are the same for any thread count or shard split.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "models/scenario.hpp"

namespace brokersim {

struct PrecisionRule {
  double rel = 0.05;                      // --precision REL
  double abs = 0.001;                     // --precision-abs
  std::uint64_t first = 10;               // the first stage n0: 10, or --replications when given
  std::uint64_t max_replications = 100;   // --max-replications
  std::vector<std::string> metrics;       // --precision-metric (empty: the command's default)
};

inline constexpr std::uint64_t kMinSequentialReplications = 3;   // n0 - 1 >= 2 degrees of freedom
inline constexpr std::uint64_t kDefaultFirstStage = 10;
inline constexpr std::uint64_t kMaxSequentialReplications = 100'000;

// Replications one metric needs after a first stage of n0 with mean m0 and standard deviation
// s0: max(n0, ceil((t * s0 / h)^2)), h = max(REL x |m0|, ABS), at most the rule's maximum. A NaN
// mean (a metric this point does not have) needs nothing more.
std::uint64_t stein_replications(const PrecisionRule& rule, std::uint64_t n0, double mean0, double sd0);

// Stein's half-width after N replications: t_{n0-1} * s0 / sqrt(N).
double stein_half_width(std::uint64_t n0, double sd0, std::uint64_t n);

// The reported half-width of one series whose first n0 values are the first stage, at
// `confidence` (0.95 elsewhere; analytic --validate prints 99.9%): the larger of Stein's and the
// Student-t half-width over all N. Stein's covers exactly for normal replication means whatever N
// is; over all N the spread is better estimated, which matters when the means are skewed (a
// mean wait over a short run) and the first stage happened to look tight. Taking the larger can
// only cover more often (measured: analytic --coverage). Student t over all when n0 is 0 or all.
double stein_half_width_of(const std::vector<double>& x, std::uint64_t n0, double confidence = 0.95);

// Mean over all replications and, per column, the half-width of stein_half_width_of
// (summarize() when all replications are the first stage).
// `ratios`: the ratio columns (statistics.hpp), pooled over the replications.
Summary summarize_two_stage(const std::vector<const std::vector<double>*>& replications, std::uint64_t n0,
                            const std::vector<RatioColumn>& ratios = {});

// Half-width within REL of the mean, or within the absolute floor. NaN (one replication) is not.
bool is_precise(const PrecisionRule& rule, double mean, double half_width);

// The options, added to a command's description: --precision, --precision-abs,
// --max-replications, and (with_metric) --precision-metric.
void add_precision_options(boost::program_options::options_description& opts, bool with_metric);

// nullopt without --precision (then any of the others is an error naming it, exit status 2).
// `replications`: the command's --replications value when the user gave one (the first stage,
// at least 3), else 0 (the first stage is 10, or --max-replications when that is lower).
std::optional<PrecisionRule> read_precision_options(const boost::program_options::variables_map& vm,
                                                    std::uint64_t replications);

// Goodput and the stale fractions (expired in the queue, in transit, before start): what a
// capacity question is usually about.
std::vector<std::string> default_precision_metrics();

// The column of each metric the rule checks: rule.metrics, or the defaults; a name that is not a
// metric is an error naming --precision-metric.
std::vector<std::size_t> precision_metric_columns(const PrecisionRule& rule, const std::vector<std::string>& names);

// The two-stage driver over several points at once. Every point runs its first stage (all points
// in one pool); `needs(i, rows)` then says how many replications point i needs in all (rows: its
// first stage, in order; the answer is clamped to [n0, max_replications]); the second stage runs
// in one pool, and `done(i, rows, incomplete)` is called once per point with all its rows
// (incomplete: how many of its replications stopped at a limit or measured nothing), serialised:
// after the first stage for the points it was enough for, after the second for the others, in
// index order within each. With `more`, a point that has run its second stage (or any later one)
// is asked `more(i, rows)` with all its rows, and runs up to that many in a further stage (at
// most max_replications; not more than it has: done): the count of a rare outcome's events and
// the looks at a target over runs, which Stein's first stage cannot foresee. Stein's N is still
// fixed by the first stage alone. `run`, when given, runs each stage's tasks instead of run_tasks
// on `threads` (plan's executor). Returns the replications run in all. Point i's tasks are
// RunTask::pool i: with stats->pooled_waits set, set i holds the wait histograms of all of point
// i's runs so far when needs, more and done are called (run_tasks only: `run` merges none).
using PointNeeds = std::function<std::uint64_t(std::size_t, const std::vector<std::vector<double>>&)>;
using PointFinished = std::function<void(std::size_t, const std::vector<std::vector<double>>&, std::size_t)>;
std::uint64_t run_two_stage(const std::vector<const Scenario*>& points, const PrecisionRule& rule, unsigned threads,
                            const std::vector<std::string>& names, const PointNeeds& needs, const PointFinished& done,
                            TaskRunStats* stats, const PointNeeds& more = nullptr, const TaskRunner& run = nullptr);

// What `needs` is for run and sweep: the largest stein_replications over `columns`, and at least
// count_needed_for_columns.
std::uint64_t needed_for_columns(const PrecisionRule& rule, const std::vector<std::vector<double>>& first_stage,
                                 const std::vector<std::size_t>& columns, const std::vector<RatioColumn>& ratios = {});

// The steady-state quantiles (wait_ms.STAGE.pNN_pooled, sectioning.hpp) --precision-metric names
// (precision_metric_columns leaves them out: they are no column of a run).
std::vector<PooledQuantileColumn> pooled_precision_columns(const PrecisionRule& rule, const std::vector<std::string>& names);

// What `needs` adds for them (run and sweep): Stein's N for a t half-width within max(REL x
// xi_pooled, ABS) less the half-bucket the interval adds (none left: the maximum), from the first
// stage's interval read as a spread in ms (pooled_spread, sectioning.hpp: the runs' CDFs at the
// pooled estimate, inverted through the pooled CDF, its farther side, Johnson's stretch included).
// The interval reported after N runs is CDF batching over all N, its spread re-estimated, so it is
// within the precision asked only approximately; `run --precision` says whether it is.
std::uint64_t needed_for_pooled(const PrecisionRule& rule, const std::vector<std::vector<double>>& first_stage,
                                const std::vector<PooledQuantileColumn>& columns, const PooledWaits& waits);

// What `more` is for run and sweep (and part of `needs`): the replications in all that the
// counted fractions among `columns` need for their count bound (count_bound.hpp) to be within
// max(REL x fraction, ABS), projected from `rows` at their pooled event and job rates; the
// maximum + 1 when the maximum would not do (no event yet, and ABS below the bound there).
// A fraction's relative precision needs events: about (1.96 / REL)^2 of them.
std::uint64_t count_needed_for_columns(const PrecisionRule& rule, const std::vector<std::vector<double>>& rows,
                                       const std::vector<std::size_t>& columns, const std::vector<RatioColumn>& ratios);

}  // namespace brokersim
