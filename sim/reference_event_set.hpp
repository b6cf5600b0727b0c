// The plain event set: a binary heap on std::push_heap / std::pop_heap, ordered by the events'
// own (time, priority class, insertion sequence) key. It is here to be obviously correct, not
// fast: sim/event_queue.hpp must pop exactly what this pops (tests/test_event_sets.cpp runs
// both through one suite), and a build with -DBROKERSIM_REFERENCE_EVENT_SET=ON runs the
// simulator on it (sim/simulator.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "sim/event.hpp"
#include "sim/time.hpp"

namespace sim {

class ReferenceEventSet {
 public:
  // `now` is the set interface's hint for the instant being processed; a heap needs none.
  void push(const Event& e, Time /*now*/) {
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  void clear() { heap_.clear(); }
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  std::vector<Event> heap_;  // a std heap by Later: its "greatest" is the least event
};

}  // namespace sim
