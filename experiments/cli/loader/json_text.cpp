// JSON text: parsing with positions in errors and a depth limit, reading files, and --set.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <set>
#include <system_error>
#include <vector>

#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/json_text.hpp"

namespace brokersim {

namespace {

using namespace loader;

// Rejects nesting deeper than kMaxJsonDepth, with the position of the bracket that goes too deep.
void check_depth(const std::string& text, const std::string& origin) {
  std::size_t depth = 0, line = 1, column = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    ++column;
    if (c == '\n') ++line, column = 0;
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw ScenarioError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                            ": invalid JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// Finds where nlohmann's parser stopped: its out_of_range errors (number overflow) carry no
// position, but every error reaches a SAX handler's parse_error with the byte count.
struct ErrorLocator {
  std::size_t position = 0;
  std::string message;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(json::string_t&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t byte, const std::string&, const json::exception& error) {
    position = byte;
    message = error.what();
    return false;
  }
};

// "[json.exception.parse_error.101] parse error at line 1, column 7: syntax error ..." -> "syntax
// error ...", with bytes that could garble a terminal (binary input) escaped.
std::string clean_reason(std::string message) {
  if (message.starts_with("[json.exception.")) {
    const auto close = message.find("] ");
    if (close != std::string::npos) message.erase(0, close + 2);
  }
  if (message.starts_with("parse error")) {
    const auto colon = message.find(": ");
    if (colon != std::string::npos) message.erase(0, colon + 2);
  }
  std::string out;
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

// A JSON object with a key twice is valid JSON, and nlohmann keeps the last value silently; a
// scenario that says two things must not quietly mean the second, so the path of the first
// repeated key is found on a second, SAX pass (the text is already known to parse).
class DuplicateKeyFinder {
 public:
  std::optional<std::string> duplicate;  // its key path

  bool null() { return element(); }
  bool boolean(bool) { return element(); }
  bool number_integer(json::number_integer_t) { return element(); }
  bool number_unsigned(json::number_unsigned_t) { return element(); }
  bool number_float(json::number_float_t, const json::string_t&) { return element(); }
  bool string(json::string_t&) { return element(); }
  bool binary(json::binary_t&) { return element(); }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& key) {
    Level& object = levels_.back();
    if (!object.keys.insert(key).second) {
      duplicate = join(path(), key);
      return false;
    }
    object.key = key;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception&) { return false; }

 private:
  struct Level {
    bool object;
    std::set<std::string> keys;  // objects: the keys seen so far
    std::string key;             // objects: the current member's key
    std::size_t elements = 0;    // arrays: elements begun so far
  };

  // Every value in an array is its next element.
  bool element() {
    if (!levels_.empty() && !levels_.back().object) ++levels_.back().elements;
    return true;
  }
  bool open(bool object) {
    element();
    levels_.push_back(Level{object, {}, {}, 0});
    return true;
  }
  bool close() {
    levels_.pop_back();
    return true;
  }
  // The path of the value being read, relative to the text's top level.
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i + 1 < levels_.size(); ++i) {
      out = levels_[i].object ? join(out, levels_[i].key) : join(out, levels_[i].elements - 1);
    }
    return out;
  }

  std::vector<Level> levels_;
};

// `at` is where the text's value goes in the scenario ("" for a whole scenario file).
void reject_duplicate_keys(const std::string& text, const std::string& at) {
  DuplicateKeyFinder finder;
  json::sax_parse(text, &finder);
  if (finder.duplicate) fail_message(join(at, *finder.duplicate), "duplicate key");
}

// Syntax only: depth, then nlohmann's parser, with line and column in the error.
json parse_syntax(const std::string& text, const std::string& origin) {
  // nlohmann's lexer takes a NUL byte for the end of the input, so a document followed by a NUL
  // and anything at all would be accepted: refused here with where it is.
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    const std::size_t line_start = nul == 0 ? std::string::npos : text.rfind('\n', nul - 1);
    const std::size_t column = line_start == std::string::npos ? nul + 1 : nul - line_start;
    throw ScenarioError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) +
                        ": invalid JSON: a NUL byte (JSON text has none; is this a binary file or a truncated copy?)");
  }
  check_depth(text, origin);
  try {
    return json::parse(text);
  } catch (const json::exception& error) {
    ErrorLocator locator;
    json::sax_parse(text, &locator);
    // The parser's position counts the byte it failed on; line and column are 1-based.
    const std::size_t failed_at = std::min(locator.position == 0 ? 0 : locator.position - 1, text.size());
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + failed_at, '\n'));
    const std::size_t line_start = text.rfind('\n', failed_at == 0 ? 0 : failed_at - 1);
    const std::size_t column =
        failed_at == 0 || line_start == std::string::npos ? failed_at + 1 : failed_at - line_start;
    const std::string reason = clean_reason(locator.message.empty() ? error.what() : locator.message);
    throw ScenarioError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) + ": invalid JSON: " + reason);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  json doc = parse_syntax(text, origin);
  reject_duplicate_keys(text, "");
  return doc;
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_text(path, path), path); }

void set_path(nlohmann::json& doc, const std::string& path, const nlohmann::json& value) {
  std::vector<std::string> segments;
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    segments.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (std::any_of(segments.begin(), segments.end(), [](const std::string& s) { return s.empty(); })) {
    throw ScenarioError(path, "keys and array indices separated by single dots", quoted(path));
  }
  json* node = &doc;
  std::string walked;  // the prefix of `path` that `node` stands for
  const auto where = [&] { return walked.empty() ? std::string("the top level") : walked; };
  for (const auto& segment : segments) {
    if (node->is_null()) *node = json::object();
    if (node->is_object()) {
      node = &(*node)[segment];
    } else if (node->is_array()) {
      const std::size_t size = node->size();
      const std::string elements = std::to_string(size) + (size == 1 ? " element" : " elements");
      std::size_t index = 0;
      const auto result = std::from_chars(segment.data(), segment.data() + segment.size(), index);
      const bool digits = std::all_of(segment.begin(), segment.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits) throw ScenarioError(path, "an array index (" + where() + " is an array of " + elements + ")", quoted(segment));
      if (result.ec != std::errc() || index >= size) {
        throw ScenarioError(path, "an index below " + std::to_string(size) + " (" + where() + " has " + elements + ")", segment);
      }
      node = &(*node)[index];
    } else {
      throw ScenarioError(path, "an object or array at " + where() + " to set " + quoted(segment) + " in", describe(*node));
    }
    walked = join(walked, segment);
  }
  *node = value;
}

void apply_set(nlohmann::json& doc, const std::string& assignment) {
  const std::size_t equals = assignment.find('=');
  if (equals == std::string::npos) throw ScenarioError("--set", "PATH=VALUE", quoted(assignment));
  const std::string path = assignment.substr(0, equals);
  if (path.empty()) throw ScenarioError("--set", "a key path before '='", quoted(assignment));
  const std::string text = assignment.substr(equals + 1);
  json value;
  bool is_json = true;
  try {
    value = parse_syntax(text, "--set " + path);
  } catch (const ScenarioError&) {
    value = text;  // not JSON: a bare word such as drop-head is meant as a string
    is_json = false;
  }
  if (is_json) reject_duplicate_keys(text, path);
  set_path(doc, path, value);
}

}  // namespace brokersim
