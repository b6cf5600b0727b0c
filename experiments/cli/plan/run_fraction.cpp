#include "experiments/cli/plan/run_fraction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/special_functions/beta.hpp>

namespace brokersim {

double clopper_pearson_lower(std::uint64_t k, std::uint64_t n, double confidence) {
  if (k == 0 || n == 0) return 0;
  if (k == n) return std::pow(1 - confidence, 1 / static_cast<double>(n));  // Beta(n, 1) in closed form
  return boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), 1 - confidence);
}

double clopper_pearson_upper(std::uint64_t k, std::uint64_t n, double confidence) {
  if (n == 0 || k >= n) return 1;
  if (k == 0) return 1 - std::pow(1 - confidence, 1 / static_cast<double>(n));
  return boost::math::ibeta_inv(static_cast<double>(k + 1), static_cast<double>(n - k), confidence);
}

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

}  // namespace brokersim
