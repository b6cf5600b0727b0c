// Scenario files (JSON, see docs/scenario.md) -> validated brokersim::Scenario; with the JSON
// text helpers (loader/json_text.hpp) and arrival traces (loader/arrival_trace.hpp) the loader uses.
// Every input is checked here, at the edge, so the simulator can trust what it is given; every
// failure is a ScenarioError whose what() names the key path as --set takes it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/loader/json_text.hpp"
#include "experiments/cli/loader/arrival_trace.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// Validate the whole document and build the Scenario. `base_dir` resolves relative trace_csv
// paths. Queues are stored in name order (a nlohmann::json object is sorted by key), so queue
// indices are deterministic whatever order the file lists them in. The "sweep" key is checked for
// shape only; the sweep command reads it from the JSON itself.
Scenario load_scenario(const nlohmann::json& doc, const std::string& base_dir);

// read_json_file + apply_set for each of `sets`, in order + load_scenario (base_dir = the file's folder).
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& sets = {});

}  // namespace brokersim
