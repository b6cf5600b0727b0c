// Copies of one job: a ghost (a client's stale copy, World::take_back) and the broker's live
// copy. Each copy has its own `executions`, first start and reasons to run again; while a job
// has copies they are kept here instead, so a duplicate execution is seen, and blamed on its
// cause, whichever copy runs first.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "models/job.hpp"

namespace brokersim {

class JobCopies {
 public:
  void made(const Job& live);
  void gone(const Job& job);
  bool any() const { return !copies_.empty(); }
  // The job (any copy) starts executing: true when it executed before (a duplicate execution).
  bool started_again(Job& job) {
    ++job.executions;
    if (Copies* c = shared(job)) {
      if (c->first_started < 0) c->first_started = job.started;
      return ++c->executions > 1;
    }
    return job.executions > 1;
  }
  // A reason the job may start again (its execution was cut, or two copies may both run), and
  // the most recent one, taken by a duplicate execution.
  void may_run_again(Job& job, DuplicateCause why) {
    Copies* c = shared(job);
    (c ? c->again : job.again).push(why);
  }
  DuplicateCause take_reason(Job& job) {
    Copies* c = shared(job);
    return (c ? c->again : job.again).pop();
  }
  // Across the copies, for the trace.
  std::uint32_t executions(const Job& job) const {
    const Copies* c = shared(job);
    return c ? c->executions : job.executions;
  }
  Time first_started(const Job& job) const {
    const Copies* c = shared(job);
    return c ? c->first_started : job.first_started();
  }

 private:
  struct Copies {
    std::uint32_t executions = 0, alive = 0;
    Time first_started = -1;
    PendingCauses again;
  };
  Copies* shared(const Job& job) {
    if (copies_.empty()) return nullptr;
    const auto it = copies_.find(job.id);
    return it == copies_.end() ? nullptr : &it->second;
  }
  const Copies* shared(const Job& job) const { return const_cast<JobCopies*>(this)->shared(job); }
  std::unordered_map<std::uint64_t, Copies> copies_;  // by job id, only jobs with a ghost
};

}  // namespace brokersim
