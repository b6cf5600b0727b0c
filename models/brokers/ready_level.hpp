// A queue's level as the ledger sees it (Ledger::ready_changed): the messages ready for delivery
// and their body bytes, every message (the statistics' levels are time averages of the state over
// the measured span, docs/outcomes.md). Service Bus and SQS keep it beside their own lists
// (RabbitMQ's ready list counts its own, rabbitmq_queue.hpp).
#pragma once

#include <cstdint>

#include "models/job.hpp"

namespace brokersim {

struct ReadyLevel {
  std::uint64_t ready = 0;
  std::uint64_t bytes = 0;

  void add(const Job& job) {
    ++ready;
    bytes += job.bytes;
  }
  void remove(const Job& job) {
    --ready;
    bytes -= job.bytes;
  }
  void clear() { ready = bytes = 0; }
};

}  // namespace brokersim
