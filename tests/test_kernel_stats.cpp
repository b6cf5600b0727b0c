// Tests of the kernel's streaming statistics (sim/stats.hpp): the histogram's buckets and
// quantiles, Welford's moments, time-weighted averages. Fixed seeds: deterministic.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/rng.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"
#include "tests/moments_test_util.hpp"

namespace test_kernel_stats {

using brokersim::test::Moments;
using brokersim::test::sample_moments;

}  // namespace test_kernel_stats

TEST_SUITE("stats") {
  TEST_CASE("histogram: index / lower / upper are consistent on every bucket edge") {
    using H = sim::Histogram;
    CHECK(H::lower(0) == 0);
    CHECK(H::upper(H::kBuckets - 1) == ~std::uint64_t{0});  // the buckets cover all of uint64
    for (std::size_t i = 0; i < H::kBuckets; ++i) {
      const std::uint64_t lo = H::lower(i), up = H::upper(i);
      REQUIRE(lo <= up);
      REQUIRE(H::index(lo) == i);
      REQUIRE(H::index(up) == i);
      if (lo > 0) REQUIRE(H::index(lo - 1) == i - 1);
      if (i + 1 < H::kBuckets) {
        REQUIRE(H::lower(i + 1) == up + 1);  // contiguous: together with the above, v is in
        REQUIRE(H::index(up + 1) == i + 1);  // [lower(i), upper(i)] iff index(v) == i
      }
      // Values below 64 are exact; above, a bucket is at most 1/64 of its lower bound wide,
      // so its midpoint is within 1/128 of every value in it.
      if (i < H::kSub) {
        REQUIRE(lo == up);
      } else {
        REQUIRE(static_cast<double>(up - lo + 1) <= static_cast<double>(lo) / 64.0);
      }
    }
    // Random values across the whole range up to 2^62 (and beyond): v lies in its bucket.
    sim::Rng r(8, 0, "hist-index");
    for (int k = 0; k < 100'000; ++k) {
      const int bits = static_cast<int>(r.below(64));
      const std::uint64_t v = r.next() >> (63 - bits);
      const std::size_t i = H::index(v);
      REQUIRE(i < H::kBuckets);
      REQUIRE(H::lower(i) <= v);
      REQUIRE(v <= H::upper(i));
    }
    for (int e = 0; e <= 62; ++e) {
      const std::uint64_t p = std::uint64_t{1} << e;
      CHECK(H::lower(H::index(p)) == p);  // a power of two opens a bucket
    }
  }

  TEST_CASE("histogram: exact below 64") {
    sim::Histogram h;
    std::vector<std::int64_t> all;
    for (std::int64_t v = 0; v < 64; ++v)
      for (std::int64_t k = 0; k <= v % 5; ++k) {
        h.add(v);
        all.push_back(v);
      }
    const double n = static_cast<double>(all.size());
    for (std::size_t rank = 1; rank <= all.size(); ++rank) {
      // Mid-rank q, so that q * n rounds the same way whatever the floating-point error.
      const double q = (static_cast<double>(rank) - 0.5) / n;
      REQUIRE(h.quantile(q) == static_cast<double>(all[rank - 1]));
    }
    CHECK(h.quantile(0.0) == 0.0);
    CHECK(h.min() == 0);
    CHECK(h.max() == 63);
    CHECK(h.count() == all.size());
    h.add(-5);  // negative clamps to 0
    CHECK(h.min() == 0);
    CHECK(h.count() == all.size() + 1);
  }

  TEST_CASE("histogram: a bucket counts past 2^32 - its counts are 32-bit, the rest carried") {
    // A bucket holding 2^32 + 5 values (given as a kept histogram's bucket, then by adds across
    // the wrap), merged twice: counts, ranks and quantiles as 64-bit counts would give them.
    constexpr std::uint64_t k32 = std::uint64_t{1} << 32;
    sim::Histogram h;
    const std::size_t b = sim::Histogram::index(1000);
    h.add_bucket(b, k32 - 2);
    h.add_extent(1000, 1000, 1000.0 * static_cast<double>(k32 - 2));
    for (int i = 0; i < 7; ++i) h.add(1000);  // wraps the 32-bit count after two
    CHECK(h.bucket_count(b) == k32 + 5);
    CHECK(h.count() == k32 + 5);
    h.add(5);  // one value below: it is the smallest rank
    CHECK(h.quantile(0.0) == 5.0);
    CHECK(h.quantile(0.5) == doctest::Approx(1000.0).epsilon(0.01));
    CHECK(h.quantile_bucket(1.0) == b);
    sim::Histogram twice = h;
    twice.merge(h);
    CHECK(twice.bucket_count(b) == 2 * (k32 + 5));
    CHECK(twice.bucket_count(sim::Histogram::index(5)) == 2);
    CHECK(twice.count() == 2 * (k32 + 6));
    // Rank 2 is the second 5, rank 3 the first of the big bucket.
    CHECK(twice.quantile(2.0 / static_cast<double>(twice.count())) == 5.0);
    CHECK(twice.quantile(3.0 / static_cast<double>(twice.count())) == doctest::Approx(1000.0).epsilon(0.01));
    sim::Histogram small;
    small.add(1000);
    small.merge(h);  // the carry comes from the other side
    CHECK(small.bucket_count(b) == k32 + 6);
    // The 32-bit parts themselves overflow: in a merge, and in one kept bucket beyond 2^32.
    sim::Histogram a, c;
    a.add_bucket(b, k32 - 1);
    c.add_bucket(b, 3);
    a.merge(c);
    CHECK(a.bucket_count(b) == k32 + 2);
    sim::Histogram kept;
    kept.add_bucket(b, 3 * k32 + 1);
    CHECK(kept.bucket_count(b) == 3 * k32 + 1);
    CHECK(kept.quantile_bucket(0.5) == b);
  }

  TEST_CASE("histogram: quantiles of a uniform grid 1..1e6 ns within 1%") {
    sim::Histogram h;
    const std::int64_t n = 1'000'000;
    for (std::int64_t v = 1; v <= n; ++v) h.add(v);
    CHECK(h.count() == static_cast<std::uint64_t>(n));
    CHECK(h.mean() == doctest::Approx(500000.5).epsilon(1e-12));
    CHECK(h.min() == 1);
    CHECK(h.max() == n);
    for (double q : {1e-6, 1e-5, 3e-5, 1e-4, 1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999,
                     0.9999, 1.0}) {
      CAPTURE(q);
      const double exact = std::max(1.0, std::ceil(q * n));  // nearest rank on 1..n
      CHECK(std::abs(h.quantile(q) - exact) <= 0.01 * exact);
    }
    CHECK(h.quantile(1.0) == static_cast<double>(n));  // clamped to the observed maximum
  }

  TEST_CASE("histogram: quantiles of exponential samples vs exact sorted-sample quantiles") {
    sim::Histogram h;
    sim::Rng r(21, 0, "hist-exp");
    const std::size_t n = 200'000;
    std::vector<std::int64_t> xs(n);
    for (auto& x : xs) {
      x = static_cast<std::int64_t>(r.exponential(5e6));  // mean 5 ms in ns
      h.add(x);
    }
    std::sort(xs.begin(), xs.end());
    for (double q : {1e-4, 0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999}) {
      CAPTURE(q);
      const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
      const double exact = static_cast<double>(xs[rank - 1]);
      CHECK(std::abs(h.quantile(q) - exact) <= 0.01 * std::max(exact, 1.0));
    }
    CHECK(h.max() == xs.back());
    CHECK(h.min() == xs.front());
    long double s = 0;
    for (auto x : xs) s += x;
    CHECK(h.mean() == doctest::Approx(static_cast<double>(s / n)).epsilon(1e-12));
  }

  TEST_CASE("Welford agrees with a two-pass computation") {
    // A large offset with small spread is where a naive sum-of-squares loses everything.
    sim::Rng r(4, 0, "welford");
    std::vector<double> xs(100'000);
    for (auto& x : xs) x = 1e9 + r.standard_normal() * 3.0;
    sim::Welford w;
    for (double x : xs) w.add(x);
    const test_kernel_stats::Moments m = test_kernel_stats::sample_moments(xs);
    CHECK(w.count() == xs.size());
    CHECK(w.mean() == doctest::Approx(m.mean).epsilon(1e-14));
    CHECK(w.variance() == doctest::Approx(m.var).epsilon(1e-7));
    CHECK(w.stddev() == doctest::Approx(std::sqrt(m.var)).epsilon(1e-7));
    CHECK(w.min() == *std::min_element(xs.begin(), xs.end()));
    CHECK(w.max() == *std::max_element(xs.begin(), xs.end()));

    sim::Welford small;
    CHECK(small.mean() == 0.0);
    CHECK(small.variance() == 0.0);
    CHECK(small.min() == 0.0);
    small.add(4);
    CHECK(small.mean() == 4);
    CHECK(small.variance() == 0.0);
    small.add(8);
    small.add(-3);
    CHECK(small.mean() == doctest::Approx(3.0));
    CHECK(small.variance() == doctest::Approx(((1 + 25 + 36) / 2.0)));
    CHECK(small.min() == -3);
    CHECK(small.max() == 8);
  }

  TEST_CASE("TimeWeighted on a hand-computed step function, with reset()") {
    sim::TimeWeighted tw(100);
    CHECK(tw.value() == 0);
    CHECK(tw.mean(100) == 0);  // empty span: the current value
    tw.set(100, 2);            // 2 on [100, 110)
    tw.set(110, 5);            // 5 on [110, 130)
    tw.add(130, -1);           // 4 on [130, 150)
    CHECK(tw.value() == 4);
    CHECK(tw.area(150) == 2 * 10 + 5 * 20 + 4 * 20);
    CHECK(tw.mean(150) == doctest::Approx(200.0 / 50));
    CHECK(tw.mean(140) == doctest::Approx((20 + 100 + 40) / 40.0));  // queried mid-step
    tw.add(150, 3);  // 7 on [150, 160)
    tw.set(160, 0);  // 0 on [160, 200)
    CHECK(tw.mean(200) == doctest::Approx((200 + 70) / 100.0));
    // Warm-up ends at 200: the integral restarts, the current value (0) is kept.
    tw.reset(200);
    CHECK(tw.value() == 0);
    CHECK(tw.area(200) == 0);
    CHECK(tw.mean(200) == 0);
    tw.set(210, 6);  // 0 on [200, 210), 6 on [210, 240)
    tw.set(240, 1);  // 1 on [240, 260)
    CHECK(tw.area(260) == 6 * 30 + 1 * 20);
    CHECK(tw.mean(260) == doctest::Approx(200.0 / 60));
    // Reset while the value is non-zero keeps integrating it from the reset point.
    tw.reset(300);
    CHECK(tw.mean(310) == doctest::Approx(1.0));
    CHECK(tw.area(310) == 10);
  }

  TEST_CASE("CountIntegral agrees with TimeIntegral bit for bit below 2^53, and stays exact beyond it") {
    // A consumer's busy count and buffer length (models/consumer.hpp) moved from TimeIntegral's
    // 16 bytes to CountIntegral's 8: below 2^53 slot-nanoseconds both are exact, so the means print
    // unchanged. Changes of several at once (a lost connection empties the buffer), resets with a
    // non-zero count (the warm-up's end), and means at every step are compared.
    sim::Rng rng(11, 0, "count-integral");
    sim::TimeIntegral old_way;
    sim::CountIntegral count_way;
    sim::Time since = 0, now = 0;
    std::int64_t level = 0;
    for (int i = 0; i < 20'000; ++i) {
      now += static_cast<sim::Time>(rng.below(5'000'000));
      if (i == 7'000) {
        old_way.reset(now);
        count_way.reset(now, level);
        since = now;
      }
      const auto next = static_cast<std::int64_t>(rng.below(40));
      old_way.advance(now, static_cast<double>(level));
      count_way.change(now, next - level);
      level = next;
      REQUIRE(static_cast<double>(count_way.area(now, level)) == old_way.area(now, static_cast<double>(level)));
      REQUIRE(count_way.mean(now + 3, since, level) == old_way.mean(now + 3, since, static_cast<double>(level)));
    }
    CHECK(count_way.mean(since, since, level) == static_cast<double>(level));  // an empty span: the count now
    // By hand: 3 on [10, 40), then 1 on [40, 50).
    sim::CountIntegral hand;
    hand.change(10, 3);
    hand.change(40, -2);
    CHECK(hand.area(50, 1) == 3 * 30 + 1 * 10);
    // Past 2^53: a million slots busy for 2^40 ns from 2^62 - 2^41 on. Exact in 64 bits, where a
    // double sum of the products would round.
    const sim::Time t0 = (sim::Time{1} << 62) - (sim::Time{1} << 41);
    sim::CountIntegral big;
    big.reset(t0, 0);
    big.change(t0, 1'000'000);
    CHECK(big.area(t0 + (sim::Time{1} << 39) + 1, 1'000'000) == 1'000'000 * ((std::int64_t{1} << 39) + 1));
    big.change(t0 + (sim::Time{1} << 40), -1'000'000);
    CHECK(big.area(t0 + (sim::Time{1} << 41), 0) == 1'000'000 * (std::int64_t{1} << 40));
  }

  TEST_CASE("TimeIntegral, given the level its owner keeps, sums what TimeWeighted sums, bit for bit") {
    // A consumer keeps its busy count and advances the integral with the count as it was, just
    // before changing it (models/consumer.cpp): the same products added in the same order as
    // TimeWeighted's, so the per-consumer utilisation and buffer means print unchanged.
    sim::Rng rng(7, 0, "time-integral");
    sim::TimeWeighted tw;
    sim::TimeIntegral integral;
    sim::Time since = 0;
    int level = 0;
    sim::Time now = 0;
    for (int i = 0; i < 10'000; ++i) {
      now += static_cast<sim::Time>(rng.below(1'000'000));
      if (i == 5'000) {  // the warm-up's end
        tw.reset(now);
        integral.reset(now);
        since = now;
      }
      const int next = static_cast<int>(rng.below(9));
      integral.advance(now, level);
      level = next;
      tw.set(now, level);
      CHECK(integral.area(now, level) == tw.area(now));
    }
    CHECK(integral.mean(now + 17, since, level) == tw.mean(now + 17));
    CHECK(integral.mean(since, since, level) == tw.mean(since));  // an empty span: the level now
    // By hand: 3 on [10, 40), then 1 on [40, 50).
    sim::TimeIntegral hand(10);
    hand.advance(40, 3);
    CHECK(hand.area(50, 1) == 3 * 30 + 1 * 10);
    CHECK(hand.mean(50, 10, 1) == doctest::Approx(100.0 / 40));
  }
}
