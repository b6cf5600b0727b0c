#include "experiments/cli/replication/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <boost/math/distributions/students_t.hpp>

#include "experiments/cli/replication/count_bound.hpp"
#include "experiments/cli/replication/sectioning.hpp"

namespace brokersim {

double student_t_quantile(std::size_t dof, double confidence) {
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(dist, 1 - (1 - confidence) / 2);
}

MeanInterval student_t_interval_with(const std::vector<double>& x, double t) {
  const std::size_t n = x.size();
  MeanInterval r;
  double sum = 0;
  for (double v : x) sum += v;
  r.mean = n ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
  if (n < 2) {
    r.half_width = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  double ss = 0;
  for (double v : x) ss += (v - r.mean) * (v - r.mean);
  r.half_width = t * std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n));
  return r;
}

MeanInterval student_t_interval(const std::vector<double>& x, double confidence) {
  return student_t_interval_with(x, x.size() > 1 ? student_t_quantile(x.size() - 1, confidence) : 0.0);
}

SkewInterval johnson_interval(const std::vector<double>& x, double confidence) {
  return johnson_interval_with(x, x.size() > 1 ? student_t_quantile(x.size() - 1, confidence) : 0.0);
}

SkewInterval johnson_interval_with(const std::vector<double>& x, double t_quantile) {
  const std::size_t n = x.size();
  SkewInterval r;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (n < 3) {
    r.mean = n ? std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(n) : nan;
    r.lo = r.hi = nan;
    return r;
  }
  const double dn = static_cast<double>(n);
  const MeanInterval t = student_t_interval_with(x, t_quantile);
  r.mean = t.mean;
  double m2 = 0, m3 = 0;
  for (double v : x) {
    const double d = v - r.mean;
    m2 += d * d;
    m3 += d * d * d;
  }
  const double s2 = m2 / (dn - 1), k3 = dn * m3 / ((dn - 1) * (dn - 2));
  r.lo = r.mean - t.half_width;
  r.hi = r.mean + t.half_width;
  if (!(s2 > 0)) return r;
  const double a = k3 / (3 * s2 * s2), b = k3 / (6 * s2 * dn);
  // The root of a u^2 + u + b = c on the branch through u = c - b (a -> 0), in the form that
  // stays exact as a -> 0; the vertex -1 / (2a) where that branch does not reach c.
  const auto root = [&](double c) {
    const double disc = 1 - 4 * a * (b - c);
    if (disc < 0) return -1 / (2 * a);
    return 2 * (c - b) / (1 + std::sqrt(disc));
  };
  r.lo = r.mean - root(t.half_width);
  r.hi = r.mean - root(-t.half_width);
  return r;
}

bool significantly_skewed(const std::vector<double>& x) {
  const std::size_t n = x.size();
  if (n < 3) return false;
  const double dn = static_cast<double>(n);
  const double mean = std::accumulate(x.begin(), x.end(), 0.0) / dn;
  double m2 = 0, m3 = 0;
  for (double v : x) {
    const double d = v - mean;
    m2 += d * d;
    m3 += d * d * d;
  }
  if (!(m2 > 0)) return false;
  const double g1 = (m3 / dn) / std::pow(m2 / dn, 1.5);
  const double G1 = std::sqrt(dn * (dn - 1)) / (dn - 2) * g1;
  const double se = std::sqrt(6 * dn * (dn - 1) / ((dn - 2) * (dn + 1) * (dn + 3)));
  return std::fabs(G1) > 1.96 * se;
}

double skew_aware_half_width(const std::vector<double>& x, double confidence) {
  const MeanInterval t = student_t_interval(x, confidence);
  if (x.size() < 3 || std::isnan(t.half_width) || !significantly_skewed(x)) return t.half_width;
  const SkewInterval j = johnson_interval(x, confidence);
  return std::max({t.half_width, j.hi - j.mean, j.mean - j.lo});
}

Summary summarize(const std::vector<const std::vector<double>*>& reps) {
  Summary s;
  if (reps.empty()) return s;
  const std::size_t m = reps.front()->size();
  const std::size_t n = reps.size();
  const double t = n > 1 ? student_t_quantile(n - 1, 0.95) : 0.0;
  s.mean.resize(m);
  s.ci95.resize(m);
  std::vector<double> column(n);
  for (std::size_t j = 0; j < m; ++j) {
    const double first = (*reps[0])[j];
    bool same = true;
    for (std::size_t r = 0; r < n; ++r) {
      column[r] = (*reps[r])[j];
      same = same && column[r] == first;
    }
    if (same) {
      s.mean[j] = first;
      s.ci95[j] = n > 1 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    } else {
      const MeanInterval i = student_t_interval_with(column, t);
      s.mean[j] = i.mean;
      s.ci95[j] = i.half_width;
    }
  }
  return s;
}

std::vector<RatioColumn> ratio_columns(const std::vector<std::string>& names) {
  std::vector<RatioColumn> out;
  const auto index = [&](const std::string& n) -> std::ptrdiff_t {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == n) return static_cast<std::ptrdiff_t>(i);
    return -1;
  };
  const std::ptrdiff_t generated = index("outcomes.generated");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i];
    if ((n.rfind("fraction.", 0) == 0 || n.rfind("expired_before_start_by_cause.fraction_", 0) == 0) && generated >= 0) {
      out.push_back({i, static_cast<std::size_t>(generated), true});
    } else if (n.rfind("wait_ms.", 0) == 0 && n.size() > 5 && n.compare(n.size() - 5, 5, ".mean") == 0) {
      const std::ptrdiff_t count = index(n.substr(0, n.size() - 5) + ".count");
      if (count >= 0) out.push_back({i, static_cast<std::size_t>(count)});
    } else if (n.find("wait_ms.") != std::string::npos && n.size() > 4 &&
               (n.compare(n.size() - 4, 4, ".p50") == 0 || n.compare(n.size() - 4, 4, ".p95") == 0 ||
                n.compare(n.size() - 4, 4, ".p99") == 0)) {
      out.push_back({i, i, false, true});
    }
  }
  return out;
}

std::vector<std::vector<double>> pool_ratios(const std::vector<const std::vector<double>*>& reps,
                                             const std::vector<RatioColumn>& ratios) {
  std::vector<std::vector<double>> rows;
  rows.reserve(reps.size());
  for (const auto* r : reps) rows.push_back(*r);
  if (reps.size() < 2) return rows;
  for (const RatioColumn& c : ratios) {
    if (c.quantile) continue;  // a quantile is no ratio: its mean is the mean of the runs' own
    double sum_xw = 0, sum_w = 0;
    bool all_equal = true;
    for (const auto* r : reps) {
      const double w = (*r)[c.weight], x = (*r)[c.column];
      all_equal = all_equal && x == (*reps[0])[c.column];
      if (w > 0 && std::isfinite(x)) {
        sum_xw += x * w;
        sum_w += w;
      }
    }
    // No samples anywhere (NaN, or a metric this point lacks), or the same value in every
    // replication (its pooled ratio is that value, exactly): as it is.
    if (!(sum_w > 0) || all_equal) continue;
    const double ratio = sum_xw / sum_w, mean_w = sum_w / static_cast<double>(reps.size());
    for (std::size_t k = 0; k < reps.size(); ++k) {
      const double w = (*reps[k])[c.weight], x = (*reps[k])[c.column];
      rows[k][c.column] = ratio + (w > 0 && std::isfinite(x) ? w * (x - ratio) / mean_w : -ratio * 0.0);
    }
  }
  return rows;
}

void apply_skew(Summary& s, const std::vector<const std::vector<double>*>& pooled, const std::vector<RatioColumn>& ratios) {
  if (pooled.size() < 3) return;
  const double t = student_t_quantile(pooled.size() - 1, 0.95);
  std::vector<double> x(pooled.size());
  for (std::size_t j = 0; j < s.ci95.size(); ++j) {
    if (std::isnan(s.ci95[j]) || s.ci95[j] == 0) continue;
    if (std::any_of(ratios.begin(), ratios.end(), [&](const RatioColumn& c) { return c.quantile && c.column == j; })) continue;
    for (std::size_t r = 0; r < pooled.size(); ++r) x[r] = (*pooled[r])[j];
    if (!significantly_skewed(x)) continue;
    const SkewInterval k = johnson_interval_with(x, t);
    if (std::isfinite(k.lo) && std::isfinite(k.hi)) s.ci95[j] = std::max({s.ci95[j], k.hi - k.mean, k.mean - k.lo});
  }
}

Summary summarize(const std::vector<const std::vector<double>*>& reps, const std::vector<RatioColumn>& ratios,
                  bool count_bounds) {
  if (ratios.empty()) {
    Summary s = summarize(reps);
    if (count_bounds) apply_skew(s, reps, ratios);
    return s;
  }
  const auto rows = pool_ratios(reps, ratios);
  std::vector<const std::vector<double>*> pooled;
  for (const auto& r : rows) pooled.push_back(&r);
  Summary s = summarize(pooled);
  if (count_bounds) {
    apply_skew(s, pooled, ratios);
    apply_count_bounds(s, reps, ratios);
    apply_quantization(s, reps, ratios);
  }
  return s;
}

void apply_quantization(Summary& s, const std::vector<const std::vector<double>*>& reps,
                        const std::vector<RatioColumn>& ratios) {
  if (reps.size() < 2 || replications_identical(reps)) return;
  std::vector<double> x(reps.size());
  for (const RatioColumn& c : ratios) {
    if (!c.quantile || std::isnan(s.ci95[c.column])) continue;
    for (std::size_t r = 0; r < reps.size(); ++r) x[r] = (*reps[r])[c.column];
    s.ci95[c.column] += quantization_half_width(x);
  }
}

double empirical_quantile(std::vector<double> x, double q) {
  x.erase(std::remove_if(x.begin(), x.end(), [](double v) { return std::isnan(v); }), x.end());
  if (x.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(x.begin(), x.end());
  const double h = static_cast<double>(x.size() - 1) * q;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= x.size()) return x.back();
  return x[lo] + (h - static_cast<double>(lo)) * (x[lo + 1] - x[lo]);
}

}  // namespace brokersim
