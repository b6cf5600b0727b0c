// Simulated jobs per CPU-second of whole runs (scenario loading excluded): the figure that
// decides whether a sweep of thousands of settings is interactive.
#include <benchmark/benchmark.h>

#include <string>

#include "experiments/scenario_load.hpp"
#include "models/simulation.hpp"

namespace {

void run_scenario(benchmark::State& state, const std::string& file, std::uint64_t jobs) {
  brokersim::Scenario s = brokersim::load_scenario_file(
      std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/" + file,
      {"stop={\"jobs\": " + std::to_string(jobs) + "}", "warmup_ms=0"});
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

}  // namespace

BENCHMARK(BM_Run_MM10_Prefetch1)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_Run_CapacityBaseline)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
