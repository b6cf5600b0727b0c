// Simulated jobs per CPU-second of whole runs (scenario loading excluded): the figure that
// decides whether a sweep of thousands of settings is interactive.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "experiments/cli/loader/scenario_load.hpp"
#include "models/simulation.hpp"

namespace {

void run_scenario(benchmark::State& state, const std::string& file, std::uint64_t jobs,
                  std::vector<std::string> sets = {}) {
  sets.push_back("stop={\"jobs\": " + std::to_string(jobs) + "}");
  sets.push_back("warmup_ms=0");
  brokersim::Scenario s = brokersim::load_scenario_file(
      std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/" + file, sets);
  s.observe_every.reset();
  std::uint64_t simulated = 0, events = 0;
  for (auto _ : state) {
    const brokersim::RunResult r = brokersim::simulate(s);
    simulated += r.generated;
    events += r.events;
    benchmark::DoNotOptimize(r.outcomes);
    ++s.replication;
  }
  state.counters["jobs_per_s"] = benchmark::Counter(static_cast<double>(simulated), benchmark::Counter::kIsRate);
  state.counters["events_per_job"] = static_cast<double>(events) / static_cast<double>(simulated);
}

void BM_Run_MM10_Prefetch1(benchmark::State& state) { run_scenario(state, "mm10-prefetch1.json", 500'000); }
void BM_Run_CapacityBaseline(benchmark::State& state) { run_scenario(state, "capacity-baseline.json", 500'000); }

// The same M/M/c+D at the same utilisation (0.95) with a fleet of c = 100 and c = 10,000
// consumers: the cost per job should not grow with the fleet (issue 23: within 1.5x). The
// 10,000-consumer run is longer so that starting the fleet stays a small part of it.
void run_fleet(benchmark::State& state, int consumers, std::uint64_t jobs) {
  run_scenario(state, "mm10-prefetch1.json", jobs,
               {"consumers.0.count=" + std::to_string(consumers),
                "producers.0.arrivals={\"poisson\": {\"rate_per_s\": " + std::to_string(0.95 * consumers) + "}}"});
}
void BM_Run_Fleet100(benchmark::State& state) { run_fleet(state, 100, 500'000); }
void BM_Run_Fleet10000(benchmark::State& state) { run_fleet(state, 10'000, 2'000'000); }

}  // namespace

BENCHMARK(BM_Run_MM10_Prefetch1)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Run_CapacityBaseline)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Run_Fleet100)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Run_Fleet10000)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
