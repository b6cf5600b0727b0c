// Why a broker dead-lettered a message, in each broker's own words: RabbitMQ's x-death reasons,
// Azure Service Bus's DeadLetterReason, and the SQS redrive policy (which names none: its
// maxReceiveCount is the reason).
#pragma once

#include <cstdint>
#include <span>
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

// The reasons a broker kind can give, in output order: its `dead_lettered_by_reason` keys (and
// the sweep columns made from them) are these, whatever a run produced, so that every run of a
// kind has the same columns.
inline std::span<const DeathReason> death_reasons_of(std::string_view kind) {
  using enum DeathReason;
  static constexpr DeathReason classic[] = {Expired, Rejected, Maxlen};
  static constexpr DeathReason quorum[] = {Expired, Rejected, Maxlen, DeliveryLimit};
  // A consumer's explicit DeadLetter() (on_expired: reject) keeps RabbitMQ's word `rejected`.
  static constexpr DeathReason servicebus[] = {TTLExpiredException, MaxDeliveryCountExceeded, Rejected};
  static constexpr DeathReason sqs[] = {MaxReceiveCount};
  if (kind == "rabbitmq-quorum") return quorum;
  if (kind == "azure-servicebus") return servicebus;
  if (kind == "amazon-sqs") return sqs;
  return classic;
}

}  // namespace brokersim
