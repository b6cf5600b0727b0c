// Where plan's runs run. plan asks for one setting's replications at a time (a batch: its grid
// point, the --headroom look that scales its volume, 0 for none, and the replications) and gets
// back their metric rows, in order, as run_tasks gives them. LocalExecutor runs them on this
// machine's threads; StagedExecutor (plan/stages.hpp) writes them as task files for a cluster and
// reads the results back. A run is fixed by (point, look, replication) alone, so both give the
// same rows, bit for bit.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "experiments/cli/replication/pool.hpp"

namespace brokersim {

class PlanExecutor {
 public:
  virtual ~PlanExecutor() = default;
  // The rows of `tasks` (every one a run of grid point `point`, its volume scaled by headroom look
  // `step`), in order, each matching `names`; `stats` filled as run_tasks fills it.
  virtual std::vector<std::vector<double>> run(std::size_t point, std::size_t step, const std::vector<RunTask>& tasks,
                                               const std::vector<std::string>& names, TaskRunStats* stats) = 0;
};

class LocalExecutor final : public PlanExecutor {
 public:
  explicit LocalExecutor(unsigned threads) : threads_(threads) {}
  std::vector<std::vector<double>> run(std::size_t, std::size_t, const std::vector<RunTask>& tasks,
                                       const std::vector<std::string>& names, TaskRunStats* stats) override {
    return run_tasks(tasks, threads_, names, {}, stats);
  }

 private:
  unsigned threads_;
};

}  // namespace brokersim
