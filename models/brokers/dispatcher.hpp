// Which consumer gets the next message: RabbitMQ's rabbit_queue_consumers:deliver/6.
//
// Consumers that have credit (unacked < prefetch, or prefetch 0) wait in a ring per priority
// level. The broker takes the first consumer of the highest level, delivers ONE message, and puts
// it back at the tail of its level if it still has credit; a consumer at its prefetch limit is
// out of the ring until an ack returns credit, and then rejoins at the tail. So equal consumers
// alternate in registration order, and the broker never waits for a blocked high-priority one.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/fifo.hpp"

namespace brokersim {

class Dispatcher {
 public:
  bool empty() const { return active_ == 0; }

  void add(int consumer, int priority) {
    // Most queues have one level: its ring is the first (inline; the search is the rare case).
    Level& level = !levels_.empty() && levels_.front().priority == priority ? levels_.front() : level_of(priority);
    level.ring.push_back(consumer);
    ++active_;
  }

  // The consumer to deliver to next; it leaves the ring (the caller re-adds it if it still has
  // credit, which puts it at the tail).
  int take() {
    for (auto& level : levels_) {
      if (!level.ring.empty()) {
        const int c = level.ring.front();
        level.ring.pop_front();
        --active_;
        return c;
      }
    }
    return -1;
  }

  // A consumer detached (crash): O(ring size), which is fine for a rare event.
  void erase(int consumer) {
    for (auto& level : levels_) {
      for (std::size_t i = 0; i < level.ring.size(); ++i) {
        if (level.ring[i] == consumer) {
          level.ring.erase(i);
          --active_;
          return;
        }
      }
    }
  }

 private:
  struct Level {
    int priority;
    sim::Fifo<int> ring;
  };

  // The level of this priority, made if new: levels stay sorted, highest priority first.
  [[gnu::noinline]] Level& level_of(int priority) {
    auto it = levels_.begin();
    while (it != levels_.end() && it->priority > priority) ++it;
    if (it == levels_.end() || it->priority != priority) it = levels_.insert(it, Level{priority, {}});
    return *it;
  }
  std::vector<Level> levels_;
  std::size_t active_ = 0;
};

}  // namespace brokersim
