#include "models/analytic/mmcd.hpp"

#include <cmath>

#include "models/analytic/erlang.hpp"
#include "models/analytic/numeric.hpp"

namespace brokersim::analytic {

using detail::kInf;
using detail::kNaN;
using detail::require;

double MMcD::served_wait_cdf(double t) const {
  if (t < 0) return 0.0;
  const double p_served = 1.0 - p_abandon;
  if (t >= D) return 1.0;
  return (p_no_wait + std::exp(log_v0 + detail::log_g1(delta, t))) / p_served;
}

MMcD mmc_deadline(double lambda, double mu, int c, double D) {
  require(lambda > 0 && std::isfinite(lambda), "mmc_deadline: lambda must be positive and finite");
  require(mu > 0 && std::isfinite(mu), "mmc_deadline: mu must be positive and finite");
  require(c >= 1, "mmc_deadline: c must be >= 1");
  require(D >= 0, "mmc_deadline: D must be >= 0");
  MMcD r;
  const double a = lambda / mu;
  r.rho = a / c;
  r.D = D;
  r.delta = c * mu - lambda;
  const double d = r.delta;
  const bool infinite = std::isinf(D);
  require(!infinite || d > 0, "mmc_deadline: D = infinity needs rho < 1");

  // Unnormalised masses (divided by pi_{c-1}), as logs:
  //   T0 = P(V = 0) part  = 1/B(c-1, a)
  //   T1 = P(0 < V < D)   = lambda int_0^D e^{-d x} dx
  //   T2 = P(V >= D)      = rho e^{-d D}
  //   M  = E[V; V < D]    = lambda int_0^D x e^{-d x} dx
  const double lT0 = log_inv_erlang_b(c - 1, a);
  const double lT1 = infinite ? std::log(lambda / d) : std::log(lambda) + detail::log_g1(d, D);
  const double lT2 = infinite ? -kInf : std::log(r.rho) - d * D;
  const double lM = infinite ? std::log(lambda) - 2.0 * std::log(d)
                             : std::log(lambda) + detail::log_g2(d, D);
  const double lZ = detail::logsumexp({lT0, lT1, lT2});

  r.p_no_wait = std::exp(lT0 - lZ);
  r.p_wait_served = std::exp(lT1 - lZ);
  r.p_abandon = std::exp(lT2 - lZ);
  r.p_wait = r.p_wait_served + r.p_abandon;
  r.log_v0 = std::log(lambda) - lZ;
  const double ev_served = std::exp(lM - lZ);  // E[V; V < D] = E[W; served]

  const double p_served = 1.0 - r.p_abandon;
  r.mean_wait_served = p_served > 0 ? ev_served / p_served : kNaN;
  r.mean_wait_served_waiters = r.p_wait_served > 0 ? ev_served / r.p_wait_served : 0.0;
  r.mean_wait = ev_served + (r.p_abandon > 0 ? D * r.p_abandon : 0.0);
  r.throughput = lambda * p_served;
  r.abandon_rate = lambda * r.p_abandon;
  r.mean_queue = lambda * r.mean_wait;
  r.mean_queue_head_only = r.mean_queue;
  r.mean_queue_purge_on_dispatch = r.mean_queue + r.abandon_rate / (c * mu);
  r.mean_busy = r.throughput / mu;
  r.mean_in_system = r.mean_queue + r.mean_busy;
  return r;
}

double boots_tijms_abandon(double lambda, double mu, int c, double D) {
  const double rho = lambda / (c * mu);
  if (rho == 1.0) return kNaN;
  const double C = erlang_c_formula(lambda, mu, c);
  const double Pi = C * std::exp(-(c * mu - lambda) * D);
  return (1.0 - rho) / (1.0 / Pi - rho);
}

}  // namespace brokersim::analytic
