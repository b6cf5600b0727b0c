// Service-time distributions fitted by maximum likelihood: exponential, lognormal, gamma and
// Weibull, with 95% confidence intervals from the observed Fisher information, AIC, and the
// Kolmogorov-Smirnov distance to the sample; and the empirical distribution beside them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace brokersim::fit {

// One parameter as brokersim's distribution syntax names it, with its 95% interval: exact for the
// exponential's mean (chi-square); for the others Wald's on the log scale, from the inverse Fisher
// information (by the delta method for derived parameters), so that no bound is 0 or below.
struct Estimate {
  std::string name;
  double value = 0, lo = 0, hi = 0;
};

struct FittedDistribution {
  enum class Family { Exponential, Lognormal, Gamma, Weibull, Empirical };
  Family family = Family::Exponential;
  std::string name;                 // "exp", "lognormal", "gamma", "weibull", "empirical"
  std::vector<Estimate> params;     // exp: mean; lognormal: mean, cv; gamma, weibull: shape, scale
  double log_likelihood = 0, aic = 0;  // NaN for the empirical (no density)
  double ks = 0;                    // sup |F_n - F|
  double ks_p = 1;                  // asymptotic Kolmogorov p-value (conservative: fitted parameters)
  nlohmann::ordered_json syntax;    // brokersim's distribution syntax, in ms
  // Natural parameters: exp (mean, -); lognormal (mu, sigma) of log x; gamma (shape, scale);
  // weibull (shape, scale).
  double a = 0, b = 0;
  std::vector<double> values;       // empirical: the values it draws from, sorted

  double cdf(double x) const;
  double pdf(double x) const;       // 0 for the empirical
  double quantile(double p) const;  // 0 < p < 1
};

struct ServiceFit {
  std::size_t n = 0;                // service times
  std::size_t zeros = 0;            // of which 0: left out of the parametric fits (no density at 0)
  double mean = 0, cv = 0;
  std::vector<FittedDistribution> fits;  // parametric by AIC (best first), then the empirical
  std::size_t chosen = 0;           // index into fits
  std::string why;                  // why it was chosen, one sentence
  std::vector<double> sample;       // the service times, sorted (ms)
};

// At most this many values in a fitted empirical distribution: the quantiles (i + 1/2) / m of the
// sample when it has more.
inline constexpr std::size_t kEmpiricalValues = 1000;

// Fits every family to `xs` (ms, >= 0; at least one value). The chosen fit is the parametric one
// with the lowest AIC, unless the Kolmogorov-Smirnov test rejects it at the 1% level (then no
// family describes the sample and the empirical distribution is chosen), or fewer than 2 positive
// values make a fit impossible.
ServiceFit fit_service_times(std::vector<double> xs);

// The maximum likelihood fits on their own (sorted positive values; throw std::invalid_argument on
// fewer than 2 values or, but for the exponential, all values equal).
FittedDistribution fit_exponential(const std::vector<double>& sorted);
FittedDistribution fit_lognormal(const std::vector<double>& sorted);
FittedDistribution fit_gamma(const std::vector<double>& sorted);
FittedDistribution fit_weibull(const std::vector<double>& sorted);
FittedDistribution fit_empirical(const std::vector<double>& sorted);

// sup |F_n - F| over a sorted sample.
double ks_distance(const std::vector<double>& sorted, const FittedDistribution& f);
// Two-sample Kolmogorov-Smirnov distance between two sorted samples.
double ks_distance_two_sample(const std::vector<double>& a, const std::vector<double>& b);
// P(sqrt(n) D > t sqrt(n)) under the null, by Kolmogorov's limiting distribution (with Stephens'
// small-sample correction: lambda = (sqrt(n) + 0.12 + 0.11 / sqrt(n)) D).
double kolmogorov_p(double d, double n_effective);

// The exact 95% interval of an exponential mean from `n` values (n >= 1) of sample mean `mean`:
// 2 n mean / chi2(0.975; 2n) .. 2 n mean / chi2(0.025; 2n). Positive, and covering at exactly 95%.
Estimate exponential_mean_interval(double mean, std::size_t n);

// Student t quantile 0.975 with `dof` degrees of freedom.
double t975(double dof);

}  // namespace brokersim::fit
