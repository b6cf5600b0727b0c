// Quantiles over replications (experiments/cli/replication/sectioning.hpp).
#include "experiments/cli/replication/sectioning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "experiments/cli/replication/statistics.hpp"
#include "models/metrics.hpp"
#include "sim/time.hpp"

namespace brokersim {

double quantization_half_width(const std::vector<double>& quantiles_ms) {
  double sum = 0;
  std::size_t n = 0;
  for (double x : quantiles_ms) {
    if (!std::isfinite(x)) continue;
    sum += sim::Histogram::half_bucket(x * sim::kNsPerMsF);
    ++n;
  }
  return n ? sum / static_cast<double>(n) / sim::kNsPerMsF : 0.0;
}

QuantileInterval sectioning_interval(double pooled, const std::vector<double>& sections, double confidence,
                                     double to_ns) {
  QuantileInterval r{pooled, std::numeric_limits<double>::quiet_NaN()};
  const std::size_t n = sections.size();
  if (n < 2) return r;
  double ss = 0;
  for (double x : sections) ss += (x - pooled) * (x - pooled);
  r.half_width = student_t_quantile(n - 1, confidence) * std::sqrt(ss / static_cast<double>(n - 1) / static_cast<double>(n)) +
                 sim::Histogram::half_bucket(pooled * to_ns) / to_ns;
  return r;
}

QuantileFigures quantile_figures(const std::vector<const sim::Histogram*>& runs, double q, double confidence) {
  QuantileFigures f;
  sim::Histogram pooled;
  std::vector<double> xi;
  for (const sim::Histogram* h : runs) {
    pooled.merge(*h);
    xi.push_back(h->quantile(q) / sim::kNsPerMsF);
  }
  const MeanInterval naive = student_t_interval(xi, confidence);
  f.naive = {naive.mean, naive.half_width};
  f.per_run = {naive.mean, naive.half_width + quantization_half_width(xi)};
  f.pooled = sectioning_interval(pooled.quantile(q) / sim::kNsPerMsF, xi, confidence, sim::kNsPerMsF);
  return f;
}

std::vector<PooledQuantileColumn> pooled_quantile_columns(const std::vector<std::string>& names) {
  std::vector<PooledQuantileColumn> out;
  for (std::size_t w = 0; w < kWaitCount; ++w)
    for (const auto& [q, tag] : {std::pair{0.50, "p50"}, std::pair{0.95, "p95"}, std::pair{0.99, "p99"}}) {
      const std::string name = "wait_ms." + std::string(kWaits[w].name) + "." + tag;
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) continue;
      out.push_back({name + "_pooled", w, q, static_cast<std::size_t>(it - names.begin())});
    }
  return out;
}

QuantileInterval pooled_quantile(const PooledQuantileColumn& c, const sim::Histogram& pooled,
                                 const std::vector<const std::vector<double>*>& rows) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (pooled.count() == 0) return {nan, nan};
  std::vector<double> sections;
  for (const auto* r : rows)
    if (c.column < r->size() && std::isfinite((*r)[c.column])) sections.push_back((*r)[c.column]);
  return sectioning_interval(pooled.quantile(c.q) / sim::kNsPerMsF, sections, 0.95, sim::kNsPerMsF);
}

}  // namespace brokersim
