// RabbitMQ classic queues (docs/semantics.md part 2, section 1): where a classic queue's rules
// differ from a quorum queue's. What both types do alike (head-only expiry and its timer,
// dead-lettering, max-length, dispatch, the channel's consumer timeout, restarts) is the core's
// (rabbitmq.hpp); the core asks these questions of every classic queue.
//
// No state of its own: a classic queue's state is its ready list (rabbitmq_queue.hpp) and its
// consumers' channels, which the core keeps for both types. RabbitMQ 4.3 no longer evaluates
// consumer timeouts for classic queues (docs/semantics.md D2); neither does it for quorum queues
// on the channel, so the core turns the channel tick off for 4.3 whatever the type.
#pragma once

#include <cstdint>

#include "models/brokers/rabbitmq_queue.hpp"
#include "models/job.hpp"

namespace brokersim {

class ClassicRules {
 public:
  // basic.nack requeue=true: back to the original position.
  RequeueTo requeue_to(int /*q*/) const { return RequeueTo::OriginalPosition; }
  // A consumer asking for prefetch 0 gets no limit at all.
  std::uint32_t window(int prefetch) const { return static_cast<std::uint32_t>(prefetch); }

  // The absolute expiry stamped when job j enters the queue (publish or dead-letter): now +
  // min(queue TTL, message TTL).
  Time expiry(const RabbitQueue& Q, std::uint32_t /*j*/, const Job& job, Time now) const {
    return Q.expiry_for(now, job.message_ttl);
  }
  // deliver_or_enqueue's `ttl = 0, dlx = undefined` branch: a message with TTL 0 that no consumer
  // took at once is discarded rather than enqueued.
  bool discards_at_once(const RabbitQueue& Q, const Job& job, Time now) const {
    const QueueSpec& spec = Q.spec();
    return job.queue_expiry <= now && spec.message_ttl && *spec.message_ttl == 0 && spec.dead_letter_index < 0;
  }

  // x-expires: the queue is deleted exactly `expires` after it was last used, and every declare
  // counts as a use.
  Time lease_end(Time now, Time expires) const { return now + expires; }
  bool declare_renews_lease() const { return true; }

  // A restart: transient messages die with the broker; persistent ones are on disk.
  bool survives_restart(const Job& job) const { return job.persistent; }
};

}  // namespace brokersim
