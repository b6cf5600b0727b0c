// The registry of broker kinds (see broker_kinds.hpp), the broker.kind dispatch, and what every
// kind shares about queues: their names and references to them.
#include "experiments/cli/loader/broker_kinds.hpp"

#include <algorithm>
#include <vector>

namespace brokersim::loader {

namespace {

// (A kind docs/scenario.md defines but this version does not simulate would be listed here with only
// its key names, so that a scenario ported from it is told which kind a key belongs to rather
// than "unknown key"; every kind is simulated now.)

bool accepts(Keys keys, std::string_view key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); }

// broker.kind -> the kind, if this version simulates it.
const BrokerKind& simulated_kind(const json& v) {
  std::vector<std::string_view> simulated;
  for (const BrokerKind* kind : broker_kinds()) {
    if (kind->load == nullptr) continue;
    if (v.is_string() && v.get_ref<const std::string&>() == kind->name()) return *kind;
    simulated.push_back(kind->name());
  }
  // Every other kind of docs/scenario.md (and any unknown name) gets the same answer: not simulated.
  std::string expected = simulated.size() == 1 ? "" : "one of ";  // appended: g++ 12 -Wrestrict misfires on "..." + string
  expected += list(simulated, "\"");
  expected += simulated.size() == 1 ? " (the only broker kind this version simulates)" : " (the broker kinds this version simulates)";
  fail("broker.kind", expected, v);
}

bool valid_queue_name(const std::string& name) {
  // Names appear in --set paths (split on dots) and CSV headers (split on commas, quoted with ").
  if (name.empty() || name.size() > 255) return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '.' || c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

}  // namespace

std::span<const BrokerKind* const> broker_kinds() {
  static const BrokerKind* const kinds[] = {&rabbitmq_classic(), &rabbitmq_quorum(), &azure_servicebus(), &amazon_sqs()};
  return kinds;
}

Keys BrokerKind::keys(Section section) const {
  switch (section) {
    case Section::Broker: return broker_keys;
    case Section::Queue: return queue_keys;
    case Section::Producer: return producer_keys;
    case Section::Consumer: return consumer_keys;
  }
  return {};
}

std::vector<std::string_view> section_keys(Keys common, const BrokerKind& kind, Section section) {
  std::vector<std::string_view> keys(common.begin(), common.end());
  const Keys own = kind.keys(section);
  keys.insert(keys.end(), own.begin(), own.end());
  return keys;
}

KeyOwner foreign_key_owner(const BrokerKind& kind, Section section) {
  return [&kind, section](std::string_view key) {
    std::vector<std::string_view> owners;
    for (const BrokerKind* other : broker_kinds()) {
      if (other != &kind && accepts(other->keys(section), key)) owners.push_back(other->name());
    }
    if (owners.empty()) return std::string();
    return "this key belongs to broker kind" + std::string(owners.size() == 1 ? " " : "s ") + list(owners, "\"") +
           "; broker kind \"" + std::string(kind.name()) + "\" has no such key";
  };
}

BrokerSpec load_broker(const json& v, Context& context) {
  object_at(v, "broker");
  const BrokerKind& kind = has(v, "kind") ? simulated_kind(v["kind"]) : *broker_kinds().front();
  context.broker = &kind;
  return kind.load(v, context);
}

BrokerSpec load_broker_common(const json& v, const BrokerKind& kind, Keys also) {
  const std::string path = "broker";
  std::vector<std::string_view> keys(kind.broker_keys.begin(), kind.broker_keys.end());
  keys.insert(keys.end(), also.begin(), also.end());
  check_keys(v, path, keys, foreign_key_owner(kind, Section::Broker));
  BrokerSpec broker;
  broker.kind = std::string(kind.name());
  broker.model = kind.model;
  broker.delivery_latency = optional_distribution(v, "delivery_latency_ms", path, Range::Duration);
  broker.ack_latency = optional_distribution(v, "ack_latency_ms", path, Range::Duration);
  return broker;
}

void collect_queue_names(const json& queues, Context& context) {
  if (!queues.is_object() || queues.empty()) fail("broker.queues", "a non-empty object of queues by name", queues);
  // Dead-letter cycle detection keeps the queues a message died in as the bits of one word.
  if (queues.size() > 64)
    throw ScenarioError("broker.queues", "at most 64 queues", std::to_string(queues.size()) + " queues");
  for (auto it = queues.begin(); it != queues.end(); ++it) {
    if (!valid_queue_name(it.key())) {
      fail("broker.queues", "queue names of 1 to 255 bytes without '.', ',', '\"' or control characters", json(it.key()));
    }
    context.queue_names.push_back(it.key());
  }
}

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

}  // namespace brokersim::loader
