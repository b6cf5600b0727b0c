// RabbitMQ quorum queues (docs/semantics.md part 2, section 2): what differs from a classic queue.
// Dispatch, channels, dead-lettering and restarts are the classic broker's (RabbitMqClassic);
// here are the returns queue or tail requeue, the delivery limit and what counts toward it by
// version, TTL 0 living 1 ms, x-expires on the 5 s Ra tick and not renewed by declares, the
// 2000 cap on "unlimited" prefetch, the consumer timeout in every version (4.3: per delivery, by
// the queue), and at-least-once
// dead-lettering.
#pragma once

#include <cstdint>
#include <vector>

#include "models/brokers/rabbitmq_classic.hpp"

namespace brokersim {

class RabbitMqQuorum final : public RabbitMqClassic {
 public:
  explicit RabbitMqQuorum(World& w);

  // The delivery limit in force for a queue: -1 = none (the spec's key, else the version's default).
  static std::int64_t delivery_limit(const QueueSpec& spec, const std::string& version);

 private:
  // rabbit_quorum_queue's ?TICK_INTERVAL: x-expires is checked on this tick.
  static constexpr Time kRaTick = Time{5'000} * sim::kNsPerMs;
  // rabbit_fifo_client's ?UNLIMITED_PREFETCH_COUNT.
  static constexpr std::uint32_t kUnlimitedPrefetch = 2000;

  Time queue_expiry(std::uint32_t j, int q) override;
  bool returned_past_limit(std::uint32_t j, Return why) override;
  void on_message_lock(std::uint32_t j, std::uint32_t gen) override;
  void restart_lease(int q) override;
  void on_lease_end(int q, std::uint32_t gen) override;
  void dead_letter(std::uint32_t j, int q, DeathReason why) override;
  void ready_changed(int q) override;
  bool holds_dead_letters(int q) const;
  void release_held(int target);

  std::vector<std::int64_t> limits_;   // by queue, -1 = none
  std::vector<std::uint32_t> returns_; // by job index: returns that counted toward the limit
  // At-least-once dead-letters their target refused: (job, source queue, reason), oldest first.
  struct Held {
    std::uint32_t job;
    int source;
    DeathReason why;
  };
  std::vector<Held> held_;
  bool releasing_ = false;
};

}  // namespace brokersim
