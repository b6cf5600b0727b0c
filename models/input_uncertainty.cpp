#include "models/input_uncertainty.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <boost/math/special_functions/trigamma.hpp>

namespace brokersim {

namespace {

using sim::Distribution;

// (log a, log b) from a bivariate normal around the fitted (log a, log b): variances v_a, v_b
// and covariance c of the log parameters.
struct LogPair { double a, b; };
LogPair bivariate_log_normal(double a, double b, double v_a, double v_b, double c, sim::Rng& rng) {
  const double sa = std::sqrt(v_a), sb = std::sqrt(v_b);
  const double rho = std::clamp(c / (sa * sb), -1.0, 1.0);
  const double z1 = rng.standard_normal(), z2 = rng.standard_normal();
  return {a * std::exp(sa * z1), b * std::exp(sb * (rho * z1 + std::sqrt(1 - rho * rho) * z2))};
}

}  // namespace

double chi_square(double dof, sim::Rng& rng) { return 2.0 * Distribution::standard_gamma(dof / 2.0, rng); }

bool redrawable(const Distribution& d) {
  switch (d.kind()) {
    case Distribution::Kind::Exp: case Distribution::Kind::Lognormal: case Distribution::Kind::Gamma:
    case Distribution::Kind::Weibull: case Distribution::Kind::Empirical:
      return true;
    default: return false;
  }
}

namespace {

Distribution redraw(const Distribution& fitted, std::uint64_t n, sim::Rng& rng) {
  const double nd = static_cast<double>(n);
  switch (fitted.kind()) {
    case Distribution::Kind::Exp:
      // The mean of n exponentials of mean m: m Gamma(n, 1) / n.
      return Distribution::exp(fitted.param_a() * Distribution::standard_gamma(nd, rng) / nd);
    case Distribution::Kind::Lognormal: {
      // log x normal (mu, sigma^2): the MLE from n values has mu* ~ N(mu, sigma^2 / n) and
      // n sigma*^2 / sigma^2 ~ chi2(n - 1), independently.
      const double s2 = std::log1p(fitted.param_b() * fitted.param_b());
      const double mu = std::log(fitted.param_a()) - s2 / 2;
      const double mu_star = mu + std::sqrt(s2 / nd) * rng.standard_normal();
      const double s2_star = s2 * chi_square(nd - 1, rng) / nd;
      return Distribution::lognormal(std::exp(mu_star + s2_star / 2), std::sqrt(std::expm1(s2_star)));
    }
    case Distribution::Kind::Gamma: {
      // Inverse Fisher information of (shape k, scale theta), per value: with
      // c = k trigamma(k) - 1, var k = k / c, var theta = theta^2 trigamma(k) / c, cov = -theta / c.
      const double k = fitted.param_a(), theta = fitted.param_b();
      const double tg = boost::math::trigamma(k);
      const double c = nd * (k * tg - 1);
      if (!(c > 0)) return fitted;  // a shape so large that k trigamma(k) rounds to 1: known exactly
      const LogPair p = bivariate_log_normal(k, theta, 1 / (k * c), tg / c, -1 / (k * c), rng);
      return Distribution::gamma(p.a, p.b);
    }
    case Distribution::Kind::Weibull: {
      // Per value, for (shape k, scale lambda): var k = 6 k^2 / pi^2,
      // var lambda = (lambda / k)^2 (1 + 6 (1 - euler)^2 / pi^2), cov = 6 (1 - euler) lambda / pi^2.
      const double k = fitted.param_a(), lambda = fitted.param_b();
      const double pi2 = std::numbers::pi * std::numbers::pi, g = 1 - std::numbers::egamma;
      const LogPair p = bivariate_log_normal(k, lambda, 6 / (pi2 * nd), (1 + 6 * g * g / pi2) / (k * k * nd),
                                             6 * g / (pi2 * nd * k), rng);
      return Distribution::weibull(p.a, p.b);
    }
    case Distribution::Kind::Empirical: {
      // The Bayesian bootstrap (Rubin 1981) of n values spread over the m given ones: weights
      // Dirichlet(n/m, ..., n/m), drawn as Gamma(n/m) each. Its mean and covariance are the
      // nonparametric bootstrap's multinomial(n, 1/m) / n to a factor n / (n + 1), and it holds m
      // weights whatever n is (a resample of n values would hold n: 8 MB a run at a million).
      const std::vector<double>& values = fitted.values();
      const double alpha = nd / static_cast<double>(values.size());
      std::vector<double> weights(values.size());
      double sum = 0;
      for (double& w : weights) sum += w = Distribution::standard_gamma(alpha, rng);
      if (!(sum > 0)) return fitted;  // every Gamma(tiny) underflowed: the fitted law itself
      return Distribution::empirical_weighted(values, weights);
    }
    default: return fitted;
  }
}

bool finite_positive(double x) { return std::isfinite(x) && x > 0; }

}  // namespace

Distribution redraw_fitted(const Distribution& fitted, std::uint64_t n, sim::Rng& rng) {
  Distribution d = redraw(fitted, n, rng);
  // A draw whose parameters do not make a law (an overflow far in a tail, for a law the loader
  // accepted at its edge) keeps the fitted one: a run never samples from NaN.
  const bool two_positive = d.kind() == Distribution::Kind::Gamma || d.kind() == Distribution::Kind::Weibull;
  if (d.kind() != Distribution::Kind::Empirical &&
      !(finite_positive(d.param_a()) && (two_positive ? finite_positive(d.param_b()) : std::isfinite(d.param_b()) && d.param_b() >= 0)))
    return fitted;
  return d;
}

double predictive_day_volume(double mean, double cv, int days, sim::Rng& day, sim::Rng& parameters) {
  const double d = static_cast<double>(days);
  const double s2 = std::log1p(cv * cv);
  // The day's own normal first, from the day's stream, as a plug-in draw takes it.
  const double z_day = day.standard_normal();
  const double sigma = std::sqrt(s2 * (d - 1) / chi_square(d - 1, parameters));
  const double mu = std::log(mean) - s2 / 2 + sigma / std::sqrt(d) * parameters.standard_normal();
  const double v = std::exp(mu + sigma * z_day);
  // Only a chi-square draw that underflowed to 0 (an infinite sigma) could make it NaN.
  return std::isnan(v) ? mean : v;
}

}  // namespace brokersim
