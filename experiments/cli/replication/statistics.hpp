// What replications say about a mean: the Student-t confidence interval, for one series of values
// and for every metric column of a set of replications at once.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace brokersim {

// The two-sided Student-t quantile t_{(1 + confidence) / 2, dof}.
double student_t_quantile(std::size_t degrees_of_freedom, double confidence);

// The mean of `x` and the half-width t * s / sqrt(n) of its confidence interval, computed as
// t * sqrt(ss / (n - 1) / n) with ss the sum of squared deviations (sweep CSVs print it to the
// last bit, so that order is part of the output). The half-width is NaN for fewer than 2 values.
struct MeanInterval {
  double mean = 0, half_width = 0;
};
MeanInterval student_t_interval(const std::vector<double>& x, double confidence);
// The same with t given, for callers that take many intervals over the same n.
MeanInterval student_t_interval_with(const std::vector<double>& x, double t);

// Johnson's modified t interval (N. J. Johnson, "Modified t tests and confidence intervals for
// asymmetric populations", JASA 73 (1978) 536-544): the t statistic corrected for the sample's
// third moment, t1 = (u + k3 / (6 s^2 n) + k3 / (3 s^4) u^2) / (s / sqrt(n)), u = mean - mu,
// k3 = n sum (x - mean)^3 / ((n - 1)(n - 2)), inverted for mu at t1 = -+ t_{n-1}. Run means of a
// heavy-traffic wait are right-skewed: a low mean comes with a small s, and the Student-t
// interval then lies below the truth (M/M/1 at rho 0.95, 10 replications: coverage 0.905, every
// miss low); Johnson's stretches the interval on the side of the tail. The quadratic in u is
// inverted on its branch through u = 0; where that branch never reaches -+t (the statistic is not
// monotone there), the end is its vertex. `lo`, `hi`: the interval; NaN for fewer than 3 values;
// the Student-t interval when s is 0.
struct SkewInterval {
  double mean = 0, lo = 0, hi = 0;
};
SkewInterval johnson_interval(const std::vector<double>& x, double confidence);
SkewInterval johnson_interval_with(const std::vector<double>& x, double t_quantile);
// Whether the sample's skewness is significant at 5% two-sided: |G1| > 1.96 SE, G1 the adjusted
// sample skewness sqrt(n (n - 1)) / (n - 2) g1 and SE = sqrt(6 n (n - 1) / ((n - 2)(n + 1)(n + 3)))
// its standard error under normality. Johnson's correction is applied only then: with 10
// replications the sample skewness is noisy (its SE is 0.69), and applied always it widened even
// throughput's near-normal intervals by 20-40% (analytic --coverage --skew).
bool significantly_skewed(const std::vector<double>& x);
// The half-width printed for a mean over replications (mean +- half-width, a symmetric form):
// where the sample is significantly skewed, the larger of the Student-t half-width and the
// distance from the mean to the farther end of Johnson's interval, so that the printed interval
// holds Johnson's; else Student t's. Never narrower than Student t.
double skew_aware_half_width(const std::vector<double>& x, double confidence);

// Mean and 95% confidence half-width of each column of the replication rows; ci95 is NaN when
// there is a single replication. A column whose replications are all equal has exactly that
// mean and a half-width of 0 (a sum divided by n need not give the value back).
struct Summary {
  std::vector<double> mean, ci95;
};
// Columns that are a ratio per replication (a fraction of the jobs generated, a mean over a
// wait's samples): the column and the column of its denominator (its weight).
struct RatioColumn {
  std::size_t column, weight;
  // A fraction of jobs (events over the jobs generated): its pooled count bounds its interval
  // from below (count_bound.hpp). A mean wait is no count.
  bool counted = false;
  // A per-run quantile (wait_ms.STAGE.p50 / p95 / p99, and a window's): not a ratio and never
  // pooled; its interval is widened by the histogram's quantization (sectioning.hpp). `weight`
  // is the column itself.
  bool quantile = false;
};
// fraction.* and expired_before_start_by_cause.fraction_* over outcomes.generated (counted), and
// wait_ms.STAGE.mean over wait_ms.STAGE.count, by name; and the per-run quantile columns (any
// name with "wait_ms." ending in .p50, .p95 or .p99), marked quantile.
std::vector<RatioColumn> ratio_columns(const std::vector<std::string>& names);

// The mean of a ratio over replications is the pooled ratio sum(x_r w_r) / sum(w_r) (the jobs of
// all replications together), not the average of the per-replication ratios, which is biased by
// O(1 / jobs per replication): a run of 180 jobs had its abandoned fraction 0.6% low on M/M/4+D.
// Each ratio column's values are replaced by their linearisation z_r = R + w_r (x_r - R) / mean(w)
// (the delta method): the mean of z is exactly R and the Student-t interval of z is R's. Rows
// whose weight is 0 (no samples) count as weight 0.
std::vector<std::vector<double>> pool_ratios(const std::vector<const std::vector<double>*>& replications,
                                             const std::vector<RatioColumn>& ratios);

Summary summarize(const std::vector<const std::vector<double>*>& replications);
// Every column's ci95 but the per-run quantiles' (and those of width 0 or NaN), where the column is
// significantly skewed, made at least the distance from the mean to the farther end of Johnson's
// interval over `pooled` (the rows after pool_ratios): the skew-aware half-width, never narrower
// than Student t's. For 3 or more replications; called by summarize(..., count_bounds) only:
// summarize_two_stage keeps Stein's half-width, which its stopping rule judged against REL.
void apply_skew(Summary& s, const std::vector<const std::vector<double>*>& pooled, const std::vector<RatioColumn>& ratios);
// The same after pool_ratios, each column's ci95 skew-aware (apply_skew), each counted
// fraction's at least its count bound (count_bound.hpp) and each quantile column's widened by
// its quantization, unless `count_bounds` is false (then Student t's, as summarize above).
Summary summarize(const std::vector<const std::vector<double>*>& replications, const std::vector<RatioColumn>& ratios,
                  bool count_bounds = true);

// The empirical q-quantile of `x` (NaN values left out; NaN when none is left): linear
// interpolation between order statistics, h = (n - 1) q, x(floor h) + (h - floor h) (x(floor h + 1)
// - x(floor h)) over the sorted values from 0 (Hyndman and Fan's type 7, the default of R and NumPy).
// Each quantile column's ci95 plus the mean half-bucket of its per-run values
// (quantization_half_width, sectioning.hpp): a per-run quantile is a histogram bucket's midpoint,
// up to half a bucket (0.4-0.8%) from the run's own sample quantile, an error the spread of the
// replications does not show (a p99 whose runs all fall in one bucket printed "± 0"). Not for one
// replication (no interval) or identical replications (nothing random measured).
void apply_quantization(Summary& s, const std::vector<const std::vector<double>*>& replications,
                        const std::vector<RatioColumn>& ratios);

double empirical_quantile(std::vector<double> x, double q);

}  // namespace brokersim
