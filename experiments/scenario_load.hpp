// Scenario files (JSON, see docs/scenario.md) -> validated brokersim::Scenario.
// Every input is checked here, at the edge, so the simulator can trust what it is given; every
// failure is a ScenarioError whose what() names the key path as --set takes it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace brokersim {

// Nesting deeper than this is refused while parsing: nlohmann's parser copes with any depth, but
// copying, comparing or dumping a document recurses, and the sweep command copies documents.
inline constexpr std::size_t kMaxJsonDepth = 512;

// Parse JSON text; invalid, truncated, binary or too deeply nested input is a ScenarioError
// "ORIGIN:LINE:COLUMN: invalid JSON: REASON".
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

// Read and parse a file (missing/unreadable: ScenarioError "PATH: cannot read file (reason)").
nlohmann::json read_json_file(const std::string& path);

// "PATH=VALUE": VALUE is parsed as JSON if it parses, else taken as a string (overflow=drop-head).
void apply_set(nlohmann::json& doc, const std::string& assignment);

// PATH: keys and array indices separated by dots (consumers.0.prefetch). Missing object keys are
// created (validation later rejects unknown ones); an index out of range, or a step into a value
// that is neither object nor array, is a ScenarioError naming the path.
void set_path(nlohmann::json& doc, const std::string& path, const nlohmann::json& value);

// Validate the whole document and build the Scenario. `base_dir` resolves relative trace_csv
// paths. Queues are stored in name order (a nlohmann::json object is sorted by key), so queue
// indices are deterministic whatever order the file lists them in. The "sweep" key is checked for
// shape only; the sweep command reads it from the JSON itself.
Scenario load_scenario(const nlohmann::json& doc, const std::string& base_dir);

// The rows of a trace_csv file's text (`file` and `path` name it in errors: "PATH: FILE line N: ...").
std::vector<ArrivalSpec::TraceRow> parse_trace_text(const std::string& text, const std::string& file,
                                                    const std::string& path);

// read_json_file + apply_set for each of `sets`, in order + load_scenario (base_dir = the file's folder).
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& sets = {});

}  // namespace brokersim
