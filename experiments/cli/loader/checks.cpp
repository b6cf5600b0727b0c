// The loader's building blocks (see checks.hpp). The rule throughout: nothing the user wrote is
// trusted, every value is checked for type, range and representability before it reaches the
// simulator, and every failure names the key path, what was expected and what was given.
#include "experiments/cli/loader/checks.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <vector>

#include "experiments/cli/text.hpp"

namespace brokersim::loader {

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string join(const std::string& path, std::size_t index) { return join(path, std::to_string(index)); }

namespace {

// Stands for a missing key, so that the checkers below report "got nothing" without a second
// code path. The parser never produces a discarded value, so it cannot be confused with input.
const json kMissing(json::value_t::discarded);

}  // namespace

const json& member(const json& object, const std::string& key) {
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}
bool has(const json& object, const std::string& key) { return object.find(key) != object.end(); }

namespace {

constexpr std::size_t kDescribeLimit = 200;

// A JSON rendering of `v` as dump() gives it, but bounded in depth and length: error messages must
// stay readable, and dump() recurses (a deep document built in code must not overflow the stack).
void describe_into(const json& v, std::string& out, int depth) {
  const auto dump = [](const json& x) { return x.dump(-1, ' ', false, json::error_handler_t::replace); };
  if (out.size() > kDescribeLimit) return;
  if (v.is_object() || v.is_array()) {
    const bool object = v.is_object();
    if (!v.empty() && depth >= 6) {
      out += object ? "{...}" : "[...]";
      return;
    }
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (out.size() > kDescribeLimit) break;
      if (!first) out += ',';
      first = false;
      if (object) out += dump(json(it.key())) + ":";
      describe_into(it.value(), out, depth + 1);
    }
    out += object ? '}' : ']';
  } else if (v.is_discarded()) {
    out += "nothing";
  } else {
    out += dump(v);
  }
}

}  // namespace

std::string describe(const json& v) {
  std::string out;
  describe_into(v, out, 0);
  if (out.size() > kDescribeLimit) out = out.substr(0, kDescribeLimit) + "...";
  return out;
}

std::string quoted(const std::string& s) { return describe(json(s)); }

[[noreturn]] void fail(const std::string& path, const std::string& expected, const json& got) {
  throw ScenarioError(path, expected, describe(got));
}

// For messages that do not fit "expected X, got Y"; still records the path.
[[noreturn]] void fail_message(const std::string& path, const std::string& message) {
  ScenarioError error(path + ": " + message);
  error.path = path;
  throw error;
}

std::string format_number(double x) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

std::string list(Keys names, std::string_view quote) {
  std::string out;
  for (const auto name : names) {
    if (!out.empty()) out += ", ";
    out += std::string(quote) + std::string(name) + std::string(quote);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Keys

namespace {

// Keys within edit distance 2 of an allowed one are taken for a typo of it.
std::string_view closest(const std::string& key, Keys allowed) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (const auto candidate : allowed) {
    const std::size_t gap = key.size() > candidate.size() ? key.size() - candidate.size() : candidate.size() - key.size();
    if (gap > 2) continue;  // cannot be within distance 2; also keeps a huge key cheap
    const std::size_t d = edit_distance(key, candidate);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

}  // namespace

void check_keys(const json& object, const std::string& path, Keys allowed, const KeyOwner& owner) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string at = join(path, key);
    if (owner) {
      const std::string whose = owner(key);
      if (!whose.empty()) fail_message(at, whose);
    }
    const std::string_view best = closest(key, allowed);
    if (!best.empty()) fail_message(at, "unknown key (did you mean \"" + std::string(best) + "\"?)");
    fail_message(at, "unknown key (allowed: " + list(allowed) + ")");
  }
}

void check_keys(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed) {
  check_keys(object, path, Keys(allowed.begin(), allowed.size()));
}

const json& object_at(const json& v, const std::string& path, const std::string& expected) {
  if (!v.is_object()) fail(path, expected, v);
  return v;
}

const json& non_empty_array(const json& v, const std::string& path, const std::string& expected) {
  if (!v.is_array() || v.empty()) fail(path, expected, v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Numbers

namespace {
const std::string kMaxText = format_number(sim::kMaxMs);
}  // namespace

// Any finite number small enough that every time derived from it stays far from int64 overflow.
double real(const json& v, const std::string& path, const std::string& expected) {
  if (!v.is_number()) fail(path, expected, v);  // booleans are not numbers in nlohmann::json
  const double x = v.get<double>();
  if (!std::isfinite(x) || std::fabs(x) > sim::kMaxMs) {
    fail(path, expected + " (at most " + kMaxText + " in magnitude)", v);
  }
  return x;
}

double any_number(const json& v, const std::string& path) { return real(v, path, "a number"); }

double non_negative(const json& v, const std::string& path) {
  const double x = real(v, path, "a number >= 0");
  if (x < 0) fail(path, "a number >= 0", v);
  return x;
}

double positive(const json& v, const std::string& path) {
  const double x = real(v, path, "a number > 0");
  if (x <= 0) fail(path, "a number > 0", v);
  return x;
}

Time ms_non_negative(const json& v, const std::string& path) { return sim::from_ms(non_negative(v, path)); }

// Durations that must be positive also must not round to 0 ns: a period of 0 would never advance.
Time ms_positive(const json& v, const std::string& path) {
  const Time t = sim::from_ms(positive(v, path));
  if (t < 1) fail(path, "a number > 0 of at least 0.000001 (1 ns, the clock's resolution)", v);
  return t;
}

Time ms_period(const json& v, const std::string& path) {
  const Time t = ms_positive(v, path);
  if (t < sim::kNsPerMs) fail(path, "a period of at least 1 (ms: a periodic tick runs for the whole run, so a shorter one makes its work unbounded)", v);
  return t;
}

double rate_per_s(const json& v, const std::string& path, bool zero_allowed) {
  const double r = zero_allowed ? non_negative(v, path) : positive(v, path);
  // The mean gap between arrivals, 1/r s, must be a duration a scenario may name (1e12 ms).
  if (r > 0 && r < 1e3 / sim::kMaxMs)
    fail(path, std::string(zero_allowed ? "0 or " : "") + "a rate >= 1e-09 per second (a mean gap of at most " + kMaxText + " ms)", v);
  return r;
}

namespace {

struct Integral {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

// An integral JSON number, given as an integer or as a float with an integral value (4.0).
std::optional<Integral> integral(const json& v) {
  if (v.is_number_unsigned()) return Integral{false, v.get<std::uint64_t>()};
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    // 0 - x in unsigned arithmetic is exact even for INT64_MIN.
    return x < 0 ? Integral{true, 0 - static_cast<std::uint64_t>(x)} : Integral{false, static_cast<std::uint64_t>(x)};
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (!std::isfinite(x) || std::trunc(x) != x) return std::nullopt;
    const double m = std::fabs(x);
    if (m >= 18446744073709551616.0) return std::nullopt;  // 2^64: beyond every integer field
    return Integral{x < 0, static_cast<std::uint64_t>(m)};
  }
  return std::nullopt;
}

}  // namespace

// `expected` describes the lower bound ("an integer >= 0"), the usual mistake; above `max` the
// message names the whole range.
std::int64_t integer(const json& v, const std::string& path, std::int64_t min, std::int64_t max,
                     const std::string& expected) {
  const auto n = integral(v);
  if (!n) fail(path, expected, v);
  constexpr std::uint64_t kMinMagnitude = std::uint64_t{1} << 63;
  if (n->negative) {
    if (n->magnitude > kMinMagnitude) fail(path, expected, v);
    const std::int64_t x = n->magnitude == kMinMagnitude ? std::numeric_limits<std::int64_t>::min()
                                                        : -static_cast<std::int64_t>(n->magnitude);
    if (x < min) fail(path, expected, v);
    return x;  // min <= x < 0 <= max
  }
  if (n->magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail(path, "an integer between " + std::to_string(min) + " and " + std::to_string(max), v);
  }
  const auto x = static_cast<std::int64_t>(n->magnitude);
  if (x < min) fail(path, expected, v);
  if (x > max) fail(path, "an integer between " + std::to_string(min) + " and " + std::to_string(max), v);
  return x;
}

std::uint64_t unsigned_integer(const json& v, const std::string& path, std::uint64_t min) {
  const std::string expected = "an integer >= " + std::to_string(min);
  const auto n = integral(v);
  if (!n || n->negative || n->magnitude < min) fail(path, expected, v);
  return n->magnitude;
}

// Index of `v` among `names`.
std::size_t choice(const json& v, const std::string& path, std::initializer_list<std::string_view> names) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    const auto it = std::find(names.begin(), names.end(), s);
    if (it != names.end()) return static_cast<std::size_t>(it - names.begin());
  }
  const std::vector<std::string_view> all(names);
  fail(path, "one of " + list(all, "\""), v);
}

ConsumerSpec::Batch::Execution batch_execution(const json& batch_handler, const std::string& path) {
  if (!has(batch_handler, "execution") || batch_handler["execution"].is_null()) return ConsumerSpec::Batch::Execution::Concurrent;
  return choice(batch_handler["execution"], join(path, "execution"), {"concurrent", "sequential"}) == 0
             ? ConsumerSpec::Batch::Execution::Concurrent
             : ConsumerSpec::Batch::Execution::Sequential;
}

// ---------------------------------------------------------------------------------------------
// Distributions

// Returns the distribution already scaled to nanoseconds.
Distribution distribution(const json& v, const std::string& path, Range range) {
  const bool duration = range == Range::Duration;
  const auto value = [&](const json& x, const std::string& at) {
    return duration ? non_negative(x, at) : any_number(x, at);
  };
  static constexpr std::string_view kKinds[] = {"const", "exp",   "uniform", "normal",
                                                 "lognormal", "gamma", "weibull", "empirical"};
  if (v.is_number()) return Distribution::constant(value(v, path)).scaled(sim::kNsPerMsF);
  if (!v.is_object()) {
    fail(path, std::string(duration ? "a duration" : "a distribution") +
                   ": a number or an object with one of " + list(kKinds),
         v);
  }
  check_keys(v, path, {"const", "exp", "uniform", "normal", "lognormal", "gamma", "weibull", "empirical"});
  if (v.size() != 1) fail(path, "exactly one of " + list(kKinds), v);

  const std::string& kind = v.begin().key();
  const json& p = v.begin().value();
  const std::string at = join(path, kind);
  Distribution d;
  if (kind == "const") {
    d = Distribution::constant(value(p, at));
  } else if (kind == "exp") {
    object_at(p, at, "an object {\"mean\": m}");
    check_keys(p, at, {"mean"});
    d = Distribution::exp(positive(member(p, "mean"), join(at, "mean")));
  } else if (kind == "uniform") {
    object_at(p, at, "an object {\"min\": a, \"max\": b}");
    check_keys(p, at, {"min", "max"});
    const double lo = value(member(p, "min"), join(at, "min"));
    const double hi = real(member(p, "max"), join(at, "max"), "a number >= min (" + describe(member(p, "min")) + ")");
    if (hi < lo) fail(join(at, "max"), "a number >= min (" + describe(member(p, "min")) + ")", member(p, "max"));
    d = Distribution::uniform(lo, hi);
  } else if (kind == "normal") {
    object_at(p, at, "an object {\"mean\": m, \"sd\": s}");
    check_keys(p, at, {"mean", "sd"});
    // A duration's normal is truncated at 0 by rejection; mean >= 0 keeps acceptance >= 1/2.
    const double mean = value(member(p, "mean"), join(at, "mean"));
    const double sd = non_negative(member(p, "sd"), join(at, "sd"));
    d = Distribution::normal(mean, sd, duration);
  } else if (kind == "lognormal") {
    object_at(p, at, "an object {\"mean\": m, \"cv\": c}");
    check_keys(p, at, {"mean", "cv"});
    const double mean = positive(member(p, "mean"), join(at, "mean"));
    const double cv = non_negative(member(p, "cv"), join(at, "cv"));
    d = Distribution::lognormal(mean, cv);
  } else if (kind == "gamma" || kind == "weibull") {
    object_at(p, at, "an object {\"shape\": k, \"scale\": s}");
    check_keys(p, at, {"shape", "scale"});
    const double shape = positive(member(p, "shape"), join(at, "shape"));
    const double scale = positive(member(p, "scale"), join(at, "scale"));
    // Every draw must be a representable duration (at most 1e12 ms). The largest a Weibull can
    // draw is scale * 36.74^(1/shape) (-log of the smallest uniform_pos, 2^-53); a gamma's stays
    // below scale * (sqrt(d) + 4.4)^3 / sqrt(d), d = max(shape, 1) (Marsaglia-Tsang with the
    // largest polar-method normal, |z| < 13).
    const double largest = kind == "weibull"
                               ? scale * std::pow(53.0 * std::log(2.0), 1.0 / shape)
                               : scale * std::pow(std::sqrt(std::max(shape, 1.0)) + 4.4, 3) / std::sqrt(std::max(shape, 1.0));
    if (!(largest <= sim::kMaxMs)) {
      fail(join(at, "shape"), "a shape and scale whose largest draw (" + format_number(largest) +
                                  " here) is at most 1e12", p);
    }
    d = kind == "gamma" ? Distribution::gamma(shape, scale) : Distribution::weibull(shape, scale);
  } else {  // empirical
    non_empty_array(p, at, "a non-empty array of numbers");
    std::vector<double> xs;
    xs.reserve(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) xs.push_back(value(p[i], join(at, i)));
    d = Distribution::empirical(std::move(xs));
  }
  return d.scaled(sim::kNsPerMsF);
}

Distribution optional_distribution(const json& object, const std::string& key, const std::string& path, Range range) {
  return has(object, key) ? distribution(object[key], join(path, key), range) : Distribution::constant(0);
}

// ---------------------------------------------------------------------------------------------
// Files

std::string read_text(const std::string& path, const std::string& error_prefix) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  const auto cannot = [&](int error) {
    throw ScenarioError(error_prefix + ": cannot read file (" + std::generic_category().message(error) + ")");
  };
  if (file == nullptr) cannot(errno);
  std::string text;
  char buffer[1 << 16];
  std::size_t n = 0;
  errno = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  const int error = errno;
  const bool failed = std::ferror(file) != 0;  // a directory opens, then fails here with EISDIR
  std::fclose(file);
  if (failed) cannot(error != 0 ? error : EIO);
  return text;
}

}  // namespace brokersim::loader
