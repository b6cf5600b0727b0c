// A RabbitMQ queue's returns and its head-expiry timer (rabbitmq_queue.hpp).
#include "models/brokers/rabbitmq_queue.hpp"

#include <algorithm>
#include <ranges>

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
  const auto positions = std::views::iota(std::size_t{0}, ready_.size());
  const std::size_t at = *std::ranges::partition_point(positions, [&](std::size_t i) { return ready_[i].seq <= m.seq; });
  ready_.insert(at, m);
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
