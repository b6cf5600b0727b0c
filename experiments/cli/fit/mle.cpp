// Maximum likelihood fits. Each closed form or Newton iteration is the textbook one (Johnson, Kotz
// and Balakrishnan, Continuous Univariate Distributions, vol. 1); standard errors come from the
// expected Fisher information at the estimate.
#include "experiments/cli/fit/mle.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

namespace brokersim::fit {

namespace {

constexpr double kZ975 = 1.959963984540054;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Six significant digits: what the fitted scenario shows (far below any interval's width).
double round6(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return std::strtod(buf, nullptr);
}

// Every parameter here is positive: its interval is Wald's on the log scale (se(log v) = se / v by
// the delta method), value * exp(-+1.96 se / v). It never reaches 0 or below, as the plain
// value -+ 1.96 se does on small samples, and has the same asymptotic coverage.
Estimate wald(const std::string& name, double value, double se) {
  const double f = std::exp(kZ975 * se / value);
  return {name, value, value / f, value * f};
}

struct Logs {
  double mean_log = 0, mean = 0;
  std::vector<double> logs;
};

Logs logs_of(const std::vector<double>& xs) {
  Logs l;
  l.logs.reserve(xs.size());
  double s = 0, sl = 0;
  for (double x : xs) {
    const double lx = std::log(x);
    l.logs.push_back(lx);
    s += x;
    sl += lx;
  }
  const auto n = static_cast<double>(xs.size());
  l.mean = s / n;
  l.mean_log = sl / n;
  return l;
}

void need(const std::vector<double>& xs, const char* what) {
  if (xs.size() < 2) throw std::invalid_argument(std::string(what) + ": fewer than 2 positive values");
  if (xs.front() <= 0) throw std::invalid_argument(std::string(what) + ": values must be > 0");
}

void finish(FittedDistribution& f, const std::vector<double>& sorted, int k) {
  f.aic = 2.0 * k - 2.0 * f.log_likelihood;
  f.ks = ks_distance(sorted, f);
  f.ks_p = kolmogorov_p(f.ks, static_cast<double>(sorted.size()));
}

}  // namespace

Estimate exponential_mean_interval(double mean, std::size_t n) {
  // 2 n mean / m ~ chi-square(2n) for exponential samples of mean m: the exact interval is
  // 2 n mean / chi2(0.975; 2n) .. 2 n mean / chi2(0.025; 2n), and chi2(p; 2n) = 2 gamma_p_inv(n, p).
  const double k = static_cast<double>(n);
  return {"mean", mean, k * mean / boost::math::gamma_p_inv(k, 0.975), k * mean / boost::math::gamma_p_inv(k, 0.025)};
}

double t975(double dof) {
  if (!(dof >= 1)) return kNaN;
  return boost::math::quantile(boost::math::students_t(dof), 0.975);
}

double FittedDistribution::cdf(double x) const {
  if (x <= 0 && family != Family::Empirical) return 0.0;
  switch (family) {
    case Family::Exponential: return -std::expm1(-x / a);
    case Family::Lognormal: return 0.5 * std::erfc(-(std::log(x) - a) / (b * std::numbers::sqrt2));
    case Family::Gamma: return boost::math::gamma_p(a, x / b);
    case Family::Weibull: return -std::expm1(-std::pow(x / b, a));
    case Family::Empirical:
      return static_cast<double>(std::upper_bound(values.begin(), values.end(), x) - values.begin()) /
             static_cast<double>(values.size());
  }
  return kNaN;
}

double FittedDistribution::pdf(double x) const {
  if (x <= 0) return 0.0;
  switch (family) {
    case Family::Exponential: return std::exp(-x / a) / a;
    case Family::Lognormal: {
      const double z = (std::log(x) - a) / b;
      return std::exp(-0.5 * z * z) / (x * b * std::sqrt(2.0 * std::numbers::pi));
    }
    case Family::Gamma: return std::exp((a - 1) * std::log(x / b) - x / b - std::lgamma(a)) / b;
    case Family::Weibull: return a / b * std::pow(x / b, a - 1) * std::exp(-std::pow(x / b, a));
    case Family::Empirical: return 0.0;
  }
  return kNaN;
}

double FittedDistribution::quantile(double p) const {
  switch (family) {
    case Family::Exponential: return -a * std::log1p(-p);
    case Family::Lognormal: return std::exp(a + b * std::numbers::sqrt2 * boost::math::erf_inv(2 * p - 1));
    case Family::Gamma: return b * boost::math::gamma_p_inv(a, p);
    case Family::Weibull: return b * std::pow(-std::log1p(-p), 1.0 / a);
    case Family::Empirical: {
      const auto i = static_cast<std::size_t>(std::min(std::floor(p * static_cast<double>(values.size())),
                                                       static_cast<double>(values.size() - 1)));
      return values[i];
    }
  }
  return kNaN;
}

FittedDistribution fit_exponential(const std::vector<double>& sorted) {
  if (sorted.empty()) throw std::invalid_argument("exp: no values");
  FittedDistribution f;
  f.family = FittedDistribution::Family::Exponential;
  f.name = "exp";
  double s = 0;
  for (double x : sorted) s += x;
  const auto n = static_cast<double>(sorted.size());
  f.a = s / n;
  if (!(f.a > 0)) throw std::invalid_argument("exp: mean must be > 0");
  f.log_likelihood = -n * std::log(f.a) - n;
  f.params = {exponential_mean_interval(f.a, sorted.size())};
  f.syntax = {{"exp", {{"mean", round6(f.a)}}}};
  finish(f, sorted, 1);
  return f;
}

FittedDistribution fit_lognormal(const std::vector<double>& sorted) {
  need(sorted, "lognormal");
  FittedDistribution f;
  f.family = FittedDistribution::Family::Lognormal;
  f.name = "lognormal";
  const Logs l = logs_of(sorted);
  const auto n = static_cast<double>(sorted.size());
  double ss = 0, sum_log = 0;
  for (double lx : l.logs) {
    ss += (lx - l.mean_log) * (lx - l.mean_log);
    sum_log += lx;
  }
  const double mu = l.mean_log, s2 = ss / n, sigma = std::sqrt(s2);
  if (!(sigma > 0)) throw std::invalid_argument("lognormal: all values equal");
  f.a = mu;
  f.b = sigma;
  f.log_likelihood = -sum_log - 0.5 * n * std::log(2 * std::numbers::pi * s2) - 0.5 * n;
  // mean = exp(mu + s2/2), cv = sqrt(exp(s2) - 1); var(mu) = s2/n, var(sigma) = s2/(2n), independent.
  const double mean = std::exp(mu + s2 / 2), cv = std::sqrt(std::expm1(s2));
  const double var_mu = s2 / n, var_sigma = s2 / (2 * n);
  const double se_mean = mean * std::sqrt(var_mu + sigma * sigma * var_sigma);
  const double se_cv = sigma * std::exp(s2) / cv * std::sqrt(var_sigma);
  f.params = {wald("mean", mean, se_mean), wald("cv", cv, se_cv)};
  f.syntax = {{"lognormal", {{"mean", round6(mean)}, {"cv", round6(cv)}}}};
  finish(f, sorted, 2);
  return f;
}

FittedDistribution fit_gamma(const std::vector<double>& sorted) {
  need(sorted, "gamma");
  FittedDistribution f;
  f.family = FittedDistribution::Family::Gamma;
  f.name = "gamma";
  const Logs l = logs_of(sorted);
  const auto n = static_cast<double>(sorted.size());
  const double s = std::log(l.mean) - l.mean_log;  // >= 0 by Jensen; 0 only when all are equal
  if (!(s > 1e-12)) throw std::invalid_argument("gamma: all values equal");
  // Minka's starting point, then Newton on log k - digamma(k) = s (concave in log k: converges).
  double k = (3 - s + std::sqrt((s - 3) * (s - 3) + 24 * s)) / (12 * s);
  for (int it = 0; it < 100; ++it) {
    const double g = std::log(k) - boost::math::digamma(k) - s;
    const double dg = 1 / k - boost::math::trigamma(k);
    const double next = k - g / dg;
    const double bounded = next > 0 ? next : k / 2;
    if (std::fabs(bounded - k) <= 1e-12 * k) {
      k = bounded;
      break;
    }
    k = bounded;
  }
  const double theta = l.mean / k;
  f.a = k;
  f.b = theta;
  f.log_likelihood = (k - 1) * l.mean_log * n - n * l.mean / theta - n * k * std::log(theta) - n * std::lgamma(k);
  const double tg = boost::math::trigamma(k);
  const double denom = n * (k * tg - 1);
  f.params = {wald("shape", k, std::sqrt(k / denom)), wald("scale", theta, theta * std::sqrt(tg / denom))};
  f.syntax = {{"gamma", {{"shape", round6(k)}, {"scale", round6(theta)}}}};
  finish(f, sorted, 2);
  return f;
}

FittedDistribution fit_weibull(const std::vector<double>& sorted) {
  need(sorted, "weibull");
  FittedDistribution f;
  f.family = FittedDistribution::Family::Weibull;
  f.name = "weibull";
  const Logs l = logs_of(sorted);
  const auto n = static_cast<double>(sorted.size());
  // Work with y = x / g (g the geometric mean), so that y^k stays near 1 for any k: the profile
  // score is then h(k) = sum y^k ln y / sum y^k - 1/k = 0 (mean ln y = 0), increasing in k.
  double var_log = 0;
  for (double lx : l.logs) var_log += (lx - l.mean_log) * (lx - l.mean_log);
  var_log /= n;
  if (!(var_log > 0)) throw std::invalid_argument("weibull: all values equal");
  // Every sum is taken relative to its largest term, exp(k * top), so no term overflows (the
  // ratios below do not depend on that factor).
  double top = 0;
  for (double lx : l.logs) top = std::max(top, lx - l.mean_log);
  const auto score = [&](double k, double& h, double& dh) {
    double s0 = 0, s1 = 0, s2 = 0;
    for (double lx : l.logs) {
      const double ly = lx - l.mean_log;
      const double yk = std::exp(k * (ly - top));
      s0 += yk;
      s1 += yk * ly;
      s2 += yk * ly * ly;
    }
    h = s1 / s0 - 1 / k;
    dh = (s2 * s0 - s1 * s1) / (s0 * s0) + 1 / (k * k);
  };
  double k = 1.2825 / std::sqrt(var_log);  // pi / sqrt(6) / sd(log x): the Gumbel moment estimate
  double lo = 0, hi = std::numeric_limits<double>::infinity();
  for (int it = 0; it < 200; ++it) {
    double h = 0, dh = 0;
    score(k, h, dh);
    if (h < 0) lo = k; else hi = k;
    double next = k - h / dh;
    if (!(next > lo && next < hi)) next = std::isfinite(hi) ? (lo + hi) / 2 : 2 * k;  // keep the bracket
    if (std::fabs(next - k) <= 1e-12 * k) {
      k = next;
      break;
    }
    k = next;
  }
  double s0 = 0;
  for (double lx : l.logs) s0 += std::exp(k * (lx - l.mean_log - top));
  const double lambda = std::exp(l.mean_log + top) * std::pow(s0 / n, 1 / k);
  f.a = k;
  f.b = lambda;
  // sum (x / lambda)^k = n at the optimum.
  f.log_likelihood = n * std::log(k) - n * k * std::log(lambda) + (k - 1) * l.mean_log * n - n;
  // var(k) = 6 k^2 / (pi^2 n), var(lambda) = (lambda/k)^2 (1 + 6 (1 - gamma)^2 / pi^2) / n.
  const double pi2 = std::numbers::pi * std::numbers::pi, one_minus_euler = 1 - std::numbers::egamma;
  f.params = {wald("shape", k, k * std::sqrt(6 / (pi2 * n))),
              wald("scale", lambda, lambda / k * std::sqrt((1 + 6 * one_minus_euler * one_minus_euler / pi2) / n))};
  f.syntax = {{"weibull", {{"shape", round6(k)}, {"scale", round6(lambda)}}}};
  finish(f, sorted, 2);
  return f;
}

FittedDistribution fit_empirical(const std::vector<double>& sorted) {
  if (sorted.empty()) throw std::invalid_argument("empirical: no values");
  FittedDistribution f;
  f.family = FittedDistribution::Family::Empirical;
  f.name = "empirical";
  const std::size_t n = sorted.size();
  if (n <= kEmpiricalValues) {
    f.values = sorted;
  } else {
    f.values.reserve(kEmpiricalValues);
    for (std::size_t i = 0; i < kEmpiricalValues; ++i) {
      const double p = (static_cast<double>(i) + 0.5) / static_cast<double>(kEmpiricalValues);
      f.values.push_back(sorted[static_cast<std::size_t>(p * static_cast<double>(n))]);
    }
  }
  nlohmann::ordered_json vs = nlohmann::ordered_json::array();
  for (double& v : f.values) {
    v = std::round(v * 1e6) / 1e6;  // to the nanosecond
    vs.push_back(v);
  }
  f.syntax = {{"empirical", vs}};
  f.log_likelihood = kNaN;
  f.aic = kNaN;
  f.params = {{"values", static_cast<double>(f.values.size()), kNaN, kNaN}};
  f.ks = ks_distance_two_sample(sorted, f.values);
  f.ks_p = kNaN;
  return f;
}

double ks_distance(const std::vector<double>& sorted, const FittedDistribution& f) {
  const auto n = static_cast<double>(sorted.size());
  double d = 0;
  for (std::size_t i = 0; i < sorted.size();) {
    // Ties: F_n jumps once, over all of them.
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const double F = f.cdf(sorted[i]);
    d = std::max({d, F - static_cast<double>(i) / n, static_cast<double>(j) / n - F});
    i = j;
  }
  return d;
}

double ks_distance_two_sample(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return kNaN;
  const auto na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] == x) ++i;
    while (j < b.size() && b[j] == x) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  return d;
}

double kolmogorov_p(double d, double n) {
  if (!(d > 0) || !(n > 0)) return 1.0;
  const double sn = std::sqrt(n);
  const double lambda = (sn + 0.12 + 0.11 / sn) * d;
  if (lambda < 0.2) return 1.0;
  double sum = 0;
  for (int k = 1; k <= 100; ++k) {
    const double term = std::exp(-2.0 * k * k * lambda * lambda);
    sum += (k % 2 == 1 ? 1.0 : -1.0) * term;
    if (term < 1e-17) break;
  }
  return std::clamp(2 * sum, 0.0, 1.0);
}

ServiceFit fit_service_times(std::vector<double> xs) {
  ServiceFit out;
  std::sort(xs.begin(), xs.end());
  out.n = xs.size();
  double s = 0, ss = 0;
  for (double x : xs) s += x;
  out.mean = xs.empty() ? 0 : s / static_cast<double>(xs.size());
  for (double x : xs) ss += (x - out.mean) * (x - out.mean);
  out.cv = xs.size() > 1 && out.mean > 0 ? std::sqrt(ss / static_cast<double>(xs.size() - 1)) / out.mean : 0;
  const auto first_positive = std::upper_bound(xs.begin(), xs.end(), 0.0);
  out.zeros = static_cast<std::size_t>(first_positive - xs.begin());
  const std::vector<double> positive(first_positive, xs.end());
  for (auto fit : {fit_exponential, fit_lognormal, fit_gamma, fit_weibull}) {
    try {
      out.fits.push_back(fit(positive));
    } catch (const std::exception&) {
      // Too few or all-equal values: that family has no maximum likelihood estimate.
    }
  }
  std::stable_sort(out.fits.begin(), out.fits.end(),
                   [](const FittedDistribution& a, const FittedDistribution& b) { return a.aic < b.aic; });
  out.sample = std::move(xs);
  if (!out.sample.empty()) out.fits.push_back(fit_empirical(out.sample));
  char buf[200];
  if (out.fits.size() == 1) {
    out.chosen = 0;
    out.why = "fewer than 2 distinct positive service times: no family can be fitted, the empirical distribution is used";
  } else if (out.fits.front().ks_p < 0.01) {
    out.chosen = out.fits.size() - 1;
    std::snprintf(buf, sizeof buf,
                  "the best by AIC (%s) is rejected by the Kolmogorov-Smirnov test (D = %.4f, p = %.2g < 0.01): "
                  "the empirical distribution is used",
                  out.fits.front().name.c_str(), out.fits.front().ks, out.fits.front().ks_p);
    out.why = buf;
  } else {
    out.chosen = 0;
    std::snprintf(buf, sizeof buf, "lowest AIC, and the Kolmogorov-Smirnov test does not reject it (D = %.4f, p = %.2g)",
                  out.fits.front().ks, out.fits.front().ks_p);
    out.why = buf;
  }
  return out;
}

}  // namespace brokersim::fit
