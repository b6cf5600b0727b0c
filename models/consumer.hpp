// A consumer: a prefetch window at the broker, a local FIFO buffer of received jobs, `slots`
// execution slots, a local clock, and the admission rule that decides, after all local waiting,
// whether a job is still worth starting.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "models/clock.hpp"
#include "models/job.hpp"
#include "models/scenario.hpp"
#include "sim/rng.hpp"
#include "sim/stats.hpp"

namespace brokersim {

// SCENARIO.md's admission rule: remaining = expires_at - local_clock - uncertainty; reject when
// remaining <= 0 or remaining < min_window. A job without a deadline is always admitted.
inline bool admits(const ConsumerSpec& spec, Time expires_at, Time local_now) {
  if (expires_at == sim::kNever) return true;
  const Time remaining = expires_at - local_now - spec.uncertainty;
  return remaining > 0 && remaining >= spec.min_window;
}

class Consumer {
 public:
  Consumer(const ConsumerSpec& spec, int index, int group, int member, std::uint64_t seed,
           std::uint64_t replication);

  const ConsumerSpec& spec() const { return *spec_; }
  int index() const { return index_; }
  int queue() const { return spec_->queue; }
  int slots() const { return spec_->slots; }
  int idle_slots() const { return attached ? spec_->slots - busy : 0; }

  // Broker-side credit: the prefetch window counts deliveries not yet acked *at the broker*, so
  // deliveries in transit and acks in flight both use it up.
  bool has_credit() const {
    return attached && (spec_->prefetch == 0 || unacked < static_cast<std::uint32_t>(spec_->prefetch));
  }

  void track(JobPool& jobs, std::uint32_t job_index);    // delivered: now unacked
  void untrack(JobPool& jobs, std::uint32_t job_index);  // acked at the broker (or requeued)
  const std::vector<std::uint32_t>& unacked_jobs() const { return unacked_jobs_; }

  LocalClock clock;
  bool attached = false;
  bool in_ring = false;
  std::uint32_t unacked = 0;
  std::deque<std::uint32_t> local;  // received, not started, in arrival order
  int busy = 0;
  Time stalled_until = 0;
  // Channel state: `epoch` grows whenever the channel closes, voiding its pending ticks; the
  // consumer-timeout tick runs every 60 s from `attached_at` while deliveries are unacked.
  std::uint32_t epoch = 0;
  Time attached_at = 0;
  bool ticking = false;
  bool reconnect_when_broker_up = false;

  sim::Rng delivery_rng, ack_rng, failure_rng, timeout_rng;
  sim::TimeWeighted busy_tw, local_tw;

 private:
  const ConsumerSpec* spec_;
  int index_;
  std::vector<std::uint32_t> unacked_jobs_;
};

}  // namespace brokersim
