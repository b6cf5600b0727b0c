// What a run reports: the JSON object of docs/scenario.md "Outputs", and the readable summary.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "models/simulation.hpp"

namespace brokersim {

// Keys in a fixed order, so the same run prints the same bytes.
nlohmann::ordered_json result_json(const Scenario& scenario, const RunResult& result);

// The summary table a capacity planner reads first.
void print_summary(std::ostream& out, const Scenario& scenario, const RunResult& result);

// Header of --trace files (docs/scenario.md).
inline constexpr const char* kTraceHeader =
    "job,producer,queue,consumer,created_ms,expires_at_ms,published_ms,delivered_ms,received_ms,"
    "started_ms,finished_ms,ended_ms,outcome,redeliveries,dead_letterings,warmup";

}  // namespace brokersim
