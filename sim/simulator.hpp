// The kernel: the one clock of a run, its pending events and the loop that runs them (SimPy's
// Environment, ns-3's Simulator). A model schedules events (what: a kind; to whom: a target;
// when: a time and a priority class) and handles them as the loop pops them; the kernel knows
// nothing of what they mean, and nothing of brokers.
//
// The loop stops when nothing is left, when the next event is past `until` (SimPy's
// run(until)), on the event limits, or when the model says so after an event. A model that
// runs a span and then goes on (a timed run following its jobs past its stop) calls run twice.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "sim/event_queue.hpp"
#include "sim/reference_event_set.hpp"
#include "sim/time.hpp"

namespace sim {

// The pending-event set. The plain binary heap (cmake -DBROKERSIM_REFERENCE_EVENT_SET=ON) pops
// the same events in the same order, more slowly: a run on it must give the same outputs and
// fingerprints (tests/test_fingerprints.cpp).
#ifdef BROKERSIM_REFERENCE_EVENT_SET
using PendingEvents = ReferenceEventSet;
#else
using PendingEvents = EventQueue;
#endif

// Why run() returned.
enum class Stop : std::uint8_t {
  Drained,       // no event left
  Until,         // the next event is past `until`; it stays pending
  MaxEvents,     // Limits::max_events events popped
  ZeroTimeLoop,  // more than Limits::max_at_one_instant events at one instant: time stopped moving
  Model,         // the model's stop() said so after an event
};

struct Limits {
  std::uint64_t max_events = ~std::uint64_t{0};          // over the whole run
  std::uint64_t max_at_one_instant = ~std::uint64_t{0};  // after an instant's first event
};

// FNV-1a over an event's time, kind and target, little-endian: what a run's stream fingerprint
// is made of (OMNeT++'s fingerprints), the same on every machine.
inline std::uint64_t fold_fingerprint(std::uint64_t h, const Event& e) {
  const auto mix = [&h](std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  };
  mix(static_cast<std::uint64_t>(e.time), 8);
  mix(e.kind, 4);
  mix(e.target, 4);
  return h;
}

class Simulator {
 public:
  // The time of the event being handled: the run's one clock. Models read it; the loop moves
  // it, and advance_to between loops.
  Time now = 0;
  PendingEvents events;

  void schedule(Time t, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
                std::uint32_t tag = 0, std::uint32_t aux = 0) {
    const std::uint64_t order = (std::uint64_t{priority} << Event::kSeqBits) | (scheduled_++ & Event::kSeqMask);
    events.push(Event{t, order, kind, target, tag, aux}, now);
  }
  std::uint64_t scheduled() const { return scheduled_; }
  std::uint64_t popped() const { return popped_; }

  // Ask before the first run for the stream's fingerprint; a run that does not ask pays nothing
  // per event (the loop is chosen once per call of run).
  void fingerprint_stream() { fingerprinting_ = true; }
  std::uint64_t stream_fingerprint() const { return fingerprint_; }

  // Between runs: the clock moves on to t with nothing happening (a run given a span covers
  // all of it, even when nothing happened towards its end).
  void advance_to(Time t) {
    assert(t >= now);
    now = t;
  }

  // Pops and hands to model.handle(event), in (time, priority class, insertion) order, every
  // event due at or before `until`. After each event the model's stop() may end the run; every
  // 2^22 events its progress() is called. Model: handle(const Event&), bool stop(), progress().
  template <class Model>
  Stop run(Model& model, Time until, const Limits& limits) {
    return fingerprinting_ ? loop<true>(model, until, limits) : loop<false>(model, until, limits);
  }

 private:
  static constexpr std::uint64_t kProgressMask = 0x3fffff;

  // Out of line, once per model and fingerprint setting: inlined at each call of run, the loop
  // (with the model's handler inlined in it) would be copied once per call.
  template <bool kFingerprint, class Model>
  [[gnu::noinline]] Stop loop(Model& model, Time until, const Limits& limits) {
    Time instant = -1;                       // the instant whose events are being counted
    std::uint64_t limit = limits.max_events;  // the lesser of the two limits, for this instant
    while (!events.empty()) {
      // Only a bounded run looks at the next event before taking it: an unbounded one takes it
      // at once (one look at the set instead of two).
      if (until != kNever && events.top().time > until) return Stop::Until;
      const Event ev = events.pop();
      now = ev.time;
      ++popped_;
      if constexpr (kFingerprint) fingerprint_ = fold_fingerprint(fingerprint_, ev);
      // One comparison per event for both limits: at each new instant, `limit` becomes
      // min(max_events, popped_ + max_at_one_instant), written so that the sum cannot wrap.
      if (ev.time != instant) {
        instant = ev.time;
        limit = limits.max_events - std::min(limits.max_events, popped_) <= limits.max_at_one_instant
                    ? limits.max_events
                    : popped_ + limits.max_at_one_instant;
      }
      if (popped_ > limit) [[unlikely]]
        return popped_ > limits.max_events ? Stop::MaxEvents : Stop::ZeroTimeLoop;
      model.handle(ev);
      if ((popped_ & kProgressMask) == 0) [[unlikely]] model.progress();
      if (model.stop()) [[unlikely]] return Stop::Model;
    }
    return Stop::Drained;
  }

  std::uint64_t scheduled_ = 0;  // events scheduled: the insertion sequence of the next one
  std::uint64_t popped_ = 0;
  bool fingerprinting_ = false;
  std::uint64_t fingerprint_ = 0xcbf29ce484222325ULL;  // FNV-1a's offset basis
};

}  // namespace sim
