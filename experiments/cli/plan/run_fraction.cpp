#include "experiments/cli/plan/run_fraction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/special_functions/beta.hpp>

namespace brokersim {

std::uint64_t runs_needed(double p, double confidence) {
  // (1 - c)^(1/n) >= p  <=>  n >= ln(1 - c) / ln(p), in closed form (log1p keeps p near 1 exact:
  // 99.99999999999% needs about 3e13 runs, which a search stepping by one never reaches); the
  // steps after it settle the rounding at the edge.
  const double x = std::log1p(-confidence) / std::log1p(p - 1);
  if (!(x < 1e18)) return std::numeric_limits<std::uint64_t>::max();
  auto n = static_cast<std::uint64_t>(std::max(1.0, std::ceil(x)));
  // Near p = 1 the bound's doubles are too coarse to tell n from n + 1, and a search by one would
  // not end: the rounding is settled within a few steps or left to the closed form.
  for (int step = 0; step < 8 && clopper_pearson_lower(n, n, confidence) < p; ++step) ++n;
  for (int step = 0; step < 8 && n > 1 && clopper_pearson_lower(n - 1, n - 1, confidence) >= p; ++step) --n;
  return n;
}

namespace {

// The chance of each count of missed runs 0..most among `runs` runs, each missed with chance q.
std::vector<double> missed_runs_pmf(std::uint64_t runs, double q, std::uint64_t most) {
  std::vector<double> pmf(std::min(runs, most) + 1, 0.0);
  const boost::math::binomial_distribution<> b(static_cast<double>(runs), q);
  for (std::uint64_t x = 0; x < pmf.size(); ++x) pmf[x] = boost::math::pdf(b, static_cast<double>(x));
  return pmf;
}

// The sequences not yet decided, by their missed runs so far (0..most), after `more` runs each
// missed with chance q.
std::vector<double> after_more_runs(const std::vector<double>& undecided, std::uint64_t more, double q, std::uint64_t most) {
  const std::vector<double> step = missed_runs_pmf(more, q, most);
  // Only the counts whose chance is not below the smallest double (a band of some 40 standard
  // deviations), so that a long cap costs its band, not its square.
  std::size_t lo = 0, hi = step.size();
  while (lo < hi && step[lo] == 0) ++lo;
  while (hi > lo && step[hi - 1] == 0) --hi;
  std::vector<double> next(most + 1, 0.0);
  for (std::size_t m = 0; m < undecided.size(); ++m) {
    if (undecided[m] == 0) continue;
    for (std::size_t x = lo; x < hi && m + x <= most; ++x) next[m + x] += undecided[m] * step[x];
  }
  return next;
}

// The confidence at which the Clopper-Pearson lower bound of k met runs of n is exactly p: 1 less
// the size of the test "k or more met", P(Binomial(n, p) >= k), moved a millionth of the way to the
// size at k - 1 so that rounding cannot leave the bound at k a hair below p (nor raise k - 1's to it).
double confidence_accepting(std::uint64_t k, std::uint64_t n, double p) {
  if (k > n) return 1;
  const double size = boost::math::ibeta(static_cast<double>(k), static_cast<double>(n - k + 1), p);
  const double size_below = k == 0 ? 1 : boost::math::ibeta(static_cast<double>(k - 1), static_cast<double>(n - k + 2), p);
  return 1 - (size + 1e-6 * (size_below - size));
}

}  // namespace

RunLooks run_looks(double p, double confidence, std::uint64_t first, std::uint64_t cap) {
  RunLooks looks{{first}, {confidence}};
  for (std::uint64_t n = 2 * first; n < cap && looks.at.size() < 3; n *= 2) looks.at.push_back(n);
  if (cap > looks.at.back()) looks.at.push_back(cap);
  if (looks.at.size() == 1) return looks;
  // The first look's fewest met runs it accepts, k1, at confidence c.
  std::uint64_t k1 = first + 1;
  for (std::uint64_t k = first + 1; k-- > 0;) {
    if (clopper_pearson_lower(k, first, confidence) < p) break;
    k1 = k;
  }
  // A setting exactly at P, followed through the looks: the sequences not yet accepted, by their
  // missed runs. No look accepts more missed runs than the mean at the cap ((1 - P) cap; the
  // accepting counts are in the lower 2 (1 - c) tail, below the median), so the sequences with
  // more can never be accepted and are left out.
  const double q = 1 - p, error = 1 - confidence;
  const auto most = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(cap)));
  std::vector<double> undecided = after_more_runs({1.0}, first, q, most);
  double spent = 0, a1 = 0;
  for (std::size_t j = 0; j < looks.at.size(); ++j) {
    if (j > 0) undecided = after_more_runs(undecided, looks.at[j] - looks.at[j - 1], q, most);
    // The missed runs this look accepts, 0..accepts - 1: the first look's, those of k1 met runs or
    // more; a later one's, as many as keep the error so far within a1 + (1 - c - a1) j / (looks - 1).
    std::uint64_t accepts = 0;
    if (j == 0) {
      accepts = first + 1 - std::min(k1, first + 1);
    } else {
      const double allowed = a1 + (error - a1) * static_cast<double>(j) / static_cast<double>(looks.at.size() - 1);
      double sum = spent;
      while (accepts < undecided.size() && sum + undecided[accepts] <= allowed) sum += undecided[accepts++];
      looks.confidence.push_back(confidence_accepting(looks.at[j] + 1 - accepts, looks.at[j], p));
    }
    for (std::uint64_t m = 0; m < accepts && m < undecided.size(); ++m) {
      spent += undecided[m];
      undecided[m] = 0;
    }
    if (j == 0) a1 = spent;
  }
  return looks;
}

RunLook judge_runs(const RunLooks& looks, double p, const std::vector<std::uint64_t>& met_by) {
  RunLook look;
  for (std::size_t j = 0; j < looks.at.size() && looks.at[j] <= met_by.size(); ++j) {
    look.index = j;
    look.runs = looks.at[j];
    look.met = met_by[looks.at[j] - 1];
    look.lower = clopper_pearson_lower(look.met, look.runs, looks.confidence[j]);
    look.upper = clopper_pearson_upper(look.met, look.runs, looks.confidence[j]);
    look.met_target = look.lower >= p;
    look.missed = look.upper < p;
    if (look.met_target || look.missed) break;
  }
  return look;
}

}  // namespace brokersim
