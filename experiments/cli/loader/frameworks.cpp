// consumers[].framework: the translation's building blocks and the registry of frameworks.
#include "experiments/cli/loader/frameworks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "experiments/cli/loader/frameworks/number_text.hpp"
#include "sim/time.hpp"

namespace brokersim::loader {

namespace {

constexpr const Framework& (*kFrameworks[])() = {celery, masstransit, nservicebus, spring_amqp, azure_functions,
                                                 aws_lambda};

std::string shown_json(const json& v) {
  // Exact, as the key would be written in a scenario (300000, not 3e+05).
  if (v.is_number_float() && std::abs(v.get<double>()) < 1e15 && v.get<double>() == std::floor(v.get<double>()))
    return std::to_string(static_cast<std::int64_t>(v.get<double>()));
  if (v.is_number()) return v.dump();
  if (v.is_string()) return v.get<std::string>();
  return describe(v);
}

// Dotted setting names reach into nested objects (Celery's broker_transport_options.sqs.visibility_timeout,
// Lambda's ScalingConfig.MaximumConcurrency); each object's keys are checked for typos.
void check_settings(const json& settings, const std::string& path, const Framework& f, bool producer = false) {
  std::vector<std::string_view> names(producer ? f.producer.settings : f.settings);
  if (!producer)
    for (const auto& [name, why] : f.not_modelled) names.push_back(name);
  std::vector<std::string_view> top{"name"};
  for (std::string_view s : names) {
    const std::string_view head = s.substr(0, s.find('.'));
    if (std::find(top.begin(), top.end(), head) == top.end()) top.push_back(head);
  }
  check_keys(settings, path, top);
  for (std::string_view head : top) {
    const std::string key(head);
    if (!has(settings, key) || settings[key].is_null()) continue;
    // A setting not modelled is taken whole, whatever is inside it (clientRetryOptions).
    if (std::any_of(f.not_modelled.begin(), f.not_modelled.end(), [&](const auto& n) { return n.first == head; })) continue;
    std::vector<std::string_view> inner;
    for (std::string_view s : names)
      if (s.size() > head.size() && s.substr(0, head.size()) == head && s[head.size()] == '.') inner.push_back(s.substr(head.size() + 1));
    if (inner.empty()) continue;
    object_at(settings[key], join(path, key), "an object");
    check_keys(settings[key], join(path, key), inner);
  }
}

}  // namespace

const json* Translation::given(std::string_view setting) const {
  const json* v = &settings_;
  std::string_view rest = setting;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::string key(rest.substr(0, dot));
    if (!v->is_object() || !v->contains(key)) return nullptr;
    v = &(*v)[key];
    if (dot == std::string_view::npos) break;
    rest = rest.substr(dot + 1);
  }
  return v->is_null() ? nullptr : v;
}

bool Translation::reads_quorum_queue() const {
  const json* queue = consumer_key("queue");
  if (queue == nullptr) return false;
  const auto quorum = [&](const json& name) {
    if (!name.is_string()) return false;
    for (const QueueSpec& q : broker_.queues)
      if (q.name == name.get<std::string>()) return q.rabbitmq.type == QueueType::Quorum;
    return false;
  };
  if (!queue->is_array()) return quorum(*queue);
  return std::any_of(queue->begin(), queue->end(), quorum);
}

const json* Translation::consumer_key(std::string_view key) const {
  const std::string k(key);
  return consumer_.contains(k) && !consumer_[k].is_null() ? &consumer_[k] : nullptr;
}

std::int64_t Translation::take_count() {
  std::int64_t n = 1;
  if (const json* count = consumer_key("count")) {
    n = loader::integer(*count, join(path_.substr(0, path_.rfind('.')), "count"), 1, kMaxInt, "an integer >= 1");
    consumer_.erase("count");
  }
  return n;
}

void Translation::remember(std::string_view setting, std::string value) { shown_.emplace_back(setting, std::move(value)); }

const std::string& Translation::shown(std::string_view setting) const {
  for (const auto& [name, value] : shown_)
    if (name == setting) return value;
  throw std::logic_error("framework setting shown before it was read: " + std::string(setting));
}

namespace {
std::string defaulted(const std::string& value, std::string_view why) {
  return value + (why.empty() ? " (default)" : " (default: " + std::string(why) + ")");
}
}  // namespace

std::int64_t Translation::integer(std::string_view setting, std::int64_t fallback, std::int64_t min, std::int64_t max,
                                  std::string_view why) {
  if (const json* v = given(setting)) {
    const std::int64_t x = loader::integer(*v, at(setting), min, max,
                                           "an integer from " + std::to_string(min) + " to " + std::to_string(max));
    remember(setting, std::to_string(x));
    return x;
  }
  remember(setting, defaulted(std::to_string(fallback), why));
  return fallback;
}

bool Translation::boolean(std::string_view setting, bool fallback) {
  if (const json* v = given(setting)) {
    if (!v->is_boolean()) fail(at(setting), "true or false", *v);
    remember(setting, v->get<bool>() ? "true" : "false");
    return v->get<bool>();
  }
  remember(setting, std::string(fallback ? "true" : "false") + " (default)");
  return fallback;
}

std::string Translation::choice(std::string_view setting, std::initializer_list<std::string_view> names,
                                std::string_view fallback, std::string_view why) {
  if (const json* v = given(setting)) {
    const std::string name(*(names.begin() + static_cast<std::ptrdiff_t>(loader::choice(*v, at(setting), names))));
    remember(setting, name);
    return name;
  }
  remember(setting, defaulted(std::string(fallback), why));
  return std::string(fallback);
}

double Translation::seconds(std::string_view setting, double fallback, double min, double max, std::string_view why) {
  if (const json* v = given(setting)) {
    const std::string expected = "a number of seconds from " + format_number(min) + " to " + format_number(max);
    const double x = real(*v, at(setting), expected);
    if (x < min || x > max) fail(at(setting), expected, *v);
    remember(setting, format_number(x));
    return x;
  }
  remember(setting, defaulted(format_number(fallback), why));
  return fallback;
}

namespace {

// "[d.]hh:mm:ss[.fffffff]" (.NET TimeSpan, as host.json writes it) or "PT#H#M#S" (ISO 8601), in
// ms; nullopt when the text is neither; +infinity when a number in it has more digits than any
// duration brokersim takes (read_decimal). One pass, every number read by read_decimal.
std::optional<double> parse_timespan_ms(std::string_view s) {
  if (s.size() > 2 && s[0] == 'P' && s[1] == 'T') {
    double total = 0;
    std::size_t i = 2;
    while (i < s.size()) {
      const auto x = read_decimal(s, i);
      if (!x || i >= s.size()) return std::nullopt;
      const char unit = s[i++];
      const double scale = unit == 'H' ? 3'600'000 : unit == 'M' ? 60'000 : unit == 'S' ? 1'000 : 0;
      if (scale == 0) return std::nullopt;
      total += x->value() * scale;
    }
    return total;
  }
  // [d.]h:m:s[.f]: whole days and hours (hours < 24), minutes (< 60), seconds (< 60, a fraction allowed).
  const auto whole = [](std::string_view t) -> std::optional<DecimalText> {
    std::size_t k = 0;
    const auto d = read_decimal(t, k);
    if (!d || d->has_point || k != t.size()) return std::nullopt;
    return d;
  };
  const std::size_t colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view head = s.substr(0, colon);
  const std::size_t dot = head.find('.');
  const auto days = dot == std::string_view::npos ? std::optional<DecimalText>(DecimalText{}) : whole(head.substr(0, dot));
  const auto hours = whole(dot == std::string_view::npos ? head : head.substr(dot + 1));
  std::size_t i = colon + 1;
  const auto minutes = read_decimal(s, i);
  if (!days || !hours || !minutes || minutes->has_point || i >= s.size() || s[i] != ':') return std::nullopt;
  ++i;
  const auto secs = read_decimal(s, i);
  if (!secs || i != s.size()) return std::nullopt;
  if (hours->value() >= 24 || minutes->value() >= 60 || secs->value() >= 60) return std::nullopt;
  return ((days->value() * 24 + hours->value()) * 60 + minutes->value()) * 60'000 + secs->value() * 1'000;
}

// 1e12 ms, where simulated time ends, as a TimeSpan.
constexpr const char* kLongestTimespan = "11574.01:46:40 (1e12 ms, where brokersim's simulated time ends)";

}  // namespace

double Translation::timespan_ms(std::string_view setting, std::string_view fallback) {
  if (const json* v = given(setting)) {
    const std::string expected = "a duration as \"hh:mm:ss\" (or \"d.hh:mm:ss\", or ISO 8601 \"PT5M\")";
    if (!v->is_string()) fail(at(setting), expected, *v);
    const auto ms = parse_timespan_ms(v->get<std::string>());
    if (!ms) fail(at(setting), expected, *v);
    if (*ms > sim::kMaxMs) too_large(at(setting), std::string("a duration of at most ") + kLongestTimespan, *v);
    remember(setting, v->get<std::string>());
    return *ms;
  }
  remember(setting, std::string(fallback) + " (default)");
  return *parse_timespan_ms(fallback);
}

void Translation::set(std::string_view key, const json& value, std::string_view from, std::string note) {
  const std::string k(key);
  if (consumer_key(k) != nullptr) {
    const std::string by = "set by " + join(path_, "name") + " " + loader::quoted(mapping_.framework);
    fail_message(join(path_.substr(0, path_.rfind('.')), k),
                 from.empty() ? by + ", which always uses " + shown_json(value) + "; leave it out (or leave out framework)"
                              : by + " from " + std::string(from) + "; give it there (or leave out framework)");
  }
  consumer_[k] = value;
  // The row shows the settings it came from, each with its value.
  std::string settings, values;
  std::string_view rest = from;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    const std::string_view s = rest.substr(0, comma);
    settings += (settings.empty() ? "" : ", ") + std::string(s);
    values += (values.empty() ? "" : ", ") + shown(s);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 2);
  }
  mapping_.rows.push_back({settings, values, k, shown_json(value), std::move(note)});
}

void Translation::no_key(std::string_view setting, std::string note) {
  mapping_.rows.push_back({std::string(setting), shown(setting), "", "", std::move(note)});
}

void Translation::refuse(std::string_view setting, const std::string& message) const {
  fail_message(at(setting), message + " (" + std::string(mapping_.framework) + ": not modelled by brokersim)");
}

void Translation::refuse_group_key(std::string_view key, const std::string& why) const {
  const json* v = consumer_key(key);
  if (v == nullptr) return;
  fail(join(path_.substr(0, path_.rfind('.')), key),
       "none with framework " + loader::quoted(mapping_.framework) + " (" + why + "; leave it out, or leave out framework)", *v);
}

void Translation::kinds(std::initializer_list<std::string_view> allowed, std::string_view framework) const {
  if (std::find(allowed.begin(), allowed.end(), kind_) != allowed.end()) return;
  std::string names;
  for (std::string_view k : allowed) names += (names.empty() ? "" : ", ") + loader::quoted(std::string(k));
  fail_message(join(path_, "name"), loader::quoted(std::string(framework)) + " reads from broker kind " + names +
                                        ", not " + loader::quoted(std::string(kind_)));
}

namespace {

// The framework `settings` (at `at`) names, among those with a consumer side or with a producer side.
const Framework& framework_named(const json& settings, const std::string& at, bool producer) {
  std::vector<std::string_view> names;
  for (auto f : kFrameworks)
    if (!producer || f().producer.translate != nullptr) names.push_back(f().name);
  const json& name = member(settings, "name");
  if (!name.is_string()) fail(join(at, "name"), "one of " + list(names, "\""), name);
  for (auto f : kFrameworks)
    if (f().name == name.get<std::string>() && (!producer || f().producer.translate != nullptr)) return f();
  fail(join(at, "name"), "one of " + list(names, "\""), name);
}

}  // namespace

json translate_framework(const json& consumer, const std::string& path, const BrokerSpec& broker, int group,
                         std::vector<FrameworkMapping>& mappings) {
  if (!consumer.is_object() || !consumer.contains("framework") || consumer["framework"].is_null()) return consumer;
  const std::string at = join(path, "framework");
  const json& settings = object_at(consumer["framework"], at, "an object {\"name\": FRAMEWORK, its settings ...}");
  const Framework* framework = &framework_named(settings, at, false);
  check_settings(settings, at, *framework);

  json out = consumer;
  out.erase("framework");
  FrameworkMapping mapping;
  mapping.group = group;
  mapping.framework = std::string(framework->name);
  Translation t(settings, at, broker, out, mapping);
  framework->translate(t);
  for (const auto& [setting, why] : framework->not_modelled)
    if (const json* v = t.given(setting)) {
      t.text(setting, shown_json(*v));
      t.no_key(setting, "not modelled: " + std::string(why));
    }
  mappings.push_back(std::move(mapping));
  return out;
}

json translate_producer_framework(const json& producer, const std::string& path, const BrokerSpec& broker, int index,
                                 std::vector<FrameworkMapping>& mappings) {
  if (!producer.is_object() || !producer.contains("framework") || producer["framework"].is_null()) return producer;
  const std::string at = join(path, "framework");
  const json& settings = object_at(producer["framework"], at, "an object {\"name\": FRAMEWORK, its options ...}");
  const Framework& framework = framework_named(settings, at, true);
  check_settings(settings, at, framework, true);
  json out = producer;
  out.erase("framework");
  FrameworkMapping mapping;
  mapping.group = index;
  mapping.framework = std::string(framework.name);
  Translation t(settings, at, broker, out, mapping);
  framework.producer.translate(t);
  mappings.push_back(std::move(mapping));
  return out;
}

// Consumption bills each execution at least 100 ms; Flex each instance's activity period at least
// 1,000 ms, then in steps of 100 ms (docs/framework-azure-functions.md, "Billing").
ConsumerSpec::Metering metering_of(const FrameworkMapping::Billing& billing) {
  using Plan = FrameworkMapping::Billing::Plan;
  ConsumerSpec::Metering m;
  if (billing.plan == Plan::FunctionsConsumption) {
    m.executions = true;
    m.execution_minimum = sim::from_ms(100);
  } else if (billing.plan == Plan::FunctionsFlex) {
    m.executions = true;
    m.activity = true;
    m.activity_minimum = sim::from_ms(1000);
    m.activity_step = sim::from_ms(100);
  }
  return m;
}

void check_framework(const Scenario& s, std::size_t group, const std::string& path) {
  if (s.frameworks.empty() || s.frameworks.back().group != static_cast<int>(group)) return;
  for (auto f : kFrameworks)
    if (f().name == s.frameworks.back().framework && f().loaded != nullptr) f().loaded(s, group, path);
}

}  // namespace brokersim::loader
