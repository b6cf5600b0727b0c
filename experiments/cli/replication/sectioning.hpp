// Quantiles over replications: the two figures a quantile can mean, and their intervals.
//
// A run's wait_ms.STAGE.pNN is the nearest-rank quantile of that run's own jobs, read off a
// log-bucketed histogram (sim::Histogram: the bucket's midpoint, at most half a bucket,
// 0.4-0.8% of it, from the sample's own quantile). Over replications it can estimate two things:
//
// (a) The expected per-run quantile E[xi_run]: what a day's p95 is on average, and what a target
//     "in 95% of runs" or a window target judges. Its estimate is the mean of the per-run
//     quantiles; its interval is the Student-t one plus the mean half-bucket of those quantiles
//     (quantization_half_width below), because each per-run figure may be that far from its run's
//     own quantile whatever the spread says. It is not the steady-state quantile: a finite run's
//     quantile is biased (M/M/1 at rho 0.95, 100 s runs: p50 9% high, p95 8% low), and the bias
//     does not shrink with more replications.
//
// (b) The steady-state quantile xi = F^-1(q) of the waiting-time law, estimated from the pooled
//     jobs of all replications (their histograms merged, bucket by bucket), whose bias shrinks
//     with the total number of jobs rather than per run. Its interval batches the CDF, not the
//     quantile: each run r gives F_r(xi_pooled), the fraction of its jobs at most the pooled
//     estimate (a mean of indicators, near normal where a run's own p99 is far from it); their
//     mean's interval [F - a, F + b] (Johnson's skew-corrected t, never narrower than Student's on
//     either side: F_r of a p99 are bounded by 1 and skewed) is inverted through the pooled CDF,
//     [Q(q - b), Q(q + a)], and printed as the farther end's distance plus half the pooled
//     estimate's bucket. This is the interval got by inverting one for the CDF (H. Dong and
//     M. K. Nakayama, "A tutorial on quantile estimation via Monte Carlo", MCQMC 2018, Springer
//     2020, on CIs from the CDF), with the CDF's variance from independent batches (here the
//     replications) as in A. F. Seila's batch quantile method ("A batching approach to quantile
//     estimation in regenerative simulations", Management Science 28(5), 1982). Measured against
//     exact M/M/1 and M/M/8+D quantiles (`analytic --coverage --quantiles`, README): it covers
//     where sectioning, the spread of the runs' own quantiles around the pooled one (Asmussen
//     and Glynn, Stochastic Simulation, 2007, III.5a), did not (p99 on M/M/1 at rho 0.95: 0.97
//     against 0.815 with 10 runs of 20,000 jobs); sectioning is kept beside it for that table.
//     Neither covers a p99 whose runs are short beside the queue's relaxation time (there the
//     pooled estimate itself is biased): docs/outcomes.md states the minimum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct QuantileInterval {
  double estimate = 0, half_width = 0;
};

// The mean half-bucket of per-run quantiles given in ms (nanosecond buckets of sim::Histogram):
// how far their mean may be from the mean of the runs' own sample quantiles.
double quantization_half_width(const std::vector<double>& quantiles_ms);

// (b): the pooled estimate `pooled` (the q-quantile of the merged histograms) and the sections'
// own q-quantiles, all in the same unit (`to_ns` converts one to nanoseconds, for the bucket).
// NaN half-width for fewer than 2 sections.
QuantileInterval sectioning_interval(double pooled, const std::vector<double>& sections, double confidence,
                                     double to_ns);

// One run's histogram of one wait, kept for (b)'s interval: its non-empty buckets, each with the
// run's count up to and including it, packed as bucket << 52 | count (kBuckets < 2^12, and no run
// holds 2^52 jobs). 8 bytes per non-empty bucket, where a sim::Histogram is 30 KB: a run's wait
// fills a few hundred.
class RunCounts {
 public:
  RunCounts() = default;
  explicit RunCounts(const sim::Histogram& h);
  std::uint64_t count() const { return n_; }
  // The run's values in buckets up to `bucket` (its CDF at a quantile reported from that bucket,
  // times its count).
  std::uint64_t at_most(std::size_t bucket) const;
  std::size_t nonempty() const { return cumulative_.size(); }
  // Adds the run's values to `h` as sim::Histogram::merge would have.
  void merge_into(sim::Histogram& h) const;
  double sum() const { return sum_; }
  // sum (x - mean)^2 over the run's values, each at its bucket's midpoint (within 0.8% of it).
  double squared_deviations(double mean) const;

 private:
  static constexpr int kCountBits = 52;
  static constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;
  // f(bucket, count) for each non-empty bucket, in bucket order.
  template <class F>
  void for_each_bucket(F f) const {
    std::uint64_t before = 0;
    for (std::uint64_t e : cumulative_) {
      f(static_cast<std::size_t>(e >> kCountBits), (e & kCountMask) - before);
      before = e & kCountMask;
    }
  }
  std::vector<std::uint64_t> cumulative_;
  std::uint64_t n_ = 0, min_ = 0, max_ = 0;
  double sum_ = 0;
};

// The jobs of a set of replications (a sweep's or a plan's point, or run --precision's runs): each
// run's wait histograms (kWaits index), kept compact by replication number, so that the figures
// are the same whatever order the runs finish in (and on any thread count). The pooled histogram
// of a wait is merged from them when asked (merged): a point holds about 9 KB per run (the
// capacity baseline's six waits), not a 30 KB histogram per wait besides.
struct PooledWaits {
  std::map<std::uint64_t, std::vector<RunCounts>> runs;
  void add(std::uint64_t replication, std::span<const sim::Histogram> waits);
  // All runs' values of wait w (empty when none has it).
  sim::Histogram merged(std::size_t w) const;
};

// (b)'s interval: the q-quantile of `pooled` by CDF batching over `runs` (those holding no value
// are left out), in units of `to_ns` nanoseconds (as sectioning_interval). NaN half-width with
// fewer than 2 such runs.
QuantileInterval cdf_batching_interval(const sim::Histogram& pooled, const std::vector<const RunCounts*>& runs, double q,
                                       double confidence, double to_ns);

// Both figures of one quantile q over a set of runs' histograms (in ms, as run --json prints).
struct QuantileFigures {
  QuantileInterval per_run;     // (a) the expected per-run quantile
  QuantileInterval pooled;      // (b) the steady-state quantile, by CDF batching (printed)
  QuantileInterval sectioning;  // (b) with sectioning's interval, what brokersim printed before
  QuantileInterval naive;       // what brokersim printed first: mean of per-run +- Student t only
};
QuantileFigures quantile_figures(const std::vector<const sim::Histogram*>& runs, double q, double confidence);

// The steady-state quantiles a set of metric names gives (docs/outcomes.md, "Quantiles: per run
// and steady state"): wait_ms.STAGE.pNN_pooled for every wait_ms.STAGE.pNN among `names` (p50,
// p95, p99), in kWaits order, then p50, p95, p99. `wait` indexes kWaits (the pooled histograms,
// TaskRunStats::pooled_waits); `column` is the runs' own quantile among `names` (the sections).
struct PooledQuantileColumn {
  std::string name;  // wait_ms.STAGE.pNN_pooled
  std::size_t wait;
  double q;
  std::size_t column;
};
std::vector<PooledQuantileColumn> pooled_quantile_columns(const std::vector<std::string>& names);

// Each of `columns` over a set of runs, in their order: the q-quantile of the runs' merged
// histogram (ms) with its 95% interval by CDF batching over the runs' own histograms (each wait
// merged once for all its quantiles). NaN estimate and half-width where the runs hold no such job.
std::vector<QuantileInterval> pooled_quantiles(const std::vector<PooledQuantileColumn>& columns, const PooledWaits& waits);

// How long the runs are beside the wait's own correlation: the mean within-run variance of wait w
// (from the buckets' midpoints) over the variance of the runs' mean waits. For i.i.d. waits it is
// the jobs per run; for correlated ones about the run's length in integrated autocorrelation
// times (the variance of a run's mean is sigma^2 tau / n), the number of near-independent
// stretches a run holds. M/M/1 at rho 0.95 (analytic --coverage --quantiles): runs of 2,000 jobs
// hold a median 2.3, of 20,000 jobs 17.0; the steady-state p99's interval covered 0.43 and 0.97.
// NaN with fewer than 2 runs holding the wait; infinite when their means agree exactly.
double correlation_times(const PooledWaits& waits, std::size_t w);
// Below this, run and sweep warn that a steady-state p99's interval may be too narrow: measured,
// 195 of 200 M/M/1 points with 2,000-job runs fall below it (coverage 0.43), 40 of 200 with
// 20,000 (0.97), 1 of 400 M/M/8+D points. The figure is itself an estimate from R runs: a set of
// short runs that happened to miss the long busy periods can show a large one.
inline constexpr double kTailCorrelationTimes = 10;
// Whether run and sweep warn of a steady-state q-quantile whose runs hold `correlation_times`:
// a p99 (q >= kTailQuantile) below kTailCorrelationTimes (not NaN: fewer than 2 runs).
inline constexpr double kTailQuantile = 0.99;
inline bool warns_of_short_runs(double q, double correlation_times) {
  return q >= kTailQuantile && correlation_times < kTailCorrelationTimes;
}
// What makes a scenario's runs days rather than stretches of one steady state: producers that
// replay whole days (days_csv) or draw their day's volume per run (volume.per_run), named ("producers.0
// days_csv"); empty when none does.
std::string runs_are_days(const Scenario& s);
// The warning run and sweep print for one setting's steady-state p99s (name, correlation times)
// below it, after "brokersim: warning: " and the setting: one line. `days` (runs_are_days): the
// runs are days, which cannot be made longer, so the line says what their p99 is instead.
std::string short_tails_warning(const std::vector<std::pair<std::string, double>>& tails, const std::string& days = "");

// The same column's spread in ms, for Stein's rule (precision.cpp): the half-width
// pooled_quantiles prints over these runs, less its bucket, as the standard deviation a Student-t
// interval of that width over as many runs would have; and the number of runs it is from.
struct PooledSpread {
  double estimate = 0, sd = 0;
  std::size_t runs = 0;
};
PooledSpread pooled_spread(const PooledQuantileColumn& c, const PooledWaits& waits, double confidence);

}  // namespace brokersim
