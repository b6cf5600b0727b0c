// Input uncertainty (issue 42): parameter_uncertainty makes each run redraw what producers[].fitted
// and volume.fitted say was estimated. The redraws against the laws they claim (exact for the
// exponential and lognormal, the refits of real samples for the gamma and Weibull), the day's
// predictive law against the exact prediction interval it should reproduce, the runs' reported
// draws, fit's outputs, plan's statement and the loader's refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "experiments/cli/fit/mle.hpp"
#include "models/input_uncertainty.hpp"
#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::test::load_error;
using sim::Distribution;

namespace {

struct PuMoments {
  double mean = 0, var = 0;
};
PuMoments pu_moments(const std::vector<double>& xs) {
  PuMoments m;
  for (double x : xs) m.mean += x;
  m.mean /= static_cast<double>(xs.size());
  for (double x : xs) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(xs.size() - 1);
  return m;
}

// The 99.9% interval of a sample variance of `n` normal values around the true variance `v`:
// a check that fails by chance once in a thousand seeds, not a fudge.
bool pu_variance_agrees(double sample, double v, std::size_t n) {
  const boost::math::chi_squared chi(static_cast<double>(n - 1));
  const double k = static_cast<double>(n - 1);
  return sample >= v * boost::math::quantile(chi, 0.0005) / k && sample <= v * boost::math::quantile(chi, 0.9995) / k;
}

}  // namespace

TEST_CASE("parameter uncertainty: an exponential mean redraws as the mean of n exponentials") {
  // n mean* / mean is Gamma(n, 1): mean 1 and variance 1/n exactly.
  sim::Rng rng(7, 0, "test");
  const std::uint64_t n = 50;
  std::vector<double> ratio;
  for (int i = 0; i < 4000; ++i) ratio.push_back(brokersim::redraw_fitted(Distribution::exp(200.0), n, rng).mean() / 200.0);
  const PuMoments m = pu_moments(ratio);
  CHECK(std::abs(m.mean - 1) < 3.3 * std::sqrt(1.0 / n / 4000));
  // Gamma(50)/50 is nearly normal: the chi-square interval of its variance holds to a few percent.
  CHECK(m.var == doctest::Approx(1.0 / n).epsilon(0.1));
}

TEST_CASE("parameter uncertainty: a lognormal redraws mu and sigma as the MLE of n values would") {
  // log x ~ N(mu, s2): mu* ~ N(mu, s2 / n), n s2* / s2 ~ chi2(n - 1), independent.
  sim::Rng rng(11, 0, "test");
  const std::uint64_t n = 40;
  const double mean = 80, cv = 0.6, s2 = std::log1p(cv * cv), mu = std::log(mean) - s2 / 2;
  std::vector<double> mus, s2s;
  for (int i = 0; i < 4000; ++i) {
    const Distribution d = brokersim::redraw_fitted(Distribution::lognormal(mean, cv), n, rng);
    const double t2 = std::log1p(d.param_b() * d.param_b());
    s2s.push_back(t2);
    mus.push_back(std::log(d.param_a()) - t2 / 2);
  }
  const PuMoments m_mu = pu_moments(mus), m_s2 = pu_moments(s2s);
  CHECK(std::abs(m_mu.mean - mu) < 3.3 * std::sqrt(s2 / n / 4000));
  CHECK(pu_variance_agrees(m_mu.var, s2 / n, 4000));
  // E[s2*] = s2 (n - 1) / n, var = 2 (n - 1) s2^2 / n^2.
  const double e = s2 * (n - 1) / n, v = 2.0 * (n - 1) * s2 * s2 / (n * n);
  CHECK(std::abs(m_s2.mean - e) < 3.3 * std::sqrt(v / 4000));
}

TEST_CASE("parameter uncertainty: gamma and Weibull redraws spread as real refits of n values do") {
  // The redraw uses the MLE's asymptotic law; a refit of n = 300 values drawn from the fitted law is
  // what it stands for. 400 of each: their log-parameter spreads agree within an F interval.
  const std::uint64_t n = 300;
  const int reps = 400;
  for (const Distribution& fitted : {Distribution::gamma(2.5, 40.0), Distribution::weibull(1.4, 90.0)}) {
    const bool gamma = fitted.kind() == Distribution::Kind::Gamma;
    CAPTURE(gamma);
    sim::Rng draw(3, 0, "values"), redraw(5, 0, "redraw");
    std::vector<double> refit_shape, refit_scale, redrawn_shape, redrawn_scale, cross_refit, cross_redrawn;
    for (int r = 0; r < reps; ++r) {
      std::vector<double> xs(n);
      for (double& x : xs) x = fitted.sample(draw);
      std::sort(xs.begin(), xs.end());
      const auto f = gamma ? brokersim::fit::fit_gamma(xs) : brokersim::fit::fit_weibull(xs);
      refit_shape.push_back(std::log(f.a));
      refit_scale.push_back(std::log(f.b));
      const Distribution d = brokersim::redraw_fitted(fitted, n, redraw);
      redrawn_shape.push_back(std::log(d.param_a()));
      redrawn_scale.push_back(std::log(d.param_b()));
    }
    // The ratio of two sample variances of 400 is within 0.75 .. 1.33 with 99.6% probability (F(399, 399)).
    for (auto [a, b] : {std::pair{&refit_shape, &redrawn_shape}, std::pair{&refit_scale, &redrawn_scale}}) {
      const double ratio = pu_moments(*a).var / pu_moments(*b).var;
      CHECK(ratio > 0.75);
      CHECK(ratio < 1.33);
    }
    // The correlation of shape and scale has the refits' sign and size (gamma about -0.8, Weibull about +0.3).
    const auto corr = [](const std::vector<double>& x, const std::vector<double>& y) {
      const PuMoments mx = pu_moments(x), my = pu_moments(y);
      double c = 0;
      for (std::size_t i = 0; i < x.size(); ++i) c += (x[i] - mx.mean) * (y[i] - my.mean);
      return c / static_cast<double>(x.size() - 1) / std::sqrt(mx.var * my.var);
    };
    CHECK(std::abs(corr(refit_shape, refit_scale) - corr(redrawn_shape, redrawn_scale)) < 0.15);
  }
}

TEST_CASE("parameter uncertainty: an empirical law gets the bootstrap's weights in memory of its values") {
  // The mean of a bootstrap resample of n values from {1, 2, 3, 4}: mean 2.5 and variance
  // 1.25 / n (the values' variance over n; the Bayesian bootstrap's is 1.25 / (n + 1)).
  sim::Rng rng(1, 0, "test");
  const Distribution fitted = Distribution::empirical({1, 2, 3, 4});
  for (std::uint64_t n : {std::uint64_t{20}, std::uint64_t{5'000'000}}) {
    CAPTURE(n);
    std::vector<double> means;
    for (int i = 0; i < 4000; ++i) {
      const Distribution d = brokersim::redraw_fitted(fitted, n, rng);
      REQUIRE(d.values().size() == 4);  // four weights, however large n is
      means.push_back(d.mean());
    }
    const PuMoments m = pu_moments(means);
    const double v = 1.25 / static_cast<double>(n + 1);
    CHECK(std::abs(m.mean - 2.5) < 3.3 * std::sqrt(v / 4000));
    CHECK(m.var == doctest::Approx(v).epsilon(0.1));
  }
  // Drawing from the weights: only the four values, each as often as its weight says.
  const Distribution w = Distribution::empirical_weighted({1, 2, 3, 4}, {0, 1, 0, 3});
  int twos = 0;
  for (int i = 0; i < 4000; ++i) {
    const double x = w.sample(rng);
    CHECK((x == 2 || x == 4));
    twos += x == 2;
  }
  CHECK(std::abs(twos - 1000) < 3.3 * std::sqrt(4000 * 0.25 * 0.75));
  CHECK(w.mean() == doctest::Approx(3.5));
}

TEST_CASE("parameter uncertainty: a day's volume from D fitted days has the exact prediction interval") {
  // Under the Jeffreys prior, log V of a new day given D days is mu_hat + s sqrt(1 + 1/D) t(D - 1):
  // its 95% quantile covers a fresh day of the true law in exactly 95% of months. The plug-in
  // quantile (mu_hat + 1.645 s) covers fewer. 3,000 months of D = 8 days, each judged on its own
  // predictive quantile from 1,000 draws.
  const int days = 8, months = 3000;
  const double true_mu = 0, true_sigma = 0.3;
  sim::Rng truth(21, 0, "truth"), day_rng(22, 0, "day"), parameter_rng(23, 0, "parameters");
  int covered = 0, covered_plugin = 0;
  const double t95 = boost::math::quantile(boost::math::students_t(days - 1), 0.95);
  int covered_exact = 0;
  for (int m = 0; m < months; ++m) {
    double sum = 0, ss = 0, l[days];
    for (double& x : l) {
      x = true_mu + true_sigma * truth.standard_normal();
      sum += x;
    }
    const double mu_hat = sum / days;
    for (double x : l) ss += (x - mu_hat) * (x - mu_hat);
    const double s = std::sqrt(ss / (days - 1));
    // The fitted per-run law as fit --days writes it: lognormal with mean exp(mu_hat + s^2/2), cv from s.
    const double mean = std::exp(mu_hat + s * s / 2), cv = std::sqrt(std::expm1(s * s));
    std::vector<double> v(1000);
    for (double& x : v) x = std::log(brokersim::predictive_day_volume(mean, cv, days, day_rng, parameter_rng));
    std::nth_element(v.begin(), v.begin() + 950, v.end());
    const double fresh = true_mu + true_sigma * truth.standard_normal();
    covered += fresh <= v[950];
    covered_plugin += fresh <= mu_hat + 1.6449 * s;
    covered_exact += fresh <= mu_hat + s * std::sqrt(1 + 1.0 / days) * t95;
  }
  const double sd = std::sqrt(0.95 * 0.05 / months);
  CHECK(std::abs(covered_exact / double(months) - 0.95) < 3.3 * sd);  // the interval itself (the test's own check)
  CHECK(std::abs(covered / double(months) - 0.95) < 3.3 * sd + 0.007);  // + the 1,000-draw quantile's own error
  CHECK(covered_plugin / double(months) < 0.95 - 3.3 * sd);  // about 0.92 with 8 days
}

namespace {

constexpr const char* kFittedScenario = R"({"stop": {"jobs": 1},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 10}}, "service_ms": {"exp": {"mean": 100}},
                 "fitted": {"service_times": 100, "arrivals": 2500}}],
  "consumers": [{"queue": "work", "prefetch": 1, "count": 2}]})";

}  // namespace

TEST_CASE("parameter uncertainty: each run redraws from its own streams and reports what it drew") {
  std::vector<double> means, volumes;
  for (std::uint64_t r = 0; r < 400; ++r) {
    nlohmann::json doc = brokersim::parse_json_text(kFittedScenario, "test");
    doc["parameter_uncertainty"] = true;
    brokersim::Scenario s = brokersim::load_scenario(doc, ".");
    s.replication = r;
    const brokersim::RunResult run = brokersim::simulate(s, {});
    means.push_back(run.service_means_ms.at(0));
    volumes.push_back(run.volumes.at(0));
  }
  // The service mean over 100 values: sd 10 ms; the rates' level over 2,500 arrivals: sd 2%.
  CHECK(pu_variance_agrees(pu_moments(means).var, 100.0, 400));
  CHECK(pu_variance_agrees(pu_moments(volumes).var, 1.0 / 2500, 400));
  CHECK(std::abs(pu_moments(means).mean - 100) < 3.3 * 10 / std::sqrt(400.0));
  // Without it, every run has the fitted law, and run --json has neither figure.
  nlohmann::json doc = brokersim::parse_json_text(kFittedScenario, "test");
  const brokersim::RunResult plain = brokersim::simulate(brokersim::load_scenario(doc, "."), {});
  CHECK(plain.service_means_ms.at(0) == doctest::Approx(100));
  CHECK(plain.volumes.at(0) == 1);
  brokersim::test::ScratchDir dir("parameter-uncertainty");
  const std::string path = dir.write("fitted.json", kFittedScenario);
  const auto off = brokersim::test::run_cli({"run", path, "--json"});
  CHECK(off.out.find("service_mean_ms") == std::string::npos);
  const auto on = brokersim::test::run_cli({"run", path, "--json", "--set", "parameter_uncertainty=true"});
  INFO(on.err);
  const auto j = nlohmann::json::parse(on.out);
  CHECK(j["producers"]["0"]["service_mean_ms"].get<double>() > 0);
  CHECK(j["producers"]["0"]["volume"].get<double>() > 0);
}

TEST_CASE("parameter uncertainty refusals name the key and what it expects") {
  CHECK(load_error(kFittedScenario, {"parameter_uncertainty=1"}) == "parameter_uncertainty: expected true or false, got 1");
  CHECK(load_error(kFittedScenario, {"producers.0.fitted=null", "parameter_uncertainty=true"})
            .starts_with("parameter_uncertainty: expected false, or a producer with fitted sizes to redraw from"));
  CHECK(load_error(kFittedScenario, {"producers.0.service_ms=100"})
            .starts_with("producers.0.fitted.service_times: expected no count beside a service_ms that was not fitted"));
  CHECK(load_error(kFittedScenario, {"producers.0.fitted.service_times=1"}) ==
        "producers.0.fitted.service_times: expected an integer from 2 to 1e12, got 1");
  CHECK(load_error(kFittedScenario, {"producers.0.fitted.jobs=1"}).starts_with("producers.0.fitted.jobs: unknown key"));
  CHECK(load_error(kFittedScenario, {"producers.0.volume={\"per_run\": {\"gamma\": {\"shape\": 40, \"scale\": 0.025}}, "
                                     "\"fitted\": {\"days\": 9, \"cv_low\": 0.1, \"cv_high\": 0.3}}",
                                     "parameter_uncertainty=true"})
            .starts_with("producers.0.volume.per_run: expected a lognormal"));
  CHECK(load_error(kFittedScenario, {"parameter_uncertainty=false"}) == "(no error)");
}

TEST_CASE("fit --parameter-uncertainty writes the sizes and the switch - and plan says what its runs cover") {
  brokersim::test::ScratchDir dir("fit-parameter-uncertainty");
  std::string csv = "enqueued_at,started_at,finished_at\n";
  sim::Rng rng(4, 0, "log");
  double t = 1'780'012'800;
  for (int j = 0; j < 600; ++j) {
    t += rng.exponential(2.0);
    csv += std::to_string(t) + "," + std::to_string(t + 0.01) + "," + std::to_string(t + 0.01 + rng.exponential(0.5)) + "\n";
  }
  const std::string log = dir.write("jobs.csv", csv);
  const std::string out = dir.path("fitted.json");
  const auto r = brokersim::test::run_cli({"fit", log, "--parameter-uncertainty", "--out", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("  Fitted from 600 service times and 600 arrivals: each run redraws the service law and the rates' level") !=
        std::string::npos);
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["parameter_uncertainty"] == true);
  CHECK(j["producers"][0]["fitted"]["service_times"] == 600);
  CHECK(j["producers"][0]["fitted"]["arrivals"] == 600);
  const auto plan = brokersim::test::run_cli({"plan", out, "--vary", "consumers.0.count=1,2", "--target",
                                              "wait_ms.queue.p99<=60000 in 95% of runs", "--replications", "59", "--json"});
  INFO(plan.err);
  const auto cover = nlohmann::json::parse(plan.out)["risk"]["runs_cover"];
  CHECK(cover["parameters"]["redrawn"] == true);
  CHECK(cover["parameters"]["fitted"][0]["service_times"] == 600);
  CHECK(cover["statement"].get<std::string>().find("and over the fitted parameters' uncertainty, each run redrawing them "
                                                   "(producers.0 the service law from 600 values, the rates' level from 600 arrivals") !=
        std::string::npos);
  const auto point = brokersim::test::run_cli({"plan", out, "--vary", "consumers.0.count=1,2", "--target",
                                               "wait_ms.queue.p99<=60000 in 95% of runs", "--replications", "59",
                                               "--set", "parameter_uncertainty=false"});
  CHECK(point.out.find("with the fitted parameters at their point estimates") != std::string::npos);
  CHECK(brokersim::test::run_cli({"fit", log, "--parameter-uncertainty", "--check", log}).status == 2);
}

TEST_CASE("parameter uncertainty: a redraw that would not make a law keeps the fitted one") {
  sim::Rng rng(9, 0, "edge");
  // A gamma shape so large that k trigamma(k) - 1 rounds to 0: the information is infinite.
  const Distribution g = brokersim::redraw_fitted(Distribution::gamma(1e17, 2.0), 100, rng);
  CHECK(g.param_a() == 1e17);
  CHECK(g.param_b() == 2.0);
  // A Weibull shape so small that the scale's log-spread overflows to 0 or infinity: the fitted
  // law is kept (a scale of 0 would draw 0 times infinity).
  for (int i = 0; i < 50; ++i) {
    const Distribution w = brokersim::redraw_fitted(Distribution::weibull(1e-300, 5.0), 2, rng);
    CHECK(w.param_b() > 0);
    CHECK(std::isfinite(w.param_b()));
  }
}
