// The fast pending-event set: a binary min-heap of sim::Event (sim/event.hpp), popped in
// (time, priority class, insertion sequence) order, with three tricks on top. Each pops exactly
// what the plain heap beside it (sim/reference_event_set.hpp) pops; tests/test_event_sets.cpp
// runs both through one suite.
//
// Events scheduled for the instant being processed (zero latencies make these common: a delivery
// received "now", an ack arriving "now") skip the heap: they wait in a small unsorted lane and
// the pop takes whichever of the lane's minimum and the heap's top comes first by the full
// (time, order) key, so the order is exactly the heap-only order, only cheaper. The instant is
// the kernel's clock (sim/simulator.hpp), given with each push: the set keeps no clock of its own.
//
// A pop leaves the root vacant: the next push to the heap takes it (one sift-down instead of a
// sift-down of the last leaf and a sift-up of the new event), and the next look at the top fills
// it as a plain pop would. The pop order is unchanged: (time, order) is a strict total order.
//
// Storage aligned to a cache line, 1-based: two siblings share a line, so a sift-down reads one
// line per level, not two.
//
// Cost: push and pop are O(log n) on the heap, O(lane size <= 8) on the lane. Measured on the
// 2-core development machine (bench/, with one exponential draw per hold): about 78 ns per hold
// operation at 1e3 pending events, about 144 ns at 1e5 (std::multimap: 92 and 951 ns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "sim/event.hpp"
#include "sim/time.hpp"

namespace sim {

// Storage for the heap aligned to a cache line, so that two siblings (indices 2i and 2i + 1 of
// 32 bytes each) share one line: a sift-down reads one line per level, not two.
template <class T, std::size_t Align>
struct CacheAlignedAllocator {
  using value_type = T;
  CacheAlignedAllocator() = default;
  template <class U>
  CacheAlignedAllocator(const CacheAlignedAllocator<U, Align>&) {}
  template <class U>
  struct rebind {
    using other = CacheAlignedAllocator<U, Align>;
  };
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{Align})); }
  // Unsized: clang declares the sized aligned delete only with -fsized-deallocation.
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{Align}); }
  friend bool operator==(const CacheAlignedAllocator&, const CacheAlignedAllocator&) { return true; }
};

class EventQueue {
 public:
  EventQueue() : heap_(1) {}

  // `now`: the instant being processed (the kernel's clock); an event due then joins the lane.
  void push(const Event& e, Time now) {
    if (e.time == now && lane_size_ < kLane) {
      if (lane_size_ == 0 || before(e, lane_[lane_min_])) lane_min_ = lane_size_;
      lane_[lane_size_++] = e;
      return;
    }
    if (hole_) {
      // The hold pattern (pop the top, push its successor: an arrival scheduling the next one):
      // the new event takes the popped root's place and sinks, one walk instead of two.
      hole_ = false;
      sift_down_from_root(e);
      return;
    }
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }

  bool empty() const { return heap_.size() - 1 == hole_ && lane_size_ == 0; }
  std::size_t size() const { return heap_.size() - 1 - hole_ + lane_size_; }
  const Event& top() {
    if (from_lane()) return lane_[lane_min_];
    fill_hole();
    return heap_[kRoot];
  }

  Event pop() {
    Event e;
    if (from_lane()) {
      e = lane_[lane_min_];
      lane_[lane_min_] = lane_[--lane_size_];
      lane_min_ = 0;
      for (std::size_t i = 1; i < lane_size_; ++i)
        if (before(lane_[i], lane_[lane_min_])) lane_min_ = i;
    } else {
      fill_hole();
      // The root stays vacant until the next push (which takes it) or the next look at the
      // heap's top (which fills it with the last event, as a plain pop would have).
      e = heap_[kRoot];
      hole_ = true;
    }
    return e;
  }

  void clear() {
    heap_.resize(1);
    hole_ = false;
    lane_size_ = 0;
  }
  void reserve(std::size_t n) { heap_.reserve(n + 1); }

 private:
  // The heap is 1-based (heap_[0] is never used): node i's children are 2i and 2i + 1, which
  // with the aligned storage share a cache line. heap_.size() - 1 slots, the root's included.
  static constexpr std::size_t kRoot = 1;

  void fill_hole() {
    if (!hole_) return;
    hole_ = false;
    Event last = heap_.back();
    heap_.pop_back();
    if (heap_.size() > kRoot) sift_down(last);
  }

  // The textbook sift-down, which stops as soon as e is in place: for a new event, which
  // (unlike the last leaf) may well belong near the top.
  void sift_down_from_root(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = kRoot;
    for (;;) {
      std::size_t child = 2 * i;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > kRoot) {
      std::size_t parent = i / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Floyd's variant: walk the hole to a leaf, then sift the moved element up. Fewer comparisons
  // than the textbook loop, because the last element usually belongs near the bottom.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = kRoot;
    for (;;) {
      std::size_t child = 2 * i;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
    sift_up(i);
  }

  // Whether the lane holds the next event. With the root vacant, the heap's least event is the
  // lesser of the root's children: the lane can win without the root being refilled, so a chain
  // of same-instant events (an execution's end, its ack, the next delivery) popped between a
  // heap pop and the next heap push leaves the root vacant for that push (one walk, not two).
  bool from_lane() const {
    if (lane_size_ == 0) return false;
    const Event& l = lane_[lane_min_];
    const std::size_t n = heap_.size();
    if (!hole_) return n == kRoot || before(l, heap_[kRoot]);
    if (n == kRoot + 1) return true;
    const Event& c = n > 3 && before(heap_[3], heap_[2]) ? heap_[3] : heap_[2];
    return before(l, c);
  }

  static constexpr std::size_t kLane = 8;
  std::vector<Event, CacheAlignedAllocator<Event, 64>> heap_;
  bool hole_ = false;  // heap_[kRoot] is vacant: popped, not yet refilled (heap_ still counts it)
  Event lane_[kLane]{};
  std::size_t lane_size_ = 0;
  std::size_t lane_min_ = 0;
};

}  // namespace sim
