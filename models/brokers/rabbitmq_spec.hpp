// RabbitMQ's own scenario settings (broker.kind "rabbitmq-classic" / "rabbitmq-quorum"): what the
// loader (experiments/cli/loader/rabbitmq_classic.cpp, rabbitmq_quorum.cpp) fills and only the
// RabbitMQ model reads. The settings every broker shares stay in models/scenario.hpp.
#pragma once

#include <cstdint>
#include <optional>

#include "sim/distribution.hpp"
#include "sim/time.hpp"

namespace brokersim {

// A RabbitMQ queue's type: which rules it follows (models/brokers/rabbitmq.hpp asks it at every
// step where the types differ). broker.queues.NAME.type, the broker kind's type by default.
enum class QueueType : std::uint8_t { Classic, Quorum };

struct RabbitQueueSettings {
  // The queue's type (rabbitmq-quorum's queues are quorum unless typed classic).
  QueueType type = QueueType::Classic;
  // quorum queues only: x-delivery-limit (nullopt = the version's default: 20 from 4.0, none in
  // 3.13; -1 = disabled) and the dead-letter strategy.
  std::optional<std::int64_t> delivery_limit;
  bool dead_letter_at_least_once = false;
};

struct RabbitBrokerSettings {
  sim::Distribution expiry_slack;  // added to every head-expiry timer firing, ns (default 0)
  // Delivery acknowledgement timeout (consumer_timeout, default 30 min); nullopt = off.
  std::optional<sim::Time> consumer_timeout = sim::Time{1'800'000} * sim::kNsPerMs;
  // With quorum queues: rabbit's dead_letter_worker_publisher_confirm_timeout, the at-least-once
  // dead-letter worker's retry period (default 3 min).
  sim::Time dead_letter_confirm_timeout = sim::Time{180'000} * sim::kNsPerMs;
};

// broker.kind "rabbitmq-classic" and "rabbitmq-quorum" (models/broker_kind.hpp; rabbitmq.cpp):
// one RabbitMQ, each queue of the kind's type unless typed otherwise (RabbitQueueSettings::type).
struct BrokerKindModel;
extern const BrokerKindModel kRabbitmqClassicKind;
extern const BrokerKindModel kRabbitmqQuorumKind;

}  // namespace brokersim
