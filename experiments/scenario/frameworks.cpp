// consumers[].framework: the translation's building blocks and the registry of frameworks.
#include "experiments/scenario/frameworks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

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

// Dotted setting names reach into nested objects (Celery's broker_transport_options.visibility_timeout,
// Lambda's ScalingConfig.MaximumConcurrency); each object's keys are checked for typos.
void check_settings(const json& settings, const std::string& path, const Framework& f) {
  std::vector<std::string_view> top{"name"};
  for (std::string_view s : f.settings) {
    const std::string_view head = s.substr(0, s.find('.'));
    if (std::find(top.begin(), top.end(), head) == top.end()) top.push_back(head);
  }
  check_keys(settings, path, top);
  for (std::string_view head : top) {
    const std::string key(head);
    if (!has(settings, key) || settings[key].is_null()) continue;
    std::vector<std::string_view> inner;
    for (std::string_view s : f.settings)
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

// "[d.]hh:mm:ss[.fff]" (.NET TimeSpan, as host.json writes it) or "PT#H#M#S" (ISO 8601), in ms;
// -1 when the text is neither.
double parse_timespan_ms(const std::string& s) {
  auto number = [](const std::string& t, double& out) {
    if (t.empty() || t.find_first_not_of("0123456789.") != std::string::npos) return false;
    if (std::count(t.begin(), t.end(), '.') > 1) return false;
    out = std::stod(t);
    return true;
  };
  if (s.size() > 2 && s[0] == 'P' && s[1] == 'T') {
    double total = 0;
    std::string digits;
    bool any = false;
    for (std::size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      if ((c >= '0' && c <= '9') || c == '.') {
        digits += c;
        continue;
      }
      double x = 0;
      if (!number(digits, x)) return -1;
      if (c == 'H') total += x * 3'600'000;
      else if (c == 'M') total += x * 60'000;
      else if (c == 'S') total += x * 1'000;
      else return -1;
      digits.clear();
      any = true;
    }
    return any && digits.empty() ? total : -1;
  }
  std::vector<std::string> parts;
  std::string part;
  for (char c : s) {
    if (c == ':') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  if (parts.size() != 3) return -1;
  double days = 0, hours = 0, minutes = 0, secs = 0;
  std::string h = parts[0];
  if (const std::size_t dot = h.find('.'); dot != std::string::npos) {
    if (!number(h.substr(0, dot), days)) return -1;
    h = h.substr(dot + 1);
  }
  if (!number(h, hours) || !number(parts[1], minutes) || !number(parts[2], secs)) return -1;
  if (hours >= 24 || minutes >= 60 || secs >= 60) return -1;
  return ((days * 24 + hours) * 60 + minutes) * 60'000 + secs * 1'000;
}

}  // namespace

double Translation::timespan_ms(std::string_view setting, std::string_view fallback) {
  if (const json* v = given(setting)) {
    const std::string expected = "a duration as \"hh:mm:ss\" (or \"d.hh:mm:ss\", or ISO 8601 \"PT5M\")";
    if (!v->is_string()) fail(at(setting), expected, *v);
    const double ms = parse_timespan_ms(v->get<std::string>());
    if (ms < 0) fail(at(setting), expected, *v);
    remember(setting, v->get<std::string>());
    return ms;
  }
  remember(setting, std::string(fallback) + " (default)");
  return parse_timespan_ms(std::string(fallback));
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

void Translation::kinds(std::initializer_list<std::string_view> allowed, std::string_view framework) const {
  if (std::find(allowed.begin(), allowed.end(), kind_) != allowed.end()) return;
  std::string names;
  for (std::string_view k : allowed) names += (names.empty() ? "" : ", ") + loader::quoted(std::string(k));
  fail_message(join(path_, "name"), loader::quoted(std::string(framework)) + " reads from broker kind " + names +
                                        ", not " + loader::quoted(std::string(kind_)));
}

json translate_framework(const json& consumer, const std::string& path, std::string_view kind, int group,
                         std::vector<FrameworkMapping>& mappings) {
  if (!consumer.is_object() || !consumer.contains("framework") || consumer["framework"].is_null()) return consumer;
  const std::string at = join(path, "framework");
  const json& settings = object_at(consumer["framework"], at, "an object {\"name\": FRAMEWORK, its settings ...}");
  std::vector<std::string_view> names;
  for (auto f : kFrameworks) names.push_back(f().name);
  const json& name = member(settings, "name");
  if (!name.is_string()) fail(join(at, "name"), "one of " + list(names, "\""), name);
  const Framework* framework = nullptr;
  for (auto f : kFrameworks)
    if (f().name == name.get<std::string>()) framework = &f();
  if (framework == nullptr) fail(join(at, "name"), "one of " + list(names, "\""), name);
  check_settings(settings, at, *framework);

  json out = consumer;
  out.erase("framework");
  FrameworkMapping mapping;
  mapping.group = group;
  mapping.framework = std::string(framework->name);
  Translation t(settings, at, kind, out, mapping);
  framework->translate(t);
  mappings.push_back(std::move(mapping));
  return out;
}

}  // namespace brokersim::loader
