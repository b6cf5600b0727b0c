// Gamma and Weibull sampling (sim/distribution.hpp): exact moments and a Kolmogorov-Smirnov test
// against the exact CDF, at fixed seeds, with tolerances from the sampling distributions; and the
// scenario syntax that names them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <boost/math/special_functions/gamma.hpp>

#include "sim/distribution.hpp"
#include "tests/test_util.hpp"

namespace {

constexpr std::size_t kN = 200'000;
// Every moment check allows 4.5 standard errors of its statistic (as tests/test_kernel.cpp).
constexpr double kSE = 4.5;
// Kolmogorov's limiting distribution: P(sqrt(n) D > 1.9495) = 0.001.
constexpr double kKs999 = 1.9495;

std::vector<double> draw(const sim::Distribution& d, std::uint64_t seed) {
  sim::Rng rng(seed, 0, "shape-test");
  std::vector<double> xs(kN);
  for (auto& x : xs) x = d.sample(rng);
  return xs;
}

// Raw moments E[X^r], r = 1..4, give the mean, the variance and the 4th central moment; the
// sample variance's standard error is sqrt((mu4 - var^2) / n).
void check_moments(const std::vector<double>& xs, const double raw[4]) {
  const double mean = raw[0], var = raw[1] - mean * mean;
  const double mu4 = raw[3] - 4 * raw[2] * mean + 6 * raw[1] * mean * mean - 3 * std::pow(mean, 4);
  long double s = 0;
  for (double x : xs) s += x;
  const double m = static_cast<double>(s / xs.size());
  long double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  const double v = static_cast<double>(ss / (xs.size() - 1));
  const double n = static_cast<double>(xs.size());
  INFO("mean exact " << mean << " sample " << m);
  CHECK(std::abs(m - mean) <= kSE * std::sqrt(var / n));
  INFO("var exact " << var << " sample " << v);
  CHECK(std::abs(v - var) <= kSE * std::sqrt((mu4 - var * var) / n));
}

template <class Cdf>
void check_ks(std::vector<double> xs, Cdf cdf) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double d = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double f = cdf(xs[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  INFO("KS distance " << d << ", 0.1% critical value " << kKs999 / std::sqrt(n));
  CHECK(d <= kKs999 / std::sqrt(n));
}

}  // namespace

TEST_SUITE("distribution") {
  TEST_CASE("gamma (Marsaglia-Tsang): moments and KS against the exact CDF, shapes below and above 1") {
    std::uint64_t seed = 30;
    for (const double k : {0.3, 1.0, 2.5, 9.0}) {
      CAPTURE(k);
      const double theta = 4.0;
      const auto d = sim::Distribution::gamma(k, theta);
      CHECK(d.mean() == doctest::Approx(k * theta));
      const auto xs = draw(d, seed++);
      CHECK(*std::min_element(xs.begin(), xs.end()) >= 0.0);
      // E[X^r] = theta^r Gamma(k + r) / Gamma(k).
      double raw[4];
      for (int r = 1; r <= 4; ++r) raw[r - 1] = std::pow(theta, r) * std::exp(std::lgamma(k + r) - std::lgamma(k));
      check_moments(xs, raw);
      check_ks(xs, [&](double x) { return boost::math::gamma_p(k, x / theta); });
    }
  }

  TEST_CASE("weibull: moments and KS against the exact CDF") {
    std::uint64_t seed = 40;
    for (const double k : {0.7, 1.5, 3.0}) {
      CAPTURE(k);
      const double lambda = 2.0;
      const auto d = sim::Distribution::weibull(k, lambda);
      CHECK(d.mean() == doctest::Approx(lambda * std::tgamma(1 + 1 / k)));
      const auto xs = draw(d, seed++);
      // E[X^r] = lambda^r Gamma(1 + r/k).
      double raw[4];
      for (int r = 1; r <= 4; ++r) raw[r - 1] = std::pow(lambda, r) * std::tgamma(1 + r / k);
      check_moments(xs, raw);
      check_ks(xs, [&](double x) { return -std::expm1(-std::pow(x / lambda, k)); });
    }
  }

  TEST_CASE("gamma and weibull scale to nanoseconds: the same draws times the factor") {
    for (const auto& d : {sim::Distribution::gamma(2.5, 3.0), sim::Distribution::weibull(1.5, 3.0)}) {
      const auto ds = d.scaled(1e6);
      CHECK(ds.kind() == d.kind());
      CHECK(ds.mean() == doctest::Approx(1e6 * d.mean()).epsilon(1e-12));
      sim::Rng r1(5, 0, "s"), r2(5, 0, "s");
      for (int i = 0; i < 1000; ++i) REQUIRE(ds.sample(r2) == doctest::Approx(1e6 * d.sample(r1)).epsilon(1e-12));
    }
  }
}

TEST_SUITE("scenario loading") {
  const char* kDoc = R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}]})";

  brokersim::Scenario with_service(const std::string& service) {
    return brokersim::test::run_scenario(kDoc, {"producers.0.service_ms=" + service}).scenario;
  }

  TEST_CASE("service_ms gamma and weibull: shape and scale in ms") {
    const auto g = with_service(R"({"gamma": {"shape": 2, "scale": 5}})").producers[0].service;
    CHECK(g.kind() == sim::Distribution::Kind::Gamma);
    CHECK(g.param_a() == 2);
    CHECK(g.param_b() == 5e6);
    CHECK(g.mean() == doctest::Approx(1e7));
    const auto w = with_service(R"({"weibull": {"shape": 0.5, "scale": 10}})").producers[0].service;
    CHECK(w.kind() == sim::Distribution::Kind::Weibull);
    CHECK(w.mean() == doctest::Approx(2e7));  // 10 ms x Gamma(3)
  }

  TEST_CASE("gamma and weibull: bad parameters name the key, what was expected and what was given") {
    for (const auto& [value_, message_] : std::vector<std::pair<std::string, std::string>>{
             {R"({"gamma": {"shape": 0, "scale": 5}})", "producers.0.service_ms.gamma.shape: expected a number > 0, got 0"},
             {R"({"gamma": {"shape": 2}})", "producers.0.service_ms.gamma.scale: expected a number > 0, got nothing"},
             {R"({"weibull": {"shape": 2, "scale": 5, "mean": 3}})", "producers.0.service_ms.weibull.mean: unknown key (allowed: shape, scale)"},
             {R"({"weibull": {"shape": 0.01, "scale": 5}})", "producers.0.service_ms.weibull.shape: expected a shape and scale whose largest draw"},
             {R"({"gamma": [2, 5]})", "producers.0.service_ms.gamma: expected an object {\"shape\": k, \"scale\": s}"}}) {
      const auto& value = value_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& message = message_;
      CAPTURE(value);
      nlohmann::json doc = nlohmann::json::parse(kDoc);
      brokersim::apply_set(doc, "producers.0.service_ms=" + value);
      try {
        brokersim::load_scenario(doc, ".");
        FAIL("accepted");
      } catch (const brokersim::ScenarioError& e) {
        CHECK(std::string(e.what()).find(message) == 0);
      }
    }
  }
}
