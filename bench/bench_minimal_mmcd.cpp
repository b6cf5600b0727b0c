// The "speed of light" for a simulator of this kind: a minimal, hand-written M/M/c+D loop.
//
// Poisson arrivals (9.5/s), c = 10 servers, exponential service (mean 1 s), deterministic
// patience D = 0.5 s: a job that has waited D or longer in the queue is lost. Only the standard
// library is used (deliberately not sim/): this is the baseline the simulator is compared with,
// so it carries no generality at all -- one event heap of the c busy servers' completion times,
// the next arrival time in a variable, a FIFO ring buffer of queued arrival times, and expired
// jobs purged from the head of the FIFO only when a server frees (lazy deadline, no timer
// events). Random numbers: xoshiro256++ seeded by SplitMix64, inverse-transform exponentials.
//
// Reported counters:
//   jobs_per_s         simulated arrivals per second of CPU time (the figure to compare with);
//   events_per_job     arrivals and completions per arrival;
//   P_abandon          fraction of resolved jobs that were lost, over the whole run;
//   P_abandon_exact    the exact stationary value for M/M/c+D (below), for a sanity check.
//
// Exact P(abandon): the virtual waiting time V of M/M/c+G has, for x > 0, the density
// f(x) = lambda * pi_{c-1} * exp(lambda * H(x) - c mu x), H(x) = integral_0^x P(patience > u) du,
// and P(V = 0, j busy) = pi_j = pi_0 (lambda/mu)^j / j!, j < c (Baccelli & Hebuterne 1981). For
// deterministic patience H(x) = min(x, D) and a job is lost iff V >= D, so
// P(abandon) = integral_D^inf f = lambda pi_{c-1} exp((lambda - c mu) D) / (c mu), with pi_0 from
// normalisation. For these parameters it is 0.0826.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

constexpr double kLambda = 9.5;     // arrivals per second
constexpr int kServers = 10;        // c
constexpr double kMeanService = 1;  // seconds (mu = 1)
constexpr double kDeadline = 0.5;   // seconds in queue

double exact_p_abandon(double lambda, double mu, int c, double d) {
  // pi_j / pi_{c-1}, from j = c - 1 down (pi_{j-1} / pi_j = j / a, a = lambda / mu): no a^j / j!,
  // which overflows for a fleet (c = 10,000); no term exceeds (c / a)^(c - a), e^26 at c = 10,000.
  const double a = lambda / mu;
  double term = 1, sum = 0;
  for (int j = c - 1; j >= 0; --j) {
    sum += term;
    term *= j / a;
  }
  // The waiting-time densities, relative to pi_{c-1} as the sum is.
  const double r = lambda - c * mu;
  const double wait_lt_d = lambda * (r == 0 ? d : std::expm1(r * d) / r);
  const double wait_ge_d = lambda * std::exp(r * d) / (c * mu);
  return wait_ge_d / (sum + wait_lt_d + wait_ge_d);
}

class Xoshiro256pp {
 public:
  explicit Xoshiro256pp(std::uint64_t seed) {
    for (auto& w : s_) {
      std::uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // -mean * log(U), U uniform on (0, 1].
  double exponential(double mean) {
    return -mean * std::log(static_cast<double>((next() >> 11) + 1) * 0x1.0p-53);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// Min-heap of the completion times of the busy servers (at most c entries).
class CompletionHeap {
 public:
  explicit CompletionHeap(int capacity) { h_.reserve(static_cast<std::size_t>(capacity)); }
  bool empty() const { return h_.empty(); }
  std::size_t size() const { return h_.size(); }
  double top() const { return h_.front(); }
  void push(double t) {
    std::size_t i = h_.size();
    h_.push_back(t);
    while (i > 0) {
      const std::size_t p = (i - 1) / 2;
      if (h_[p] <= t) break;
      h_[i] = h_[p];
      i = p;
    }
    h_[i] = t;
  }
  // The server at the top takes a new job: one sift-down instead of a pop and a push.
  void replace_top(double t) { sift_down(0, t); }
  void pop() {
    const double last = h_.back();
    h_.pop_back();
    if (!h_.empty()) sift_down(0, last);
  }

 private:
  void sift_down(std::size_t i, double t) {
    const std::size_t n = h_.size();
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && h_[c + 1] < h_[c]) ++c;
      if (t <= h_[c]) break;
      h_[i] = h_[c];
      i = c;
    }
    h_[i] = t;
  }
  std::vector<double> h_;
};

// FIFO of arrival times: a power-of-two ring buffer that grows when full.
class Fifo {
 public:
  Fifo() : buf_(1024) {}
  bool empty() const { return head_ == tail_; }
  double front() const { return buf_[head_ & (buf_.size() - 1)]; }
  void pop() { ++head_; }
  void push(double t) {
    if (tail_ - head_ == buf_.size()) grow();
    buf_[tail_++ & (buf_.size() - 1)] = t;
  }

 private:
  void grow() {
    std::vector<double> b(buf_.size() * 2);
    for (std::size_t i = head_; i != tail_; ++i) b[i - head_] = buf_[i & (buf_.size() - 1)];
    tail_ -= head_;
    head_ = 0;
    buf_.swap(b);
  }
  std::vector<double> buf_;
  std::size_t head_ = 0, tail_ = 0;
};

// C servers at the same load per server as the M/M/10 case (arrival rate 0.95 C per second); a
// template, so that the loop's constants stay constants as in a hand-written loop.
template <int C>
struct MinimalMMcD {
  static constexpr double lambda = kLambda * C / kServers;
  Xoshiro256pp rng{20240601};
  CompletionHeap busy{C};
  Fifo queue;
  double next_arrival = rng.exponential(1 / lambda);
  std::uint64_t arrivals = 0, served = 0, lost = 0;

  void run(std::uint64_t n_arrivals) {
    const std::uint64_t stop = arrivals + n_arrivals;
    while (arrivals < stop) {
      if (!busy.empty() && busy.top() <= next_arrival) {
        // A server frees: purge expired jobs at the head, start the first live one.
        const double now = busy.top();
        while (!queue.empty() && now - queue.front() >= kDeadline) {
          queue.pop();
          ++lost;
        }
        if (queue.empty()) {
          busy.pop();
        } else {
          queue.pop();
          ++served;
          busy.replace_top(now + rng.exponential(kMeanService));
        }
      } else {
        const double now = next_arrival;
        ++arrivals;
        next_arrival = now + rng.exponential(1 / lambda);
        if (busy.size() < static_cast<std::size_t>(C)) {
          ++served;  // a free server means the queue is empty
          busy.push(now + rng.exponential(kMeanService));
        } else {
          queue.push(now);
        }
      }
    }
  }
};

template <int C>
void run_minimal(benchmark::State& state) {
  constexpr std::uint64_t kChunk = 100'000;  // arrivals per benchmark iteration
  MinimalMMcD<C> sim;
  for (auto _ : state) sim.run(kChunk);
  benchmark::DoNotOptimize(sim.served);
  const double jobs = static_cast<double>(state.iterations()) * static_cast<double>(kChunk);
  state.counters["jobs_per_s"] = benchmark::Counter(jobs, benchmark::Counter::kIsRate);
  state.counters["P_abandon"] =
      static_cast<double>(sim.lost) / static_cast<double>(sim.served + sim.lost);
  state.counters["P_abandon_exact"] = exact_p_abandon(sim.lambda, 1 / kMeanService, C, kDeadline);
  state.counters["jobs"] = jobs;
  // One event per arrival and one per completion (a job lost in the queue has none): the
  // figure brokersim's events_per_job (bench_run.cpp) is compared with.
  state.counters["events_per_job"] =
      static_cast<double>(sim.arrivals + sim.served) / static_cast<double>(sim.arrivals);
}

void BM_MinimalMMcD(benchmark::State& state) { run_minimal<kServers>(state); }
BENCHMARK(BM_MinimalMMcD)->Unit(benchmark::kMillisecond);

// What a fleet costs the hand-written loop: the same load per server with 100 and with 10,000
// servers (brokersim's BM_Run_Fleet100 and BM_Run_Fleet10000, bench_run.cpp, run this model with
// as many consumers of one slot and prefetch 1). The loop's heap of completion times holds
// 8-byte doubles and it keeps no per-server or per-job record, so this is the least a fleet can
// cost: the heap's depth, not the cache.
void BM_MinimalMMcD_Fleet100(benchmark::State& state) { run_minimal<100>(state); }
void BM_MinimalMMcD_Fleet10000(benchmark::State& state) { run_minimal<10'000>(state); }
BENCHMARK(BM_MinimalMMcD_Fleet100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MinimalMMcD_Fleet10000)->Unit(benchmark::kMillisecond);

}  // namespace
