// Copies of one job: a ghost (a client's stale copy, World::take_back) and the broker's live
// copy. Each copy has its own `executions`; a job's executions are counted here while it has
// copies, so a duplicate execution is seen whichever copy runs first.
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
    if (!copies_.empty()) {
      const auto it = copies_.find(job.id);
      if (it != copies_.end()) return ++it->second.executions > 1;
    }
    return job.executions > 1;
  }

 private:
  struct Copies { std::uint32_t executions = 0, alive = 0; };
  std::unordered_map<std::uint64_t, Copies> copies_;  // by job id, only jobs with a ghost
};

}  // namespace brokersim
