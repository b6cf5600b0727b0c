// A consumer's local clock: true time plus an offset drawn once per consumer, moved by
// clock-step faults. Deadlines travel as absolute times in the producer's clock, so what a
// consumer believes is left of a job's budget is only as good as the two clocks agree.
#pragma once

#include "sim/time.hpp"

namespace brokersim {

class LocalClock {
 public:
  explicit LocalClock(sim::Time offset = 0) : offset_(offset) {}
  sim::Time now(sim::Time true_now) const { return true_now + offset_; }
  void step(sim::Time delta) { offset_ += delta; }
  sim::Time offset() const { return offset_; }

 private:
  sim::Time offset_;
};

}  // namespace brokersim
