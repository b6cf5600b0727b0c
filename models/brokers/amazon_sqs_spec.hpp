// Amazon SQS's own scenario settings (broker.kind "amazon-sqs"): what the loader
// (experiments/cli/loader/amazon_sqs.cpp) fills and only the SQS model reads. The settings every
// broker shares stay in models/scenario.hpp.
#pragma once

#include <optional>

#include "sim/time.hpp"

namespace brokersim {

// The queue's: the visibility timeout, retention from the original enqueue, the queue's delivery
// delay, and the redrive policy's maxReceiveCount (with QueueSpec::dead_letter_to).
struct SqsQueueSettings {
  sim::Time visibility_timeout = sim::Time{30'000} * sim::kNsPerMs;
  sim::Time retention = sim::Time{345'600'000} * sim::kNsPerMs;
  sim::Time delay = 0;
  std::optional<int> max_receive_count;
};

// A receiving client's.
struct SqsClientSettings {
  // Messages per ReceiveMessage call (1..10).
  int batch_size = 1;
  // ReceiveMessage's own VisibilityTimeout (nullopt = the queue's), and the handler's heartbeat:
  // while a job executes, ChangeMessageVisibility(extend) every `every` (0 = no heartbeat).
  std::optional<sim::Time> receive_visibility_timeout;
  sim::Time heartbeat_every = 0, heartbeat_extend = 0;
  // on_timeout "keep": a timed-out job is not deleted (a Lambda invocation that times out is an
  // error) and comes back when its visibility lapses, as a failed one does; and on_failure
  // "delete": a failed job is deleted (Celery acks a failed task) instead.
  bool keep_timed_out = false;
  bool delete_failed = false;
};

// broker.kind "amazon-sqs" (models/broker_kind.hpp; amazon_sqs_kind.cpp).
struct BrokerKindModel;
extern const BrokerKindModel kAmazonSqsKind;

}  // namespace brokersim
