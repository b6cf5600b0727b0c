// A job's final outcome in a tally (the whole run's or its window's): the outcome count, the
// sojourn and the completions. Counted jobs only.
#pragma once

#include <cstddef>

#include "models/job.hpp"
#include "models/metrics.hpp"
#include "models/results.hpp"

namespace brokersim {

template <class Histogram>
void tally_outcome(Tally<Histogram>& t, const Job& job, Outcome o) {
  ++t.outcomes[static_cast<std::size_t>(o)];
  if (o == Outcome::InSystem) return;
  t.wait(Wait::Sojourn).add(job.ended - job.created);
  if (o == Outcome::CompletedOnTime || o == Outcome::CompletedLate) ++t.completed;
  if (o == Outcome::CompletedOnTime) {
    ++t.completed_on_time;
    t.completed_without_deadline += job.deadline == sim::kNever;
  }
}

}  // namespace brokersim
