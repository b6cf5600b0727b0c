// Scenario loading and validation. The rule throughout: nothing the user wrote is trusted, every
// value is checked for type, range and representability before it reaches the simulator, and every
// failure names the key path, what was expected and what was given.
#include "experiments/scenario_load.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <span>
#include <string_view>
#include <system_error>

namespace brokersim {

namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Error text

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string join(const std::string& path, std::size_t index) { return join(path, std::to_string(index)); }

// Stands for a missing key, so that the checkers below report "got nothing" without a second
// code path. The parser never produces a discarded value, so it cannot be confused with input.
const json kMissing(json::value_t::discarded);

const json& member(const json& object, const std::string& key) {
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}
bool has(const json& object, const std::string& key) { return object.find(key) != object.end(); }

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

std::string list(std::span<const std::string_view> names, std::string_view quote = "") {
  std::string out;
  for (const auto name : names) {
    if (!out.empty()) out += ", ";
    out += std::string(quote) + std::string(name) + std::string(quote);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Keys

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

// Keys that SCENARIO.md defines for other broker kinds: naming the kind beats "unknown key" when a
// user ports a scenario from one broker to another.
struct ForeignKey {
  std::string_view key;
  std::string_view kind;
};
constexpr ForeignKey kForeignQueueKeys[] = {
    {"delivery_limit", "rabbitmq-quorum"},
    {"dead_letter_strategy", "rabbitmq-quorum"},
    {"lock_duration_ms", "azure-servicebus"},
    {"max_delivery_count", "azure-servicebus"},
    {"default_ttl_ms", "azure-servicebus"},
    {"dead_letter_on_expiration", "azure-servicebus"},
    {"requires_session", "azure-servicebus"},
    {"visibility_timeout_ms", "amazon-sqs"},
    {"retention_ms", "amazon-sqs"},
    {"delay_ms", "amazon-sqs"},
    {"max_receive_count", "amazon-sqs"},
};
constexpr ForeignKey kForeignProducerKeys[] = {
    {"scheduled_delay_ms", "azure-servicebus"},
    {"session", "azure-servicebus"},
};
constexpr ForeignKey kForeignConsumerKeys[] = {
    {"receive_mode", "azure-servicebus"},
    {"batch_size", "amazon-sqs"},
};

// A typo must not silently fall back to a default, so every object's keys are checked.
void check_keys(const json& object, const std::string& path, std::initializer_list<std::string_view> allowed,
                std::span<const ForeignKey> foreign = {}) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& key = it.key();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string at = join(path, key);
    for (const auto& f : foreign) {
      if (f.key == key) {
        fail_message(at, "this key belongs to broker kind \"" + std::string(f.kind) +
                             "\"; broker kind \"rabbitmq-classic\" has no such key");
      }
    }
    std::string_view best;
    std::size_t best_distance = 3;
    for (const auto candidate : allowed) {
      const std::size_t gap = key.size() > candidate.size() ? key.size() - candidate.size() : candidate.size() - key.size();
      if (gap > 2) continue;  // cannot be within distance 2; also keeps a huge key cheap
      const std::size_t d = edit_distance(key, candidate);
      if (d < best_distance) best_distance = d, best = candidate;
    }
    if (!best.empty()) fail_message(at, "unknown key (did you mean \"" + std::string(best) + "\"?)");
    const std::vector<std::string_view> names(allowed);
    fail_message(at, "unknown key (allowed: " + list(names) + ")");
  }
}

const json& object_at(const json& v, const std::string& path, const std::string& expected = "an object") {
  if (!v.is_object()) fail(path, expected, v);
  return v;
}

const json& non_empty_array(const json& v, const std::string& path, const std::string& expected) {
  if (!v.is_array() || v.empty()) fail(path, expected, v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Numbers

const std::string kMaxText = format_number(sim::kMaxMs);

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

constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

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

// ---------------------------------------------------------------------------------------------
// Distributions

enum class Range : std::uint8_t { Duration, Signed };

// Returns the distribution already scaled to nanoseconds.
Distribution distribution(const json& v, const std::string& path, Range range) {
  const bool duration = range == Range::Duration;
  const auto value = [&](const json& x, const std::string& at) {
    return duration ? non_negative(x, at) : any_number(x, at);
  };
  static constexpr std::string_view kKinds[] = {"const", "exp", "uniform", "normal", "lognormal", "empirical"};
  if (v.is_number()) return Distribution::constant(value(v, path)).scaled(1e6);
  if (!v.is_object()) {
    fail(path, std::string(duration ? "a duration" : "a distribution") +
                   ": a number or an object with one of " + list(kKinds),
         v);
  }
  check_keys(v, path, {"const", "exp", "uniform", "normal", "lognormal", "empirical"});
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
  } else {  // empirical
    non_empty_array(p, at, "a non-empty array of numbers");
    std::vector<double> xs;
    xs.reserve(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) xs.push_back(value(p[i], join(at, i)));
    d = Distribution::empirical(std::move(xs));
  }
  return d.scaled(1e6);
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_cell(std::string_view cell) {
  double x = 0;
  const auto result = std::from_chars(cell.data(), cell.data() + cell.size(), x);
  if (result.ec != std::errc() || result.ptr != cell.data() + cell.size()) return std::nullopt;
  if (!std::isfinite(x) || std::fabs(x) > sim::kMaxMs) return std::nullopt;
  return x;
}

// One job per data line: publish_ms, and optionally deadline_ms / service_ms overriding the
// producer's (an empty cell keeps the producer's).
}  // namespace

std::vector<ArrivalSpec::TraceRow> parse_trace_text(const std::string& text, const std::string& file,
                                                    const std::string& path) {
  const auto bad = [&](std::size_t line, const std::string& expected, const std::string& got) {
    fail_message(path, file + " line " + std::to_string(line) + ": expected " + expected + ", got " + got);
  };

  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  if (!lines.empty() && lines[0].starts_with("\xEF\xBB\xBF")) lines[0].remove_prefix(3);  // UTF-8 BOM

  const auto split = [](std::string_view line) {
    std::vector<std::string_view> cells;
    for (std::size_t start = 0;;) {
      const std::size_t comma = line.find(',', start);
      cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
      if (comma == std::string_view::npos) return cells;
      start = comma + 1;
    }
  };

  std::size_t header_line = 0;
  while (header_line < lines.size() && trim(lines[header_line]).empty()) ++header_line;
  if (header_line == lines.size()) bad(1, "a header row naming a publish_ms column", "an empty file");

  enum Column { Publish, Deadline, Service };
  static constexpr std::string_view kColumns[] = {"publish_ms", "deadline_ms", "service_ms"};
  const auto header = split(lines[header_line]);
  std::vector<Column> columns;
  for (const auto name : header) {
    const auto it = std::find(std::begin(kColumns), std::end(kColumns), name);
    if (it == std::end(kColumns)) bad(header_line + 1, "a column name among " + list(kColumns), quoted(std::string(name)));
    const auto column = static_cast<Column>(it - std::begin(kColumns));
    if (std::find(columns.begin(), columns.end(), column) != columns.end()) {
      bad(header_line + 1, "each column once", quoted(std::string(name)) + " twice");
    }
    columns.push_back(column);
  }
  if (std::find(columns.begin(), columns.end(), Publish) == columns.end()) {
    bad(header_line + 1, "a header row naming a publish_ms column", quoted(std::string(trim(lines[header_line]))));
  }

  std::vector<ArrivalSpec::TraceRow> rows;
  for (std::size_t i = header_line + 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    const std::size_t line = i + 1;
    const auto cells = split(lines[i]);
    if (cells.size() != columns.size()) {
      bad(line, std::to_string(columns.size()) + " cells (" + std::string(trim(lines[header_line])) + ")",
          std::to_string(cells.size()));
    }
    ArrivalSpec::TraceRow row{};
    bool has_publish = false;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string cell(cells[c]);
      const std::string name(kColumns[columns[c]]);
      if (cell.empty()) {
        if (columns[c] == Publish) bad(line, "publish_ms to be a number >= 0", "an empty cell");
        continue;
      }
      const auto x = parse_cell(cell);
      switch (columns[c]) {
        case Publish:
          if (!x || *x < 0) bad(line, "publish_ms to be a number >= 0", x ? cell : quoted(cell));
          row.publish = sim::from_ms(*x);
          has_publish = true;
          break;
        case Deadline:  // may be <= 0: that job is then rejected at publish, as a late job would be
          if (!x) bad(line, "deadline_ms to be a number", quoted(cell));
          row.deadline = sim::from_ms(*x);
          break;
        case Service:
          if (!x || *x < 0) bad(line, "service_ms to be a number >= 0", x ? cell : quoted(cell));
          row.service = sim::from_ms(*x);
          break;
      }
    }
    if (has_publish && !rows.empty() && row.publish < rows.back().publish) {
      bad(line, "publish_ms >= " + format_number(sim::to_ms(rows.back().publish)) + " (the line before's)",
          std::string(cells[static_cast<std::size_t>(std::find(columns.begin(), columns.end(), Publish) - columns.begin())]));
    }
    rows.push_back(row);
  }
  if (rows.empty()) fail_message(path, file + ": expected at least one data row after the header, got none");
  return rows;
}

namespace {

std::vector<ArrivalSpec::TraceRow> read_trace(const std::string& file, const std::string& path) {
  return parse_trace_text(read_text(file, path + ": " + file), file, path);
}

// ---------------------------------------------------------------------------------------------
// Sections

struct Context {
  std::string base_dir;
  std::vector<std::string> queue_names;  // sorted, as stored in BrokerSpec::queues
};

int queue_index(const json& v, const std::string& path, const Context& context) {
  if (v.is_string()) {
    const auto& names = context.queue_names;
    const auto it = std::find(names.begin(), names.end(), v.get_ref<const std::string&>());
    if (it != names.end()) return static_cast<int>(it - names.begin());
  }
  std::string known;
  for (const auto& name : context.queue_names) known += (known.empty() ? "" : ", ") + name;
  fail(path, "the name of a queue in broker.queues (" + known + ")", v);
}

bool valid_queue_name(const std::string& name) {
  // Names appear in --set paths (split on dots) and CSV headers (split on commas, quoted with ").
  if (name.empty() || name.size() > 255) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '.' || c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

BrokerSpec load_broker(const json& v, Context& context) {
  const std::string path = "broker";
  object_at(v, path);
  check_keys(v, path,
             {"kind", "version", "delivery_latency_ms", "ack_latency_ms", "consumer_timeout_ms", "expiry_slack_ms", "queues"});
  BrokerSpec broker;
  if (has(v, "kind")) {
    // All other kinds of SCENARIO.md (and any unknown name) get the same answer: not simulated.
    if (!v["kind"].is_string() || v["kind"].get_ref<const std::string&>() != "rabbitmq-classic") {
      fail("broker.kind", "\"rabbitmq-classic\" (the only broker kind this version simulates)", v["kind"]);
    }
  }
  if (has(v, "version")) {
    static constexpr std::string_view kVersions[] = {"3.13", "4.0", "4.2", "4.3"};
    const json& version = v["version"];
    // --set broker.version=4.2 parses as a number; accept it when it spells a known version.
    const std::string text = version.is_string() ? version.get<std::string>() : version.is_number_float() ? version.dump() : "";
    const auto it = std::find(std::begin(kVersions), std::end(kVersions), text);
    if (it == std::end(kVersions)) fail("broker.version", "one of " + list(kVersions, "\""), version);
    broker.version = std::string(*it);
  }
  broker.delivery_latency = optional_distribution(v, "delivery_latency_ms", path, Range::Duration);
  broker.ack_latency = optional_distribution(v, "ack_latency_ms", path, Range::Duration);
  broker.expiry_slack = optional_distribution(v, "expiry_slack_ms", path, Range::Duration);
  if (has(v, "consumer_timeout_ms")) {
    const json& t = v["consumer_timeout_ms"];
    if (t.is_null()) {
      broker.consumer_timeout.reset();
    } else {
      broker.consumer_timeout = ms_positive(t, join(path, "consumer_timeout_ms"));
    }
  }

  const json& queues = member(v, "queues");
  if (!queues.is_object() || queues.empty()) fail("broker.queues", "a non-empty object of queues by name", queues);
  for (auto it = queues.begin(); it != queues.end(); ++it) {
    if (!valid_queue_name(it.key())) {
      fail("broker.queues", "queue names of 1 to 255 bytes without '.', ',', '\"' or control characters", json(it.key()));
    }
    context.queue_names.push_back(it.key());
  }
  for (auto it = queues.begin(); it != queues.end(); ++it) {
    const std::string at = join("broker.queues", it.key());
    const json& q = object_at(it.value(), at, "an object (the queue's arguments)");
    check_keys(q, at,
               {"message_ttl_ms", "dead_letter_to", "max_length", "max_length_bytes", "overflow", "expires_ms",
                "declare_every_ms", "declare_at_ms"},
               kForeignQueueKeys);
    QueueSpec queue;
    queue.name = it.key();
    if (has(q, "message_ttl_ms") && !q["message_ttl_ms"].is_null()) {
      queue.message_ttl = sim::from_ms(real(q["message_ttl_ms"], join(at, "message_ttl_ms"), "a number >= 0 or null"));
      if (*queue.message_ttl < 0) fail(join(at, "message_ttl_ms"), "a number >= 0 or null", q["message_ttl_ms"]);
    }
    if (has(q, "dead_letter_to") && !q["dead_letter_to"].is_null()) {
      queue.dead_letter_index = queue_index(q["dead_letter_to"], join(at, "dead_letter_to"), context);
      queue.dead_letter_to = q["dead_letter_to"].get<std::string>();
    }
    if (has(q, "max_length") && !q["max_length"].is_null()) {
      queue.max_length = integer(q["max_length"], join(at, "max_length"), 0, std::numeric_limits<std::int64_t>::max(),
                                 "an integer >= 0 or null");
    }
    if (has(q, "max_length_bytes") && !q["max_length_bytes"].is_null()) {
      queue.max_length_bytes = integer(q["max_length_bytes"], join(at, "max_length_bytes"), 0,
                                       std::numeric_limits<std::int64_t>::max(), "an integer >= 0 or null");
    }
    if (has(q, "declare_every_ms") && !q["declare_every_ms"].is_null()) {
      queue.declare_every = ms_positive(q["declare_every_ms"], join(at, "declare_every_ms"));
    }
    if (has(q, "declare_at_ms")) {
      const json& d = q["declare_at_ms"];
      const std::string dp = join(at, "declare_at_ms");
      if (!d.is_array()) fail(dp, "an array of times >= 0", d);
      for (std::size_t i = 0; i < d.size(); ++i) queue.declare_at.push_back(ms_non_negative(d[i], join(dp, i)));
    }
    if (has(q, "overflow")) {
      constexpr Overflow kOverflows[] = {Overflow::DropHead, Overflow::RejectPublish, Overflow::RejectPublishDlx};
      queue.overflow = kOverflows[choice(q["overflow"], join(at, "overflow"), {"drop-head", "reject-publish", "reject-publish-dlx"})];
    }
    if (has(q, "expires_ms") && !q["expires_ms"].is_null()) {
      const json& e = q["expires_ms"];
      const std::string ep = join(at, "expires_ms");
      const double x = real(e, ep, "a number > 0 or null");
      if (x <= 0 || sim::from_ms(x) < 1) fail(ep, "a number > 0 or null", e);
      queue.expires = sim::from_ms(x);
    }
    broker.queues.push_back(std::move(queue));
  }
  return broker;
}

ArrivalSpec load_arrivals(const json& v, const std::string& path, const Context& context) {
  static constexpr std::string_view kKinds[] = {"poisson", "periodic", "at_ms", "trace_csv", "rate_schedule"};
  object_at(v, path, "an object with one of " + list(kKinds));
  check_keys(v, path, {"poisson", "periodic", "at_ms", "trace_csv", "rate_schedule"});
  if (v.size() != 1) fail(path, "exactly one of " + list(kKinds), v);
  const std::string& kind = v.begin().key();
  const json& p = v.begin().value();
  const std::string at = join(path, kind);
  ArrivalSpec arrivals;
  if (kind == "poisson") {
    arrivals.kind = ArrivalSpec::Kind::Poisson;
    object_at(p, at, "an object {\"rate_per_s\": r}");
    check_keys(p, at, {"rate_per_s"});
    arrivals.rate_per_s = positive(member(p, "rate_per_s"), join(at, "rate_per_s"));
  } else if (kind == "periodic") {
    arrivals.kind = ArrivalSpec::Kind::Periodic;
    object_at(p, at, "an object {\"every_ms\": d}");
    check_keys(p, at, {"every_ms"});
    arrivals.every = ms_positive(member(p, "every_ms"), join(at, "every_ms"));
  } else if (kind == "at_ms") {
    arrivals.kind = ArrivalSpec::Kind::AtTimes;
    non_empty_array(p, at, "a non-empty array of times >= 0");
    for (std::size_t i = 0; i < p.size(); ++i) arrivals.at.push_back(ms_non_negative(p[i], join(at, i)));
    std::sort(arrivals.at.begin(), arrivals.at.end());
  } else if (kind == "trace_csv") {
    arrivals.kind = ArrivalSpec::Kind::Trace;
    if (!p.is_string() || p.get_ref<const std::string&>().empty()) fail(at, "the path of a CSV file", p);
    std::filesystem::path file(p.get<std::string>());
    if (file.is_relative() && !context.base_dir.empty()) file = std::filesystem::path(context.base_dir) / file;
    arrivals.trace_path = file.string();
    arrivals.trace = read_trace(arrivals.trace_path, at);
  } else {  // rate_schedule
    arrivals.kind = ArrivalSpec::Kind::RateSchedule;
    non_empty_array(p, at, "a non-empty array of {\"from_ms\": t, \"rate_per_s\": r}");
    for (std::size_t i = 0; i < p.size(); ++i) {
      const std::string step_path = join(at, i);
      const json& step = object_at(p[i], step_path, "an object {\"from_ms\": t, \"rate_per_s\": r}");
      check_keys(step, step_path, {"from_ms", "rate_per_s"});
      const std::string from_path = join(step_path, "from_ms");
      ArrivalSpec::Step s{};
      if (i == 0) {
        s.from = ms_non_negative(member(step, "from_ms"), from_path);
      } else {
        const std::string expected = "a number > " + describe(p[i - 1]["from_ms"]) + " (the previous from_ms)";
        s.from = sim::from_ms(real(member(step, "from_ms"), from_path, expected));
        if (s.from <= arrivals.schedule.back().from) fail(from_path, expected, step["from_ms"]);
      }
      s.rate_per_s = non_negative(member(step, "rate_per_s"), join(step_path, "rate_per_s"));
      arrivals.schedule.push_back(s);
    }
  }
  return arrivals;
}

void check_max_bytes(const sim::Distribution& d, const std::string& path, const json& given) {
  constexpr double kMaxMessageBytes = 536870912.0;
  double largest = d.param_a();
  switch (d.kind()) {
    case sim::Distribution::Kind::Uniform: largest = d.param_b(); break;
    case sim::Distribution::Kind::Empirical:
      for (double x : d.values()) largest = std::max(largest, x);
      break;
    case sim::Distribution::Kind::Normal: largest = d.param_a() + 6 * d.param_b(); break;
    default: break;
  }
  if (largest > kMaxMessageBytes) fail(path, "message sizes of at most 536870912 bytes (512 MiB)", given);
}

ProducerSpec load_producer(const json& v, const std::string& path, const Context& context) {
  object_at(v, path);
  check_keys(v, path,
             {"queue", "arrivals", "deadline_ms", "expiration_ms", "service_ms", "publish_delay_ms", "clock_offset_ms",
              "message_bytes", "persistent"},
             kForeignProducerKeys);
  ProducerSpec producer;
  producer.queue = queue_index(member(v, "queue"), join(path, "queue"), context);
  producer.arrivals = load_arrivals(member(v, "arrivals"), join(path, "arrivals"), context);
  if (has(v, "deadline_ms") && !v["deadline_ms"].is_null()) {
    producer.deadline = distribution(v["deadline_ms"], join(path, "deadline_ms"), Range::Duration);
  }
  if (has(v, "expiration_ms") && !v["expiration_ms"].is_null()) {
    const json& e = v["expiration_ms"];
    if (e.is_string()) {
      if (e.get_ref<const std::string&>() != "remaining-budget") {
        fail(join(path, "expiration_ms"), "null, \"remaining-budget\" or a duration", e);
      }
      producer.expiration = ProducerSpec::Expiration::RemainingBudget;
    } else {
      producer.expiration = ProducerSpec::Expiration::Fixed;
      producer.expiration_value = distribution(e, join(path, "expiration_ms"), Range::Duration);
    }
  }
  producer.service = distribution(member(v, "service_ms"), join(path, "service_ms"), Range::Duration);
  producer.publish_delay = optional_distribution(v, "publish_delay_ms", path, Range::Duration);
  producer.clock_offset = optional_distribution(v, "clock_offset_ms", path, Range::Signed);
  if (has(v, "message_bytes")) {
    // Sizes are counts, not durations: no ms -> ns scaling. RabbitMQ's largest message is 512 MiB.
    producer.message_bytes = distribution(v["message_bytes"], join(path, "message_bytes"), Range::Duration).scaled(1e-6);
    check_max_bytes(producer.message_bytes, join(path, "message_bytes"), v["message_bytes"]);
  }
  if (has(v, "persistent")) {
    if (!v["persistent"].is_boolean()) fail(join(path, "persistent"), "true or false", v["persistent"]);
    producer.persistent = v["persistent"].get<bool>();
  }
  return producer;
}

// Bounds that keep consumer numbering in an int and the simulated population sane.
constexpr std::int64_t kMaxConsumers = 1'000'000;
constexpr std::int64_t kMaxSlots = 1'000'000;
constexpr std::int64_t kMaxPrefetch = 65535;  // AMQP 0-9-1 basic.qos prefetch-count is 16 bits

ConsumerSpec load_consumer(const json& v, const std::string& path, const Context& context, std::int64_t& total) {
  object_at(v, path);
  check_keys(v, path,
             {"queue", "count", "prefetch", "slots", "start_ms", "clock_offset_ms", "uncertainty_ms", "admission",
              "min_window_ms", "on_expired", "exec_timeout", "failure_probability", "priority"},
             kForeignConsumerKeys);
  ConsumerSpec consumer;
  consumer.prefetch = 0;  // RabbitMQ's default: unlimited
  consumer.queue = queue_index(member(v, "queue"), join(path, "queue"), context);
  if (has(v, "count")) {
    consumer.count = static_cast<int>(integer(v["count"], join(path, "count"), 1, kMaxConsumers, "an integer >= 1"));
  }
  total += consumer.count;
  if (total > kMaxConsumers) {
    fail(join(path, "count"), "at most " + std::to_string(kMaxConsumers) + " consumers across all groups", member(v, "count"));
  }
  if (has(v, "prefetch")) {
    consumer.prefetch = static_cast<int>(integer(v["prefetch"], join(path, "prefetch"), 0, kMaxPrefetch, "an integer >= 0"));
  }
  if (has(v, "slots")) {
    consumer.slots = static_cast<int>(integer(v["slots"], join(path, "slots"), 1, kMaxSlots, "an integer >= 1"));
  }
  if (has(v, "start_ms")) consumer.start = ms_non_negative(v["start_ms"], join(path, "start_ms"));
  consumer.clock_offset = optional_distribution(v, "clock_offset_ms", path, Range::Signed);
  if (has(v, "uncertainty_ms")) consumer.uncertainty = ms_non_negative(v["uncertainty_ms"], join(path, "uncertainty_ms"));
  if (has(v, "admission")) {
    constexpr Admission kAdmissions[] = {Admission::None, Admission::CheckBeforeStart, Admission::CheckAtReceiveAndStart};
    consumer.admission =
        kAdmissions[choice(v["admission"], join(path, "admission"), {"none", "check-before-start", "check-at-receive-and-start"})];
  }
  if (has(v, "min_window_ms")) consumer.min_window = ms_non_negative(v["min_window_ms"], join(path, "min_window_ms"));
  if (has(v, "on_expired")) {
    constexpr OnExpired kActions[] = {OnExpired::Ack, OnExpired::Reject, OnExpired::Requeue};
    consumer.on_expired = kActions[choice(v["on_expired"], join(path, "on_expired"), {"ack", "reject", "requeue"})];
  }
  if (has(v, "exec_timeout") && !v["exec_timeout"].is_null()) {
    const json& e = v["exec_timeout"];
    if (e.is_string()) {
      if (e.get_ref<const std::string&>() != "remaining-budget") {
        fail(join(path, "exec_timeout"), "null, \"remaining-budget\" or a duration", e);
      }
      consumer.exec_timeout = ConsumerSpec::ExecTimeout::RemainingBudget;
    } else {
      consumer.exec_timeout = ConsumerSpec::ExecTimeout::Fixed;
      consumer.exec_timeout_value = distribution(e, join(path, "exec_timeout"), Range::Duration);
    }
  }
  if (has(v, "failure_probability")) {
    const std::string at = join(path, "failure_probability");
    const double p = real(v["failure_probability"], at, "a number between 0 and 1");
    if (p < 0 || p > 1) fail(at, "a number between 0 and 1", v["failure_probability"]);
    consumer.failure_probability = p;
  }
  if (has(v, "priority")) {
    consumer.priority = static_cast<int>(integer(v["priority"], join(path, "priority"), -kMaxInt - 1, kMaxInt, "an integer"));
  }
  return consumer;
}

FaultSpec load_fault(const json& v, const std::string& path, int consumer_count) {
  object_at(v, path);
  check_keys(v, path, {"at_ms", "consumer", "stall_ms", "crash", "restart_after_ms", "broker_down_ms", "clock_step_ms"});
  FaultSpec fault;
  fault.at = ms_non_negative(member(v, "at_ms"), join(path, "at_ms"));
  const int kinds = has(v, "stall_ms") + has(v, "crash") + has(v, "broker_down_ms") + has(v, "clock_step_ms");
  if (kinds != 1) fail(path, "exactly one of stall_ms, crash, broker_down_ms, clock_step_ms", v);

  if (has(v, "restart_after_ms") && !has(v, "crash")) {
    fail_message(join(path, "restart_after_ms"), "only allowed with \"crash\": true");
  }
  if (has(v, "broker_down_ms")) {
    fault.kind = FaultSpec::Kind::BrokerDown;
    if (has(v, "consumer")) fail_message(join(path, "consumer"), "not allowed with broker_down_ms (the whole broker is down)");
    fault.duration = ms_positive(v["broker_down_ms"], join(path, "broker_down_ms"));
    return fault;
  }
  const std::string consumer_path = join(path, "consumer");
  const std::string expected = consumer_count == 0
                                   ? "a consumer index, but the scenario has no consumers"
                                   : "an integer >= 0 and < " + std::to_string(consumer_count) +
                                         " (consumers are numbered across all groups from 0)";
  fault.consumer = static_cast<int>(integer(member(v, "consumer"), consumer_path, 0, kMaxConsumers, expected));
  if (fault.consumer >= consumer_count) fail(consumer_path, expected, v["consumer"]);

  if (has(v, "stall_ms")) {
    fault.kind = FaultSpec::Kind::Stall;
    fault.duration = ms_positive(v["stall_ms"], join(path, "stall_ms"));
  } else if (has(v, "crash")) {
    fault.kind = FaultSpec::Kind::Crash;
    if (v["crash"] != json(true)) fail(join(path, "crash"), "true", v["crash"]);
    if (has(v, "restart_after_ms")) {
      fault.restart = true;
      fault.duration = ms_positive(v["restart_after_ms"], join(path, "restart_after_ms"));
    }
  } else {
    fault.kind = FaultSpec::Kind::ClockStep;
    fault.step = sim::from_ms(any_number(v["clock_step_ms"], join(path, "clock_step_ms")));
  }
  return fault;
}

void check_sweep(const json& v) {
  object_at(v, "sweep", "an object mapping key paths to arrays of values");
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key().empty()) fail("sweep", "non-empty key paths", json(it.key()));
    non_empty_array(it.value(), join("sweep", it.key()), "a non-empty array of values");
  }
}

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

}  // namespace

// ---------------------------------------------------------------------------------------------

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
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
  try {
    value = parse_json_text(text, "--set " + path);
  } catch (const ScenarioError&) {
    value = text;  // not JSON: a bare word such as drop-head is meant as a string
  }
  set_path(doc, path, value);
}

Scenario load_scenario(const nlohmann::json& doc, const std::string& base_dir) {
  object_at(doc, "", "a JSON object (the scenario)");
  check_keys(doc, "",
             {"name", "seed", "stop", "warmup_ms", "broker", "producers", "consumers", "faults", "observe", "limits",
              "sweep"});
  Scenario scenario;
  Context context{base_dir, {}};

  if (has(doc, "name")) {
    if (!doc["name"].is_string()) fail("name", "a string", doc["name"]);
    scenario.name = doc["name"].get<std::string>();
  }
  if (has(doc, "seed")) scenario.seed = unsigned_integer(doc["seed"], "seed", 0);

  const json& stop = object_at(member(doc, "stop"), "stop", "an object with time_ms and/or jobs");
  check_keys(stop, "stop", {"time_ms", "jobs"});
  if (stop.empty()) fail("stop", "at least one of time_ms, jobs", stop);
  if (has(stop, "time_ms")) scenario.stop_time = ms_positive(stop["time_ms"], "stop.time_ms");
  if (has(stop, "jobs")) scenario.stop_jobs = unsigned_integer(stop["jobs"], "stop.jobs", 1);

  if (has(doc, "warmup_ms")) {
    scenario.warmup = ms_non_negative(doc["warmup_ms"], "warmup_ms");
    if (scenario.stop_time && scenario.warmup >= *scenario.stop_time) {
      fail("warmup_ms", "a number >= 0 and < stop.time_ms (" + describe(stop["time_ms"]) + ")", doc["warmup_ms"]);
    }
  }

  scenario.broker = load_broker(member(doc, "broker"), context);

  const json& producers = non_empty_array(member(doc, "producers"), "producers", "a non-empty array of producers");
  for (std::size_t i = 0; i < producers.size(); ++i) {
    scenario.producers.push_back(load_producer(producers[i], join("producers", i), context));
  }

  std::int64_t total_consumers = 0;
  if (has(doc, "consumers")) {
    const json& consumers = doc["consumers"];
    if (!consumers.is_array()) fail("consumers", "an array of consumer groups", consumers);
    for (std::size_t i = 0; i < consumers.size(); ++i) {
      scenario.consumers.push_back(load_consumer(consumers[i], join("consumers", i), context, total_consumers));
    }
  }

  if (has(doc, "faults")) {
    const json& faults = doc["faults"];
    if (!faults.is_array()) fail("faults", "an array of faults", faults);
    for (std::size_t i = 0; i < faults.size(); ++i) {
      scenario.faults.push_back(load_fault(faults[i], join("faults", i), static_cast<int>(total_consumers)));
    }
  }

  if (has(doc, "observe")) {
    const json& observe = object_at(doc["observe"], "observe", "an object {\"every_ms\": d}");
    check_keys(observe, "observe", {"every_ms"});
    scenario.observe_every = ms_positive(member(observe, "every_ms"), "observe.every_ms");
  }

  if (has(doc, "limits")) {
    const json& limits = object_at(doc["limits"], "limits", "an object with max_in_system and/or max_events");
    check_keys(limits, "limits", {"max_in_system", "max_events"});
    if (has(limits, "max_in_system")) scenario.limits.max_in_system = unsigned_integer(limits["max_in_system"], "limits.max_in_system", 1);
    if (has(limits, "max_events")) scenario.limits.max_events = unsigned_integer(limits["max_events"], "limits.max_events", 1);
  }

  if (has(doc, "sweep")) check_sweep(doc["sweep"]);
  return scenario;
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& sets) {
  json doc = read_json_file(path);
  for (const auto& assignment : sets) apply_set(doc, assignment);
  return load_scenario(doc, std::filesystem::path(path).parent_path().string());
}

}  // namespace brokersim
