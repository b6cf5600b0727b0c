// Targets over runs ("p99 under 2 minutes on 95% of days"): each replication is one run (a day,
// an hour), the target holds in some of them, and the fraction is judged by an exact binomial
// bound, Clopper-Pearson (C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits
// illustrated in the case of the binomial", Biometrika 26 (1934) 404-413): the one-sided lower
// bound at confidence c of k successes in n runs is the (1 - c) quantile of Beta(k, n - k + 1).
// It is exact (never covers less than c), whatever the metric's distribution: no normality.
#pragma once

#include <cstdint>

// clopper_pearson_lower and clopper_pearson_upper (shared with the rare fractions' count bound).
#include "experiments/cli/replication/count_bound.hpp"

namespace brokersim {

// The fewest runs that can show a fraction >= p at `confidence`: the least n with
// lower(n, n) = (1 - confidence)^(1/n) >= p (59 for 95% at 95%). p in (0, 1); the largest
// uint64 when that is 1e18 or more.
std::uint64_t runs_needed(double p, double confidence);

// Bonferroni: k statements that hold jointly at `joint` each hold at 1 - (1 - joint) / k.
inline double bonferroni(double joint, std::uint64_t k) { return k <= 1 ? joint : 1 - (1 - joint) / static_cast<double>(k); }

}  // namespace brokersim
