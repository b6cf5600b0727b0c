#include "models/analytic/mm1k.hpp"

#include <cmath>

#include "models/analytic/numeric.hpp"

namespace brokersim::analytic {

namespace {

// (p_0, p_K, E[N]) for rho < 1 via the closed form; rho^{K+1} cannot overflow here.
struct Parts {
  double p0, pK, L;
};

Parts closed_form_below_one(double rho, int K) {
  const double lr = std::log(rho);
  const double rK1 = std::exp((K + 1) * lr);                // rho^{K+1}
  const double one_minus_rK1 = -std::expm1((K + 1) * lr);  // 1 - rho^{K+1}, accurate
  const double p0 = (1.0 - rho) / one_minus_rK1;
  const double pK = p0 * std::exp(K * lr);
  const double L = rho / (1.0 - rho) - (K + 1) * rK1 / one_minus_rK1;
  return {p0, pK, L};
}

Parts direct_sum(double rho, int K) {
  // weights rho^n scaled by rho^{-m}, m = argmax, to stay finite
  const double lr = std::log(rho);
  const double m = lr > 0 ? K * lr : 0.0;
  double s = 0, sn = 0;
  for (int n = 0; n <= K; ++n) {
    const double w = std::exp(n * lr - m);
    s += w;
    sn += n * w;
  }
  return {std::exp(-m) / s, std::exp(K * lr - m) / s, sn / s};
}

}  // namespace

MM1K mm1k(double lambda, double mu, int K) {
  detail::require(lambda > 0 && mu > 0, "mm1k: rates must be positive");
  detail::require(K >= 1, "mm1k: K must be >= 1");
  MM1K r;
  r.rho = lambda / mu;
  Parts p{};
  if (std::fabs(r.rho - 1.0) < 1e-4) {
    p = direct_sum(r.rho, K);
  } else if (r.rho < 1.0) {
    p = closed_form_below_one(r.rho, K);
  } else {
    // Mirror: p_n(rho) = p_{K-n}(1/rho), so p_0 <-> p_K and E[N] = K - E[N](1/rho).
    const Parts m = closed_form_below_one(1.0 / r.rho, K);
    p = {m.pK, m.p0, K - m.L};
  }
  r.p_empty = p.p0;
  r.p_block = p.pK;
  r.mean_in_system = p.L;
  r.mean_queue = p.L - (1.0 - p.p0);
  r.throughput = lambda * (1.0 - p.pK);
  r.mean_sojourn = p.L / r.throughput;
  r.mean_wait = r.mean_queue / r.throughput;
  return r;
}

}  // namespace brokersim::analytic
