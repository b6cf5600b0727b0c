// Exact CTMC for a broker queue feeding N consumers with prefetch (credit) p.
//
// Model. Poisson(lambda) arrivals to a broker queue; N identical consumers, each holding at most
// p unacked jobs: one in service (Exp(mu)) plus up to p-1 in a local FIFO buffer. Whenever the
// broker queue is non-empty and some consumer has a free credit, the head job is pushed to it at
// once (push semantics, as in AMQP basic.consume with basic.qos prefetch). Every *waiting* job,
// in the broker queue or in a local buffer, has independent Exp(theta) patience (TTL); the job in
// service cannot expire. Broker-queue jobs that expire leave at once (with exponential patience
// the broker's expiry order is irrelevant to the chain). Local expiry has two disciplines:
//   Eager: an expired local job leaves at once and frees its credit (the broker refills it);
//   Lazy : an expired local job keeps its slot and credit until the consumer reaches it, i.e.
//          until every job ahead of it in that consumer's buffer has been served or discarded; it
//          is then discarded instantly (a consumer that checks the deadline when it dequeues).
// The broker queue is truncated at kmax jobs (arrivals that would exceed it are blocked); the
// truncation is reported (mass of the top level, blocking probability) and must be checked small.
//
// State (symmetric aggregation). Consumers are exchangeable, so the state is the multiset of
// per-consumer states plus the broker queue length q. A consumer state is its unacked count k
// and, for Lazy, the live/expired pattern of its k-1 local jobs (2^{k-1} patterns, because when
// service completes the consumer skips the leading run of expired jobs, so positions matter).
// There are 2^p consumer states in total (encoded as 2^{k-1} + pattern bits). Push semantics give
// the invariant q > 0 => every consumer holds p unacked, so queue levels only multiply the
// "all full" states. The chain is built by breadth-first search from the empty state and solved
// for its stationary law with Eigen::SparseLU (one balance equation replaced by pi_0 = 1) up to
// direct_limit (6000) states; beyond that (LU fill-in on the multiset lattice takes minutes) by Gauss-Seidel to
// machine precision, with the balance residual reported.
//
// Dispatch (matters only when an arrival finds q = 0 and several consumers with credit):
//   FewestUnacked     : a consumer with the fewest unacked jobs (uniform among ties). With the
//                       multiset state this is exact.
//   UniformWithCredit : a uniformly random consumer among those with a free credit. This is the
//                       symmetric stand-in for round-robin: exact round-robin needs the cyclic
//                       pointer and the per-consumer (ordered) occupancy vector, which breaks the
//                       exchangeability the aggregated state relies on, so it is NOT modelled;
//                       UniformWithCredit is an approximation of round-robin, not round-robin.
//
// Checks: p = 1 is Erlang A with c = N (no local buffers); N = 1 with Eager expiry is Erlang A
// with c = 1 for any p (all waiting jobs are exchangeable Exp(theta) waiters ahead of one server);
// and flow conservation lambda (1 - truncation_mass) = throughput + abandonment rate holds exactly.
#pragma once

#include <cstddef>

namespace brokersim::analytic {

enum class Dispatch { FewestUnacked, UniformWithCredit };
enum class LocalExpiry { Eager, Lazy };

struct PrefetchParams {
  double lambda = 1;  // arrivals per second
  double mu = 1;      // service rate per consumer, per second
  double theta = 1;   // patience rate of every waiting job, per second (0 = no expiry)
  int consumers = 1;  // N >= 1
  int prefetch = 1;   // p >= 1 (1 = only the job in service)
  int kmax = 100;     // broker queue truncation level, >= 0
  Dispatch dispatch = Dispatch::FewestUnacked;
  LocalExpiry expiry = LocalExpiry::Eager;
  int direct_limit = 6000;  // chains up to this many states use SparseLU, larger ones Gauss-Seidel
};

struct PrefetchResult {
  // Per-arrival probabilities (PASTA).
  double p_abandon = 0;          // expired anywhere = p_abandon_broker + p_abandon_local
  double p_abandon_broker = 0;   // expired while in the broker queue = theta E[q] / lambda
  double p_abandon_local = 0;    // expired in a local buffer = theta E[live local] / lambda
  double p_wait = 0;             // not taken into service on arrival (includes blocked)
  double truncation_mass = 0;    // mass of the top states (q = kmax, all consumers full) =
                                 // P(arrival blocked by the truncation); must be ~0 for the
                                 // results to describe the untruncated system
  double throughput = 0;         // served per second = mu E[busy consumers]
  double mean_broker_queue = 0;  // E[q]
  double mean_local = 0;         // E[jobs held in local buffers], expired-held included
  double mean_local_live = 0;    // E[live (not yet expired) jobs in local buffers]
  double mean_local_expired = 0; // E[expired jobs still holding a credit] (Lazy only)
  double mean_unacked = 0;       // E[sum over consumers of unacked] = busy + mean_local
  double mean_busy = 0;          // E[busy consumers]
  double mean_wait = 0;          // E[time waiting until service or expiry] over accepted
                                 // arrivals, (E[q] + E[live local]) / (lambda (1 - truncation_mass))
  std::size_t states = 0;        // size of the generated chain
  std::size_t solver_sweeps = 0; // 0: direct SparseLU; else Gauss-Seidel sweeps (large chains)
  double solver_residual = 0;    // sum_j |(pi Q)_j| / sum_j pi_j q_j: balance-equation residual
};

PrefetchResult prefetch_ctmc(const PrefetchParams& params);

}  // namespace brokersim::analytic
