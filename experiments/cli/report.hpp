// What a run reports: the JSON object of docs/scenario.md "Outputs", and the readable summary.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "experiments/cli/outputs/trace_csv.hpp"  // kTraceHeader, for whoever opens a --trace file
#include "models/scenario.hpp"
#include "models/simulation.hpp"

namespace brokersim {

// Keys in a fixed order, so the same run prints the same bytes.
nlohmann::ordered_json result_json(const Scenario& scenario, const RunResult& result);

// The summary table a capacity planner reads first.
void print_summary(std::ostream& out, const Scenario& scenario, const RunResult& result);


}  // namespace brokersim
