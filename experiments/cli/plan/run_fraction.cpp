#include "experiments/cli/plan/run_fraction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

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

}  // namespace brokersim
