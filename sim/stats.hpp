// Streaming statistics in fixed memory.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "sim/time.hpp"

namespace sim {

// Mean and variance by Welford's update: numerically stable in one pass.
class Welford {
 public:
  void add(double x) {
    ++n_;
    const double d = x - mean_;
    mean_ += d / static_cast<double>(n_);
    m2_ += d * (x - mean_);
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  std::uint64_t count() const { return n_; }
  double mean() const { return n_ ? mean_ : 0.0; }
  double variance() const { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double stddev() const { return std::sqrt(variance()); }
  double min() const { return n_ ? min_ : 0.0; }
  double max() const { return n_ ? max_ : 0.0; }

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

// Quantiles of non-negative integers (nanoseconds) in fixed memory, HdrHistogram-style:
// values below 2^kSubBits are exact; above, each power of two is split into 2^kSubBits buckets,
// so a bucket is at most 1/64 of its lower bound wide and its midpoint is within 0.8% of any
// value in it. Bucket index is a couple of bit operations: no log() on the hot path. Counts are
// 32-bit, with what passes 2^32 carried into a map (a run has fewer than 2^32 jobs in a bucket):
// half the footprint, for a job adds to five of these, and in a large fleet the first-level
// cache keeps fewer of their lines than of the buckets its hot values fall in (docs/performance.md,
// docs/performance.md).
class Histogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr std::uint64_t kSub = std::uint64_t{1} << kSubBits;
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSub;

  void add(std::int64_t v) {
    const std::uint64_t u = v < 0 ? 0 : static_cast<std::uint64_t>(v);
    const std::size_t i = index(u);
    if (++counts_[i] == 0) [[unlikely]] ++carries_[i];
    ++n_;
    sum_ += static_cast<double>(u);
    max_ = std::max(max_, u);
    min_ = std::min(min_, u);
  }

  std::uint64_t count() const { return n_; }
  double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0.0; }
  std::int64_t max() const { return n_ ? static_cast<std::int64_t>(max_) : 0; }
  std::int64_t min() const { return n_ ? static_cast<std::int64_t>(min_) : 0; }

  // The histogram of both samples together: what the jobs of several replications pooled give
  // (a steady-state quantile's point estimate). Counts add exactly, so the order of merging does
  // not change a bucket; the sum is a double and may differ in its last bits.
  void merge(const Histogram& o) {
    for (std::size_t i = 0; i < kBuckets; ++i) add_count(i, o.counts_[i]);
    for (const auto& [i, c] : o.carries_) carries_[i] += c;
    n_ += o.n_;
    sum_ += o.sum_;
    max_ = std::max(max_, o.max_);
    min_ = std::min(min_, o.min_);
  }

  // Nearest-rank quantile: the smallest recorded value x with at least q*n values <= x,
  // reported as its bucket's midpoint (clamped to the observed range).
  double quantile(double q) const {
    if (n_ == 0) return 0.0;
    const std::size_t i = quantile_bucket(q);
    if (i == kBuckets) return static_cast<double>(max_);
    const double mid = (static_cast<double>(lower(i)) + static_cast<double>(upper(i))) / 2.0;
    return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
  }
  // The bucket quantile(q) reports (kBuckets when the histogram is empty): the values at most
  // the quantile are those in buckets up to it, which is what a CDF at the quantile counts.
  std::size_t quantile_bucket(double q) const {
    // The small slack keeps q = k/n at rank k despite rounding in q * n.
    const double target = std::max(1.0, std::ceil(q * static_cast<double>(n_) - 1e-9));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
      seen += bucket_count(i);
      if (static_cast<double>(seen) >= target) return i;
    }
    return kBuckets;
  }
  std::uint64_t bucket_count(std::size_t i) const {
    if (carries_.empty()) [[likely]] return counts_[i];
    const auto c = carries_.find(i);
    return counts_[i] + (c == carries_.end() ? 0 : c->second << 32);
  }
  double sum() const { return sum_; }

  // Merging a histogram kept elsewhere as its non-empty buckets: `count` more values in bucket i,
  // and the kept one's range and sum (count() > 0 there), so that quantiles and mean are merge's.
  void add_bucket(std::size_t i, std::uint64_t count) {
    add_count(i, count);
    n_ += count;
  }
  void add_extent(std::uint64_t lo, std::uint64_t hi, double sum) {
    min_ = std::min(min_, lo);
    max_ = std::max(max_, hi);
    sum_ += sum;
  }

  // Half the width of the bucket a value (ns) falls in: how far its reported midpoint may be
  // from any value in the bucket (0 below 2^kSubBits, where buckets are exact).
  static double half_bucket(double v) {
    if (!(v >= 0) || !std::isfinite(v)) return 0.0;
    const std::size_t i = index(static_cast<std::uint64_t>(std::llround(std::min(v, 9.2e18))));
    return static_cast<double>(upper(i) - lower(i)) / 2.0;
  }

  static std::size_t index(std::uint64_t u) {
    if (u < kSub) return static_cast<std::size_t>(u);
    const int e = 63 - std::countl_zero(u);  // e >= kSubBits
    const int shift = e - kSubBits;
    return static_cast<std::size_t>((shift + 1) * kSub + ((u >> shift) - kSub));
  }
  // Inclusive bounds of the values that land in bucket i.
  static std::uint64_t lower(std::size_t i) {
    if (i < kSub) return i;
    const std::size_t shift = i / kSub - 1;
    return (kSub + i % kSub) << shift;
  }
  static std::uint64_t upper(std::size_t i) {
    if (i < kSub) return i;
    const std::size_t shift = i / kSub - 1;
    return ((kSub + i % kSub + 1) << shift) - 1;
  }

 private:
  void add_count(std::size_t i, std::uint64_t count) {
    const std::uint64_t total = counts_[i] + count;
    counts_[i] = static_cast<std::uint32_t>(total);
    if (total >> 32) [[unlikely]] carries_[i] += total >> 32;
  }

  std::array<std::uint32_t, kBuckets> counts_{};
  std::map<std::size_t, std::uint64_t> carries_;  // by bucket: multiples of 2^32 beyond counts_
  std::uint64_t n_ = 0;
  double sum_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
};

// The integral over time of an integer count that its owner already keeps, in 8 bytes: a consumer
// in a large fleet keeps two on the one cache line each receipt and each execution's end touch.
// A change of the count by d at time t adds -d * t, so that the area up to now is that sum plus
// count * now (a count of 1 from t1 to t2 adds t2 - t1). The sum is kept modulo 2^64 and so is
// exact whenever the area itself is below 2^63 slot-nanoseconds (about 292 years of one slot):
// TimeIntegral's double sum, the same area, is exact only below 2^53, and agrees bit for bit
// there (tests/test_kernel_stats.cpp).
class CountIntegral {
 public:
  // The count changes by `delta` at `now`.
  void change(Time now, std::int64_t delta) { acc_ -= static_cast<std::uint64_t>(delta) * static_cast<std::uint64_t>(now); }
  // Restart the integral at `now`, the count being `count` (end of warm-up).
  void reset(Time now, std::int64_t count) { acc_ = 0 - static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(now); }
  std::int64_t area(Time now, std::int64_t count) const {
    return static_cast<std::int64_t>(acc_ + static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(now));
  }
  // The count's mean since `start` (the last reset), the count now if no time has passed.
  double mean(Time now, Time start, std::int64_t count) const {
    const Time span = now - start;
    return span > 0 ? static_cast<double>(area(now, count)) / static_cast<double>(span) : static_cast<double>(count);
  }

 private:
  std::uint64_t acc_ = 0;
};

// The integral over time of a piecewise-constant level that its owner already keeps (a count it
// holds anyway): the owner gives the level as it was when the level changes, so the level is not
// kept twice. 16 bytes (TimeWeighted keeps one).
class TimeIntegral {
 public:
  explicit TimeIntegral(Time start = 0) : last_(start) {}
  // The level was `level` since the last call: call before changing it.
  void advance(Time now, double level) {
    area_ += level * static_cast<double>(now - last_);
    last_ = now;
  }
  // Restart the integral (end of warm-up).
  void reset(Time now) {
    area_ = 0;
    last_ = now;
  }
  double area(Time now, double level) const { return area_ + level * static_cast<double>(now - last_); }
  // The level's mean since `start` (the last reset), the level now if no time has passed.
  double mean(Time now, Time start, double level) const {
    const Time span = now - start;
    return span > 0 ? area(now, level) / static_cast<double>(span) : level;
  }

 private:
  Time last_;
  double area_ = 0;
};

// Time-weighted average of a piecewise-constant quantity (a queue length, a busy-slot count),
// keeping the level itself.
class TimeWeighted {
 public:
  explicit TimeWeighted(Time start = 0) : integral_(start), start_(start) {}
  void set(Time now, double value) {
    integral_.advance(now, value_);
    value_ = value;
  }
  void add(Time now, double delta) { set(now, value_ + delta); }
  // Restart the integral (end of warm-up) without changing the current value.
  void reset(Time now) {
    integral_.reset(now);
    start_ = now;
  }
  double value() const { return value_; }
  double area(Time now) const { return integral_.area(now, value_); }
  double mean(Time now) const { return integral_.mean(now, start_, value_); }

 private:
  TimeIntegral integral_;
  Time start_;
  double value_ = 0;
};

}  // namespace sim
