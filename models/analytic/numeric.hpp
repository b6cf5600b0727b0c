// Small numerical helpers shared by the analytic models (log-space arithmetic and the two
// finite Laplace-type integrals that appear in the M/M/c+D formulas). Header-only, internal
// to brokersim::analytic, but harmless to include elsewhere.
//
// Why log space: the unnormalised stationary weights of an M/M/c-type chain are a^n/n!, which
// overflow double for c ~ 170 and underflow for modest c when a << c. Every model in this
// library therefore carries log-weights and normalises with log-sum-exp.
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>

namespace brokersim::analytic::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// log(1 + e^z) without overflow.
inline double softplus(double z) {
  if (z > 0) return z + std::log1p(std::exp(-z));
  return std::log1p(std::exp(z));
}

// log(sum exp(x_i)); -inf entries are allowed (empty terms).
inline double logsumexp(std::initializer_list<double> xs) {
  double m = -kInf;
  for (double x : xs) m = std::max(m, x);
  if (m == -kInf) return -kInf;
  if (m == kInf) return kInf;
  double s = 0.0;
  for (double x : xs) s += std::exp(x - m);
  return m + std::log(s);
}

// log(e^L - 1) for L >= 0 (used for log(1/B - 1)).
inline double log_expm1(double L) {
  if (L > 30) return L + std::log1p(-std::exp(-L));
  return std::log(std::expm1(L));
}

// g1(k, D) = int_0^D e^{-k x} dx for k >= 0.
inline double g1_pos(double k, double D) {
  if (k * D < 1e-8) return D * (1.0 - 0.5 * k * D);
  return -std::expm1(-k * D) / k;
}

// g2(k, D) = int_0^D x e^{-k x} dx for k >= 0. Series for small kD (closed form cancels).
inline double g2_pos(double k, double D) {
  const double z = k * D;
  if (z < 0.5) {
    // sum_{j>=0} (-z)^j D^2 / (j! (j+2))
    double term = 1.0, s = 0.0;
    for (int j = 0; j < 40; ++j) {
      s += term / (j + 2);
      term *= -z / (j + 1);
    }
    return D * D * s;
  }
  return (1.0 - std::exp(-z) * (1.0 + z)) / (k * k);
}

// h(k, D) = int_0^D (D - x) e^{-k x} dx for k >= 0.
inline double h_pos(double k, double D) {
  const double z = k * D;
  if (z < 0.5) {
    // sum_{j>=0} (-z)^j D^2 / (j+2)!
    double term = 0.5, s = 0.0;  // j = 0: 1/2!
    for (int j = 0; j < 40; ++j) {
      s += term;
      term *= -z / (j + 3);
    }
    return D * D * s;
  }
  return (z + std::expm1(-z)) / (k * k);
}

// log int_0^D e^{-d x} dx for any real d (d < 0 means a growing exponential).
// For d < 0: int_0^D e^{|d| x} dx = e^{|d| D} g1(|d|, D), so the log never overflows.
inline double log_g1(double d, double D) {
  if (D <= 0) return -kInf;
  if (d >= 0) return std::log(g1_pos(d, D));
  return -d * D + std::log(g1_pos(-d, D));
}

// log int_0^D x e^{-d x} dx for any real d. For d < 0: = e^{|d| D} h(|d|, D).
inline double log_g2(double d, double D) {
  if (D <= 0) return -kInf;
  if (d >= 0) return std::log(g2_pos(d, D));
  return -d * D + std::log(h_pos(-d, D));
}

inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("brokersim::analytic: " + what);
}

}  // namespace brokersim::analytic::detail
