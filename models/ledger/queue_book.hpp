// One queue's book: what the ledger counts of it, and the state the time series and the
// autoscaler read. Counters (published, delivered, expired, dead-lettered) count the jobs created in the
// measured span; levels (ready, unacked, bytes) are the state itself, every message, averaged over
// the measured span: a level that counted only the span's own jobs would start at 0 at the
// warm-up's end and come out low (measured: M/M/4+D mean_unacked 1% low over 330 s runs).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/results.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct QueueBook {
  std::uint64_t published = 0, delivered = 0;
  std::uint64_t expired = 0;  // messages whose TTL ended here (dead-lettered or dropped)
  std::array<std::uint64_t, kDeathReasonCount> dead_lettered{};  // by DeathReason
  std::uint64_t deletions = 0;
  std::uint64_t ready = 0, unacked = 0;  // every message: the state
  std::uint64_t publishes = 0;           // every message (an autoscaler's publish rate)
  std::uint64_t ready_bytes = 0, unacked_bytes = 0;
  std::uint64_t max_ready = 0, max_bytes = 0;
  sim::TimeWeighted ready_tw, unacked_tw, bytes_tw;
  bool read = false;  // some consumer group reads it: a job resting here is still in the system

  // track_bytes: some producer sends non-empty bodies (otherwise the byte levels stay 0).
  void ready_changed(Time now, std::uint64_t ready_now, std::uint64_t bytes_now, bool track_bytes) {
    ready = ready_now;
    ready_bytes = bytes_now;
    ready_tw.set(now, static_cast<double>(ready));
    max_ready = std::max(max_ready, ready);
    if (track_bytes) bytes_changed(now);
  }
  void unacked_changed(Time now, const Job& job, int delta, bool track_bytes) {
    unacked += static_cast<std::uint64_t>(delta);
    unacked_bytes += static_cast<std::uint64_t>(delta) * job.bytes;
    unacked_tw.set(now, static_cast<double>(unacked));
    if (track_bytes) bytes_changed(now);
  }
  void warmup(Time now) {
    ready_tw.reset(now);
    unacked_tw.reset(now);
    bytes_tw.reset(now);
    max_ready = ready;
    max_bytes = ready_bytes + unacked_bytes;
  }
  QueueResult result(const std::string& name, Time now) const {
    QueueResult qr;
    qr.name = name;
    qr.published = published;
    qr.delivered = delivered;
    qr.expired = expired;
    qr.dead_lettered = dead_lettered;
    qr.max_ready = max_ready;
    qr.mean_ready = ready_tw.mean(now);
    qr.mean_unacked = unacked_tw.mean(now);
    qr.ready_at_end = ready;  // every message: the state the run ends in
    qr.max_bytes = max_bytes;
    qr.mean_bytes = bytes_tw.mean(now);
    qr.byte_seconds = bytes_tw.area(now) / sim::kNsPerSF;
    qr.deletions = deletions;
    return qr;
  }

 private:
  void bytes_changed(Time now) {
    const std::uint64_t held = ready_bytes + unacked_bytes;
    bytes_tw.set(now, static_cast<double>(held));
    max_bytes = std::max(max_bytes, held);
  }
};

}  // namespace brokersim
