// Quantiles over replications (experiments/cli/replication/sectioning.hpp).
#include "experiments/cli/replication/sectioning.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/text.hpp"
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

RunCounts::RunCounts(const sim::Histogram& h)
    : n_(h.count()), min_(static_cast<std::uint64_t>(h.min())), max_(static_cast<std::uint64_t>(h.max())), sum_(h.sum()) {
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < sim::Histogram::kBuckets && seen < n_; ++i) {
    const std::uint64_t k = h.bucket_count(i);
    if (k == 0) continue;
    seen += k;
    cumulative_.push_back(static_cast<std::uint64_t>(i) << kCountBits | seen);
  }
}

std::uint64_t RunCounts::at_most(std::size_t bucket) const {
  // The last non-empty bucket at or below `bucket`: the first entry of a higher bucket, less one.
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), (static_cast<std::uint64_t>(bucket) << kCountBits) | kCountMask);
  return it == cumulative_.begin() ? 0 : (*std::prev(it) & kCountMask);
}

void RunCounts::merge_into(sim::Histogram& h) const {
  if (n_ == 0) return;
  for_each_bucket([&](std::size_t i, std::uint64_t k) { h.add_bucket(i, k); });
  h.add_extent(min_, max_, sum_);
}

double RunCounts::squared_deviations(double mean) const {
  double ss = 0;
  for_each_bucket([&](std::size_t i, std::uint64_t k) {
    const double d = (static_cast<double>(sim::Histogram::lower(i)) + static_cast<double>(sim::Histogram::upper(i))) / 2 - mean;
    ss += static_cast<double>(k) * d * d;
  });
  return ss;
}

void PooledWaits::add(std::uint64_t replication, std::span<const sim::Histogram> waits) {
  std::vector<RunCounts> own;
  own.reserve(waits.size());
  for (const sim::Histogram& h : waits) own.emplace_back(h);
  runs[replication] = std::move(own);
}

sim::Histogram PooledWaits::merged(std::size_t w) const {
  sim::Histogram h;
  for (const auto& [replication, own] : runs)
    if (w < own.size()) own[w].merge_into(h);
  return h;
}

QuantileInterval cdf_batching_interval(const sim::Histogram& pooled, const std::vector<const RunCounts*>& runs, double q,
                                       double confidence, double to_ns) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (pooled.count() == 0) return {nan, nan};
  const double xi = pooled.quantile(q) / to_ns;
  const std::size_t bucket = pooled.quantile_bucket(q);
  std::vector<double> f;
  for (const RunCounts* r : runs)
    if (r->count() > 0) f.push_back(static_cast<double>(r->at_most(bucket)) / static_cast<double>(r->count()));
  if (f.size() < 2) return {xi, nan};
  // The mean F's interval [F - a, F + b]: Student t's, stretched on either side to Johnson's.
  const MeanInterval t = student_t_interval(f, confidence);
  double a = t.half_width, b = t.half_width;
  const SkewInterval j = johnson_interval(f, confidence);
  if (std::isfinite(j.lo) && std::isfinite(j.hi)) {
    a = std::max(a, j.mean - j.lo);
    b = std::max(b, j.hi - j.mean);
  }
  // F(x) within [F^(x) - a, F^(x) + b] holds q for x in [Q(q - b), Q(q + a)].
  const double lo = pooled.quantile(std::max(1e-12, q - b)) / to_ns, hi = pooled.quantile(std::min(1.0, q + a)) / to_ns;
  return {xi, std::max(hi - xi, xi - lo) + sim::Histogram::half_bucket(xi * to_ns) / to_ns};
}

QuantileFigures quantile_figures(const std::vector<const sim::Histogram*>& runs, double q, double confidence) {
  QuantileFigures f;
  sim::Histogram pooled;
  std::vector<double> xi;
  std::vector<RunCounts> own;
  own.reserve(runs.size());
  for (const sim::Histogram* h : runs) {
    pooled.merge(*h);
    xi.push_back(h->quantile(q) / sim::kNsPerMsF);
    own.emplace_back(*h);
  }
  std::vector<const RunCounts*> counts;
  for (const RunCounts& r : own) counts.push_back(&r);
  const MeanInterval naive = student_t_interval(xi, confidence);
  f.naive = {naive.mean, naive.half_width};
  f.per_run = {naive.mean, naive.half_width + quantization_half_width(xi)};
  f.sectioning = sectioning_interval(pooled.quantile(q) / sim::kNsPerMsF, xi, confidence, sim::kNsPerMsF);
  f.pooled = cdf_batching_interval(pooled, counts, q, confidence, sim::kNsPerMsF);
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

namespace {

std::vector<const RunCounts*> runs_of(const PooledWaits& waits, std::size_t w) {
  std::vector<const RunCounts*> out;
  for (const auto& [replication, own] : waits.runs)
    if (w < own.size()) out.push_back(&own[w]);
  return out;
}

}  // namespace

std::vector<QuantileInterval> pooled_quantiles(const std::vector<PooledQuantileColumn>& columns, const PooledWaits& waits) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<QuantileInterval> out;
  std::size_t wait = kWaitCount;  // the wait `pooled` holds: pooled_quantile_columns groups by wait
  sim::Histogram pooled;
  for (const auto& c : columns) {
    if (c.wait != wait) {
      pooled = waits.merged(c.wait);
      wait = c.wait;
    }
    out.push_back(pooled.count() == 0 ? QuantileInterval{nan, nan}
                                      : cdf_batching_interval(pooled, runs_of(waits, c.wait), c.q, 0.95, sim::kNsPerMsF));
  }
  return out;
}

double correlation_times(const PooledWaits& waits, std::size_t w) {
  sim::Welford means;
  double within = 0;
  for (const RunCounts* r : runs_of(waits, w)) {
    if (r->count() < 2) continue;
    const double n = static_cast<double>(r->count()), mean = r->sum() / n;
    within += r->squared_deviations(mean) / (n - 1);
    means.add(mean);
  }
  if (means.count() < 2) return std::numeric_limits<double>::quiet_NaN();
  within /= static_cast<double>(means.count());
  return means.variance() > 0 ? within / means.variance() : std::numeric_limits<double>::infinity();
}

std::string runs_are_days(const Scenario& s) {
  std::string days;
  for (std::size_t p = 0; p < s.producers.size(); ++p) {
    const ProducerSpec& spec = s.producers[p];
    const char* key = spec.arrivals.days() > 0                                      ? "days_csv"
                      : spec.volume_per_run && !spec.volume_per_run->is_constant() ? "volume.per_run"
                                                                                   : nullptr;
    if (key) days += (days.empty() ? "" : ", ") + std::string("producers.") + std::to_string(p) + " " + key;
  }
  return days;
}

std::string short_tails_warning(const std::vector<std::pair<std::string, double>>& tails, const std::string& days) {
  std::string names;
  for (const auto& [name, k] : tails) names += (names.empty() ? "" : ", ") + name + " " + fmt(k, 2);
  const std::string few = "steady-state p99 from runs that hold few correlation times of the wait (" + names + "; fewer than " +
                          fmt(kTailCorrelationTimes) + "): ";
  if (days.empty())
    return few + (tails.size() > 1 ? "their intervals" : "its interval") + " may be too narrow; make the runs longer (docs/outcomes.md)\n";
  // Days differ by more than chance (their volume, their shape), which is what the figure measures
  // against the wait's spread within a run; a run is its day and cannot be longer.
  const bool several = tails.size() > 1;
  return few + "the runs are days (" + days + "), which differ by more than chance and cannot be made longer, so " +
         (several ? "these are no steady state's p99s but the p99s" : "this is no steady state's p99 but the p99") +
         " of the days' jobs together, " + (several ? "their intervals" : "its interval") +
         " from the spread of the days drawn (more runs narrow it); for what a day must meet, plan a target 'in P% of "
         "runs' (docs/fit.md)\n";
}

PooledSpread pooled_spread(const PooledQuantileColumn& c, const PooledWaits& waits, double confidence) {
  PooledSpread s{std::numeric_limits<double>::quiet_NaN(), 0, 0};
  const sim::Histogram pooled = waits.merged(c.wait);
  if (pooled.count() == 0) return s;
  const std::vector<const RunCounts*> runs = runs_of(waits, c.wait);
  for (const RunCounts* r : runs) s.runs += r->count() > 0;
  const QuantileInterval i = cdf_batching_interval(pooled, runs, c.q, confidence, sim::kNsPerMsF);
  s.estimate = i.estimate;
  if (s.runs < 2 || !std::isfinite(i.half_width)) return s;
  // The half-width printed now, less its bucket, read back as a Student-t spread: it holds the
  // farther side of the inversion and Johnson's stretch, which a symmetric slope would not.
  const double half = i.half_width - sim::Histogram::half_bucket(i.estimate * sim::kNsPerMsF) / sim::kNsPerMsF;
  s.sd = std::max(0.0, half) * std::sqrt(static_cast<double>(s.runs)) / student_t_quantile(s.runs - 1, confidence);
  return s;
}

}  // namespace brokersim
