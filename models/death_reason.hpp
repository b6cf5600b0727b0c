// Why a broker dead-lettered a message, in each broker's own words: RabbitMQ's x-death reasons,
// Azure Service Bus's DeadLetterReason, and the SQS redrive policy (which names none: its
// maxReceiveCount is the reason).
#pragma once

#include <cstdint>
#include <string_view>

namespace brokersim {

enum class DeathReason : std::uint8_t {
  Expired,                   // RabbitMQ `expired`
  Rejected,                  // RabbitMQ `rejected` (a consumer's reject / nack without requeue)
  Maxlen,                    // RabbitMQ `maxlen` (drop-head, reject-publish-dlx)
  DeliveryLimit,             // RabbitMQ quorum `delivery_limit`
  TTLExpiredException,       // Azure Service Bus, with dead_letter_on_expiration
  MaxDeliveryCountExceeded,  // Azure Service Bus
  MaxReceiveCount,           // Amazon SQS redrive (`max_receive_count`)
};
inline constexpr std::size_t kDeathReasonCount = 7;

// The key in `dead_lettered_by_reason`.
constexpr std::string_view death_reason_name(DeathReason r) {
  switch (r) {
    case DeathReason::Expired: return "expired";
    case DeathReason::Rejected: return "rejected";
    case DeathReason::Maxlen: return "maxlen";
    case DeathReason::DeliveryLimit: return "delivery_limit";
    case DeathReason::TTLExpiredException: return "TTLExpiredException";
    case DeathReason::MaxDeliveryCountExceeded: return "MaxDeliveryCountExceeded";
    case DeathReason::MaxReceiveCount: return "max_receive_count";
  }
  return "?";
}

}  // namespace brokersim
