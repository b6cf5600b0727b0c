// RabbitMQ classic queues (SEMANTICS.md part 2, sections 1 and 4): head-only TTL expiry with
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
#include "models/brokers/dispatcher.hpp"
#include "models/ledger.hpp"
#include "sim/rng.hpp"

namespace brokersim {

class RabbitMqClassic final : public Broker {
 public:
  explicit RabbitMqClassic(World& w);

  void start() override;
  void publish(std::uint32_t j) override;
  bool open_connection(Consumer& c) override;
  void consume(Consumer& c) override;
  void close_connection(Consumer& c) override;
  void settle(std::uint32_t j, std::uint32_t gen) override;
  void on_event(const sim::Event& ev) override;
  void down(Time duration) override;

 private:
  // rabbit_channel's channel_tick_interval: the consumer timeout is evaluated once per tick.
  static constexpr Time kChannelTick = Time{60'000} * sim::kNsPerMs;

  // What the broker keeps per consumer: its channel. The prefetch window counts deliveries not
  // yet acked *at the broker*, so deliveries in transit and acks in flight both use it up.
  struct Channel {
    bool open = false;
    bool in_ring = false;
    std::uint32_t unacked = 0;
    std::vector<std::uint32_t> unacked_jobs;
    // `epoch` grows whenever the channel closes, voiding its pending ticks; the consumer-timeout
    // tick runs every 60 s from `opened_at` while deliveries are unacked.
    std::uint32_t epoch = 0;
    Time opened_at = 0;
    bool ticking = false;
    bool reconnect_when_up = false;
  };
  bool has_credit(const Channel& ch, const Consumer& c) const;
  void track(Channel& ch, std::uint32_t j);
  void untrack(Channel& ch, std::uint32_t j);
  void give_credit(Consumer& c);

  // rabbit_amqqueue_process
  void enqueue(std::uint32_t j, int q, bool dead_letter);
  void deliver(std::uint32_t j, int q);
  void dispatch(int q);
  void drop_expired(int q);
  void arm_timer(int q);
  void expire(std::uint32_t j, int q);
  void dead_letter(std::uint32_t j, int q, DeathReason why);
  void requeue(std::uint32_t j);
  void ready_changed(int q);
  void unacked_changed(int q, const Job& job, int delta);

  // channels, queue leases, restarts
  void close_channel(Consumer& c);
  void on_channel_tick(Consumer& c, std::uint32_t epoch);
  void declare(int q, bool periodic);
  void restart_lease(int q);
  void on_lease_end(int q, std::uint32_t gen);
  void up();

  World& w_;
  std::vector<ClassicQueue> queues_;
  std::vector<Dispatcher> dispatchers_;
  std::vector<Channel> channels_;  // by consumer index
  sim::Rng slack_rng_;
  bool consumer_timeout_on_ = false;
  bool down_ = false;
  Time up_at_ = 0;
};

}  // namespace brokersim
