// Azure Service Bus's own scenario settings (broker.kind "azure-servicebus"): what the loader
// (experiments/cli/loader/azure_servicebus.cpp) fills and only the Service Bus model reads. The
// settings every broker shares stay in models/scenario.hpp.
#pragma once

#include <optional>

#include "sim/distribution.hpp"
#include "sim/time.hpp"

namespace brokersim {

// The entity's settings: the peek-lock duration, MaxDeliveryCount, the entity's default (and
// ceiling) message TTL, dead-lettering on expiration, and sessions.
struct ServiceBusQueueSettings {
  sim::Time lock_duration = sim::Time{60'000} * sim::kNsPerMs;
  int max_delivery_count = 10;
  std::optional<sim::Time> default_ttl;
  bool dead_letter_on_expiration = false;
  bool requires_session = false;
};

// A sender's: a scheduled enqueue this long after the publish (the TTL starts at activation), and
// the session id each message carries (drawn per message, rounded).
struct ServiceBusSenderSettings {
  std::optional<sim::Distribution> scheduled_delay;
  std::optional<sim::Distribution> session;
};

// A receiver's (the processor's options).
struct ServiceBusReceiverSettings {
  // ReceiveAndDelete settles a message when it is sent (lost on a crash).
  bool receive_and_delete = false;
  // MaxAutoLockRenewalDuration, from the handler's start (nullopt = the renewal never gives up,
  // brokersim's behaviour before the key existed).
  std::optional<sim::Time> max_auto_lock_renewal;
  // Session queues only: SessionIdleTimeout, how long the session processor keeps a session with
  // nothing to receive before it closes it (0: at once, as before the key existed).
  sim::Time session_idle_timeout = 0;
  // With on_expired defer: a message this client deferred is received back by its sequence number
  // (ReceiveDeferredMessagesAsync) this long after its Defer() reached the broker (nullopt =
  // never: it rests deferred, brokersim's behaviour before the key existed).
  std::optional<sim::Time> receive_deferred_after;
};

// broker.kind "azure-servicebus" (models/broker_kind.hpp; azure_servicebus.cpp).
struct BrokerKindModel;
extern const BrokerKindModel kAzureServiceBusKind;

}  // namespace brokersim
