// broker.kind "rabbitmq-classic": RabbitMQ with classic queues by default, the broker-level keys
// (version, latencies, consumer timeout, expiry slack) and each queue's arguments; a queue's
// `type` (either RabbitMQ kind) makes it classic or quorum, with its type's keys.
#include <algorithm>
#include <iterator>
#include <limits>
#include <vector>

#include "experiments/cli/loader/broker_kinds.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kBrokerKeys[] = {"kind",           "version",         "delivery_latency_ms", "ack_latency_ms",
                                            "consumer_timeout_ms", "expiry_slack_ms", "queues"};
constexpr std::string_view kConsumerKeys[] = {"prefetch_scope"};
constexpr std::string_view kQueueKeys[] = {"message_ttl_ms", "dead_letter_to", "max_length",       "max_length_bytes",
                                           "overflow",       "expires_ms",     "declare_every_ms", "declare_at_ms",
                                           "type"};

// A key that may be null, meaning "not set".
bool given(const json& q, const std::string& key) { return has(q, key) && !q[key].is_null(); }

std::optional<std::int64_t> optional_length(const json& q, const std::string& key, const std::string& at) {
  if (!given(q, key)) return std::nullopt;
  return integer(q[key], join(at, key), 0, std::numeric_limits<std::int64_t>::max(), "an integer >= 0 or null");
}

// x-message-ttl, dead-lettering and the length limits.
void load_queue_limits(const json& q, const std::string& at, const Context& context, QueueSpec& queue) {
  if (given(q, "message_ttl_ms")) {
    queue.message_ttl = sim::from_ms(real(q["message_ttl_ms"], join(at, "message_ttl_ms"), "a number >= 0 or null"));
    if (*queue.message_ttl < 0) fail(join(at, "message_ttl_ms"), "a number >= 0 or null", q["message_ttl_ms"]);
  }
  if (given(q, "dead_letter_to")) {
    queue.dead_letter_index = queue_index(q["dead_letter_to"], join(at, "dead_letter_to"), context);
    queue.dead_letter_to = q["dead_letter_to"].get<std::string>();
  }
  queue.max_length = optional_length(q, "max_length", at);
  queue.max_length_bytes = optional_length(q, "max_length_bytes", at);
}

// Re-declaration (which renews the x-expires lease), overflow, and x-expires.
void load_queue_lifetime(const json& q, const std::string& at, QueueSpec& queue) {
  if (given(q, "declare_every_ms")) queue.declare_every = ms_period(q["declare_every_ms"], join(at, "declare_every_ms"));
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
  if (given(q, "expires_ms")) {
    const json& e = q["expires_ms"];
    const std::string ep = join(at, "expires_ms");
    const double x = real(e, ep, "a number > 0 or null");
    if (x <= 0 || sim::from_ms(x) < 1) fail(ep, "a number > 0 or null", e);
    queue.expires = sim::from_ms(x);
  }
}

std::string_view type_name(QueueType type) { return type == QueueType::Quorum ? "quorum" : "classic"; }

// broker.queues.NAME.type: "classic" or "quorum"; absent (or null), the kind's type.
QueueType queue_type(const json& q, const std::string& at, QueueType default_type) {
  if (!given(q, "type")) return default_type;
  return choice(q["type"], join(at, "type"), {"classic", "quorum"}) == 1 ? QueueType::Quorum : QueueType::Classic;
}

QueueSpec load_queue(const std::string& name, const json& v, const Context& context, const BrokerKind& kind,
                     QueueType default_type) {
  const std::string at = join("broker.queues", name);
  const json& q = object_at(v, at, "an object (the queue's arguments)");
  QueueSpec queue;
  queue.name = name;
  queue.rabbitmq.type = queue_type(q, at, default_type);
  // The keys of the queue's type. A key only quorum queues have names the queue's `type` key
  // (set, or the kind's default); another kind's key names that kind.
  std::vector<std::string_view> keys(std::begin(kQueueKeys), std::end(kQueueKeys));
  if (queue.rabbitmq.type == QueueType::Quorum) keys.insert(keys.end(), quorum_queue_keys().begin(), quorum_queue_keys().end());
  const KeyOwner kind_owner = foreign_key_owner(kind, Section::Queue);
  const bool typed = given(q, "type");
  check_keys(q, at, keys, [&](std::string_view key) -> std::string {
    const Keys quorum_only = quorum_queue_keys();
    const bool of_quorum = std::find(quorum_only.begin(), quorum_only.end(), key) != quorum_only.end();
    // Untyped under rabbitmq-classic too: the fix is the queue's type (a quorum queue beside
    // classic ones), not another broker kind for the whole scenario.
    if (of_quorum) {
      return "this key belongs to quorum queues; " + join(at, "type") + " is \"" + std::string(type_name(queue.rabbitmq.type)) +
             "\" (" + (typed ? "set" : "the broker kind's type; set") + " it to \"quorum\" or drop this key)";
    }
    return kind_owner(key);
  });
  load_queue_limits(q, at, context, queue);
  load_queue_lifetime(q, at, queue);
  if (queue.rabbitmq.type == QueueType::Quorum) load_quorum_queue_keys(q, at, queue);
  return queue;
}

std::string version(const json& version) {
  static constexpr std::string_view kVersions[] = {"3.13", "4.0", "4.2", "4.3"};
  // --set broker.version=4.2 parses as a number; accept it when it spells a known version.
  const std::string text = version.is_string() ? version.get<std::string>() : version.is_number_float() ? version.dump() : "";
  const auto it = std::find(std::begin(kVersions), std::end(kVersions), text);
  if (it == std::end(kVersions)) fail("broker.version", "one of " + list(kVersions, "\""), version);
  return std::string(*it);
}

}  // namespace

Keys rabbitmq_broker_keys() { return kBrokerKeys; }
Keys rabbitmq_queue_keys() { return kQueueKeys; }

namespace {

// Does some queue of `v` (the "broker" object) say it is a quorum queue (or have the kind's
// default, quorum)? Read before the queues are loaded, for the broker keys: an ill-typed queue
// counts as not quorum here, and its own check reports it.
bool has_quorum_queue(const json& v, QueueType default_type) {
  if (!has(v, "queues") || !v["queues"].is_object()) return false;
  for (const json& q : v["queues"]) {
    if (!q.is_object() || !given(q, "type")) {
      if (default_type == QueueType::Quorum) return true;
    } else if (q["type"] == "quorum") {
      return true;
    }
  }
  return false;
}

}  // namespace

Keys rabbitmq_consumer_keys() { return kConsumerKeys; }

// prefetch_scope: basic.qos global=false ("consumer", RabbitMQ's default: each queue's
// subscription on the channel has the whole prefetch) or global=true ("channel": one window for
// all of them). It matters only to a group reading several queues. A quorum queue refuses a
// consumer on a channel with global QoS (docs/semantics.md, "Consumers of several queues").
void load_rabbitmq_consumer(const json& v, const std::string& path, ConsumerSpec& consumer) {
  if (!has(v, "prefetch_scope")) return;
  constexpr ConsumerSpec::PrefetchScope kScopes[] = {ConsumerSpec::PrefetchScope::Consumer, ConsumerSpec::PrefetchScope::Channel};
  consumer.prefetch_scope = kScopes[choice(v["prefetch_scope"], join(path, "prefetch_scope"), {"consumer", "channel"})];
}

BrokerSpec load_rabbitmq(const json& v, Context& context, const BrokerKind& kind, QueueType default_type) {
  const std::string path = "broker";
  // A rabbitmq-classic broker with a quorum queue (broker.queues.NAME.type) also takes the quorum
  // broker keys; without one, they name rabbitmq-quorum as any other kind's key does.
  const bool add_quorum_keys = default_type == QueueType::Classic && has_quorum_queue(v, default_type);
  BrokerSpec broker = load_broker_common(v, kind, add_quorum_keys ? quorum_broker_keys() : Keys{});
  if (has(v, "version")) broker.version = version(v["version"]);
  broker.rabbitmq.expiry_slack = optional_distribution(v, "expiry_slack_ms", path, Range::Duration);
  if (has(v, "consumer_timeout_ms")) {
    const json& t = v["consumer_timeout_ms"];
    if (t.is_null()) {
      broker.rabbitmq.consumer_timeout.reset();
    } else {
      broker.rabbitmq.consumer_timeout = ms_positive(t, join(path, "consumer_timeout_ms"));
    }
  }
  const json& queues = member(v, "queues");
  collect_queue_names(queues, context);
  for (auto it = queues.begin(); it != queues.end(); ++it) {
    broker.queues.push_back(load_queue(it.key(), it.value(), context, kind, default_type));
  }
  if (has(v, "dead_letter_confirm_timeout_ms")) {
    broker.rabbitmq.dead_letter_confirm_timeout =
        ms_positive(v["dead_letter_confirm_timeout_ms"], "broker.dead_letter_confirm_timeout_ms");
  }
  return broker;
}

namespace {

BrokerSpec load(const json& v, Context& context) { return load_rabbitmq(v, context, rabbitmq_classic(), QueueType::Classic); }

constexpr BrokerKind kRabbitmqClassic{&kRabbitmqClassicKind, kBrokerKeys, kQueueKeys, {}, kConsumerKeys,
                                      load, nullptr,  load_rabbitmq_consumer, {}, false, true};

}  // namespace

const BrokerKind& rabbitmq_classic() { return kRabbitmqClassic; }

}  // namespace brokersim::loader
