// The books of a run, kept the same way whichever broker runs: outcomes, waits, per-queue
// counters and levels, slot time, the job trace, and the invariant check at the end.
//
// Brokers and clients report what happened (a job was published, delivered, dead-lettered; the
// ready count or the busy slots changed); the ledger decides what counts (jobs created after the
// warm-up; time averages from the warm-up on) so that every broker follows one rule.
#pragma once

#include <cstdint>
#include <algorithm>
#include <array>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"
#include "sim/stats.hpp"

namespace brokersim {

class Consumer;


// Per queue. One rule for every number: it counts jobs created after the warm-up. Counters count
// their events; levels (ready, unacked, bytes) count their messages, averaged over the time after
// the warm-up. The state itself (`ready`, `unacked`, what --timeseries shows) counts every message.
struct QueueBook {
  std::uint64_t published = 0, delivered = 0;
  std::array<std::uint64_t, kDeathReasonCount> dead_lettered{};  // by DeathReason
  std::uint64_t deletions = 0;
  std::uint64_t ready = 0, unacked = 0;  // every message: the state
  std::uint64_t publishes = 0;           // every message (an autoscaler's publish rate)
  std::uint64_t counted_ready = 0, counted_ready_bytes = 0, counted_unacked = 0, counted_unacked_bytes = 0;
  std::uint64_t max_ready = 0, max_bytes = 0;
  sim::TimeWeighted ready_tw, unacked_tw, bytes_tw;
  bool read = false;  // some consumer group reads it: a job resting here is still in the system
  // Slot time of attached consumers reading this queue that was idle while (a) the queue held
  // ready messages (idle_slots_with_backlog) or (b) another consumer of it held received,
  // unstarted jobs (idle_slots_with_stranded_work). Stranding needs only who holds local jobs:
  // with two or more holders every idle slot has work elsewhere; with one, all but its own.
  int idle_slots = 0;
  int holders = 0;              // consumers with a non-empty local buffer
  std::int64_t holder_sum = 0;  // the sum of their indices: the holder itself when holders == 1
  double backlog_value = 0, stranded_value = 0;
  Time backlog_last = 0, stranded_last = 0;
  double backlog_area = 0, stranded_area = 0;
};

class Ledger {
 public:
  Ledger(const Scenario& s, const RunOptions& o);

  QueueBook& queue(int q) { return queues_[static_cast<std::size_t>(q)]; }
  const QueueBook& queue(int q) const { return queues_[static_cast<std::size_t>(q)]; }

  // --- what brokers report
  void published(const Job& job, int q) {
    ++queues_[q].publishes;
    if (job.counted) ++queues_[q].published;
  }
  void expired_in_queue(const Job& job, Time now) { wait(Wait::QueueExpired, job, now - job.ready_since); }
  void delivered(const Job& job, int q, Time now) {
    if (!job.counted) return;
    ++queues_[q].delivered;
    add_wait(Wait::Queue, job, now - job.ready_since);
  }
  // A wait (a row of kWaits) of a job, for the run and the job's window: counted jobs only.
  void wait(Wait w, const Job& job, Time d) {
    if (job.counted) add_wait(w, job, d);
  }
  // The window (observe.window_ms) a job was created in, for its waits and outcome; nullptr
  // without windows or for a warm-up job. Windows start at the warm-up's end.
  WindowResult* window_of(const Job& job) {
    if (window_ == 0 || !job.counted) [[likely]] return nullptr;
    return window_at(job.created);
  }
  void dead_lettered(const Job& job, int q, DeathReason why);
  void ready_changed(int q, Time now, std::uint64_t ready, std::uint64_t counted_ready, std::uint64_t counted_bytes);
  void unacked_changed(int q, Time now, const Job& job, int delta);
  void queue_deleted(int q) { ++queues_[q].deletions; }

  // --- what consumers report
  void slots_attached(int q, int consumer, Time now, int delta);
  void busy_changed(int q, int consumer, Time now, int delta);
  void local_changed(int q, int consumer, Time now, std::size_t before, std::size_t after);
  // A replica of a group comes into being (requested) or is gone (left, connection closed).
  void replicas_changed(int group, Time now, int delta);
  int replicas(int group) const { return replicas_[static_cast<std::size_t>(group)]; }
  // Outcomes final since the last call (every job, warm-up included: --timeseries shows the
  // state, not the measurement), by Outcome; the count restarts.
  OutcomeCounts take_interval_outcomes() {
    OutcomeCounts out = interval_;
    interval_ = {};
    return out;
  }

  // --- outcomes
  void job_created(const Job& job);
  void count_outcome(const Job& job, Outcome o);
  // A decided job resting in a queue no consumer reads is settled: nothing more will happen to
  // it unless the queue's own TTL moves it on.
  void update_resting(Job& job);
  bool settled() const { return unsettled_ == 0; }
  void job_left(const Job& job) {
    if (!job.settled_resting) --unsettled_;
    if (!copies_.empty()) copy_gone(job);
  }

  // --- copies of one job: a ghost (a client's stale copy, World::take_back) and the broker's
  // live copy. Each copy has its own `executions`; a job's executions are counted here while it
  // has copies, so a duplicate execution is seen whichever copy runs first.
  void copy_made(const Job& live);
  void copy_gone(const Job& job);
  // The job (any copy) starts executing: true when it executed before (a duplicate execution).
  bool started_again(Job& job) {
    ++job.executions;
    if (!copies_.empty()) {
      const auto it = copies_.find(job.id);
      if (it != copies_.end()) return ++it->second.executions > 1;
    }
    return job.executions > 1;
  }

  void warmup(Time now);
  // End of run: the jobs still alive get their outcome, results are filled in, and the outcomes
  // must add up to the jobs generated (InvariantError otherwise).
  void finish(Time now, JobPool& jobs, const std::vector<Consumer>& consumers, RunResult& out);

  RunResult r;                         // filled as the run goes; waits are added directly
  std::uint64_t created_total = 0;     // including warm-up

 private:
  void add_wait(Wait w, const Job& job, Time d) {
    r.wait(w).add(d);
    if (WindowResult* win = window_of(job)) win->wait(w).add(d);
  }
  void refresh_backlog(int q, Time now);
  void refresh_stranded(int q, Time now);
  void bytes_changed(int q, Time now);
  void write_trace(const Job& job, Outcome o);
  void record_sample(const Job& job, Outcome o);
  void finish_windows(Time now);
  // Out of line: a run without windows pays one test per call, not the code.
  WindowResult* window_at(Time created);
  void window_outcome(const Job& job, Outcome o);

  const Scenario& s_;
  const RunOptions& opt_;
  bool track_bytes_ = false;  // some producer sends non-empty bodies
  bool tracing_ = false;      // --trace given
  std::vector<QueueBook> queues_;
  std::vector<int> idle_;  // idle slots per consumer (0 while detached)
  std::uint64_t unsettled_ = 0;  // alive and not resting decided in an unread queue
  sim::TimeWeighted busy_slots_, attached_slots_;
  // Trace rows come out in job order; rows wait here until every earlier job has ended.
  std::uint64_t trace_next_ = 0;
  std::deque<std::optional<std::string>> trace_pending_;
  struct Copies { std::uint32_t executions = 0, alive = 0; };
  std::unordered_map<std::uint64_t, Copies> copies_;  // by job id, only jobs with a ghost
  Time window_ = 0;                   // observe.window_ms, 0 = none
  bool series_ = false;               // --timeseries given: count outcomes per interval
  OutcomeCounts interval_{};
  std::vector<int> replicas_, peak_replicas_;
  std::vector<sim::TimeWeighted> replica_tw_;
};

// The calls made for every job, inline: the broker and the clients are in other translation
// units, and these were inlined when they all were one class (measured: 6% of the instructions).
inline void Ledger::ready_changed(int q, Time now, std::uint64_t ready, std::uint64_t counted_ready,
                                  std::uint64_t counted_bytes) {
  QueueBook& b = queues_[q];
  b.ready = ready;
  b.counted_ready = counted_ready;
  b.counted_ready_bytes = counted_bytes;
  b.ready_tw.set(now, static_cast<double>(counted_ready));
  b.max_ready = std::max(b.max_ready, counted_ready);
  if (track_bytes_) bytes_changed(q, now);
  refresh_backlog(q, now);
}

inline void Ledger::unacked_changed(int q, Time now, const Job& job, int delta) {
  QueueBook& b = queues_[q];
  b.unacked += static_cast<std::uint64_t>(delta);
  if (!job.counted) return;
  b.counted_unacked += static_cast<std::uint64_t>(delta);
  b.counted_unacked_bytes += static_cast<std::uint64_t>(delta) * job.bytes;
  b.unacked_tw.set(now, static_cast<double>(b.counted_unacked));
  if (track_bytes_) bytes_changed(q, now);
}

inline void Ledger::bytes_changed(int q, Time now) {
  QueueBook& b = queues_[q];
  const std::uint64_t held = b.counted_ready_bytes + b.counted_unacked_bytes;
  b.bytes_tw.set(now, static_cast<double>(held));
  b.max_bytes = std::max(b.max_bytes, held);
}

inline void Ledger::slots_attached(int q, int consumer, Time now, int delta) {
  attached_slots_.add(now, delta);
  queues_[q].idle_slots += delta;
  idle_[static_cast<std::size_t>(consumer)] += delta;
  refresh_backlog(q, now);
  refresh_stranded(q, now);
}

inline void Ledger::busy_changed(int q, int consumer, Time now, int delta) {
  busy_slots_.add(now, delta);
  queues_[q].idle_slots -= delta;
  idle_[static_cast<std::size_t>(consumer)] -= delta;
  refresh_backlog(q, now);
  if (queues_[q].holders != 0) refresh_stranded(q, now);  // with no holder it stays 0
}

inline void Ledger::local_changed(int q, int consumer, Time now, std::size_t before, std::size_t after) {
  if ((before == 0) == (after == 0)) return;
  QueueBook& b = queues_[q];
  const int sign = after > 0 ? 1 : -1;
  b.holders += sign;
  b.holder_sum += sign * consumer;
  refresh_stranded(q, now);
}

inline void Ledger::refresh_backlog(int q, Time now) {
  QueueBook& b = queues_[q];
  b.backlog_area += b.backlog_value * static_cast<double>(now - b.backlog_last);
  b.backlog_last = now;
  b.backlog_value = b.ready == 0 ? 0.0 : b.idle_slots;
}

inline void Ledger::refresh_stranded(int q, Time now) {
  QueueBook& b = queues_[q];
  b.stranded_area += b.stranded_value * static_cast<double>(now - b.stranded_last);
  b.stranded_last = now;
  b.stranded_value = b.holders == 0 ? 0.0
                     : b.holders >= 2 ? b.idle_slots
                                      : b.idle_slots - idle_[static_cast<std::size_t>(b.holder_sum)];
}

inline void Ledger::update_resting(Job& job) {
  const bool resting = ((job.where == Where::Ready || job.where == Where::DeadLettering) &&
                        !queues_[job.queue].read && job.decision != Outcome::None) ||
                       job.where == Where::Deferred;
  if (resting != job.settled_resting) {
    job.settled_resting = resting;
    if (resting) --unsettled_; else ++unsettled_;
  }
}

inline void Ledger::count_outcome(const Job& job, Outcome o) {
  if (tracing_) write_trace(job, o);
  if (series_) ++interval_[static_cast<std::size_t>(o)];
  if (!job.counted) return;
  ++r.outcomes[static_cast<std::size_t>(o)];
  if (window_ != 0) [[unlikely]] window_outcome(job, o);
  if (o == Outcome::InSystem) return;
  if (opt_.job_series) record_sample(job, o);
  if (o == Outcome::ExpiredBeforeStart) ++(job.stale_on_receipt ? r.stale_on_receipt : r.stale_in_local_buffer);
  r.wait(Wait::Sojourn).add(job.ended - job.created);
  if (o == Outcome::CompletedOnTime || o == Outcome::CompletedLate) ++r.completed;
  if (o == Outcome::CompletedOnTime) ++r.completed_on_time;
}

inline void Ledger::replicas_changed(int group, Time now, int delta) {
  const auto g = static_cast<std::size_t>(group);
  replicas_[g] += delta;
  replica_tw_[g].set(now, replicas_[g]);
  peak_replicas_[g] = std::max(peak_replicas_[g], replicas_[g]);
}

}  // namespace brokersim
