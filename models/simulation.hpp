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

RunResult simulate(const Scenario& scenario, const RunOptions& options = {});

}  // namespace brokersim
