#include "models/analytic/erlang.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <boost/math/special_functions/gamma.hpp>

#include "models/analytic/numeric.hpp"

namespace brokersim::analytic {

using detail::kInf;
using detail::kNaN;
using detail::require;

double log_inv_erlang_b(int c, double a) {
  require(c >= 0, "erlang_b: c must be >= 0");
  require(a > 0 && std::isfinite(a), "erlang_b: offered load must be positive and finite");
  // 1/B_0 = 1; 1/B_k = 1 + (k/a) (1/B_{k-1}). In logs: L_k = softplus(log(k/a) + L_{k-1}).
  // Every step is a log-sum of two positive terms, so there is no cancellation.
  double L = 0.0;
  const double log_a = std::log(a);
  for (int k = 1; k <= c; ++k) L = detail::softplus(std::log(static_cast<double>(k)) - log_a + L);
  return L;
}

double erlang_b(int c, double a) { return std::exp(-log_inv_erlang_b(c, a)); }

namespace {

void check_rates(double lambda, double mu, int c) {
  require(lambda > 0 && std::isfinite(lambda), "lambda must be positive and finite");
  require(mu > 0 && std::isfinite(mu), "mu must be positive and finite");
  require(c >= 1, "number of servers must be >= 1");
}

// 1 / (rho + (1 - rho) e^{L}) with L = log(1/B): the Erlang C formula written so that a huge
// 1/B (light load, many servers) gives C -> 0 instead of inf/inf.
double erlang_c_from_log_inv_b(double rho, double L) {
  const double inv_b = std::exp(L);
  if (!std::isfinite(inv_b)) return 0.0;  // 1/B overflowed: C is below 1e-300
  return 1.0 / (rho + (1.0 - rho) * inv_b);
}

// log A(X, Y) with X = c mu/theta, Y = lambda/theta, A = sum_{m>=0} Y^m / prod_{k=1}^m (X + k)
//                                                  = X e^Y Y^{-X} gamma(X, Y).
// Preferred route: Boost's regularised P(X, Y) and its x-derivative e^{-Y} Y^{X-1} / Gamma(X),
// whose ratio is exactly A * Y / X. When the derivative underflows (|X - Y| >> sqrt(X)) we
// switch: for Y < X the power series converges geometrically (ratio < Y/X = rho < 1);
// for Y >= X, P(X, Y) >= ~1/2 so log A = log X + log P - log Y - log d with log d from lgamma is
// accurate enough (A is then astronomically large and only 1/A, which is ~0, enters results).
double log_erlang_a_function(double X, double Y) {
  double P = kNaN, d = kNaN;
  try {
    P = boost::math::gamma_p(X, Y);
    d = boost::math::gamma_p_derivative(X, Y);
  } catch (const std::exception&) {
    d = 0.0;  // overflow/evaluation error: use the fallbacks below
  }
  if (std::isfinite(d) && d > 1e-290 && std::isfinite(P) && P > 1e-290)
    return std::log(X) + std::log(P) - std::log(Y) - std::log(d);
  if (Y < X) {
    // Series; terms shrink at least like rho^m, and like exp(-m^2/2X), so this terminates fast
    // except when rho ~ 1 and theta ~ 0 together (capped; then the lgamma route below is used).
    double term = 1.0, sum = 1.0;
    for (long m = 1; m < 200'000'000L; ++m) {
      term *= Y / (X + static_cast<double>(m));
      sum += term;
      if (term < 1e-17 * sum) return std::log(sum);
    }
  }
  const double log_d = -Y + (X - 1.0) * std::log(Y) - std::lgamma(X);
  const double log_P = (std::isfinite(P) && P > 0) ? std::log(P) : 0.0;
  return std::log(X) + log_P - std::log(Y) - log_d;
}

// U / A where U = sum_{m>=1} r_m H_m, r_m = prod_{k=1}^m lambda/(c mu + k theta),
// H_m = sum_{k=1}^m 1/(c mu + k theta), A = sum_{m>=0} r_m. Terms are carried with a running log
// scale so that the peak term (at m* ~ (lambda - c mu)/theta when rho > 1) never overflows.
// Returns NaN if more than ~2e8 terms would be needed (rho > 1 with tiny theta).
double served_wait_series_ratio(double lambda, double cmu, double theta) {
  const double m_star = std::max(0.0, (lambda - cmu) / theta);
  if (m_star > 2e8) return kNaN;
  double log_scale = 0.0;   // sums are stored divided by e^{log_scale}
  double S = 1.0, U = 0.0;  // m = 0 term: r_0 = 1, H_0 = 0
  double log_r = 0.0, H = 0.0;
  const long cap = static_cast<long>(m_star) + 200'000'000L;
  for (long m = 1; m < cap; ++m) {
    const double rate = cmu + static_cast<double>(m) * theta;
    log_r += std::log(lambda / rate);
    H += 1.0 / rate;
    if (log_r > log_scale + 300) {  // rescale before the stored sums can overflow
      const double f = std::exp(log_scale - log_r);
      S *= f;
      U *= f;
      log_scale = log_r;
    }
    const double t = std::exp(log_r - log_scale);
    S += t;
    U += t * H;
    if (static_cast<double>(m) > m_star && t * H < 1e-17 * U && t < 1e-17 * S) return U / S;
  }
  return kNaN;
}

}  // namespace

ErlangC erlang_c(double lambda, double mu, int c) {
  check_rates(lambda, mu, c);
  ErlangC r;
  r.load = lambda / mu;
  r.rho = r.load / c;
  if (!(r.rho < 1.0)) {
    r.stable = false;
    r.p_wait = r.mean_wait = r.mean_queue = r.mean_in_system = r.mean_sojourn = r.decay = kNaN;
    return r;
  }
  r.stable = true;
  r.p_wait = erlang_c_from_log_inv_b(r.rho, log_inv_erlang_b(c, r.load));
  r.decay = c * mu - lambda;
  r.mean_wait = r.p_wait / r.decay;
  r.mean_queue = lambda * r.mean_wait;
  r.mean_in_system = r.mean_queue + r.load;
  r.mean_sojourn = r.mean_wait + 1.0 / mu;
  return r;
}

double erlang_c_formula(double lambda, double mu, int c) {
  check_rates(lambda, mu, c);
  const double a = lambda / mu;
  return erlang_c_from_log_inv_b(a / c, log_inv_erlang_b(c, a));
}

ErlangA erlang_a(double lambda, double mu, int c, double theta) {
  check_rates(lambda, mu, c);
  require(theta >= 0 && std::isfinite(theta), "erlang_a: theta must be >= 0 and finite");
  ErlangA r;
  r.rho = lambda / (c * mu);
  const double cmu = c * mu;
  if (theta == 0.0) {
    const ErlangC ec = erlang_c(lambda, mu, c);
    if (!ec.stable) throw std::domain_error("erlang_a: theta = 0 and rho >= 1: no steady state");
    r.p_wait = ec.p_wait;
    r.p_abandon = r.p_abandon_given_wait = 0.0;
    r.mean_wait = r.mean_wait_served = ec.mean_wait;
    r.mean_wait_abandoned = kNaN;
    r.throughput = lambda;
    r.mean_queue = ec.mean_queue;
    r.mean_busy = lambda / mu;
    r.log_A = std::log(1.0 / (1.0 - r.rho));
    return r;
  }
  const double X = cmu / theta, Y = lambda / theta;
  const double logA = log_erlang_a_function(X, Y);
  r.log_A = logA;
  // P(W>0) = A B / (1 + (A-1) B) = 1 / (1 + (1/B - 1)/A), all in logs.
  const double L = log_inv_erlang_b(c, lambda / mu);
  r.p_wait = 1.0 / (1.0 + std::exp(detail::log_expm1(L) - logA));
  // P(Ab | W>0) = 1/(rho A) + 1 - 1/rho. (Derivation: summing the cut equations
  // lambda r_{j-1} = (c mu + j theta) r_j over j >= 1 gives theta E[Q | wait] = lambda - c mu (1 - 1/A).)
  double pag = 1.0 + (std::exp(-logA) - 1.0) / r.rho;
  pag = std::clamp(pag, 0.0, 1.0);
  r.p_abandon_given_wait = pag;
  r.p_abandon = r.p_wait * pag;
  r.mean_wait = r.p_abandon / theta;  // exponential patience: abandonment rate = theta E[Q]
  r.throughput = lambda * (1.0 - r.p_abandon);
  r.mean_queue = lambda * r.mean_wait;
  r.mean_busy = r.throughput / mu;
  // E[W 1{served}]: an arrival that finds j waiting passes stages with k = j..0 jobs ahead; in
  // stage k it leaves at total rate c mu + (k+1) theta and moves forward with probability
  // (c mu + k theta)/(c mu + (k+1) theta). Summing over j with P(N = c+j) = pi_c r_j and using
  // r_j P(served | j) = (c mu/lambda) r_{j+1} gives E[W 1{served}] = pi_c / rho * U,
  // U = sum_{m>=1} r_m H_m, and pi_c = P(W>0)/A.
  const double ratio = served_wait_series_ratio(lambda, cmu, theta);
  const double w_served_joint = r.p_wait * ratio / r.rho;
  r.mean_wait_served = r.p_abandon < 1.0 ? w_served_joint / (1.0 - r.p_abandon) : kNaN;
  r.mean_wait_abandoned =
      r.p_abandon > 0 ? std::max(0.0, r.mean_wait - w_served_joint) / r.p_abandon : kNaN;
  return r;
}

std::vector<double> birth_death_stationary(const std::vector<double>& birth,
                                           const std::vector<double>& death) {
  require(death.size() == birth.size() + 1, "birth_death_stationary: need |death| = |birth| + 1");
  const std::size_t K = birth.size();
  std::vector<double> lw(K + 1, 0.0);
  for (std::size_t n = 1; n <= K; ++n) {
    require(birth[n - 1] > 0 && death[n] > 0, "birth_death_stationary: rates must be positive");
    lw[n] = lw[n - 1] + std::log(birth[n - 1]) - std::log(death[n]);
  }
  const double m = *std::max_element(lw.begin(), lw.end());
  double s = 0.0;
  for (double& x : lw) s += (x = std::exp(x - m));
  for (double& x : lw) x /= s;
  return lw;
}

ErlangA erlang_a_chain(double lambda, double mu, int c, double theta, int max_queue,
                       double* truncation_mass) {
  check_rates(lambda, mu, c);
  require(theta >= 0, "erlang_a_chain: theta must be >= 0");
  require(max_queue >= 1, "erlang_a_chain: max_queue must be >= 1");
  const int K = c + max_queue;
  std::vector<double> birth(K, lambda), death(K + 1, 0.0);
  for (int n = 1; n <= K; ++n) death[n] = std::min(n, c) * mu + std::max(0, n - c) * theta;
  const std::vector<double> pi = birth_death_stationary(birth, death);
  if (truncation_mass) *truncation_mass = pi[K];

  ErlangA r;
  r.rho = lambda / (c * mu);
  const double cmu = c * mu;
  double p_wait = 0, EQ = 0, busy = 0, w_served = 0;
  double p_served = 1.0, H = 0.0;  // P(served | j ahead), sum of stage means
  for (int n = 0; n <= K; ++n) {
    busy += pi[n] * std::min(n, c);
    if (n < c) continue;
    const int j = n - c;
    p_wait += pi[n];
    EQ += pi[n] * j;
    // Stage view of the arrival that finds j waiting (see erlang_a); recomputed here directly
    // from the products so the chain check is independent of the series identity.
    const double stage_rate = cmu + (j + 1) * theta;
    p_served *= (cmu + j * theta) / stage_rate;
    H += 1.0 / stage_rate;
    w_served += pi[n] * p_served * H;
  }
  r.p_wait = p_wait;
  r.mean_queue = EQ;
  r.p_abandon = theta * EQ / lambda;
  r.p_abandon_given_wait = r.p_abandon / p_wait;
  r.mean_wait = EQ / lambda;
  r.mean_busy = busy;
  r.throughput = busy * mu;
  r.mean_wait_served = w_served / (1.0 - r.p_abandon);
  r.mean_wait_abandoned = r.p_abandon > 0 ? (r.mean_wait - w_served) / r.p_abandon : kNaN;
  r.log_A = kNaN;
  return r;
}

}  // namespace brokersim::analytic
