// Tests of the kernel's random streams and distributions (sim/rng.hpp, sim/distribution.hpp).
//
// Statistical checks use fixed seeds, so they are deterministic; their tolerances are still
// derived from the sampling distribution of the estimator (k standard errors, the standard
// error computed from the *exact* variance of the distribution, not from the sample), so that a
// failure means a real bias and not a badly chosen constant. With k = 4.5 a correct sampler
// fails one check with probability about 7e-6.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/rng.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"
#include "tests/moments_test_util.hpp"

namespace test_kernel_random {

constexpr double kSE = 4.5;  // tolerance, in standard errors, of every statistical check

// ---------------------------------------------------------------------------------------------
// Reference implementations, written from the papers, independent of sim/.

// SplitMix64 (Steele, Lea & Flood; Vigna's splitmix64.c).
std::uint64_t ref_splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256++ 1.0 (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021;
// xoshiro256plusplus.c).
struct RefXoshiro256pp {
  std::uint64_t s[4];
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

// The documented derivation of a stream's state from (seed, replication, entity), redone here
// so the reference generator can be started in exactly the state sim::Rng starts in.
RefXoshiro256pp ref_stream(std::uint64_t seed, std::uint64_t replication, const std::string& e) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : e) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  std::uint64_t sm = seed;
  const std::uint64_t a = ref_splitmix64(sm);
  sm = a ^ (replication * 0xd1b54a32d192ed03ULL);
  const std::uint64_t b = ref_splitmix64(sm);
  sm = b ^ h;
  RefXoshiro256pp r{};
  for (auto& w : r.s) w = ref_splitmix64(sm);
  return r;
}

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }

using brokersim::test::Moments;
using brokersim::test::sample_moments;

std::vector<double> draw(const sim::Distribution& d, std::uint64_t seed, std::size_t n) {
  sim::Rng rng(seed, 0, "dist-test");
  std::vector<double> xs(n);
  for (auto& x : xs) x = d.sample(rng);
  return xs;
}

// Checks the sample mean against the exact mean (SE = sqrt(var/n)) and the sample variance
// against the exact variance (SE = sqrt((mu4 - var^2)/n), mu4 the exact 4th central moment).
void check_moments(const std::vector<double>& xs, double mean, double var, double mu4) {
  const double n = static_cast<double>(xs.size());
  const Moments m = sample_moments(xs);
  const double se_mean = std::sqrt(var / n);
  const double se_var = std::sqrt((mu4 - var * var) / n);
  INFO("mean exact " << mean << " sample " << m.mean << " se " << se_mean);
  CHECK(std::abs(m.mean - mean) <= kSE * se_mean);
  INFO("var exact " << var << " sample " << m.var << " se " << se_var);
  CHECK(std::abs(m.var - var) <= kSE * se_var);
}

// Sampling from `d.scaled(f)` with a given seed must give f times the samples of `d`. Equal up to
// rounding relative to the distribution's scale (~10), not to the sample: a normal sample near 0
// is a cancellation (mean + sd * z), so its relative rounding error is unbounded.
void check_scaled(const sim::Distribution& d, double f) {
  const sim::Distribution ds = d.scaled(f);
  CHECK(ds.kind() == d.kind());
  CHECK(ds.mean() == doctest::Approx(f * d.mean()).epsilon(1e-12));
  sim::Rng r1(77, 1, "scaled"), r2(77, 1, "scaled");
  for (int i = 0; i < 2000; ++i) {
    const double x = d.sample(r1), y = ds.sample(r2);
    REQUIRE(y == doctest::Approx(f * x).epsilon(1e-12).scale(10.0 * f));
  }
}

// =============================================================================================
TEST_SUITE("rng") {
  TEST_CASE("reference generator matches published vectors") {
    // SplitMix64 from seed 1234567 (the vector quoted with the reference splitmix64.c).
    std::uint64_t x = 1234567;
    CHECK(ref_splitmix64(x) == 6457827717110365317ULL);
    CHECK(ref_splitmix64(x) == 3203168211198807973ULL);
    CHECK(ref_splitmix64(x) == 9817491932198370423ULL);
    // sim's splitmix64 is the same function.
    std::uint64_t y = 1234567, z = 1234567;
    for (int i = 0; i < 100; ++i) REQUIRE(sim::splitmix64(y) == ref_splitmix64(z));
    // xoshiro256++ from state {0,0,0,1}: first outputs of the reference C code.
    RefXoshiro256pp r{{0, 0, 0, 1}};
    const std::uint64_t v[] = {0x0000000000800000ULL, 0x0000000000800011ULL,
                               0x0002200000800011ULL, 0x0002200044000020ULL,
                               0x00022000448008A1ULL, 0x01102100802208A0ULL,
                               0x0114002284200880ULL, 0x0402896644A64095ULL,
                               0x8A14A0A244ACC891ULL, 0x8C88BA4680B20495ULL};
    for (std::uint64_t e : v) CHECK(r.next() == e);
    // From {1,2,3,4} the first output is rotl(1 + 4, 23) + 1 by hand.
    RefXoshiro256pp r2{{1, 2, 3, 4}};
    CHECK(r2.next() == (5ULL << 23) + 1);
  }

  TEST_CASE("sim::Rng is xoshiro256++: 1000 outputs equal the reference from the same state") {
    for (const auto& [seed, rep, name] :
         std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string>>{
             {0, 0, ""}, {2024, 3, "consumer-1"}, {~0ULL, 17, "producer/äöü"}}) {
      sim::Rng a(seed, rep, name);
      RefXoshiro256pp b = ref_stream(seed, rep, name);
      for (int i = 0; i < 1000; ++i) REQUIRE(a.next() == b.next());
    }
    // The default constructor is stream (0, 0, "").
    sim::Rng d, e(0, 0, "");
    for (int i = 0; i < 100; ++i) REQUIRE(d.next() == e.next());
  }

  TEST_CASE("pinned first outputs of one stream") {
    // Computed once from this implementation; a change here changes every published result.
    sim::Rng r(2024, 3, "consumer-1");
    CHECK(r.next() == 0xa4835ed500262f1dULL);
    CHECK(r.next() == 0x147bdca18199c13cULL);
    CHECK(r.next() == 0xfb39f8ec6532c107ULL);
    CHECK(r.next() == 0x69f9c42dc1c91026ULL);
    CHECK(r.next() == 0xe75109c64645099dULL);
  }

  TEST_CASE("same key, same stream - different key, different stream") {
    auto first = [](std::uint64_t s, std::uint64_t rep, std::string_view e, int n) {
      sim::Rng r(s, rep, e);
      std::vector<std::uint64_t> v(static_cast<std::size_t>(n));
      for (auto& x : v) x = r.next();
      return v;
    };
    const auto base = first(7, 0, "broker", 1000);
    CHECK(base == first(7, 0, "broker", 1000));
    const std::vector<std::vector<std::uint64_t>> others{
        first(7, 0, "broker2", 1000), first(7, 0, "Broker", 1000), first(7, 0, "", 1000),
        first(7, 1, "broker", 1000), first(7, 2, "broker", 1000), first(8, 0, "broker", 1000),
        first(0, 0, "broker", 1000)};
    for (const auto& o : others) {
      // Not merely different: no output in common (a shifted copy would share 999).
      const std::set<std::uint64_t> sb(base.begin(), base.end());
      int common = 0;
      for (std::uint64_t x : o) common += sb.count(x) ? 1 : 0;
      CHECK(common == 0);
    }
    // Seed and replication are not interchangeable.
    CHECK(first(1, 2, "x", 10) != first(2, 1, "x", 10));
  }

  TEST_CASE("common random numbers: a stream does not depend on other streams") {
    std::vector<double> alone;
    {
      sim::Rng a(5, 2, "consumer-3");
      for (int i = 0; i < 500; ++i) alone.push_back(a.exponential(1.0));
    }
    std::vector<double> crowded;
    {
      sim::Rng before1(5, 2, "consumer-1");
      sim::Rng before2(5, 2, "consumer-2");
      for (int i = 0; i < 1000; ++i) before1.next();
      sim::Rng a(5, 2, "consumer-3");
      sim::Rng after(5, 2, "consumer-4");
      for (int i = 0; i < 500; ++i) {
        before2.standard_normal();
        after.uniform();
        crowded.push_back(a.exponential(1.0));
        before1.below(17);
      }
    }
    CHECK(alone == crowded);
  }

  TEST_CASE("uniform ranges and below(n)") {
    sim::Rng r(3, 0, "ranges");
    double lo = 1, hi = 0, lo_pos = 2;
    std::array<int, 7> cnt{};
    const int n = 70'000;
    for (int i = 0; i < n; ++i) {
      const double u = r.uniform(), up = r.uniform_pos();
      REQUIRE(u >= 0.0);
      REQUIRE(u < 1.0);
      REQUIRE(up > 0.0);
      REQUIRE(up <= 1.0);
      lo = std::min(lo, u);
      hi = std::max(hi, u);
      lo_pos = std::min(lo_pos, up);
      const std::uint64_t b = r.below(7);
      REQUIRE(b < 7);
      ++cnt[b];
    }
    CHECK(lo < 1e-3);
    CHECK(hi > 1 - 1e-3);
    // Each value of below(7) has probability 1/7: binomial CI.
    const double p = 1.0 / 7.0, se = std::sqrt(p * (1 - p) / n);
    for (int c : cnt) CHECK(std::abs(c / static_cast<double>(n) - p) <= kSE * se);
    CHECK(r.below(1) == 0);
  }
}

// =============================================================================================
TEST_SUITE("distribution") {
  constexpr std::size_t N = 200'000;

  TEST_CASE("constant") {
    const auto d = sim::Distribution::constant(3.25);
    sim::Rng r(1, 0, "c");
    for (int i = 0; i < 100; ++i) REQUIRE(d.sample(r) == 3.25);
    CHECK(d.mean() == 3.25);
    CHECK(d.is_constant());
    CHECK(!d.is_zero());
    CHECK(sim::Distribution::constant(0).is_zero());
    CHECK(sim::Distribution().is_zero());
    check_scaled(d, 1e6);
  }

  TEST_CASE("exponential: mean, variance, P(X > mean) = 1/e") {
    const double m = 2.5;
    const auto d = sim::Distribution::exp(m);
    CHECK(d.mean() == m);
    const auto xs = draw(d, 11, N);
    CHECK(*std::min_element(xs.begin(), xs.end()) >= 0.0);
    // Var = m^2; 4th central moment = 9 m^4.
    check_moments(xs, m, m * m, 9 * std::pow(m, 4));
    const double p = std::exp(-1.0);
    const double frac = std::count_if(xs.begin(), xs.end(), [&](double x) { return x > m; }) /
                        static_cast<double>(N);
    CHECK(std::abs(frac - p) <= kSE * std::sqrt(p * (1 - p) / N));  // binomial CI
    check_scaled(d, 1e6);
  }

  TEST_CASE("uniform") {
    const double a = 2, b = 7, w = b - a;
    const auto d = sim::Distribution::uniform(a, b);
    CHECK(d.mean() == 4.5);
    const auto xs = draw(d, 12, N);
    const auto [mn, mx] = std::minmax_element(xs.begin(), xs.end());
    CHECK(*mn >= a);
    CHECK(*mx < b);
    // The support is really [a, b): P(no sample within w * 1e-4 of an end) = e^-20.
    CHECK(*mn < a + w * 1e-4);
    CHECK(*mx > b - w * 1e-4);
    // Var = w^2/12; 4th central moment = w^4/80.
    check_moments(xs, (a + b) / 2, w * w / 12, std::pow(w, 4) / 80);
    check_scaled(d, 1e6);
  }

  TEST_CASE("normal, untruncated") {
    const double mu = 1.0, s = 2.0;
    const auto d = sim::Distribution::normal(mu, s, false);
    CHECK(d.mean() == mu);
    const auto xs = draw(d, 13, N);
    // Var = s^2; 4th central moment = 3 s^4.
    check_moments(xs, mu, s * s, 3 * std::pow(s, 4));
    // Untruncated really produces negatives: P(X < 0) = Phi(-mu/s).
    const double p = Phi(-mu / s);
    const double frac = std::count_if(xs.begin(), xs.end(), [](double x) { return x < 0; }) /
                        static_cast<double>(N);
    CHECK(std::abs(frac - p) <= kSE * std::sqrt(p * (1 - p) / N));
    check_scaled(d, 1e6);
  }

  TEST_CASE("normal truncated at zero: closed-form truncated-normal mean and variance") {
    for (const auto& ps : std::vector<std::pair<double, double>>{{1.0, 1.0}, {0.2, 1.5},
                                                                  {5.0, 1.0}}) {
      const double mu = ps.first, s = ps.second;  // (no structured bindings: CAPTURE is a lambda)
      CAPTURE(mu);
      CAPTURE(s);
      const auto d = sim::Distribution::normal(mu, s, true);
      const auto xs = draw(d, 14, N);
      CHECK(*std::min_element(xs.begin(), xs.end()) >= 0.0);
      // X ~ N(mu, s^2) conditioned on X >= 0. With alpha = -mu/s, lambda = phi(alpha) / (1 -
      // Phi(alpha)): E = mu + s lambda, Var = s^2 (1 + alpha lambda - lambda^2).
      const double alpha = -mu / s;
      const double lambda = phi(alpha) / (1 - Phi(alpha));
      const double mean = mu + s * lambda;
      const double var = s * s * (1 + alpha * lambda - lambda * lambda);
      // The 4th central moment has no short closed form: integrate the density numerically
      // (Simpson), which also cross-checks the closed-form mean and variance above.
      const double Z = 1 - Phi(alpha), hi = mu + 14 * s;
      const int m = 20000;
      const double h = hi / m;
      double I0 = 0, I1 = 0, I2 = 0, I4 = 0;
      for (int i = 0; i <= m; ++i) {
        const double x = i * h, wgt = (i == 0 || i == m) ? 1 : (i % 2 ? 4 : 2);
        const double f = wgt * phi((x - mu) / s) / (s * Z);
        I0 += f;
        I1 += f * x;
        I2 += f * (x - mean) * (x - mean);
        I4 += f * std::pow(x - mean, 4);
      }
      I0 *= h / 3;
      I1 *= h / 3;
      I2 *= h / 3;
      I4 *= h / 3;
      CHECK(I0 == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(I1 == doctest::Approx(mean).epsilon(1e-9));
      CHECK(I2 == doctest::Approx(var).epsilon(1e-9));
      check_moments(xs, mean, var, I4);
      check_scaled(d, 1e6);
    }
  }

  TEST_CASE("lognormal by mean and cv") {
    for (const auto& ps : std::vector<std::pair<double, double>>{{3.0, 0.5}, {1.0, 1.0}}) {
      const double m = ps.first, cv = ps.second;
      CAPTURE(m);
      CAPTURE(cv);
      const auto d = sim::Distribution::lognormal(m, cv);
      CHECK(d.mean() == m);
      const auto xs = draw(d, 15, N);
      CHECK(*std::min_element(xs.begin(), xs.end()) > 0.0);
      // Var = (m cv)^2; 4th central moment = Var^2 * (e^{4s2} + 2e^{3s2} + 3e^{2s2} - 3),
      // s2 = ln(1 + cv^2).
      const double var = m * m * cv * cv, s2 = std::log1p(cv * cv);
      const double kurt = std::exp(4 * s2) + 2 * std::exp(3 * s2) + 3 * std::exp(2 * s2) - 3;
      check_moments(xs, m, var, var * var * kurt);
      // The median of a lognormal is m / sqrt(1 + cv^2): P(X < median) = 1/2.
      const double med = m / std::sqrt(1 + cv * cv);
      const double frac = std::count_if(xs.begin(), xs.end(), [&](double x) { return x < med; }) /
                          static_cast<double>(N);
      CHECK(std::abs(frac - 0.5) <= kSE * std::sqrt(0.25 / N));
      check_scaled(d, 1e6);
    }
  }

  TEST_CASE("empirical: uniform choice among the listed values") {
    const std::vector<double> vals{1, 2, 2, 7, 10, 0.5};
    const auto d = sim::Distribution::empirical(vals);
    double mean = 0;
    for (double v : vals) mean += v;
    mean /= vals.size();
    CHECK(d.mean() == doctest::Approx(mean).epsilon(1e-15));
    double var = 0, mu4 = 0;
    for (double v : vals) {
      var += (v - mean) * (v - mean) / vals.size();
      mu4 += std::pow(v - mean, 4) / vals.size();
    }
    const auto xs = draw(d, 16, N);
    check_moments(xs, mean, var, mu4);
    // Each distinct value with probability (multiplicity / size): binomial CI.
    for (double v : {0.5, 1.0, 2.0, 7.0, 10.0}) {
      const double p = std::count(vals.begin(), vals.end(), v) / static_cast<double>(vals.size());
      const double frac = std::count(xs.begin(), xs.end(), v) / static_cast<double>(N);
      CHECK(std::abs(frac - p) <= kSE * std::sqrt(p * (1 - p) / N));
    }
    CHECK(std::count_if(xs.begin(), xs.end(), [&](double x) {
            return std::find(vals.begin(), vals.end(), x) == vals.end();
          }) == 0);
    check_scaled(d, 1e6);
    check_scaled(d, 0.001);
  }
}

}  // namespace test_kernel_random
