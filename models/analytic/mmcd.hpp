// M/M/c+D: c exponential servers, FIFO, every job has the same deadline (patience) D measured
// from its arrival; a job still waiting when its age reaches D is lost. Units: seconds.
//
// References
//   [BH81] F. Baccelli, G. Hebuterne, "On queues with impatient customers", Performance'81.
//   [BT99] N.K. Boots, H. Tijms, "An M/M/c queue with impatient customers", TOP 7(2), 1999.
//   [ZM05] S. Zeltyn, A. Mandelbaum, "Call centers with impatient customers: many-server
//          asymptotics of the M/M/n+G queue", Queueing Systems 51, 2005 (section 2).
//
// Derivation (exact; documented here because the simulator is validated against it).
// Let V be the *offered* wait of an arrival: the time until a server would become free for it if
// it were infinitely patient. Under FIFO a job with V >= D never occupies a server, and it does not
// delay anyone behind it, so the served jobs are exactly those of a system in which arrivals with
// V >= D balk. While all c servers are busy, departures form a Poisson(c mu) stream, so V(t) (the
// offered wait of a virtual arrival at t) decreases at unit rate and jumps by Exp(c mu) at every
// arrival that will be served. Level crossing of level x > 0 (down-crossings = density v(x),
// up-crossings = jumps over x):
//   v(x) = lambda pi_{c-1} e^{-c mu x} + lambda int_0^x v(y) 1{y < D} e^{-c mu (x-y)} dy
// whose solution is (differentiate once)
//   v(x) = lambda pi_{c-1} exp(-(c mu - lambda) x)              for 0 < x < D,
//   v(x) = lambda pi_{c-1} exp(lambda D - c mu x)               for x >= D,
// i.e. [ZM05]'s v(x) = lambda pi_{c-1} exp(lambda H(x) - c mu x) with H(x) = min(x, D). Below c
// busy servers the chain is the Erlang loss birth-death chain, so P(V = 0) = pi_{c-1}/B(c-1, a).
// With delta = c mu - lambda (any sign) the normalisation is
//   1/pi_{c-1} = 1/B(c-1, a) + lambda int_0^D e^{-delta x} dx + rho e^{-delta D},
// and by PASTA: P(Ab) = P(V >= D) = rho pi_{c-1} e^{-delta D}; P(W > 0) = P(V > 0);
// E[W; served] = lambda pi_{c-1} int_0^D x e^{-delta x} dx; E[W] = E[W; served] + D P(Ab).
// Checks: D -> 0 gives P(Ab) = B(c, a) (Erlang loss); D -> inf with rho < 1 gives Erlang C; and
// the algebra reduces P(Ab) to [BT99]'s (1 - rho) Pi(D) / (1 - rho Pi(D)), Pi(D) = C e^{-delta D},
// for every c >= 1 and every rho != 1 provided C is the Erlang C *formula* continued to rho >= 1
// (erlang_c_formula); for rho >= 1 Pi(D) is not a probability (M/M/c has no steady state), and
// at rho = 1 it is a 0/0 limit (P(Ab) = 1 / (1 + 1/B(c-1, a) + lambda D)).
// All sums are evaluated in log space (growing exponentials for rho > 1 are factored out).
//
// Queue length under the two expiry disciplines (both exact):
//  (a) expired jobs leave exactly at their deadline: by Little, E[L_q] = lambda E[min(V, D)].
//  (b) head-only expiry (an expired job is removed only once every job ahead of it has left, and
//      then at once): with a common deadline D and FIFO, the jobs ahead of a job are exactly the
//      older ones. A job reaches age D only after every older job has reached age D or left; by
//      induction on position, each older job has left by then, so the job is at the head at its
//      deadline and leaves at that instant. Every job therefore leaves at the same time as in (a)
//      and E[L_q^(b)] = E[L_q^(a)] *exactly*; (a) and (b) differ only for deadlines that are not
//      FIFO-ordered (per-message TTLs, or priorities).
//  (c) (extra, for simulators that purge lazily) expired jobs are discarded only when a server
//      frees and scans the head: a job that expires at a + D finds all servers busy (otherwise it
//      would have started), so it lingers for the residual time to the next completion, which is
//      Exp(c mu) by memorylessness; E[L_q^(c)] = E[L_q^(a)] + lambda P(Ab) / (c mu).
#pragma once

#include <cmath>

namespace brokersim::analytic {

struct MMcD {
  double rho = 0;                      // lambda / (c mu), any value (the model is always stable)
  double p_wait = 0;                   // P(V > 0): arrival finds all servers busy
  double p_abandon = 0;                // P(V >= D): job is lost (reaches its deadline waiting)
  double p_wait_served = 0;            // P(0 < V < D): waits and is then served
  double mean_wait_served = 0;         // E[W | served] (s), zero waits included
  double mean_wait_served_waiters = 0; // E[W | served, W > 0] (s)
  double mean_wait = 0;                // E[W] over all arrivals = E[min(V, D)] (s)
  double throughput = 0;               // served per second = lambda (1 - P(Ab))
  double abandon_rate = 0;             // lost per second = lambda P(Ab)
  double mean_queue = 0;               // (a) E[L_q], expired jobs leave at their deadline
  double mean_queue_head_only = 0;     // (b) head-only expiry; identical to (a) (see above)
  double mean_queue_purge_on_dispatch = 0;  // (c) purge only when a server frees
  double mean_busy = 0;                // E[#busy servers] = throughput / mu
  double mean_in_system = 0;           // mean_queue + mean_busy (variant (a)/(b))
  // Offered-wait law: P(V = 0) = p_no_wait, density v(x) = exp(log_v0 - delta x) on (0, D).
  double p_no_wait = 0;
  double log_v0 = 0;                   // log(lambda pi_{c-1})
  double delta = 0;                    // c mu - lambda
  double D = 0;

  // P(W <= t | served) for 0 <= t < D: the waiting-time CDF of served jobs (W = V on {V < D}).
  double served_wait_cdf(double t) const;
};

// D in seconds, D >= 0; D = +infinity is allowed when rho < 1 (then it is Erlang C).
MMcD mmc_deadline(double lambda, double mu, int c, double D);

// [BT99] form of the loss probability: (1 - rho) Pi(D) / (1 - rho Pi(D)) with
// Pi(D) = erlang_c_formula(lambda, mu, c) * exp(-(c mu - lambda) D). Evaluated as
// (1 - rho) / (1/Pi - rho) so that an overflowing Pi (rho > 1, large D) gives the correct limit
// 1 - 1/rho. Undefined (NaN) at exactly rho = 1.
double boots_tijms_abandon(double lambda, double mu, int c, double D);

}  // namespace brokersim::analytic
