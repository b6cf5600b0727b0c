// consumers[].framework: a consumer group written in its worker framework's own settings (Celery's
// worker_prefetch_multiplier, Spring's prefetch, a Functions host.json, a Lambda event source
// mapping). Each framework, one file under experiments/cli/loader/frameworks/, reads its settings
// with the framework's documented defaults and writes the brokersim keys they amount to into the
// group's entry before the ordinary consumer loader reads it. So a framework entry and the keys it
// maps to are, by construction, the same scenario; what each setting became is kept
// (Scenario::frameworks) for `run` to print. docs/framework-NAME.md has each
// framework's table and its sources.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "experiments/cli/loader/checks.hpp"

namespace brokersim::loader {

// One group's (or producer's) translation: the framework object's settings in, brokersim keys out
// into the entry (`consumer`: the consumer group's, or the producer's).
class Translation {
 public:
  Translation(const json& settings, std::string path, const BrokerSpec& broker, json& consumer, FrameworkMapping& mapping)
      : settings_(settings), path_(std::move(path)), kind_(broker.kind), broker_(broker), consumer_(consumer), mapping_(mapping) {}

  std::string_view kind() const { return kind_; }
  // A queue the group's `queue` names (a name or a list) is a quorum queue of the broker: the
  // broker kind's default type, or the queue's own `type`. Names not in broker.queues count as
  // none (the consumer loader refuses them).
  bool reads_quorum_queue() const;
  const std::string& path() const { return path_; }
  std::string at(std::string_view setting) const { return join(path_, setting); }
  // The setting as given, or nullptr when absent or null (its default then applies).
  const json* given(std::string_view setting) const;
  // The group's own key (count, queue, ...), which a framework may read (count) but never both
  // set and take from the user.
  const json* consumer_key(std::string_view key) const;

  // Typed settings with their defaults; each records "(default)" when the default was used, or
  // "(default: WHY)" when `why` says where a derived default came from.
  std::int64_t integer(std::string_view setting, std::int64_t fallback, std::int64_t min, std::int64_t max,
                       std::string_view why = {});
  bool boolean(std::string_view setting, bool fallback);
  double seconds(std::string_view setting, double fallback, double min, double max, std::string_view why = {});
  // A .NET TimeSpan ("00:05:00", "1.02:03:04.5") or ISO-8601 ("PT5M") in host.json, in ms.
  double timespan_ms(std::string_view setting, std::string_view fallback);
  // One of `names` (brokersim's own names for a framework's choice), or `fallback` when absent.
  std::string choice(std::string_view setting, std::initializer_list<std::string_view> names, std::string_view fallback,
                     std::string_view why = {});
  // A setting read by the framework's own rules (a choice of names): its shown value.
  void text(std::string_view setting, std::string shown) { remember(setting, std::move(shown)); }
  // The group's `count` as the user gave it (default 1), taken out of the entry so that the
  // framework can set the count it amounts to (instances x consumers per instance).
  std::int64_t take_count();
  // The shown value of a setting read by one of the above ("8", "4 (default)").
  const std::string& shown(std::string_view setting) const;

  // Writes brokersim key `key` = value into the group, recorded against the settings it came
  // from. The user may not also give the key: the framework entry says it.
  void set(std::string_view key, const json& value, std::string_view from, std::string note = {});
  // A setting read that sets no key: why it changes nothing in the model.
  void no_key(std::string_view setting, std::string note);
  // A setting brokersim cannot honour at this value: an error naming it.
  [[noreturn]] void refuse(std::string_view setting, const std::string& message) const;
  // The group's own key `key`, when given, refused: the framework's platform decides it (`why`),
  // and no setting of the framework's changes it.
  void refuse_group_key(std::string_view key, const std::string& why) const;
  // The platform bills the group so (FrameworkMapping::billing, experiments/cli/metrics/billing.hpp).
  void bill(FrameworkMapping::Billing billing) { mapping_.billing = std::move(billing); }
  // Only on these broker kinds.
  void kinds(std::initializer_list<std::string_view> allowed, std::string_view framework) const;

 private:
  void remember(std::string_view setting, std::string value);
  const json& settings_;
  std::string path_;
  std::string_view kind_;
  const BrokerSpec& broker_;
  json& consumer_;
  FrameworkMapping& mapping_;
  std::vector<std::pair<std::string, std::string>> shown_;
};

// A framework's producer side (producers[].framework): the options its client publishes with
// (Celery's apply_async expires), written into the producer's entry as brokersim keys, as a
// consumer group's settings are.
struct ProducerSide {
  std::vector<std::string_view> settings;  // besides "name"
  void (*translate)(Translation& t) = nullptr;  // nullptr: the framework has no producer side
};

// One framework: its name in `framework.name`, its settings (checked for typos), and the mapping.
struct Framework {
  std::string_view name;
  std::vector<std::string_view> settings;  // besides "name"
  void (*translate)(Translation& t);
  // Settings the framework's page names as not modelled: accepted (a real configuration pastes
  // in), any value, each given one shown in the mapping as "not modelled: WHY".
  std::vector<std::pair<std::string_view, std::string_view>> not_modelled = {};
  // A rule across sections, checked once the group is loaded (Lambda's Timeout against the
  // queue's visibility timeout); nullptr when the framework has none.
  void (*loaded)(const Scenario& s, std::size_t group, const std::string& path) = nullptr;
  ProducerSide producer = {};
};

const Framework& celery();
const Framework& masstransit();
const Framework& nservicebus();
const Framework& spring_amqp();
const Framework& azure_functions();
const Framework& aws_lambda();

// A copy of the group's entry with its framework translated into brokersim keys (the entry as it
// is when it names no framework); the mapping is appended to `mappings`.
// The framework's cross-section rule for group `group`, the last one loaded (Framework::loaded).
void check_framework(const Scenario& s, std::size_t group, const std::string& path);
// What the group's platform meters for its bill (ConsumerSpec::metering), from its mapping.
ConsumerSpec::Metering metering_of(const FrameworkMapping::Billing& billing);

json translate_framework(const json& consumer, const std::string& path, const BrokerSpec& broker, int group,
                         std::vector<FrameworkMapping>& mappings);
// The same for producer `index`'s entry (producers[].framework), its mapping appended to `mappings`.
json translate_producer_framework(const json& producer, const std::string& path, const BrokerSpec& broker, int index,
                                 std::vector<FrameworkMapping>& mappings);

}  // namespace brokersim::loader
