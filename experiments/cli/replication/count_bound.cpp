// Count-based bounds for rare fractions (experiments/cli/replication/count_bound.hpp).
#include "experiments/cli/replication/count_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/math/special_functions/beta.hpp>

namespace brokersim {

namespace {

// Real k and n: Beta quantiles take real parameters, so a projected count needs no rounding.
double lower_of(double k, double n, double confidence) {
  if (k <= 0 || n <= 0) return 0;
  if (k >= n) return std::pow(1 - confidence, 1 / n);  // Beta(n, 1) in closed form
  return boost::math::ibeta_inv(k, n - k + 1, 1 - confidence);
}

double upper_of(double k, double n, double confidence) {
  if (n <= 0 || k >= n) return 1;
  if (k <= 0) return 1 - std::pow(1 - confidence, 1 / n);
  return boost::math::ibeta_inv(k + 1, n - k, confidence);
}

}  // namespace

double clopper_pearson_lower(std::uint64_t k, std::uint64_t n, double confidence) {
  return lower_of(static_cast<double>(k), static_cast<double>(n), confidence);
}

double clopper_pearson_upper(std::uint64_t k, std::uint64_t n, double confidence) {
  return upper_of(static_cast<double>(k), static_cast<double>(n), confidence);
}

double count_half_width(double events, double jobs, double confidence) {
  if (!(jobs > 0)) return std::numeric_limits<double>::quiet_NaN();
  const double k = std::clamp(events, 0.0, jobs), p = k / jobs, side = 1 - (1 - confidence) / 2;
  return std::max(p - lower_of(k, jobs, side), upper_of(k, jobs, side) - p);
}

PooledCount pooled_count(const std::vector<const std::vector<double>*>& reps, const RatioColumn& c) {
  PooledCount pc;
  for (const auto* r : reps) {
    const double w = (*r)[c.weight], x = (*r)[c.column];
    if (!(w > 0) || !std::isfinite(x)) continue;
    pc.events += std::round(x * w);  // a fraction of jobs is events / jobs: x * w is a whole count
    pc.jobs += w;
  }
  return pc;
}

bool replications_identical(const std::vector<const std::vector<double>*>& reps) {
  for (const auto* r : reps)
    for (std::size_t j = 0; j < r->size(); ++j) {
      const double a = (*r)[j], b = (*reps[0])[j];
      if (!(a == b || (std::isnan(a) && std::isnan(b)))) return false;
    }
  return true;
}

void apply_count_bounds(Summary& s, const std::vector<const std::vector<double>*>& reps, const std::vector<RatioColumn>& ratios) {
  if (reps.size() < 2 || replications_identical(reps)) return;
  for (const RatioColumn& c : ratios) {
    if (!c.counted) continue;
    const PooledCount pc = pooled_count(reps, c);
    const double h = count_half_width(pc.events, pc.jobs, 0.95);
    if (std::isfinite(h) && !(s.ci95[c.column] >= h)) s.ci95[c.column] = h;
  }
}

std::uint64_t count_replications(double events, double jobs, std::uint64_t n0, double h, double confidence,
                                 std::uint64_t max_replications) {
  if (n0 == 0 || !(jobs > 0)) return n0;
  const auto bound_at = [&](std::uint64_t n) {
    const double scale = static_cast<double>(n) / static_cast<double>(n0);
    return count_half_width(events * scale, jobs * scale, confidence);
  };
  if (bound_at(n0) <= h) return n0;
  if (max_replications <= n0 || !(bound_at(max_replications) <= h)) return std::max(n0, max_replications) + 1;
  // The bound shrinks as the projected count grows (about as 1 / sqrt(n)): the least n reaching h.
  std::uint64_t lo = n0, hi = max_replications;  // bound_at(lo) > h >= bound_at(hi)
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (bound_at(mid) <= h ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace brokersim
