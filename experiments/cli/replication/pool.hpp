// The task pool: (scenario, replication) runs on worker threads, each reduced to its metric row,
// and the count of runs whose numbers describe nothing or only part of the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "experiments/cli/replication/sectioning.hpp"
#include "models/scenario.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct RunTask {
  const Scenario* scenario;
  std::uint64_t replication;  // Scenario::replication for this run (the seed is kept)
  // Which set of TaskRunStats::pooled_waits this run's wait histograms merge into (a sweep's or a
  // plan's point; run --precision has one set).
  std::size_t pool = 0;
};

using TaskDone = std::function<void(std::size_t, const std::vector<std::vector<double>>&)>;

struct TaskRunStats {
  std::size_t limited = 0;           // runs stopped early at a limit (max_in_system, max_events, zero-time loop)
  std::size_t measured_nothing = 0;  // runs that ended before warmup_ms or created no job after it
  // Per task of the last run_tasks call: incomplete_run() of its run ("" when it measured
  // normally); set before on_done(i, ...) is called for task i.
  std::vector<std::string> incomplete;
  // When set: every run's wait histograms added to set RunTask::pool (grown to hold it), merged
  // and each kept compact by its replication, for the steady-state quantiles of the pooled jobs
  // and their intervals (sectioning.hpp). Bucket counts add exactly and runs are kept by
  // replication, so a set is the same in any order: the same for any thread count. A caller may
  // clear a set it has read (its memory).
  std::vector<PooledWaits>* pooled_waits = nullptr;
};

// The stderr warning for runs counted in `stats`, and the exit status: 3 when a run stopped at a
// limit or measured nothing, else 0.
int warn_incomplete_runs(std::ostream& err, const TaskRunStats& stats);

// Run `tasks` on `threads` threads (a shared counter over the task list, so tasks start in list
// order) and return one metric row per task, in task order, each matching `names`.
// `on_done(i, rows)` is called once per finished task, serialised under a mutex, after rows[i] is
// stored; rows of tasks already reported are safe to read there. The first exception thrown by a run stops the pool and
// is rethrown.
std::vector<std::vector<double>> run_tasks(const std::vector<RunTask>& tasks, unsigned threads,
                                           const std::vector<std::string>& names,
                                           const TaskDone& on_done = {},
                                           TaskRunStats* stats = nullptr);

// Something that runs tasks as run_tasks does (rows in task order; `stats` filled as run_tasks
// fills it): run_tasks on threads, or plan's task files (experiments/cli/plan/stages.hpp).
using TaskRunner = std::function<std::vector<std::vector<double>>(const std::vector<RunTask>&, TaskRunStats*)>;

// Number of worker threads from --threads (default: hardware_concurrency, at least 1).
unsigned thread_count(const std::optional<std::string>& option);

}  // namespace brokersim
