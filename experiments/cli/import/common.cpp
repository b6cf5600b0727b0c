// What the importers share: errors with the entry's path, queue names, numbers as brokers spell
// them, ISO-8601 durations, recognising the format, and the scenario around the broker section.
#include "experiments/cli/import/common.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

#include "experiments/cli/loader/broker_kinds.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/frameworks/number_text.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim::import {

namespace {

// The kind's placeholder prefetch (BrokerKindModel::import_prefetch); an importer only writes kinds
// the loader registers.
int import_prefetch(const std::string& kind) {
  for (const loader::BrokerKind* k : loader::broker_kinds())
    if (k->name() == kind) return k->model->import_prefetch;
  throw std::logic_error("import wrote broker.kind " + kind + ", which no loader registers");
}

}  // namespace

std::string Imported::work_queue() const {
  if (consumer && consumer->contains("queue")) return (*consumer)["queue"].get<std::string>();
  return first_work_queue();
}

std::string Imported::first_work_queue() const {
  std::vector<std::string> names;
  for (auto it = broker["queues"].begin(); it != broker["queues"].end(); ++it) names.push_back(it.key());
  std::sort(names.begin(), names.end());
  const auto target = [&](const std::string& n) {
    return std::find(dead_letter_targets.begin(), dead_letter_targets.end(), n) != dead_letter_targets.end();
  };
  // A queue with a dead-letter queue of its own is where the work goes; then any queue that is no
  // queue's dead-letter target; then the first.
  for (const auto& n : names)
    if (!target(n) && broker["queues"][n].contains("dead_letter_to")) return n;
  for (const auto& n : names)
    if (!target(n)) return n;
  return names.empty() ? "" : names.front();
}

std::string at(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string at(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

void fail(const std::string& path, const std::string& expected, const json& got) {
  loader::fail(path, expected, got);
}

std::string queue_name(const std::string& raw, std::vector<std::string>& taken, std::vector<std::string>& notes) {
  // Before naming, so that a file of a million queues of one name is refused at the 65th (the
  // suffix search below is then at most 64 x 64 comparisons).
  if (taken.size() >= kMaxQueues)
    fail("queues", "at most " + std::to_string(kMaxQueues) + " queues (brokersim's limit)",
         json("a " + std::to_string(kMaxQueues + 1) + "th, " + loader::quoted(raw.substr(0, 64)) + (raw.size() > 64 ? "..." : "")));
  std::string s;
  for (unsigned char c : raw) s += (c < 0x20 || c == 0x7f || c == '.' || c == ',' || c == '"') ? '_' : static_cast<char>(c);
  if (s.size() > 240) s.resize(240);
  if (s.empty()) s = "queue";
  std::string name = s;
  for (int i = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++i) name = s + "_" + std::to_string(i);
  taken.push_back(name);
  if (name != raw)
    notes.push_back(
        "queue " + loader::quoted(raw) + " is named " + loader::quoted(name) +
        " in the scenario (brokersim queue names are unique, 1 to 255 bytes, without '.', ',', '\"' or control characters)");
  return name;
}

std::int64_t integer_value(const json& v, const std::string& path, std::int64_t min, std::int64_t max,
                           const std::string& expected) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) fail(path, expected, v);
    const std::int64_t x = v.get<std::int64_t>();
    if (x < min || x > max) fail(path, expected, v);
    return x;
  }
  if (v.is_number_float()) {
    const double x = v.get<double>();
    if (std::floor(x) != x || x < static_cast<double>(min) || x > static_cast<double>(max)) fail(path, expected, v);
    return static_cast<std::int64_t>(x);
  }
  fail(path, expected, v);
}

std::int64_t string_integer(const json& v, const std::string& path, std::int64_t min, std::int64_t max,
                            const std::string& expected) {
  if (!v.is_string()) return integer_value(v, path, min, max, expected);
  const auto x = loader::read_integer(v.get<std::string>());
  if (!x || x->too_large || x->value < min || x->value > max) fail(path, expected, v);
  return x->value;
}

bool boolean_value(const json& v, const std::string& path, bool string_ok) {
  if (v.is_boolean()) return v.get<bool>();
  if (string_ok && v.is_string()) {
    std::string s = v.get<std::string>();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (s == "true") return true;
    if (s == "false") return false;
  }
  fail(path, string_ok ? "true or false (or the strings \"true\", \"false\")" : "true or false", v);
}

namespace {

// TimeSpan.MaxValue, 10675199 days 02:48:05.4775807, in ms: .NET's longest duration, its "never".
constexpr double kTimeSpanMaxMs = 922337203685477.5807;
constexpr const char* kTimeSpanMax =
    "a duration of at most P10675199DT2H48M5.4775807S (TimeSpan.MaxValue, .NET's longest, which Service Bus reads as "
    "no limit)";

// Python's timedelta as older az versions print it: "[D day[s], ]H:MM:SS[.ffffff]"; nullopt when
// `s` is not in that form. Read by hand, in one pass.
std::optional<double> timedelta_ms(const std::string& s) {
  std::size_t i = 0;
  double days = 0;
  if (s.find(" day") != std::string::npos) {
    const auto d = loader::read_decimal(s, i);
    if (!d || d->has_point) return std::nullopt;
    const std::string_view rest = std::string_view(s).substr(i);
    const std::size_t skip = rest.starts_with(" days, ") ? 7 : rest.starts_with(" day, ") ? 6 : 0;
    if (skip == 0) return std::nullopt;
    days = d->value();
    i += skip;
  }
  const auto hours = loader::read_decimal(s, i);
  if (!hours || hours->has_point || i >= s.size() || s[i] != ':') return std::nullopt;
  // Minutes and seconds: exactly two digits each, below 60; seconds may have a fraction.
  const auto two_digits = [&](std::size_t k) {
    return k + 1 < s.size() && s[k] >= '0' && s[k] <= '5' && s[k + 1] >= '0' && s[k + 1] <= '9';
  };
  if (!two_digits(i + 1) || i + 3 >= s.size() || s[i + 3] != ':' || !two_digits(i + 4) ||
      (i + 6 < s.size() && s[i + 6] != '.'))
    return std::nullopt;
  i += 1;
  const auto minutes = loader::read_decimal(s, i);
  ++i;  // ':'
  const auto seconds = loader::read_decimal(s, i);
  if (!minutes || !seconds || i != s.size()) return std::nullopt;
  return ((days * 24 + hours->value()) * 60 + minutes->value()) * 60e3 + seconds->value() * 1e3;
}

}  // namespace

std::optional<double> iso8601_ms(const json& v, const std::string& path) {
  const std::string expected = "an ISO-8601 duration (PT1M, P14D, PT0.5S, P1DT2H30M)";
  if (!v.is_string()) fail(path, expected, v);
  const std::string s = v.get<std::string>();
  double ms = 0;
  if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    // Older az versions print Python's timedelta: "10675199 days, 2:48:05.477581", "0:01:00".
    const auto t = timedelta_ms(s);
    if (!t) fail(path, expected, v);
    ms = *t;
  } else {
    if (s.size() < 2 || s[0] != 'P') fail(path, expected, v);
    bool in_time = false, any = false;
    std::size_t i = 1;
    while (i < s.size()) {
      if (s[i] == 'T') {
        if (in_time) fail(path, expected, v);
        in_time = true;
        ++i;
        continue;
      }
      const double x = loader::decimal_at(s, i, true, path, expected, v).value();
      if (i >= s.size()) fail(path, expected, v);
      const char unit = s[i];
      double scale = 0;
      if (!in_time) {
        if (unit == 'Y')
          scale = 365 * 86400e3;
        else if (unit == 'M')
          scale = 30 * 86400e3;
        else if (unit == 'W')
          scale = 7 * 86400e3;
        else if (unit == 'D')
          scale = 86400e3;
      } else {
        if (unit == 'H')
          scale = 3600e3;
        else if (unit == 'M')
          scale = 60e3;
        else if (unit == 'S')
          scale = 1e3;
      }
      if (scale == 0) fail(path, expected, v);
      ms += x * scale;
      any = true;
      i = i + 1;
    }
    if (!any || (in_time && s.back() == 'T')) fail(path, expected, v);
  }
  // Longer than TimeSpan.MaxValue is no .NET duration (Service Bus refuses it); within a
  // millisecond of it is (timedelta rounds .4775807 s up to .477581).
  if (ms > kTimeSpanMaxMs + 1) loader::too_large(path, kTimeSpanMax, v);
  // TimeSpan.MaxValue: .NET's "never"; anything from 10675199 days on is too.
  if (ms >= 10675199.0 * 86400e3) return std::nullopt;
  return std::round(ms * 1e6) / 1e6;
}

namespace {

bool has_key(const json& o, const char* k) {
  return o.is_object() && o.contains(k);
}

bool looks_like_az_queue(const json& o) {
  if (!o.is_object()) return false;
  // Older az versions nest the properties.
  if (has_key(o, "name") && has_key(o, "properties") && o["properties"].is_object() && looks_like_az_queue(o["properties"]))
    return true;
  for (const char* k :
       {"lockDuration", "maxDeliveryCount", "defaultMessageTimeToLive", "requiresSession", "autoDeleteOnIdle",
        "deadLetteringOnMessageExpiration", "forwardDeadLetteredMessagesTo", "enablePartitioning", "maxSizeInMegabytes"})
    if (has_key(o, k)) return true;
  return false;
}

std::string key_list(const json& o) {
  std::string out;
  std::size_t n = 0;
  for (auto it = o.begin(); it != o.end() && n < 6; ++it, ++n) out += (out.empty() ? "" : ", ") + it.key();
  if (o.size() > 6) out += ", ...";
  return out;
}

constexpr const char* kFormats =
    "a RabbitMQ definitions export (queues, exchanges, bindings, policies), an ARM template (resources of type "
    "Microsoft.ServiceBus/namespaces/queues), `az servicebus queue show` or `list` output, `aws sqs "
    "get-queue-attributes` output ({\"Attributes\": {...}}) or a CloudFormation template (Resources of type "
    "AWS::SQS::Queue)";

}  // namespace

Format sniff(const json& doc, const std::string& file) {
  if (doc.is_object()) {
    if (has_key(doc, "rabbit_version") || has_key(doc, "rabbitmq_version") ||
        (has_key(doc, "queues") && doc["queues"].is_array()) || (has_key(doc, "exchanges") && has_key(doc, "bindings")))
      return Format::RabbitMqDefinitions;
    // An ARM template: resources in an array, or in an object (symbolic names, languageVersion 2.0).
    if (has_key(doc, "resources") &&
        (doc["resources"].is_array() ||
         (doc["resources"].is_object() && (has_key(doc, "$schema") || has_key(doc, "languageVersion")))))
      return Format::ArmTemplate;
    if (has_key(doc, "Resources") || has_key(doc, "AWSTemplateFormatVersion")) return Format::CloudFormation;
    if (has_key(doc, "Attributes")) return Format::SqsAttributes;
    if (looks_like_az_queue(doc)) return Format::AzCli;
    throw ScenarioError(file, kFormats, "a JSON object with keys " + (doc.empty() ? std::string("(none)") : key_list(doc)));
  }
  if (doc.is_array() && !doc.empty() && std::all_of(doc.begin(), doc.end(), looks_like_az_queue)) return Format::AzCli;
  throw ScenarioError(file, kFormats,
                      doc.is_array() ? (doc.empty() ? "an empty array" : "an array of something else") : loader::describe(doc));
}

void not_json(const std::string& text, const std::string& file, const std::string& parse_error) {
  if (text.find("AWSTemplateFormatVersion:") != std::string::npos ||
      (text.find("Resources:") != std::string::npos && text.find("AWS::") != std::string::npos))
    throw ScenarioError(file +
                        ": a CloudFormation template in YAML: brokersim import reads JSON only; convert it first "
                        "(cfn-flip template.yaml > template.json, or `aws cloudformation get-template "
                        "--query TemplateBody` of the deployed stack)");
  throw ScenarioError(parse_error + " (brokersim import reads JSON: " + kFormats + ")");
}

ojson scenario_of(const Imported& imported, const std::string& file) {
  const std::string queue = imported.work_queue();
  const std::string kind = imported.broker["kind"].get<std::string>();
  const std::string base = std::filesystem::path(file).filename().string();
  ojson doc;
  doc["name"] = "imported from " + base;
  doc["seed"] = 1;
  doc["stop"] = {{"time_ms", 600000}};
  doc["broker"] = imported.broker;
  ojson producer{{"queue", queue},
                 {"arrivals", {{"poisson", {{"rate_per_s", 10}}}}},
                 {"deadline_ms", nullptr},
                 {"service_ms", {{"exp", {{"mean", 100}}}}}};
  const bool sessions = imported.broker["queues"][queue].value("requires_session", false);
  if (sessions) producer["session"] = {{"uniform", {{"min", 0}, {"max", 99}}}};
  doc["producers"] = ojson::array({producer});
  const std::string workload = std::string("producers.0 (Poisson 10/s to queue \"") + queue +
                               "\", service_ms exponential with mean 100 ms, no deadline" + (sessions ? ", session ids 0..99" : "") + ")";
  ojson notes = ojson::array();
  if (imported.consumer) {
    doc["consumers"] = ojson::array({*imported.consumer});
    notes.push_back("imported by brokersim import from " + base + " (" + imported.format +
                    "): broker.queues and consumers.0 are the file's; broker.delivery_latency_ms, broker.ack_latency_ms, "
                    "stop and producers are not in it");
    notes.push_back("PLACEHOLDER: " + workload + " is a placeholder, not read from the file: replace it with your workload");
    notes.push_back(imported.consumer_origin);
  } else {
    ojson consumer{{"queue", queue}, {"count", 2}, {"prefetch", import_prefetch(kind)}, {"slots", 1}};
    doc["consumers"] = ojson::array({consumer});
    notes.push_back("imported by brokersim import from " + base + " (" + imported.format +
                    "): broker.queues are the file's; broker.delivery_latency_ms, broker.ack_latency_ms, stop, "
                    "producers and consumers are not in it");
    notes.push_back("PLACEHOLDER: " + workload + " and consumers.0 (2 consumers, prefetch " + consumer["prefetch"].dump() +
                    ", 1 slot each) are placeholders, not read from the file: replace them with your workload and fleet");
  }
  for (const auto& n : imported.notes) notes.push_back(n);
  doc["notes"] = notes;
  return doc;
}

Imported import_document(const json& doc, const std::string& file) {
  switch (sniff(doc, file)) {
    case Format::RabbitMqDefinitions: return import_rabbitmq(doc);
    case Format::ArmTemplate: return import_arm_template(doc);
    case Format::AzCli: return import_az_cli(doc);
    case Format::SqsAttributes: return import_sqs_attributes(doc);
    case Format::CloudFormation: return import_cloudformation(doc);
  }
  throw InvariantError("import: a format with no importer");
}

}  // namespace brokersim::import
