// broker.kind "rabbitmq-quorum": RabbitMQ with quorum queues by default. The broker keys and the
// queue keys of classic queues (rabbitmq_classic.cpp), plus what a quorum queue (of either kind,
// broker.queues.NAME.type) adds: each queue's delivery_limit and dead_letter_strategy; overflow
// reject-publish-dlx, which quorum queues do not support, is refused. One broker key of its own:
// dead_letter_confirm_timeout_ms, the at-least-once dead-letter worker's retry period.
#include <limits>
#include <vector>

#include "experiments/cli/loader/broker_kinds.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kQuorumQueueKeys[] = {"delivery_limit", "dead_letter_strategy"};
constexpr std::string_view kQuorumBrokerKeys[] = {"dead_letter_confirm_timeout_ms"};

}  // namespace

Keys quorum_queue_keys() { return kQuorumQueueKeys; }
Keys quorum_broker_keys() { return kQuorumBrokerKeys; }

void load_quorum_queue_keys(const json& q, const std::string& at, QueueSpec& queue) {
  if (queue.overflow == Overflow::RejectPublishDlx) {
    fail(join(at, "overflow"), "\"drop-head\" or \"reject-publish\" (quorum queues do not support reject-publish-dlx)",
         q["overflow"]);
  }
  if (has(q, "delivery_limit") && !q["delivery_limit"].is_null()) {
    const std::string path = join(at, "delivery_limit");
    queue.rabbitmq.delivery_limit = integer(q["delivery_limit"], path, -1, std::numeric_limits<std::int32_t>::max(),
                                   "an integer >= 0, -1 (no limit) or null (the version's default)");
  }
  if (has(q, "dead_letter_strategy")) {
    queue.rabbitmq.dead_letter_at_least_once =
        choice(q["dead_letter_strategy"], join(at, "dead_letter_strategy"), {"at-most-once", "at-least-once"}) == 1;
  }
}

namespace {

BrokerSpec load(const json& v, Context& context);

const BrokerKind& kind() {
  static const std::vector<std::string_view> queue_keys = [] {
    std::vector<std::string_view> keys(rabbitmq_queue_keys().begin(), rabbitmq_queue_keys().end());
    keys.insert(keys.end(), std::begin(kQuorumQueueKeys), std::end(kQuorumQueueKeys));
    return keys;
  }();
  static const std::vector<std::string_view> broker_keys = [] {
    std::vector<std::string_view> keys(rabbitmq_broker_keys().begin(), rabbitmq_broker_keys().end());
    keys.insert(keys.end(), std::begin(kQuorumBrokerKeys), std::end(kQuorumBrokerKeys));
    return keys;
  }();
  static const BrokerKind k{&kRabbitmqQuorumKind, broker_keys, queue_keys, {}, rabbitmq_consumer_keys(),
                            load, nullptr, load_rabbitmq_consumer, {}, false, true};
  return k;
}

BrokerSpec load(const json& v, Context& context) { return load_rabbitmq(v, context, kind(), QueueType::Quorum); }

}  // namespace

const BrokerKind& rabbitmq_quorum() { return kind(); }

}  // namespace brokersim::loader
