// A pending event: small and plain, with no callback, so scheduling never allocates.
//
// An event names *what* happens by a `kind` (the model's enum) and *to whom* by an index into the
// model's own pools. Order is (time, priority class, insertion sequence): the priority class
// lets a model say which of two simultaneous events happens first (a broker expiring its head
// before it delivers, say); the sequence makes every remaining tie follow insertion order, so a
// run is reproducible on any machine and standard library. Cancellation is lazy: the model keeps
// a generation number for each timer and puts it in `tag`; an event whose tag no longer matches
// is ignored when it is popped, so cancelling costs one increment.
#pragma once

#include <cstdint>

#include "sim/time.hpp"

namespace sim {

struct Event {
  static constexpr std::uint64_t kSeqBits = 56;
  static constexpr std::uint64_t kSeqMask = (std::uint64_t{1} << kSeqBits) - 1;

  Time time;
  std::uint64_t order;    // priority class in the top 8 bits, insertion sequence below
  std::uint32_t kind;     // the model's event kind
  std::uint32_t target;   // index into the model's pool for that kind
  std::uint32_t tag;      // generation for lazy cancellation (model-defined)
  std::uint32_t aux;      // one more small payload (model-defined)

  std::uint8_t priority() const { return static_cast<std::uint8_t>(order >> kSeqBits); }
  std::uint64_t sequence() const { return order & kSeqMask; }
};
static_assert(sizeof(Event) == 32, "events are kept small: four fit in a cache line");

// The strict total order every event set pops in.
inline bool before(const Event& a, const Event& b) {
  return a.time < b.time || (a.time == b.time && a.order < b.order);
}

// The order as function objects for the standard algorithms: given `before` itself, std::sort and
// the heap algorithms call it through a pointer, once per comparison (perf, the capacity baseline
// at 4,000 consumers: `sim::before` alone was 2.4% of the run, beside the sort that called it).
struct Before {
  bool operator()(const Event& a, const Event& b) const { return before(a, b); }
};
struct Later {  // the reverse order: std's heaps keep the greatest on top, this makes it the least
  bool operator()(const Event& a, const Event& b) const { return before(b, a); }
};

}  // namespace sim
