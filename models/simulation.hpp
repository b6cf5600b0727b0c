// One run of a scenario: the broker, its queues, producers and consumers over the event kernel.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "models/job.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct RunOptions {
  std::ostream* trace = nullptr;       // --trace: one CSV row per job, in job order
  std::ostream* timeseries = nullptr;  // --timeseries: one CSV row per observe.every_ms
  std::ostream* progress = nullptr;    // --progress: a line now and then, simulated time and jobs
};

// Thrown when a run breaks an invariant (outcomes not adding up, time going backwards): a bug,
// never a property of the scenario.
struct InvariantError : std::logic_error {
  using std::logic_error::logic_error;
};

RunResult simulate(const Scenario& scenario, const RunOptions& options = {});

}  // namespace brokersim
