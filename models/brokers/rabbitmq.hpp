// RabbitMQ (docs/semantics.md part 2, sections 1, 2 and 4): the broker both queue types share,
// with each queue's type as a policy. What the core does for every queue: the default exchange,
// head-only TTL expiry with the ensure_ttl_timer rounding, dead-lettering with cycle detection,
// max-length in its three overflow modes, round-robin dispatch with prefetch credit and consumer
// priorities, the delivery acknowledgement timeout on the channel tick, x-expires with declares,
// and broker restarts. Where a queue's type makes a difference, the core asks that queue's rules:
//   rabbitmq_classic.hpp   ClassicRules: original-position requeue, the TTL 0 discard, exact
//                          x-expires renewed by declares, transient messages lost on a restart
//   rabbitmq_quorum.*      QuorumRules: returns queue or tail requeue, the delivery limit, TTL 0
//                          living 1 ms, x-expires on the Ra tick, the prefetch cap, 4.3's
//                          per-delivery consumer timeout, at-least-once dead-lettering
// Where each core step lives:
//   rabbitmq.cpp              publish, dispatch, head expiry, dead-letter, settle, requeue
//   rabbitmq_connections.cpp  consumers attaching and leaving, consumer timeout, x-expires and
//                             declares, broker down and up
//   rabbitmq_queue.*          a queue's ready list and head-expiry timer
//   client_record.hpp, dispatcher.hpp  the channel's client record; the round-robin credit ring
//
// The type is the queue's (QueueSpec::type: broker.queues.NAME.type, the broker kind's type by
// default), and the rules are chosen by a branch on it, not by a virtual call (the per-job path
// asks). One broker may hold queues of both types; a dead letter follows its source's rules on the
// way out (at-least-once needs a quorum source) and its target's on the way in (a quorum target
// never refuses an at-most-once dead letter).
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
  void on_event(const sim::Event& ev) override;
  void down(Time duration) override;

 private:
  friend class QuorumRules;  // its steps run the core's (requeue, dispatch, dead-letter)

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
  };

  bool quorum(int q) const { return queues_[q].type() == QueueType::Quorum; }
  // The rules of queue q's type, handed to `step` (a generic lambda): both rule classes answer
  // the same questions, so each step is written once.
  template <class Step>
  decltype(auto) rules(int q, Step&& step) {
    return quorum(q) ? step(quorum_) : step(classic_);
  }

  bool has_credit(const Channel& ch, int ci) const {
    return ch.listening() && (ch.window == 0 || ch.held.size() < ch.window) && !quorum_.in_timeout(ci);
  }
  void give_credit(Consumer& c);

  // rabbit_amqqueue_process
  void enqueue(std::uint32_t j, int q, bool dead_letter);
  void deliver(std::uint32_t j, int q);
  void dispatch(int q);
  void drop_expired(int q);
  void arm_timer(int q);
  void expire(std::uint32_t j, int q);
  void dead_letter(std::uint32_t j, int q, DeathReason why);
  void move_to_dead_letter(std::uint32_t j, int q, DeathReason why);
  void requeue(std::uint32_t j, ReturnCause why);
  void ready_changed(int q);
  void unacked_changed(int q, const Job& job, int delta);
  // Would queue q refuse one more message of `bytes` (max-length, max-length-bytes)?
  bool full_for(int q, std::uint64_t bytes) const {
    return queues_[q].full_for(bytes, quorum(q) ? quorum_.held_from(q) : 0);
  }

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
  ClassicRules classic_;
  QuorumRules quorum_;
  sim::Rng slack_rng_;
  bool consumer_timeout_on_ = false;
  bool down_ = false;
  Time up_at_ = 0;
};

}  // namespace brokersim
