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
//     with the total number of jobs rather than per run. Its interval is sectioning (Asmussen and
//     Glynn, Stochastic Simulation, 2007, III.5a; M. K. Nakayama, "Confidence intervals for
//     quantiles using sectioning when applying variance-reduction techniques", ACM TOMACS 24(4),
//     2014): the replications are i.i.d. sections, xi_r each section's quantile, and
//       xi_pooled +- t_{n-1, 0.975} sqrt(sum_r (xi_r - xi_pooled)^2 / (n (n - 1)))
//     (the batching spread, centred on the pooled estimate, which batching's mean of xi_r is not),
//     asymptotically valid as the sections grow. Plus half the pooled estimate's bucket.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

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

// Both figures of one quantile q over a set of runs' histograms (in ms, as run --json prints).
struct QuantileFigures {
  QuantileInterval per_run;  // (a) the expected per-run quantile
  QuantileInterval pooled;   // (b) the steady-state quantile, by sectioning
  QuantileInterval naive;    // what brokersim printed before: mean of per-run +- Student t only
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

// One of them over a set of runs: the q-quantile of their merged histogram `pooled` (ms) with its
// 95% sectioning interval over the runs' own quantiles (rows[r][c.column], NaN ones left out).
// NaN estimate and half-width when `pooled` holds no job.
QuantileInterval pooled_quantile(const PooledQuantileColumn& c, const sim::Histogram& pooled,
                                 const std::vector<const std::vector<double>*>& rows);

}  // namespace brokersim
