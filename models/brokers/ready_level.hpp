// A queue's level as the ledger sees it (Ledger::ready_changed): the messages ready for delivery,
// and how many of them, with their bytes, belong to jobs created after the warm-up, which are the
// ones the statistics count. Service Bus and SQS keep it beside their own lists (RabbitMQ's ready
// list counts its own, rabbitmq_queue.hpp).
#pragma once

#include <cstdint>

#include "models/job.hpp"

namespace brokersim {

struct ReadyLevel {
  std::uint64_t ready = 0;
  std::uint64_t counted = 0;
  std::uint64_t counted_bytes = 0;

  void add(const Job& job) {
    ++ready;
    if (job.counted) {
      ++counted;
      counted_bytes += job.bytes;
    }
  }
  void remove(const Job& job) {
    --ready;
    if (job.counted) {
      --counted;
      counted_bytes -= job.bytes;
    }
  }
  void clear() { ready = counted = counted_bytes = 0; }
};

}  // namespace brokersim
