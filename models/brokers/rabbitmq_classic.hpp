// RabbitMQ classic queues (docs/semantics.md part 2, section 1): the classic queue type's policy,
// where a classic queue's rules differ from a quorum queue's. What both types do alike
// (head-only expiry and its timer, dead-lettering, max-length, dispatch, the channel's consumer
// timeout, restarts) is the core's (rabbitmq.hpp); the core calls these hooks for every classic
// queue, and QuorumPolicy implements the same ones.
//
// No state of its own: a classic queue's state is its ready list (rabbitmq_queue.hpp) and its
// consumers' channels, which the core keeps for both types. Nothing here acts on the core, so the
// hooks that do nothing inline away on the per-job path. RabbitMQ 4.3 no longer evaluates
// consumer timeouts for classic queues (docs/semantics.md D2); neither does it for quorum queues
// on the channel, so the core turns the channel tick off for 4.3 whatever the type.
#pragma once

#include <cstdint>

#include "models/brokers/rabbitmq_queue.hpp"
#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/results.hpp"

namespace brokersim {

class ClassicPolicy {
 public:
  // basic.nack requeue=true: back to the original position.
  RequeueTo requeue_to(int /*q*/) const { return RequeueTo::OriginalPosition; }
  // A consumer asking for prefetch 0 gets no limit at all.
  std::uint32_t window(int prefetch) const { return static_cast<std::uint32_t>(prefetch); }

  // Overflow at the door, for a producer's publish and a dead letter alike: drop-head takes
  // everything (and drops at the head), reject-publish(-dlx) refuses past max-length(-bytes).
  bool refuses(const RabbitQueue& Q, int /*q*/, std::uint32_t /*j*/, const Job& job, bool /*dead_letter*/) const {
    return Q.spec().overflow == Overflow::DropHead ? false : Q.full_for(job.bytes, 0);
  }
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

  // The channel's prefetch window and its consumer-timeout tick are the whole of a delivery.
  void on_deliver(std::uint32_t /*j*/, const Job& /*job*/) {}
  bool in_timeout(int /*ci*/) const { return false; }
  // Every return goes back to the queue, however often; every death goes straight to the core's
  // dead-letter hop.
  bool on_return(std::uint32_t /*j*/, ReturnCause /*why*/) { return false; }
  bool on_dead_letter(std::uint32_t /*j*/, int /*q*/, DeathReason /*why*/) { return false; }
  // No enqueuer is told anything: a classic queue answers each publish by its length then.
  void on_ready_changed(int /*q*/) {}
  // A classic queue never takes a delivery back from a live channel, so it leaves no ghosts.
  void on_ghost_settled(std::uint32_t /*j*/) { throw InvariantError("rabbitmq: a classic queue's consumer settled a ghost"); }
  void on_channel_closed(int /*ci*/) {}

  // x-expires: the queue is deleted exactly `expires` after it was last used, and every declare
  // counts as a use.
  Time lease_end(Time now, Time expires) const { return now + expires; }
  bool declare_renews_lease() const { return true; }
  void on_queue_deleted(int /*q*/) {}

  // A restart: transient messages die with the broker; persistent ones are on disk.
  bool survives_restart(const Job& job) const { return job.persistent; }
  void on_broker_up() {}
};

}  // namespace brokersim
