#include "experiments/plan/run_fraction.hpp"

#include <algorithm>
#include <cmath>

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
  // (1 - c)^(1/n) >= p  <=>  n >= ln(1 - c) / ln(p); the loop settles the rounding at the edge.
  auto n = static_cast<std::uint64_t>(std::max(1.0, std::floor(std::log(1 - confidence) / std::log(p))));
  while (clopper_pearson_lower(n, n, confidence) < p) ++n;
  while (n > 1 && clopper_pearson_lower(n - 1, n - 1, confidence) >= p) --n;
  return n;
}

}  // namespace brokersim
