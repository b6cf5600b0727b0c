// RabbitMQ classic queues (docs/semantics.md part 2, sections 1 and 4): head-only TTL expiry with
// the ensure_ttl_timer rounding, dead-lettering with cycle detection, max-length in its three
// overflow modes, requeue to the original position, round-robin dispatch with prefetch credit and
// consumer priorities, the delivery acknowledgement timeout on the channel tick, x-expires with
// declares, and broker restarts. Where each rule lives:
//   rabbitmq_classic.cpp              publish, dispatch, head expiry, dead-letter, settle, requeue
//   rabbitmq_classic_connections.cpp  consumers attaching and leaving, consumer timeout, x-expires
//                                     and declares, broker down and up
//   classic_queue.hpp / .cpp          the ready list and the head-expiry timer
//   dispatcher.hpp                    the round-robin ring of consumers with credit
#pragma once

#include <cstdint>
#include <vector>

#include "models/broker.hpp"
#include "models/brokers/classic_queue.hpp"
#include "models/brokers/client_record.hpp"
#include "models/ledger.hpp"
#include "sim/rng.hpp"

namespace brokersim {

// Also the base of RabbitMqQuorum (rabbitmq_quorum.hpp): quorum queues share the dispatch, the
// channels, dead-lettering and restarts, and differ through the virtual steps and the settings
// below (requeue position, expiry stamp, leases, prefetch cap).
class RabbitMqClassic : public Broker {
 public:
  explicit RabbitMqClassic(World& w, RequeueTo requeue_to = RequeueTo::OriginalPosition);

  void start() override;
  void publish(std::uint32_t j) override;
  bool open_connection(Consumer& c) override;
  void consume(Consumer& c) override;
  void cancel(Consumer& c) override;
  void close_connection(Consumer& c) override;
  void settle(std::uint32_t j, std::uint32_t gen) override;
  void on_event(const sim::Event& ev) override;
  void down(Time duration) override;

 protected:
  // Why a delivery came back to the queue: what counts toward a quorum queue's delivery limit
  // depends on it.
  enum class Return : std::uint8_t { Nack, Crash, Timeout };

  // rabbit_channel's channel_tick_interval: the consumer timeout is evaluated once per tick.
  static constexpr Time kChannelTick = Time{60'000} * sim::kNsPerMs;

  // What the broker keeps per consumer: its channel. Its held deliveries are the unacked ones:
  // the prefetch window counts deliveries not yet acked *at the broker*, so deliveries in transit
  // and acks in flight both use it up. basic.cancel: no credit until the next consume.
  struct Channel : ClientRecord {
    // `epoch` grows whenever the channel closes, voiding its pending ticks; the consumer-timeout
    // tick runs every 60 s from `opened_at` while deliveries are unacked.
    std::uint32_t epoch = 0;
    Time opened_at = 0;
    bool ticking = false;
    // Deliveries the queue took back while the client still holds them (a quorum queue's
    // consumer timeout in 4.3): their stale copies, ghosts. The consumer gets nothing new until
    // its client has settled them all (rabbit_fifo's `timeout` status, maybe_untimeout/2).
    std::vector<std::uint32_t> ghosts;
  };
  bool has_credit(const Channel& ch, const Consumer& c) const;
  void give_credit(Consumer& c);

  // rabbit_amqqueue_process
  void enqueue(std::uint32_t j, int q, bool dead_letter);
  void deliver(std::uint32_t j, int q);
  void dispatch(int q);
  void drop_expired(int q);
  void arm_timer(int q);
  void expire(std::uint32_t j, int q);
  virtual void dead_letter(std::uint32_t j, int q, DeathReason why);
  void requeue(std::uint32_t j, Return why);
  virtual void ready_changed(int q);
  // The absolute expiry stamped when job j enters queue q (publish or dead-letter).
  virtual Time queue_expiry(std::uint32_t j, int q);
  // The message lock of a delivery ends (Ev::Lease; scheduled only when message_lock_ is set).
  virtual void on_message_lock(std::uint32_t /*j*/, std::uint32_t /*gen*/) {}
  void settle_ghost(std::uint32_t j);
  // A delivery came back: true if the broker disposed of it instead of requeueing it.
  virtual bool returned_past_limit(std::uint32_t /*j*/, Return /*why*/) { return false; }
  void unacked_changed(int q, const Job& job, int delta);

  // channels, queue leases, restarts
  void close_connection(Consumer& c, Return why);
  void close_channel(Consumer& c, Return why);
  void on_channel_tick(Consumer& c, std::uint32_t epoch);
  void declare(int q, bool periodic);
  virtual void restart_lease(int q);
  virtual void on_lease_end(int q, std::uint32_t gen);
  void up();

  World& w_;
  std::vector<ClassicQueue> queues_;
  std::vector<Dispatcher> dispatchers_;
  std::vector<Channel> channels_;  // by consumer index
  sim::Rng slack_rng_;
  bool consumer_timeout_on_ = false;
  // A per-delivery lock: the queue itself takes a delivery back this long after it was sent
  // (quorum queues in 4.3); kNever = none.
  Time message_lock_ = sim::kNever;
  // Quorum-queue differences that are plain settings: the prefetch a consumer asking for
  // "unlimited" (0) gets (0 = truly unlimited), whether a declare renews the x-expires lease,
  // whether every message survives a restart (quorum queues are replicated and durable), and
  // deliver_or_enqueue's "ttl = 0, no DLX: discard at once" branch (classic only).
  std::uint32_t unlimited_prefetch_ = 0;
  bool declare_renews_lease_ = true;
  bool all_durable_ = false;
  bool ttl0_discard_ = true;
  // Dead-letter into the target at once rather than by an Ev::DeadLetter hop (quorum
  // at-least-once releases, which must see the target's length as it is).
  bool dead_letter_now_ = false;
  bool down_ = false;
  Time up_at_ = 0;
};

}  // namespace brokersim
