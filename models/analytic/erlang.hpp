// Erlang B / C / A: the classical M/M/c formulas, computed stably for c up to a few thousand.
// Units: rates per second, times in seconds.
//
// References
//   [GMR02] O. Garnett, A. Mandelbaum, M. Reiman, "Designing a call center with impatient
//           customers", MSOM 4(3), 2002.
//   [MZ]    A. Mandelbaum, S. Zeltyn, "The Palm/Erlang-A queue, with applications to call
//           centers" (teaching note, Technion, 2007), sections 2-3.
#pragma once

#include <cmath>
#include <vector>

namespace brokersim::analytic {

// ---------------------------------------------------------------------------------------------
// Erlang B
// ---------------------------------------------------------------------------------------------

// log(1 / B(c, a)) where B is the Erlang B blocking probability of an M/M/c/c loss system with
// offered load a = lambda/mu. Computed by the recursion 1/B_k = 1 + (k/a) / B_{k-1} in log space,
// so it neither overflows (a << c gives 1/B ~ c!/a^c) nor loses accuracy. c >= 0, a > 0.
double log_inv_erlang_b(int c, double a);

// Erlang B blocking probability B(c, a) (underflows gracefully to 0 for a << c).
double erlang_b(int c, double a);

// ---------------------------------------------------------------------------------------------
// Erlang C (M/M/c, FIFO, infinite waiting room)
// ---------------------------------------------------------------------------------------------

struct ErlangC {
  bool stable = false;        // rho < 1; if false every other field except rho/load is NaN
  double rho = 0;             // utilisation lambda / (c mu)
  double load = 0;            // offered load a = lambda / mu (Erlangs)
  double p_wait = 0;          // P(W > 0) = C(c, a), the Erlang C formula
  double mean_wait = 0;       // E[W_q] (s) = C / (c mu - lambda)
  double mean_queue = 0;      // E[L_q] = lambda E[W_q] = C rho / (1 - rho)
  double mean_in_system = 0;  // E[L] = E[L_q] + a
  double mean_sojourn = 0;    // E[W_q] + 1/mu (s)
  double decay = 0;           // c mu - lambda: P(W > t) = p_wait * exp(-decay * t)

  // P(W > t) for t >= 0 (the conditional wait given W > 0 is Exp(c mu - lambda)).
  double wait_tail(double t) const { return t < 0 ? 1.0 : p_wait * std::exp(-decay * t); }
};

ErlangC erlang_c(double lambda, double mu, int c);

// The Erlang C "delay probability" as a rational function of a, continued analytically to
// rho >= 1: C = 1 / (rho + (1 - rho)/B(c, a)). For rho < 1 it equals erlang_c().p_wait; for
// rho >= 1 it is NOT a probability (the M/M/c queue has no steady state) but it is what the
// Boots-Tijms identity for M/M/c+D needs (see mmcd.hpp).
double erlang_c_formula(double lambda, double mu, int c);

// ---------------------------------------------------------------------------------------------
// Erlang A (M/M/c+M: exponential patience with rate theta, abandoning jobs leave at once)
// ---------------------------------------------------------------------------------------------

struct ErlangA {
  double rho = 0;                  // lambda / (c mu) (may be >= 1: Erlang A is always stable)
  double p_wait = 0;               // P(W > 0): arrival finds all c servers busy (PASTA)
  double p_abandon = 0;            // P(Ab): fraction of arrivals that abandon
  double p_abandon_given_wait = 0; // P(Ab | W > 0)
  double mean_wait = 0;            // E[W] over all arrivals (s) = P(Ab) / theta
  double mean_wait_served = 0;     // E[W | served] (s), includes the zero waits
  double mean_wait_abandoned = 0;  // E[W | abandoned] (s)
  double throughput = 0;           // served per second = lambda (1 - P(Ab))
  double mean_queue = 0;           // E[L_q] = lambda E[W]
  double mean_busy = 0;            // E[#busy servers] = throughput / mu
  double log_A = 0;                // log of the [MZ] function A(c mu/theta, lambda/theta)
};

// Closed form of [GMR02]/[MZ]:
//   A(x, y) = x e^y y^{-x} gamma(x, y)  (lower incomplete gamma), x = c mu/theta, y = lambda/theta
//   P(W>0)  = A B / (1 + (A - 1) B),     B = ErlangB(c, lambda/mu)
//   P(Ab|W>0) = 1/(rho A) + 1 - 1/rho,   E[W] = P(Ab)/theta.
// theta == 0 falls back to Erlang C (requires rho < 1, else throws std::domain_error).
// E[W | served] has no incomplete-gamma closed form; it is an exact convergent series (see .cpp)
// whose length grows like (lambda - c mu)/theta; if that exceeds ~2e8 terms (heavy overload with
// tiny theta) mean_wait_served and mean_wait_abandoned are NaN.
ErlangA erlang_a(double lambda, double mu, int c, double theta);

// Cross-check: the same model solved as a birth-death chain on the number in system truncated at
// c + max_queue (arrivals blocked at the top; choose max_queue so that the top mass is negligible).
// `truncation_mass` receives P(N = c + max_queue) if non-null.
ErlangA erlang_a_chain(double lambda, double mu, int c, double theta, int max_queue,
                       double* truncation_mass = nullptr);

// ---------------------------------------------------------------------------------------------
// Generic birth-death chain
// ---------------------------------------------------------------------------------------------

// Stationary distribution of a birth-death chain on {0..K}: birth[n] is the rate n -> n+1
// (n = 0..K-1, size K), death[n] the rate n -> n-1 (size K+1, death[0] ignored). Products are
// formed in log space so that K in the millions and rates spanning many decades are fine.
std::vector<double> birth_death_stationary(const std::vector<double>& birth,
                                           const std::vector<double>& death);

}  // namespace brokersim::analytic
