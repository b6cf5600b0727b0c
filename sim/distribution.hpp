// Distributions of durations and values, sampled from an Rng by our own code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/rng.hpp"

namespace sim {

class Distribution {
 public:
  enum class Kind : std::uint8_t { Const, Exp, Uniform, Normal, Lognormal, Empirical, Gamma, Weibull };

  static Distribution constant(double x) { return Distribution(Kind::Const, x, 0); }
  static Distribution exp(double mean) { return Distribution(Kind::Exp, mean, 0); }
  static Distribution uniform(double lo, double hi) { return Distribution(Kind::Uniform, lo, hi); }
  // `truncate_at_zero`: durations cannot be negative, so a normal duration is conditioned on
  // x >= 0 (rejection; callers keep mean >= 0 so at least half the draws are accepted).
  static Distribution normal(double mean, double sd, bool truncate_at_zero) {
    Distribution d(Kind::Normal, mean, sd);
    d.truncate_ = truncate_at_zero;
    return d;
  }
  // Parameterised as users think of service times: by mean and coefficient of variation.
  static Distribution lognormal(double mean, double cv) {
    Distribution d(Kind::Lognormal, mean, cv);
    const double s2 = std::log1p(cv * cv);
    d.sigma_ = std::sqrt(s2);
    d.mu_ = std::log(mean) - s2 / 2.0;
    return d;
  }
  // Gamma with shape k > 0 and scale theta > 0 (mean k * theta, cv 1 / sqrt(k)).
  static Distribution gamma(double shape, double scale) { return Distribution(Kind::Gamma, shape, scale); }
  // Weibull with shape k > 0 and scale lambda > 0: P(X > x) = exp(-(x / lambda)^k).
  static Distribution weibull(double shape, double scale) { return Distribution(Kind::Weibull, shape, scale); }
  static Distribution empirical(std::vector<double> xs) {
    Distribution d(Kind::Empirical, 0, 0);
    d.values_ = std::move(xs);
    return d;
  }
  // The values drawn with probabilities proportional to `weights` (>= 0, as many, some > 0): a
  // resample of many values kept as weights on the distinct ones, in memory of their number.
  static Distribution empirical_weighted(std::vector<double> xs, const std::vector<double>& weights) {
    Distribution d = empirical(std::move(xs));
    double sum = 0;
    d.cumulative_.reserve(weights.size());
    for (double w : weights) d.cumulative_.push_back(sum += w);
    return d;
  }

  Distribution() = default;

  // Constants (zero latencies, fixed deadlines) are most of the draws of a run: answered inline,
  // without the call the other kinds cost.
  double sample(Rng& rng) const { return kind_ == Kind::Const ? a_ : sample_random(rng); }

  double sample_random(Rng& rng) const {
    switch (kind_) {
      case Kind::Const: return a_;
      case Kind::Exp: return rng.exponential(a_);
      case Kind::Uniform: return a_ + (b_ - a_) * rng.uniform();
      case Kind::Normal: {
        double x = a_ + b_ * rng.standard_normal();
        while (truncate_ && x < 0) x = a_ + b_ * rng.standard_normal();
        return x;
      }
      case Kind::Lognormal: return std::exp(mu_ + sigma_ * rng.standard_normal());
      case Kind::Empirical:
        if (!cumulative_.empty()) return weighted(rng);
        return values_[rng.below(values_.size())];
      case Kind::Gamma: return b_ * standard_gamma(a_, rng);
      case Kind::Weibull: return b_ * std::pow(-std::log(rng.uniform_pos()), 1.0 / a_);
    }
    return a_;
  }

  // Gamma(k, 1) by Marsaglia and Tsang (2000), "A simple method for generating gamma variables":
  // for k >= 1, squeeze-free acceptance of d * (1 + c z)^3 (d = k - 1/3, c = 1 / sqrt(9 d)), which
  // accepts over 95% of proposals for every k; for k < 1, Gamma(k + 1) * U^(1/k) (their section 6).
  static double standard_gamma(double k, Rng& rng) {
    if (k < 1.0) {
      const double u = rng.uniform_pos();
      return standard_gamma(k + 1.0, rng) * std::pow(u, 1.0 / k);
    }
    const double d = k - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double z, v;
      do {
        z = rng.standard_normal();
        v = 1.0 + c * z;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = rng.uniform_pos();
      if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) return d * v;
    }
  }

  // The distribution of `factor * X` (used once, to turn milliseconds into nanoseconds).
  Distribution scaled(double factor) const {
    Distribution d = *this;
    switch (kind_) {
      case Kind::Const: case Kind::Exp: d.a_ *= factor; break;
      case Kind::Uniform: case Kind::Normal: d.a_ *= factor; d.b_ *= factor; break;
      case Kind::Lognormal: d = lognormal(a_ * factor, b_); break;
      case Kind::Empirical: for (double& v : d.values_) v *= factor; break;
      case Kind::Gamma: case Kind::Weibull: d.b_ *= factor; break;
    }
    d.truncate_ = truncate_;
    return d;
  }

  // Mean of the untruncated distribution (exact for every kind but a truncated normal).
  double mean() const {
    switch (kind_) {
      case Kind::Const: case Kind::Exp: case Kind::Normal: case Kind::Lognormal: return a_;
      case Kind::Uniform: return (a_ + b_) / 2.0;
      case Kind::Empirical: {
        double s = 0;
        if (!cumulative_.empty()) {
          for (std::size_t i = 0; i < values_.size(); ++i) s += values_[i] * (cumulative_[i] - (i ? cumulative_[i - 1] : 0.0));
          return s / cumulative_.back();
        }
        for (double v : values_) s += v;
        return values_.empty() ? 0.0 : s / static_cast<double>(values_.size());
      }
      case Kind::Gamma: return a_ * b_;
      case Kind::Weibull: return b_ * std::tgamma(1.0 + 1.0 / a_);
    }
    return a_;
  }

  Kind kind() const { return kind_; }
  bool is_constant() const { return kind_ == Kind::Const; }
  bool is_zero() const { return kind_ == Kind::Const && a_ == 0.0; }
  // Const, Exp, Normal, Lognormal: the mean; Uniform: min; Gamma, Weibull: the shape.
  double param_a() const { return a_; }
  // Uniform: max; Normal: sd; Lognormal: cv; Gamma, Weibull: the scale.
  double param_b() const { return b_; }
  const std::vector<double>& values() const { return values_; }
  // Empirical: the running sums of the weights (empty: every value equally likely).
  const std::vector<double>& cumulative_weights() const { return cumulative_; }

 private:
  double weighted(Rng& rng) const {
    const double u = rng.uniform() * cumulative_.back();
    const auto at = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
    return values_[at == cumulative_.end() ? values_.size() - 1 : static_cast<std::size_t>(at - cumulative_.begin())];
  }

  Distribution(Kind k, double a, double b) : kind_(k), a_(a), b_(b) {}
  Kind kind_ = Kind::Const;
  double a_ = 0, b_ = 0;
  double mu_ = 0, sigma_ = 0;
  bool truncate_ = false;
  std::vector<double> values_;
  std::vector<double> cumulative_;
};

}  // namespace sim
