// Slot time, and the slot time lost: slots of attached consumers that were idle while (a) the
// queue they read held ready messages (idle_slots_with_backlog) or (b) another consumer of that
// queue held received, unstarted jobs (idle_slots_with_stranded_work). Stranding needs only who
// holds local jobs: with two or more holders every idle slot has work elsewhere; with one, all
// but its own, which it asks of the holder (set_idle_of): a copy kept here per consumer was
// written at every start and execution's end, a cache line of its own in a large fleet
// (docs/performance.md). The owner has changed its count before each call below that
// changes it (at one instant the two may differ between calls: a value that lasts no time adds
// nothing).
//
// Slots are kept in books: one per queue, for the groups reading that queue alone, and one per
// group reading several queues (a union book, ConsumerSpec::slot_book), whose slots idle "with
// backlog" while any of its queues holds ready messages, so that each idle slot counts once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/job.hpp"
#include "models/results.hpp"
#include "sim/stats.hpp"

namespace brokersim {

class SlotIdleness {
 public:
  explicit SlotIdleness(std::size_t queues) : queues_(queues), unions_of_(queues) {}

  // How many idle slots consumer c has now (0 while detached), asked of their owner.
  using IdleOf = int (*)(const void* owner, int consumer);
  void set_idle_of(IdleOf idle_of, const void* owner) {
    idle_of_ = idle_of;
    owner_ = owner;
  }

  // Book `book` (the next one past those made so far) keeps the slots of a group reading `reads`.
  void add_union(int book, const std::vector<int>& reads) {
    if (static_cast<std::size_t>(book) >= queues_.size()) queues_.resize(static_cast<std::size_t>(book) + 1);
    for (int q : reads) unions_of_[static_cast<std::size_t>(q)].push_back(book);
    any_union_ = true;
  }

  void slots_attached(int q, Time now, int delta);
  void busy_changed(int q, Time now, int delta);
  void local_changed(int q, int consumer, Time now, std::size_t before, std::size_t after);
  // Whether queue q holds ready messages (every message, counted or not).
  void ready_changed(int q, Time now, bool ready) {
    Queue& b = queues_[static_cast<std::size_t>(q)];
    if (any_union_ && b.ready != ready) [[unlikely]] {
      for (int u : unions_of_[static_cast<std::size_t>(q)]) {
        Queue& ub = queues_[static_cast<std::size_t>(u)];
        ub.ready_queues += ready ? 1 : -1;
        ub.ready = ub.ready_queues > 0;
        refresh_backlog(ub, now);
      }
    }
    b.ready = ready;
    refresh_backlog(b, now);
  }

  void warmup(Time now);
  // slot_utilization, idle_slots_with_backlog, idle_slots_with_stranded_work.
  void finish(Time now, RunResult& r);

 private:
  struct Queue {
    bool ready = false;
    int ready_queues = 0;         // a union book: how many of its queues hold ready messages
    int idle_slots = 0;
    int holders = 0;              // consumers with a non-empty local buffer
    std::int64_t holder_sum = 0;  // the sum of their indices: the holder itself when holders == 1
    double backlog_value = 0, stranded_value = 0;
    Time backlog_last = 0, stranded_last = 0;
    double backlog_area = 0, stranded_area = 0;
  };
  void refresh_backlog(Queue& b, Time now) {
    b.backlog_area += b.backlog_value * static_cast<double>(now - b.backlog_last);
    b.backlog_last = now;
    b.backlog_value = b.ready ? b.idle_slots : 0.0;
  }
  void refresh_stranded(Queue& b, Time now) {
    b.stranded_area += b.stranded_value * static_cast<double>(now - b.stranded_last);
    b.stranded_last = now;
    b.stranded_value = b.holders == 0 ? 0.0
                       : b.holders >= 2 ? b.idle_slots
                                        : b.idle_slots - idle_of_(owner_, static_cast<int>(b.holder_sum));
  }

  std::vector<Queue> queues_;
  IdleOf idle_of_ = [](const void*, int) { return 0; };
  const void* owner_ = nullptr;
  std::vector<std::vector<int>> unions_of_;  // by queue: the union books that include it
  bool any_union_ = false;
  sim::TimeWeighted busy_slots_, attached_slots_;
};

// Inline: called for every job from the clients' translation units.
inline void SlotIdleness::slots_attached(int q, Time now, int delta) {
  Queue& b = queues_[static_cast<std::size_t>(q)];
  attached_slots_.add(now, delta);
  b.idle_slots += delta;
  refresh_backlog(b, now);
  refresh_stranded(b, now);
}

inline void SlotIdleness::busy_changed(int q, Time now, int delta) {
  Queue& b = queues_[static_cast<std::size_t>(q)];
  busy_slots_.add(now, delta);
  b.idle_slots -= delta;
  refresh_backlog(b, now);
  if (b.holders != 0) refresh_stranded(b, now);  // with no holder it stays 0
}

inline void SlotIdleness::local_changed(int q, int consumer, Time now, std::size_t before, std::size_t after) {
  if ((before == 0) == (after == 0)) return;
  Queue& b = queues_[static_cast<std::size_t>(q)];
  const int sign = after > 0 ? 1 : -1;
  b.holders += sign;
  b.holder_sum += sign * consumer;
  refresh_stranded(b, now);
}

}  // namespace brokersim
