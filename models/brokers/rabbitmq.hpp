// RabbitMQ (docs/semantics.md part 2, sections 1, 2 and 4): the broker both queue types share,
// with each queue's type as a policy. What the core does for every queue: the default exchange,
// head-only TTL expiry with the ensure_ttl_timer rounding, dead-lettering with cycle detection,
// max-length in its three overflow modes, round-robin dispatch with prefetch credit and consumer
// priorities, the delivery acknowledgement timeout on the channel tick, x-expires with declares,
// and broker restarts. Where a queue's type makes a difference, the core calls that type's policy
// through the same named hooks (the list below), and the policy acts on the core only through the
// core's public operations: neither reaches into the other.
//   rabbitmq_classic.hpp   ClassicPolicy: original-position requeue, the TTL 0 discard, exact
//                          x-expires renewed by declares, transient messages lost on a restart
//   rabbitmq_quorum.*      QuorumPolicy: returns queue or tail requeue, the delivery limit, TTL 0
//                          living 1 ms, x-expires on the Ra tick, the prefetch cap, 4.3's
//                          per-delivery consumer timeout, at-least-once dead-lettering
// Where each core step lives:
//   rabbitmq.cpp              publish, dispatch, head expiry, dead-letter, settle, requeue
//   rabbitmq_connections.cpp  consumers attaching and leaving, consumer timeout, x-expires and
//                             declares, broker down and up
//   rabbitmq_queue.*          a queue's ready list and head-expiry timer
//   client_record.hpp, dispatcher.hpp  the channel's client record; the round-robin credit ring
//
// The hooks both policies implement, with the same signatures:
//   requeue_to, window                 what a queue and a channel are given at construction
//   refuses, expiry, discards_at_once  a message entering the queue (publish or dead letter)
//   on_deliver, in_timeout             a delivery leaving; whether a consumer is held from credit
//   on_return, on_dead_letter          a delivery coming back; a message leaving dead
//   on_ready_changed                   the queue's length changed
//   on_ghost_settled, on_channel_closed  a consumer settling a copy the queue took back; leaving
//   lease_end, declare_renews_lease, on_queue_deleted  x-expires
//   survives_restart, on_broker_up     restarts
// Timers a policy arms for itself (the quorum's message lock and dead-letter retry) come back to
// it unread.
//
// The type is the queue's (QueueSpec::type: broker.queues.NAME.type, the broker kind's type by
// default), and the policy is chosen by a branch on it, not by a virtual call (the per-job path
// asks, and the classic hooks inline to nothing where they do nothing). One broker may hold queues
// of both types; a dead letter follows its source's policy on the way out (at-least-once needs a
// quorum source) and its target's on the way in (a quorum target never refuses a dead letter).
#pragma once

#include <cstdint>
#include <vector>

#include "models/broker.hpp"
#include "models/brokers/client_record.hpp"
#include "models/brokers/rabbitmq_classic.hpp"
#include "models/brokers/rabbitmq_queue.hpp"
#include "models/brokers/rabbitmq_quorum.hpp"
#include "models/ledger.hpp"
#include "sim/rng.hpp"

namespace brokersim {

class RabbitMq final : public Broker {
 public:
  // Each queue of the broker is of its spec's type (broker.kind rabbitmq-classic or
  // rabbitmq-quorum gives the default).
  explicit RabbitMq(World& w);

  void start() override;
  void publish(std::uint32_t j) override;
  bool open_connection(Consumer& c) override;
  void consume(Consumer& c) override;
  void cancel(Consumer& c) override;
  void close_connection(Consumer& c) override;
  void settle(std::uint32_t j, std::uint32_t gen) override;
  void prefetch_changed(Consumer& c, int delta) override;
  void on_event(const sim::Event& ev) override;
  void down(Time duration) override;

  // --- What a queue-type policy may ask of the core, and do to it (the policies call nothing else).
  const RabbitQueue& queue(int q) const { return queues_[q]; }
  bool is_down() const { return down_; }
  // Would queue q refuse message j, by its own type's overflow rule?
  bool refuses(int q, std::uint32_t j, bool dead_letter);
  // Delivery j no longer counts against its channel's prefetch window, nor as unacked.
  void release_delivery(std::uint32_t j);
  // Consumer ci leaves its queue's dispatch ring until give_credit lets it back.
  void withhold_credit(int ci);
  void give_credit(Consumer& c);
  void dispatch(int q);
  // Every queue consumer c reads (consumers[].queue may be a list), in the order that a channel
  // whose window just reopened would hear it (rabbit_limiter's random rotation, in rabbitmq.cpp).
  void dispatch_for(Consumer& c);
  void requeue(std::uint32_t j, ReturnCause why);
  // A message dies in queue q (the caller has decided its outcome), by q's policy.
  void dead_letter(std::uint32_t j, int q, DeathReason why);
  // A dead letter the source's policy republishes: it goes into its target now rather than by a
  // later hop, and so does every dead letter it causes meanwhile (the next message of the same
  // pass must see it there).
  void republish_dead_letter(std::uint32_t j, int source, DeathReason why);

 private:
  // rabbit_channel's channel_tick_interval: the consumer timeout is evaluated once per tick.
  static constexpr Time kChannelTick = Time{60'000} * sim::kNsPerMs;

  // What the broker keeps per consumer: its channel. Its held deliveries are the unacked ones:
  // the prefetch window counts deliveries not yet acked *at the broker*, so deliveries in transit
  // and acks in flight both use it up. basic.cancel: no credit until the next consume.
  // One cache line each: a delivery and its settlement read the whole record.
  struct alignas(64) Channel : ClientRecord {
    // The prefetch window, as the queue's type grants the consumer's prefetch; 0 = unlimited.
    std::uint32_t window = 0;
    // `epoch` grows whenever the channel closes, voiding its pending ticks; the consumer-timeout
    // tick runs every 60 s from `opened_at` while deliveries are unacked.
    std::uint32_t epoch = 0;
    Time opened_at = 0;
    bool ticking = false;
    // Its queue's type, so that credit and delivery reach the policy from the channel they have
    // in hand rather than by a look-up of the queue.
    QueueType type = QueueType::Classic;
    // What basic.consume told the broker (consumers[].ack on-receipt: no-ack; x-priority), kept
    // here so that a delivery and a settlement read the channel's line, not the consumer's: in a
    // fleet of 4,000 consumers that line has left the cache by each send (docs/performance.md).
    bool no_ack = false;
    int priority = 0;
    // Its deliveries reach the client in the order sent, whatever latency each draws; a new
    // channel starts its own order.
    SendOrder order;
  };
  static_assert(sizeof(Channel) == 64, "a channel is one cache line");

  // The policy of queue q's type, handed to `step` (a generic lambda): both policies implement
  // the same hooks, so each call site is written once.
  template <class Step>
  decltype(auto) policy(int q, Step&& step) {
    return queues_[q].type() == QueueType::Quorum ? step(quorum_) : step(classic_);
  }
  // The policy of the queue channel ch reads.
  template <class Step>
  decltype(auto) policy(const Channel& ch, Step&& step) {
    return ch.type == QueueType::Quorum ? step(quorum_) : step(classic_);
  }

  // Channel ci of a consumer of queue q alone: back into q's ring if it may take more.
  void rejoin_one_queue(Channel& ch, int ci, int q) {
    ch.rejoin(dispatchers_[q], ci, ch.priority, [&] { return has_credit(ch, ci); });
  }
  // The window the channel's type grants consumer c's own prefetch (a new channel's).
  std::uint32_t granted_window(const Consumer& c);
  bool has_credit(const Channel& ch, int ci) {
    return ch.listening() && (ch.window == 0 || ch.held.size() < ch.window) &&
           !policy(ch, [&](const auto& p) { return p.in_timeout(ci); });
  }

  // A channel consuming several queues (consumers[].queue a list: Celery -Q a,b, one Spring
  // listener container on two queues) has one subscription (basic.consume) per queue. The first
  // queue's is the channel itself (its ring entry is the consumer's index, its in_ring flag the
  // channel's), so a channel of one queue pays nothing; each further one is a Subscription, whose
  // ring entry is consumer count + its index in subs_. basic.qos's prefetch counts per
  // subscription (global=false, RabbitMQ's default since 3.3: `unacked` below) or per channel
  // (global=true: ch.held), as consumers[].prefetch_scope says.
  struct Subscription {
    int consumer;
    int queue;
    bool in_ring = false;
    std::uint32_t unacked = 0;  // deliveries of this queue the channel holds
  };
  bool reads_several(int ci) const { return several_ && subs_first_[ci] != subs_first_[ci + 1]; }
  bool entry_credit(const Channel& ch, int ci, int entry);
  void after_delivery(Channel& ch, int ci, int entry);
  void join_entry(int ci, int entry);
  void leave_entries(int ci);
  Subscription* subscription_of(int ci, int q);

  // rabbit_amqqueue_process
  void enqueue(std::uint32_t j, int q, bool dead_letter);
  void deliver(std::uint32_t j, int q);
  void send_on(Channel& ch, Consumer& c, std::uint32_t j);
  void drop_expired(int q);
  void arm_timer(int q);
  void expire(std::uint32_t j, int q);
  void move_to_dead_letter(std::uint32_t j, int q, DeathReason why);
  // What cycle detection reads of a message's x-death history (rabbit_dead_letter:detect_cycles/3):
  // the queues it was dead-lettered from (bit q) and whether a rejection is among its deaths. Kept
  // by job pool index for dead-lettered messages only; `job` (Job::id) says whose it is, so a
  // reused slot starts afresh without a write on every publish.
  struct DeathHistory {
    std::uint64_t job = ~std::uint64_t{0};
    std::uint64_t from = 0;
    bool rejected = false;
  };
  DeathHistory& death_history(std::uint32_t j);
  void ready_changed(int q);
  void unacked_changed(int q, Job& job, int delta);

  // channels, queue leases, restarts
  void close_connection(Consumer& c, ReturnCause why);
  void close_channel(Consumer& c, ReturnCause why);
  void on_channel_tick(Consumer& c, std::uint32_t epoch);
  void declare(int q, bool periodic);
  void restart_lease(int q);
  void on_lease_end(int q, std::uint32_t gen);
  void up();

  World& w_;
  std::vector<RabbitQueue> queues_;
  std::vector<Dispatcher> dispatchers_;
  std::vector<Channel> channels_;  // by consumer index
  std::vector<Subscription> subs_;   // the subscriptions after each channel's first
  // Consumer ci's are subs_[subs_first_[ci] .. subs_first_[ci + 1]); empty if no channel reads
  // several queues.
  std::vector<std::uint32_t> subs_first_;
  int consumer_count_ = 0;
  bool several_ = false;  // some channel reads several queues: one flag on the per-job path
  sim::Rng limiter_rng_;  // rabbit_limiter's random order of the queues a reopened window wakes
  std::vector<DeathHistory> deaths_;  // by job pool index, grown on demand
  ClassicPolicy classic_;
  QuorumPolicy quorum_;
  sim::Rng slack_rng_;
  bool consumer_timeout_on_ = false;
  bool down_ = false;
  bool dead_letter_now_ = false;  // inside republish_dead_letter
  Time up_at_ = 0;
};

}  // namespace brokersim
