// The loader's building blocks, shared by every section: error text with the key path, key-name
// checks, numbers, choices and distributions. Each throws a ScenarioError naming the key path (as
// --set takes it), what was expected and what was given.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace brokersim::loader {

using json = nlohmann::json;
using Keys = std::span<const std::string_view>;

// ---- error text

std::string join(const std::string& path, std::string_view key);
std::string join(const std::string& path, std::size_t index);

// A value to stand for a missing key (describe() gives "nothing").
const json& member(const json& object, const std::string& key);
bool has(const json& object, const std::string& key);

// A bounded JSON rendering of `v` for error messages ("nothing" for a missing key).
std::string describe(const json& v);
std::string quoted(const std::string& s);
std::string format_number(double x);
std::string list(Keys names, std::string_view quote = "");

[[noreturn]] void fail(const std::string& path, const std::string& expected, const json& got);
// For messages that do not fit "expected X, got Y"; still records the path.
[[noreturn]] void fail_message(const std::string& path, const std::string& message);

// ---- keys

// For a key an object does not accept: the message naming who does accept it, or "" when no one
// does (then the error is "unknown key" with a "did you mean").
using KeyOwner = std::function<std::string(std::string_view key)>;

// A typo must not silently fall back to a default, so every object's keys are checked.
void check_keys(const json& object, const std::string& path, Keys allowed, const KeyOwner& owner = {});
void check_keys(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed);

const json& object_at(const json& v, const std::string& path, const std::string& expected = "an object");
const json& non_empty_array(const json& v, const std::string& path, const std::string& expected);

// ---- numbers

double real(const json& v, const std::string& path, const std::string& expected);
double any_number(const json& v, const std::string& path);
double non_negative(const json& v, const std::string& path);
double positive(const json& v, const std::string& path);
Time ms_non_negative(const json& v, const std::string& path);
// Positive durations must also not round to 0 ns: a period of 0 would never advance.
Time ms_positive(const json& v, const std::string& path);
// A periodic tick's period (sampling, autoscaler syncs, re-declarations): at least 1 ms.
Time ms_period(const json& v, const std::string& path);
// An arrival rate per second: > 0 (or >= 0 with zero_allowed) and, when > 0, at least 1e-9 so
// that the mean gap is a representable duration.
double rate_per_s(const json& v, const std::string& path, bool zero_allowed);

// `expected` describes the lower bound ("an integer >= 0"), the usual mistake; above `max` the
// message names the whole range.
std::int64_t integer(const json& v, const std::string& path, std::int64_t min, std::int64_t max,
                     const std::string& expected);
std::uint64_t unsigned_integer(const json& v, const std::string& path, std::uint64_t min);

inline constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// Index of `v` among `names`.
std::size_t choice(const json& v, const std::string& path, std::initializer_list<std::string_view> names);
// batch_handler.execution (either broker kind's): "concurrent" (the default) or "sequential".
ConsumerSpec::Batch::Execution batch_execution(const json& batch_handler, const std::string& path);

// ---- distributions

enum class Range : std::uint8_t { Duration, Signed };

// Returns the distribution already scaled to nanoseconds.
Distribution distribution(const json& v, const std::string& path, Range range);
// The constant 0 when `key` is absent.
Distribution optional_distribution(const json& object, const std::string& key, const std::string& path, Range range);

// ---- files

// The whole file; failure is a ScenarioError "ERROR_PREFIX: cannot read file (reason)".
std::string read_text(const std::string& path, const std::string& error_prefix);

}  // namespace brokersim::loader
