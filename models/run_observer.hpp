// What the output layer (experiments/cli/outputs/: the --trace and --timeseries CSV writers) hears of a
// run. The model calls only the observers it was given: a run without a trace or a time series
// makes no call at all, one with them a virtual call per row written.
#pragma once

#include <cstdint>

#include "models/job.hpp"
#include "models/ledger/job_stages.hpp"

namespace brokersim {

struct World;

// What the ledger knows of a job beyond its copy: across all its copies (World::take_back), how
// often it started and when first; and its stages (all 0 for in_system).
struct JobAccount {
  std::uint32_t executions = 0;
  Time first_started = -1;
  JobStages stages;
};

// Every job's final outcome, as it becomes final (not in job order), warm-up jobs included.
class JobObserver {
 public:
  virtual ~JobObserver() = default;
  virtual void job_ended(const Job& job, Outcome o, const JobAccount& account) = 0;
  virtual void run_ended() {}
};

// The state at 0 and every observe.every_ms (after everything that happened at that instant),
// with the outcomes that became final since the previous sample.
class StateObserver {
 public:
  virtual ~StateObserver() = default;
  virtual void started(const World& w) = 0;
  virtual void observed(const World& w, const OutcomeCounts& decided) = 0;
};

}  // namespace brokersim
