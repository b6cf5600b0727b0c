#include "experiments/cli/plan/run_fraction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

RunLooks run_looks(double p, double confidence, std::uint64_t first, std::uint64_t cap) {
  RunLooks looks{{first}, {confidence}};
  for (std::uint64_t n = 2 * first; n < cap && looks.at.size() < 3; n *= 2) looks.at.push_back(n);
  if (cap > looks.at.back()) looks.at.push_back(cap);
  if (looks.at.size() == 1) return looks;
  // The first look's size: the chance that a setting exactly at P meets it in k1 of n1 runs or more.
  std::uint64_t k1 = first + 1;
  for (std::uint64_t k = first + 1; k-- > 0;) {
    if (clopper_pearson_lower(k, first, confidence) < p) break;
    k1 = k;
  }
  const double a1 = k1 > first ? 0.0 : boost::math::ibeta(static_cast<double>(k1), static_cast<double>(first - k1 + 1), p);
  const double rest = std::max(0.0, (1 - confidence - a1) / static_cast<double>(looks.at.size() - 1));
  for (std::size_t j = 1; j < looks.at.size(); ++j) looks.confidence.push_back(1 - rest);
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
