// RabbitMQ quorum queues (docs/semantics.md part 2, section 2): the quorum queue type's policy,
// where a quorum queue's rules differ from a classic queue's, and the state only quorum queues
// have. The returns queue or tail requeue, the delivery limit and what counts toward it by
// version, TTL 0 living 1 ms, x-expires on the 5 s Ra tick and not renewed by declares, the 2000
// cap on "unlimited" prefetch, replicated messages surviving restarts, the consumer timeout in
// 4.3 (per delivery, by the queue), and at-least-once dead-lettering. The core (rabbitmq.hpp)
// calls these hooks for every quorum queue (ClassicPolicy implements the same ones), and the
// policy acts on the core only through the core's public operations. The core holds one
// QuorumPolicy for all its quorum queues (none: nothing allocated, nothing armed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/brokers/rabbitmq_queue.hpp"
#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/scenario.hpp"

namespace brokersim {

class RabbitMq;
struct World;

class QuorumPolicy {
 public:
  // Only for the broker's quorum queues (QueueSpec::type); with none, nothing is allocated or
  // armed (the 4.3 message lock included).
  QuorumPolicy(RabbitMq& core, World& w, const BrokerSpec& broker, std::size_t consumers);

  // The delivery limit in force for a queue: -1 = none (the spec's key, else the version's default).
  static std::int64_t delivery_limit(const QueueSpec& spec, const std::string& version);

  // --- the hooks (ClassicPolicy implements them too)
  // Returned messages go to the returns queue with a limit, to the tail without (D3).
  RequeueTo requeue_to(int q) const { return limits_[q] >= 0 ? RequeueTo::Returns : RequeueTo::Tail; }
  // rabbit_fifo_client's ?UNLIMITED_PREFETCH_COUNT: prefetch 0 is capped.
  std::uint32_t window(int prefetch) const {
    return prefetch == 0 ? kUnlimitedPrefetch : static_cast<std::uint32_t>(prefetch);
  }

  // A dead letter is never refused by the queue: at-most-once it is an untracked enqueue,
  // at-least-once its worker was let through (on_dead_letter). A producer's publish with
  // reject-publish asks its enqueuer status instead of the queue's length (accepts_publish: one
  // gets in past the limit); otherwise max-length counts the dead letters held from the queue.
  bool refuses(const RabbitQueue& Q, int q, std::uint32_t j, const Job& job, bool dead_letter) {
    const QueueSpec& spec = Q.spec();
    if (spec.overflow == Overflow::DropHead || dead_letter) return false;
    if (spec.overflow == Overflow::RejectPublish && (spec.max_length || spec.max_length_bytes))
      return !accepts_publish(j, q, job.producer);
    return Q.full_for(job.bytes, held_from(q));
  }
  // maybe_set_msg_ttl: min(queue TTL, message TTL) from the enqueue; update_expiry_header turns a
  // TTL of 0 into enqueue + 1 ms. A message entering a queue (published or dead-lettered) is new
  // there, so its delivery count starts again.
  Time expiry(const RabbitQueue& Q, std::uint32_t j, const Job& job, Time now) {
    returns_of(j) = 0;
    const Time expiry = Q.expiry_for(now, job.message_ttl);
    return expiry == now ? now + sim::kNsPerMs : expiry;
  }
  // TTL 0 is not the classic "deliver now or discard" (D7).
  bool discards_at_once(const RabbitQueue& /*Q*/, const Job& /*job*/, Time /*now*/) const { return false; }

  // 4.3's consumer timeout: each delivery carries its own lock (on_message_lock).
  void on_deliver(std::uint32_t j, const Job& job) {
    if (message_lock_ != sim::kNever) lock_delivery(j, job);
  }
  // The consumer is in the `timeout` status: its client still holds stale copies (ghosts) of
  // deliveries the queue took back, and gets nothing new until it has settled them all.
  bool in_timeout(int ci) const { return !ghosts_.empty() && !ghosts_[static_cast<std::size_t>(ci)].empty(); }
  // A delivery came back: true if the queue disposed of it (past the delivery limit) instead of
  // requeueing (rabbitmq_quorum.cpp).
  bool on_return(std::uint32_t j, ReturnCause why);
  // A message dies in queue q: true if its dead-letter worker holds it (at-least-once,
  // rabbitmq_quorum_dlx.cpp), false for the core's at-most-once hop.
  bool on_dead_letter(std::uint32_t j, int q, DeathReason why);
  // Queue q's length changed: the queue tells its enqueuers (the workers and producers publishing
  // to it) to stop when over its limit and to go on when below 80% of it. (Called at every
  // change of every quorum queue's length, so one flag answers whether there is anything to do.)
  void on_ready_changed(int q) {
    if (has_workers_ || has_publishers_) enqueuer_status(q);
  }
  void on_ghost_settled(std::uint32_t j);
  // The client's connection is gone: its stale copies die with it.
  void on_channel_closed(int ci);

  // x-expires: rabbit_fifo:is_expired/2 on the Ra tick, Ts > LastActive + Expires with no
  // consumers; LastActive is the declaration or the last consumer leaving (declares do not renew
  // it). Ticks are at multiples of 5 s, so the first tick strictly after the lease end deletes.
  Time lease_end(Time now, Time expires) const { return (sim::add_sat(now, expires) / kRaTick + 1) * kRaTick; }
  bool declare_renews_lease() const { return false; }
  // Queue q was deleted: its unconfirmed dead-letters go with it, and the workers publishing to
  // it forget it (a re-declared q is a new queue to them).
  void on_queue_deleted(int q);

  // Replicated and persisted whatever the message's delivery mode.
  bool survives_restart(const Job& /*job*/) const { return true; }
  // The broker is back: every worker starts again and republishes what it holds at once.
  void on_broker_up();

  // --- its own timers, handed back by the core
  // 4.3's lock on delivery j ran out (Ev::Lease).
  void on_message_lock(std::uint32_t j, std::uint32_t gen);
  // The dead-letter worker's settle timer (Ev::DlxTimer) fired.
  void on_dlx_timer(int source, std::uint32_t gen);

  // at-least-once needs reject-publish on the source (with drop-head the broker falls back to
  // at-most-once) and a target.
  static bool holds_dead_letters(const QueueSpec& source) {
    return source.rabbitmq.type == QueueType::Quorum && source.rabbitmq.dead_letter_at_least_once && source.overflow == Overflow::RejectPublish && source.dead_letter_index >= 0;
  }

 private:
  // rabbit_quorum_queue's ?TICK_INTERVAL: x-expires is checked on this tick.
  static constexpr Time kRaTick = Time{5'000} * sim::kNsPerMs;
  static constexpr std::uint32_t kUnlimitedPrefetch = 2000;

  std::uint32_t& returns_of(std::uint32_t j) {
    if (returns_.size() <= j) returns_.resize(std::max<std::size_t>(j + 1, returns_.size() * 2), 0);
    return returns_[j];
  }
  // The dead-letter worker's publishing state toward its source's target (rabbit_fifo_client's
  // queue_status): not yet registered as an enqueuer, go, or told to stop (reject_publish).
  enum class Enqueuer : std::uint8_t { Unregistered, Go, Blocked };
  struct EnqueuerState {
    Enqueuer status = Enqueuer::Unregistered;
    Time blocked_at = sim::kNever;  // a reject_publish notice on its way (effective after this instant)
  };
  struct Worker : EnqueuerState {
    Time timer_at = sim::kNever;    // the settle timer, armed while it holds anything
    std::uint32_t timer_gen = 0;
    std::uint32_t checked_out = 0;  // held messages delivered to it (at most its prefetch)
  };
  // A dead-letter its target has not accepted: (job, source queue, reason, when the worker last
  // published it: kNever = never, no target to route to; whether the worker has it yet).
  struct Held {
    std::uint32_t job;
    int source;
    DeathReason why;
    Time published;
    bool checked_out;
  };
  // rabbit_fifo_dlx_worker's defaults (rabbit's app env): dead_letter_worker_consumer_prefetch.
  static constexpr std::uint32_t kWorkerPrefetch = 32;

  // Dead-letters from queue q its target has not accepted yet: they count toward q's length.
  std::uint64_t held_from(int q) const { return held_from_.empty() ? 0 : held_from_[static_cast<std::size_t>(q)]; }
  // A producer's publish into quorum queue q with reject-publish: its client is an enqueuer like
  // the dead-letter worker (rabbit_fifo_client:enqueue/4), refused only once told the queue is
  // over its limit, so the queue takes one message past max-length (measured on 3.10.8: the
  // real-broker case qdlx-publish-over-limit takes 3 of 4 publishes at max_length 2).
  bool accepts_publish(std::uint32_t j, int q, int producer) {
    auto& by_producer = publishers_[static_cast<std::size_t>(q)];
    const auto p = static_cast<std::size_t>(std::max(producer, 0));
    if (by_producer.size() <= p) by_producer.resize(p + 1);
    has_publishers_ = true;
    return accepts(by_producer[p], j, q);
  }
  void lock_delivery(std::uint32_t j, const Job& job);
  bool try_publish(Held& h);
  // `j`: the message published (a classic target answers by its own overflow rule).
  bool accepts(EnqueuerState& e, std::uint32_t j, int target);
  void redeliver(int source);
  void arm_timer(int source);
  void enqueuer_status(int target);
  void reset_worker(Worker& wk);

  RabbitMq& core_;
  World& w_;

  std::vector<std::int64_t> limits_;    // by queue, -1 = none
  std::vector<std::uint32_t> returns_;  // by job index: returns that counted toward the limit
  bool v43_ = false;
  Time message_lock_ = sim::kNever;
  std::vector<std::vector<std::uint32_t>> ghosts_;  // by consumer index, with a message lock only
  std::vector<Held> held_;                // oldest first
  std::vector<std::uint64_t> held_from_;  // by source queue, with at-least-once queues only
  std::vector<Worker> workers_;           // by source queue (used for at-least-once sources)
  std::vector<std::vector<int>> writers_;  // by target queue: the at-least-once sources into it
  bool has_workers_ = false;              // some queue dead-letters at least once
  std::vector<std::vector<EnqueuerState>> publishers_;  // by queue, by producer: publishing clients
  bool has_publishers_ = false;          // some producer has published to a reject-publish queue
  Time retry_ = 0;                        // dead_letter_worker_publisher_confirm_timeout
};

}  // namespace brokersim
