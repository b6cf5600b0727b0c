// Targets over runs ("p99 under 2 minutes on 95% of days"): each replication is one run (a day,
// an hour), the target holds in some of them, and the fraction is judged by an exact binomial
// bound, Clopper-Pearson (C. J. Clopper, E. S. Pearson, "The use of confidence or fiducial limits
// illustrated in the case of the binomial", Biometrika 26 (1934) 404-413): the one-sided lower
// bound at confidence c of k successes in n runs is the (1 - c) quantile of Beta(k, n - k + 1).
// It is exact (never covers less than c), whatever the metric's distribution: no normality.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

// clopper_pearson_lower and clopper_pearson_upper (shared with the rare fractions' count bound).
#include "experiments/cli/replication/count_bound.hpp"

namespace brokersim {

// The fewest runs that can show a fraction >= p at `confidence`: the least n with
// lower(n, n) = (1 - confidence)^(1/n) >= p (59 for 95% at 95%). p in (0, 1); the largest
// uint64 when that is 1e18 or more.
std::uint64_t runs_needed(double p, double confidence);

// plan --precision: a target over runs is looked at more than once. Its first look is at the
// first stage (at least runs_needed, 59 for 95%), judged at the target's confidence c as without
// --precision; a setting still undecided there (its Clopper-Pearson bounds straddle P) gets more
// runs, looked at after doubling the runs, up to 4 looks, the last at the cap (--max-replications).
// The error is spent across the looks by a rule fixed before any run, and counted exactly: the
// first look's test accepts a setting whose true chance is exactly P with probability
// a1 = P(Binomial(n1, P) >= k1), k1 the fewest met runs it accepts (0.95^59 = 0.0485 for 59 runs
// at 95%); the later looks share what is left of 1 - c equally, the fewest met runs each accepts
// chosen so that the chance of a setting exactly at P being accepted at that look or an earlier
// one, over the runs' whole sequence (a sequence accepted at an earlier look is not counted
// again), is at most a1 + (1 - c - a1) j / (looks - 1) at look j (from 0). A setting whose true
// chance is P or less is thus accepted at some look with probability at most 1 - c (5% for one
// target). Why exactly, and not each later look at 1 - (1 - c - a1) / (looks - 1) (Bonferroni over
// the looks): a sequence that met 59 of 59 is already accepted, and Bonferroni counts it again at
// every later look; with 0.15% left for three looks, each would be judged at 99.95%, and a setting
// that meets the target on 99.15% of runs would be accepted by 85% of plans of at most 300 runs
// (70% beside a second target) where the exact count accepts it in 92% (82%).
// The default cap when --max-replications is not given: this many times the first look.
inline constexpr std::uint64_t kRunLookSpan = 8;
struct RunLooks {
  std::vector<std::uint64_t> at;   // the runs at each look, increasing
  // Each look's one-sided confidence: the first look's c; a later look's, the confidence at which
  // its Clopper-Pearson lower bound reaches P at exactly the fewest met runs it accepts (its own
  // test's size, P(Binomial(n, P) >= k), is 1 - confidence); 1 where a look can accept nothing.
  std::vector<double> confidence;
};
RunLooks run_looks(double p, double confidence, std::uint64_t first, std::uint64_t cap);

// The look a target over runs is decided at on `runs` rows whose first ones met it as `met_by`
// says (met_by[i]: runs 0..i that met it): the first look at which its lower bound reaches P
// (met) or its upper bound falls short of P (missed), else the last look the rows reach
// (undecided). Without looks beyond the first (no --precision) that is one look at all the rows.
struct RunLook {
  std::size_t index = 0;       // into RunLooks::at
  std::uint64_t runs = 0, met = 0;
  double lower = 0, upper = 1;  // Clopper-Pearson bounds at that look's confidence
  bool met_target = false, missed = false;
};
RunLook judge_runs(const RunLooks& looks, double p, const std::vector<std::uint64_t>& met_by);

// Bonferroni: k statements that hold jointly at `joint` each hold at 1 - (1 - joint) / k.
inline double bonferroni(double joint, std::uint64_t k) { return k <= 1 ? joint : 1 - (1 - joint) / static_cast<double>(k); }

}  // namespace brokersim
