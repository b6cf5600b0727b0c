// A RabbitMQ queue's returns and its head-expiry timer (rabbitmq_queue.hpp).
#include "models/brokers/rabbitmq_queue.hpp"

#include <algorithm>

namespace brokersim {

void RabbitQueue::requeue(const Message& m) {
  if (requeue_to_ != RequeueTo::OriginalPosition) {
    Message back = m;
    if (requeue_to_ == RequeueTo::Returns) {
      ready_.insert(returns_++, back);
    } else {
      back.seq = next_seq_++;  // a new Raft index: a new message at the tail
      ready_.push_back(back);
    }
    ready_bytes_ += back.bytes;
    return;
  }
  // Before the first message with a later sequence number (the list is in seq order).
  ready_.insert(ready_.partition_point([&](const Message& x) { return x.seq <= m.seq; }), m);
  ready_bytes_ += m.bytes;
}

Time RabbitQueue::rearm(Time now, Time expiry) {
  const Time delay = std::max<Time>(0, expiry - now);
  const Time delay_ms_ceil = (delay + sim::kNsPerMs - 1) / sim::kNsPerMs * sim::kNsPerMs;
  timer_at_ = now + delay_ms_ceil;
  ++timer_gen_;
  return timer_at_;
}

}  // namespace brokersim
