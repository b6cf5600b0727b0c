// A RabbitMQ queue's returns and its head-expiry timer (rabbitmq_queue.hpp).
#include "models/brokers/rabbitmq_queue.hpp"

#include <algorithm>

namespace brokersim {

void RabbitQueue::requeue(const Message& m) {
  if (requeue_to_ != RequeueTo::OriginalPosition) {
    Message back = m;
    if (requeue_to_ == RequeueTo::Returns) {
      ready_.insert(ready_.begin() + static_cast<std::ptrdiff_t>(returns_++), back);
    } else {
      back.seq = next_seq_++;  // a new Raft index: a new message at the tail
      ready_.push_back(back);
    }
    ready_bytes_ += back.bytes;
    return;
  }
  // Requeued messages are usually older than everything ready, so search from the front.
  auto it = std::upper_bound(ready_.begin(), ready_.end(), m.seq,
                             [](std::uint64_t s, const Message& x) { return s < x.seq; });
  ready_.insert(it, m);
  ready_bytes_ += m.bytes;
}

std::optional<Time> RabbitQueue::arm_timer(Time now) {
  if (ready_.empty()) return std::nullopt;
  const Time expiry = ready_.front().expiry;
  if (expiry == sim::kNever) return std::nullopt;
  if (timer_at_ != sim::kNever && expiry >= timer_at_ - sim::kNsPerMs) return std::nullopt;
  const Time delay = std::max<Time>(0, expiry - now);
  const Time delay_ms_ceil = (delay + sim::kNsPerMs - 1) / sim::kNsPerMs * sim::kNsPerMs;
  timer_at_ = now + delay_ms_ceil;
  ++timer_gen_;
  return timer_at_;
}

}  // namespace brokersim
