#include "models/analytic/prefetch_ctmc.hpp"

#include <Eigen/Sparse>
#include <Eigen/SparseLU>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/analytic/numeric.hpp"

namespace brokersim::analytic {

namespace {

// Consumer-state encoding: 0 = idle; otherwise 2^{k-1} + bits, where k = unacked (1..p) and bit i
// (i = 0..k-2) is 1 iff local position i (0 = next to be served) holds an expired job.
inline int type_k(unsigned t) { return static_cast<int>(std::bit_width(t)); }
inline unsigned type_bits(unsigned t) { return t == 0 ? 0u : t - (1u << (type_k(t) - 1)); }
inline unsigned make_type(int k, unsigned bits) { return k == 0 ? 0u : (1u << (k - 1)) | bits; }
// A job pushed by the broker joins the tail of the local buffer (or service, if idle) as live.
inline unsigned append_live(unsigned t) { return make_type(type_k(t) + 1, type_bits(t)); }

struct ConsumerEvent {
  double rate;     // per consumer in this state
  unsigned next;   // consumer state right after the event, before any refill
  int freed;       // credits released
  bool local_abandon;
};

std::vector<ConsumerEvent> consumer_events(unsigned t, double mu, double theta, LocalExpiry ex) {
  std::vector<ConsumerEvent> ev;
  const int k = type_k(t);
  if (k == 0) return ev;
  const unsigned bits = type_bits(t);
  const int len = k - 1;
  // Service completion: ack, then skip the leading run of expired jobs (lazy discard), then start
  // the first live one. With eager expiry there are never expired jobs in the buffer.
  {
    int i = 0;
    while (i < len && ((bits >> i) & 1u)) ++i;
    if (i == len) {
      ev.push_back({mu, 0u, k, false});
    } else {
      const int nk = k - 1 - i;
      ev.push_back({mu, make_type(nk, bits >> (i + 1)), i + 1, false});
    }
  }
  if (theta > 0) {
    for (int i = 0; i < len; ++i) {
      if ((bits >> i) & 1u) continue;  // already expired
      if (ex == LocalExpiry::Lazy) {
        ev.push_back({theta, make_type(k, bits | (1u << i)), 0, true});
      } else {
        const unsigned low = bits & ((1u << i) - 1u), high = bits >> (i + 1);
        ev.push_back({theta, make_type(k - 1, low | (high << i)), 1, true});
      }
    }
  }
  return ev;
}

struct State {
  std::vector<std::uint16_t> n;  // consumers per consumer-state type
  int q = 0;                     // broker queue length
};

std::string key_of(const State& s) {
  std::string k(s.n.size() * 2 + sizeof(int), '\0');
  std::memcpy(k.data(), s.n.data(), s.n.size() * 2);
  std::memcpy(k.data() + s.n.size() * 2, &s.q, sizeof(int));
  return k;
}

constexpr std::size_t kMaxSweeps = 200000;

}  // namespace

PrefetchResult prefetch_ctmc(const PrefetchParams& P) {
  using detail::require;
  require(P.lambda > 0 && P.mu > 0 && P.theta >= 0, "prefetch_ctmc: bad rates");
  require(P.consumers >= 1 && P.consumers < 65535, "prefetch_ctmc: consumers out of range");
  require(P.prefetch >= 1 && P.prefetch <= 16, "prefetch_ctmc: prefetch must be in 1..16");
  require(P.kmax >= 0, "prefetch_ctmc: kmax must be >= 0");
  const int N = P.consumers, p = P.prefetch;
  const unsigned T = 1u << p;  // number of consumer-state types

  std::vector<std::vector<ConsumerEvent>> events(T);
  for (unsigned t = 0; t < T; ++t) events[t] = consumer_events(t, P.mu, P.theta, P.expiry);

  std::unordered_map<std::string, int> index;
  std::vector<State> states;
  std::deque<int> frontier;
  auto intern = [&](const State& s) {
    auto [it, inserted] = index.try_emplace(key_of(s), static_cast<int>(states.size()));
    if (inserted) {
      states.push_back(s);
      frontier.push_back(it->second);
    }
    return it->second;
  };
  State empty;
  empty.n.assign(T, 0);
  empty.n[0] = static_cast<std::uint16_t>(N);
  intern(empty);

  struct Tr {
    int from, to;
    double rate;
  };
  std::vector<Tr> trans;
  while (!frontier.empty()) {
    const int i = frontier.front();
    frontier.pop_front();
    const State s = states[i];  // copy: `states` may reallocate inside intern
    int full = 0;
    for (unsigned t = 0; t < T; ++t)
      if (type_k(t) == p) full += s.n[t];
    const bool all_full = full == N;

    // Arrival.
    if (all_full) {
      if (s.q < P.kmax) {
        State t2 = s;
        ++t2.q;
        trans.push_back({i, intern(t2), P.lambda});
      }
    } else {
      int kmin = p;
      for (unsigned t = 0; t < T; ++t)
        if (s.n[t] > 0) kmin = std::min(kmin, type_k(t));
      double weight = 0;
      for (unsigned t = 0; t < T; ++t) {
        const int k = type_k(t);
        const bool cand = P.dispatch == Dispatch::FewestUnacked ? k == kmin : k < p;
        if (cand) weight += s.n[t];
      }
      for (unsigned t = 0; t < T; ++t) {
        const int k = type_k(t);
        const bool cand = P.dispatch == Dispatch::FewestUnacked ? k == kmin : k < p;
        if (!cand || s.n[t] == 0) continue;
        State t2 = s;
        --t2.n[t];
        ++t2.n[append_live(t)];
        trans.push_back({i, intern(t2), P.lambda * s.n[t] / weight});
      }
    }
    // Consumer events, followed by the broker refilling the freed credits from the queue.
    for (unsigned t = 0; t < T; ++t) {
      if (s.n[t] == 0) continue;
      for (const ConsumerEvent& e : events[t]) {
        State t2 = s;
        --t2.n[t];
        unsigned nt = e.next;
        const int m = std::min(e.freed, s.q);
        for (int r = 0; r < m; ++r) nt = append_live(nt);
        ++t2.n[nt];
        t2.q -= m;
        trans.push_back({i, intern(t2), e.rate * s.n[t]});
      }
    }
    // Broker-queue expiry.
    if (s.q > 0 && P.theta > 0) {
      State t2 = s;
      --t2.q;
      trans.push_back({i, intern(t2), P.theta * s.q});
    }
  }

  // Stationary law pi Q = 0, sum pi = 1.
  const int S = static_cast<int>(states.size());
  std::vector<double> out(S, 0.0);
  for (const Tr& tr : trans) out[tr.from] += tr.rate;
  std::vector<double> pi(S, 0.0);
  std::size_t iterations = 0;  // Gauss-Seidel sweeps (0 = direct solve)
  double residual = 0;
  if (S <= P.direct_limit) {
    // Direct: drop state 0's balance equation and fix pi_0 = 1, i.e. for j != 0:
    // sum_{i != 0} pi_i Q_ij = -Q_0j. The reduced matrix is nonsingular (irreducible chain).
    pi[0] = 1.0;
    if (S > 1) {
      std::vector<Eigen::Triplet<double>> trip;
      trip.reserve(trans.size() + S);
      Eigen::VectorXd b = Eigen::VectorXd::Zero(S - 1);
      for (const Tr& tr : trans) {
        if (tr.from == 0) b[tr.to - 1] -= tr.rate;
        else if (tr.to != 0) trip.emplace_back(tr.to - 1, tr.from - 1, tr.rate);
      }
      for (int i = 1; i < S; ++i) trip.emplace_back(i - 1, i - 1, -out[i]);
      Eigen::SparseMatrix<double> A(S - 1, S - 1);
      A.setFromTriplets(trip.begin(), trip.end());
      A.makeCompressed();
      Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> lu;
      lu.compute(A);
      if (lu.info() != Eigen::Success) throw std::runtime_error("prefetch_ctmc: SparseLU failed");
      const Eigen::VectorXd x = lu.solve(b);
      if (lu.info() != Eigen::Success) throw std::runtime_error("prefetch_ctmc: solve failed");
      for (int i = 1; i < S; ++i) pi[i] = std::max(0.0, x[i - 1]);
    }
  } else {
    // Large chains (lazy expiry with many consumers: the multiset state space is a
    // high-dimensional lattice and LU fill-in explodes, ~minutes at 2e4 states). Gauss-Seidel on
    // the balance equations pi_j out_j = sum_i pi_i Q_ij, which for an irreducible CTMC
    // converges to the stationary law; iterate until the L1 change per sweep is < 1e-14 and
    // report the final residual.
    std::vector<int> start(S + 1, 0);
    for (const Tr& tr : trans) ++start[tr.to + 1];
    for (int j = 0; j < S; ++j) start[j + 1] += start[j];
    std::vector<int> src(trans.size());
    std::vector<double> rate(trans.size());
    {
      std::vector<int> fill(start.begin(), start.end() - 1);
      for (const Tr& tr : trans) {
        src[fill[tr.to]] = tr.from;
        rate[fill[tr.to]++] = tr.rate;
      }
    }
    std::fill(pi.begin(), pi.end(), 1.0 / S);
    for (iterations = 1; iterations <= kMaxSweeps; ++iterations) {
      double change = 0, sum = 0;
      for (int j = 0; j < S; ++j) {
        double in = 0;
        for (int e = start[j]; e < start[j + 1]; ++e) in += pi[src[e]] * rate[e];
        const double v = in / out[j];
        change += std::fabs(v - pi[j]);
        pi[j] = v;
        sum += v;
      }
      for (double& v : pi) v /= sum;
      if (change / sum < 1e-14) break;
      if (iterations == kMaxSweeps) throw std::runtime_error("prefetch_ctmc: Gauss-Seidel did not converge");
    }
  }
  // Residual of the balance equations, relative to the total probability flow.
  {
    std::vector<double> in(S, 0.0);
    double flow = 0;
    for (const Tr& tr : trans) in[tr.to] += pi[tr.from] * tr.rate;
    double res = 0;
    for (int j = 0; j < S; ++j) {
      res += std::fabs(in[j] - pi[j] * out[j]);
      flow += pi[j] * out[j];
    }
    residual = res / flow;
  }
  double total = 0;
  for (double v : pi) total += v;
  for (double& v : pi) v /= total;

  PrefetchResult r;
  r.states = static_cast<std::size_t>(S);
  r.solver_sweeps = iterations;
  r.solver_residual = residual;
  double Eq = 0, busy = 0, local = 0, live = 0, immediate = 0;
  for (int i = 0; i < S; ++i) {
    const State& s = states[i];
    int full = 0, b = 0, l = 0, lv = 0, with_credit = 0;
    for (unsigned t = 0; t < T; ++t) {
      if (s.n[t] == 0) continue;
      const int k = type_k(t);
      if (k == p) full += s.n[t];
      if (k < p) with_credit += s.n[t];
      if (k >= 1) {
        b += s.n[t];
        l += s.n[t] * (k - 1);
        lv += s.n[t] * (k - 1 - std::popcount(type_bits(t)));
      }
    }
    Eq += pi[i] * s.q;
    busy += pi[i] * b;
    local += pi[i] * l;
    live += pi[i] * lv;
    if (full == N) {
      if (s.q == P.kmax) r.truncation_mass += pi[i];
    } else if (s.n[0] > 0) {
      immediate += pi[i] * (P.dispatch == Dispatch::FewestUnacked
                                ? 1.0
                                : static_cast<double>(s.n[0]) / with_credit);
    }
  }
  r.mean_broker_queue = Eq;
  r.mean_busy = busy;
  r.mean_local = local;
  r.mean_local_live = live;
  r.mean_local_expired = local - live;
  r.mean_unacked = busy + local;
  r.throughput = P.mu * busy;
  r.p_abandon_broker = P.theta * Eq / P.lambda;
  r.p_abandon_local = P.theta * live / P.lambda;
  r.p_abandon = r.p_abandon_broker + r.p_abandon_local;
  r.p_wait = 1.0 - immediate;
  r.mean_wait = (Eq + live) / (P.lambda * (1.0 - r.truncation_mass));
  return r;
}

}  // namespace brokersim::analytic
