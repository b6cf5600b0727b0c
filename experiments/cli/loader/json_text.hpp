// Scenario JSON text: parsing with positions in errors and a depth limit, reading files, and
// --set PATH=VALUE (defined in json_text.cpp).
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

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

}  // namespace brokersim
