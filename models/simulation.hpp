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
// The same run, and the fingerprint of the event stream it popped: FNV-1a over every event's
// time, kind and target, in order (sim/simulator.hpp; tests/test_fingerprints.cpp).
RunResult simulate(const Scenario& scenario, const RunOptions& options, std::uint64_t& stream_fingerprint);

}  // namespace brokersim
