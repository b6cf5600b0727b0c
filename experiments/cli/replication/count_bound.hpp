// Fractions of jobs whose events are rare: a bound from the pooled count of events.
//
// Why: a fraction such as fraction.expired_in_queue can show no event in any replication of a
// stage. Its replication spread is then 0, Stein's rule stops at the first stage and the
// Student-t half-width is 0: "0 ± 0", as if the fraction were known exactly, and plan accepted
// a target of 0.0004 on a setting whose true fraction is 0.000501. The jobs counted
// say otherwise: no event in n jobs leaves any fraction up to 1 - 0.025^(1/n) (about 3.7 / n)
// plausible at 97.5% one-sided (the "rule of three", 3 / n, is the 95% one).
//
// The bound: the exact binomial (Clopper-Pearson) interval on k events in n jobs, k and n
// pooled over all the replications (k = sum of fraction x jobs generated). It is printed as the
// half-width of the symmetric interval around k / n that contains the two-sided Clopper-Pearson
// interval, and a fraction's half-width is the larger of it and the replication-based one. It
// treats the jobs as independent trials; where events cluster (an outage expires many jobs at
// once) the replications' spread is the wider and is the one printed, and with few events the
// count bound is the wider. A point whose replications agree in every figure is deterministic
// (no random draw changes anything) and keeps its exact ± 0.
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/cli/replication/statistics.hpp"

namespace brokersim {

// One-sided Clopper-Pearson bounds on a probability after k successes in n trials (Clopper and
// Pearson, Biometrika 26 (1934) 404-413): the (1 - c) quantile of Beta(k, n - k + 1) and the c
// quantile of Beta(k + 1, n - k). lower(0, n) = 0, upper(n, n) = 1.
double clopper_pearson_lower(std::uint64_t k, std::uint64_t n, double confidence);
double clopper_pearson_upper(std::uint64_t k, std::uint64_t n, double confidence);

// The half-width h of k / n ± h, the symmetric interval that contains the two-sided
// Clopper-Pearson interval at `confidence` ((1 - confidence) / 2 on each side): k = 0 gives
// 1 - ((1 - confidence) / 2)^(1/n). Real k and n are allowed (a projection of more
// replications); NaN for n <= 0.
double count_half_width(double events, double jobs, double confidence);

// The events and jobs of a fraction column pooled over replications (rows without jobs left out).
struct PooledCount {
  double events = 0, jobs = 0;
};
PooledCount pooled_count(const std::vector<const std::vector<double>*>& replications, const RatioColumn& c);

// Whether every replication has every figure the same (then nothing random is measured).
bool replications_identical(const std::vector<const std::vector<double>*>& replications);

// Each counted ratio column's ci95 raised to count_half_width at 95% where that is wider (two or
// more replications, not identical ones).
void apply_count_bounds(Summary& s, const std::vector<const std::vector<double>*>& replications,
                        const std::vector<RatioColumn>& ratios);

// The replications in all that a counted fraction needs for its count bound to be within h,
// projected from n0 replications with `events` in `jobs` (the same event and job rate per
// replication): n0 when it already is, max_replications + 1 when even max_replications would not
// be (no event yet and h smaller than the bound at the maximum).
std::uint64_t count_replications(double events, double jobs, std::uint64_t n0, double h, double confidence,
                                 std::uint64_t max_replications);

}  // namespace brokersim
