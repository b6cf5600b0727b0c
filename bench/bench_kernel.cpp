// Kernel micro-benchmarks: the pending-event set under the classic hold model, the cost of a
// random draw, the cost of recording a latency.
//
// Hold model (Vaucher & Duval 1975; Jones 1986): keep n events pending; each operation pops the
// minimum and pushes a new event at (popped time + random increment), so n stays constant and
// the time distribution of the pending set reaches its steady state. One benchmark iteration is
// one hold operation, so the reported time per iteration is ns per hold; it includes one
// exponential draw (see BM_RngExponential for that part alone).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/event_queue.hpp"
#include "sim/reference_event_set.hpp"
#include "sim/rng.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"

namespace {

constexpr double kMeanIncrementNs = 1e6;  // exp(1) increments, in units of 1 ms of integer ns

sim::Time increment(sim::Rng& rng) {
  return static_cast<sim::Time>(rng.exponential(kMeanIncrementNs));
}

// A pending-event set under the hold model, driven as the kernel drives it (sim/simulator.hpp):
// pushes numbered in insertion order, the instant of the last pop given as `now`.
template <class Set>
void hold(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  sim::Rng rng(1, 0, "hold");
  Set q;
  if constexpr (requires { q.reserve(n + 1); }) q.reserve(n + 1);  // the fast set's heap has fixed room
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i) q.push(sim::Event{increment(rng), seq++, 1, static_cast<std::uint32_t>(i), 0, 0}, 0);
  for (auto _ : state) {
    sim::Event e = q.pop();
    const sim::Time now = e.time;
    e.time += increment(rng);
    e.order = seq++;
    q.push(e, now);
  }
  benchmark::DoNotOptimize(q.top());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_HoldEventQueue(benchmark::State& state) { hold<sim::EventQueue>(state); }
BENCHMARK(BM_HoldEventQueue)->Arg(1'000)->Arg(100'000);

// The plain binary heap the fast set is checked against (std::push_heap / std::pop_heap).
void BM_HoldReferenceEventSet(benchmark::State& state) { hold<sim::ReferenceEventSet>(state); }
BENCHMARK(BM_HoldReferenceEventSet)->Arg(1'000)->Arg(100'000);

// Baseline: a red-black tree keyed on time; equal keys are inserted after existing ones, so it
// has the same FIFO tie rule as EventQueue. Payload of the same size as an Event's.
void BM_HoldMultimap(benchmark::State& state) {
  struct Payload {
    std::uint64_t order;
    std::uint32_t kind, target, tag, aux;
  };
  const auto n = static_cast<std::size_t>(state.range(0));
  sim::Rng rng(1, 0, "hold");
  std::multimap<sim::Time, Payload> q;
  for (std::size_t i = 0; i < n; ++i)
    q.emplace(increment(rng), Payload{i, 1, static_cast<std::uint32_t>(i), 0, 0});
  for (auto _ : state) {
    auto it = q.begin();
    const sim::Time t = it->first;
    const Payload p = it->second;
    q.erase(it);
    q.emplace(t + increment(rng), p);
  }
  benchmark::DoNotOptimize(q.begin()->first);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_HoldMultimap)->Arg(1'000)->Arg(100'000);

// Second baseline: std::priority_queue of the same 32-byte events (no stable tie rule beyond
// the order field, which is what EventQueue's comparison uses too).
void BM_HoldStdPriorityQueue(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  sim::Rng rng(1, 0, "hold");
  std::vector<sim::Event> storage;
  storage.reserve(n + 1);
  std::priority_queue<sim::Event, std::vector<sim::Event>, sim::Later> q(sim::Later{}, std::move(storage));
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < n; ++i)
    q.push(sim::Event{increment(rng), seq++, 1, static_cast<std::uint32_t>(i), 0, 0});
  for (auto _ : state) {
    sim::Event e = q.top();
    q.pop();
    e.time += increment(rng);
    e.order = seq++;
    q.push(e);
  }
  benchmark::DoNotOptimize(q.top());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_HoldStdPriorityQueue)->Arg(1'000)->Arg(100'000);

// ---- random draws ----------------------------------------------------------------------------

void BM_RngNext(benchmark::State& state) {
  sim::Rng rng(1, 0, "bench");
  for (auto _ : state) benchmark::DoNotOptimize(rng.next());
}
BENCHMARK(BM_RngNext);

void BM_RngExponential(benchmark::State& state) {
  sim::Rng rng(1, 0, "bench");
  for (auto _ : state) benchmark::DoNotOptimize(rng.exponential(1.0));
}
BENCHMARK(BM_RngExponential);

void BM_RngStandardNormal(benchmark::State& state) {
  sim::Rng rng(1, 0, "bench");
  for (auto _ : state) benchmark::DoNotOptimize(rng.standard_normal());
}
BENCHMARK(BM_RngStandardNormal);

// Through the Distribution switch, as a model samples a service time.
void BM_DistributionSample(benchmark::State& state) {
  const sim::Distribution d = state.range(0) == 0   ? sim::Distribution::exp(1e6)
                              : state.range(0) == 1 ? sim::Distribution::lognormal(1e6, 0.5)
                                                    : sim::Distribution::normal(1e6, 3e5, true);
  state.SetLabel(state.range(0) == 0 ? "exp" : state.range(0) == 1 ? "lognormal" : "normal+");
  sim::Rng rng(1, 0, "bench");
  for (auto _ : state) benchmark::DoNotOptimize(d.sample(rng));
}
BENCHMARK(BM_DistributionSample)->Arg(0)->Arg(1)->Arg(2);

// ---- statistics ------------------------------------------------------------------------------

void BM_HistogramAdd(benchmark::State& state) {
  // Pre-drawn latencies (exponential, mean 5 ms in ns) so only add() is timed.
  sim::Rng rng(1, 0, "bench");
  std::vector<std::int64_t> xs(1 << 14);
  for (auto& x : xs) x = static_cast<std::int64_t>(rng.exponential(5e6));
  auto h = std::make_unique<sim::Histogram>();
  std::size_t i = 0;
  for (auto _ : state) {
    h->add(xs[i++ & (xs.size() - 1)]);
  }
  benchmark::DoNotOptimize(h->count());
  benchmark::ClobberMemory();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_HistogramAdd);

void BM_WelfordAdd(benchmark::State& state) {
  sim::Rng rng(1, 0, "bench");
  std::vector<double> xs(1 << 14);
  for (auto& x : xs) x = rng.exponential(5e6);
  sim::Welford w;
  std::size_t i = 0;
  for (auto _ : state) w.add(xs[i++ & (xs.size() - 1)]);
  benchmark::DoNotOptimize(w.mean());
}
BENCHMARK(BM_WelfordAdd);

}  // namespace
