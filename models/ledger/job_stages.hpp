// A job's sojourn, creation -> outcome, split into stages that add up to it exactly
// (docs/outcomes.md, the trace's stage_* columns): at every instant the message is in one place.
#pragma once

#include "models/job.hpp"

namespace brokersim {

struct JobStages {
  Time publish = 0;  // creation -> published (publish delay), or -> the refusal at publish
  Time queue = 0;    // at the broker: ready, delayed, scheduled, deferred, dead-letter hops
  Time held = 0;     // delivered in a delivery that did not decide its outcome, until the broker had it back
  Time transit = 0;  // the deciding delivery: delivery -> receipt
  Time local = 0;    // receipt -> start, or -> rejection by the admission check
  Time service = 0;  // start -> end of execution
  Time sum() const { return publish + queue + held + transit + local + service; }
};

// A consumer decided the outcome (its admission check or its execution), in the last delivery;
// the others are the broker's (expiry, dead-lettering, loss, refusal at publish).
constexpr bool decided_by_client(Outcome o) {
  return o == Outcome::ExpiredInTransit || o == Outcome::ExpiredBeforeStart || o == Outcome::CompletedOnTime ||
         o == Outcome::CompletedLate || o == Outcome::TimedOut || o == Outcome::Failed;
}

// The stages of a job whose outcome `o` is final (not in_system): they add up to ended - created.
JobStages stages_of(const Job& job, Outcome o);

}  // namespace brokersim
