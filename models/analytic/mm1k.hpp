// M/M/1/K: one exponential server, room for K jobs in total (in service + waiting); arrivals
// that find K jobs are blocked. Units: seconds. Standard result (e.g. Gross & Harris,
// "Fundamentals of Queueing Theory", section 2.5): p_n = rho^n (1 - rho)/(1 - rho^{K+1}).
#pragma once

namespace brokersim::analytic {

struct MM1K {
  double rho = 0;             // lambda / mu (any value)
  double p_block = 0;         // p_K: blocking probability (PASTA)
  double p_empty = 0;         // p_0
  double mean_in_system = 0;  // E[N]
  double mean_queue = 0;      // E[N] - (1 - p_0)
  double throughput = 0;      // lambda (1 - p_K) = mu (1 - p_0)
  double mean_sojourn = 0;    // E[N] / throughput (Little, accepted jobs) (s)
  double mean_wait = 0;       // mean_queue / throughput (s)
};

// Closed form, evaluated without overflow: for rho > 1 the mirror identity p_n(rho) = p_{K-n}(1/rho)
// is used; within 1e-4 of rho = 1 (where the closed form cancels catastrophically) the
// distribution is summed directly. K >= 1.
MM1K mm1k(double lambda, double mu, int K);

}  // namespace brokersim::analytic
