// plan on a cluster (--stage-dir DIR, --run-task DIR): plan's runs as task files in a shared
// folder, run anywhere (a Slurm job array, a Kubernetes indexed Job, GNU parallel) and read back.
//
// plan asks for one batch of runs at a time (a setting's replications: a bisection step, a stage
// of --precision, a look of a target over runs, a --headroom look), and what it asks next depends
// on what the runs said. The coordinating `plan ... --stage-dir DIR --tasks N` replays the plan
// from the start every time it is run: each batch it asks for is stage S (1, 2, ...) of DIR; a
// stage whose task results are all there and valid is read back, and the first that is not is
// written (DIR/stage-S.json, its runs split into N tasks, run i in task i % N) and the command
// exits with kPlanTasksOutstanding, naming the tasks still to run. `plan --run-task DIR --task
// K/N` runs task K of DIR's latest stage and writes DIR/stage-S.task-K-of-N.json. Since each run
// is (grid point, headroom look, replication) with its own random streams, and every result is
// kept bit for bit (each double as its 16 hex digits), the replayed plan judges the very numbers a
// local plan would, and prints the same bytes, for any N.
//
// The folder is the plan's: DIR/plan.json holds its identity (the brokersim version, the scenario
// hash after --set, the options that decide the answer, the scenario's path made absolute, and the
// files the scenarios read with their contents' hashes, input_file.hpp) and plan_id, a hash of
// them. A file replaced since (a days_csv of another month) is refused by the coordinator and by
// every task, naming it, so that no answer is made of two workloads. A folder of another plan, or one with other files in it and no
// plan.json, is refused, never written over. Every file is checked as merge checks a shard: its
// checksum (FNV-1a 64 of its contents), plan_id, scenario hash, stage, task and the very runs the
// stage gives the task; a result file that fails is refused (exit 2) naming the file, the key and
// why. Files are written whole and renamed into place (output_file.hpp), so a killed task leaves
// no result, and running it again (or the whole array again: a task already done is skipped)
// resumes the plan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/cli/input_file.hpp"
#include "experiments/cli/plan/costed_grid.hpp"
#include "experiments/cli/plan/executor.hpp"
#include "experiments/cli/replication/shards.hpp"

namespace brokersim {

// The exit status of `plan --stage-dir` while a stage's tasks are outstanding.
inline constexpr int kPlanTasksOutstanding = 7;
// At most this many tasks per stage (--tasks).
inline constexpr std::uint64_t kMaxStageTasks = 100'000;

// What DIR/plan.json says the plan is.
struct StageIdentity {
  std::string version;                // BROKERSIM_VERSION
  std::string scenario_hash;          // FNV-1a 64 of the scenario after --set (as sweep's metadata)
  std::vector<std::string> args;      // the plan's options that decide its answer (plan.cpp)
  std::vector<PinnedInput> inputs;    // the files the grid's scenarios read (none: absent from plan.json)
  std::string plan_id;                // FNV-1a 64 of the four above
};

StageIdentity make_stage_identity(const std::string& scenario_hash, const std::vector<std::string>& args,
                                  std::vector<PinnedInput> inputs);

// A ScenarioError naming the first input file of `id` that `now` reads otherwise (replaced since the
// folder was made); `option` and `dir` say where, as open_stage_dir's errors do.
void check_stage_inputs(const StageIdentity& id, const std::vector<PinnedInput>& now, const std::string& option,
                        const std::string& dir);

// Make DIR this plan's folder: create it and DIR/plan.json, or check that the plan.json there is
// this plan's. ScenarioError (exit 2) naming `option` for a path that is no folder, a folder of
// another plan (saying what differs; an input file replaced since, by name), or a folder with
// other files and no plan.json. Every file of the folder is read only if it is a regular file
// (read_regular_file): a FIFO at a result's name is refused at once, never waited on.
void open_stage_dir(const std::string& dir, const StageIdentity& id, const std::string& option);

// DIR/plan.json, read and checked (a worker's view of the plan).
StageIdentity read_stage_identity(const std::string& dir, const std::string& option);

// Thrown by StagedExecutor when the batch plan asks for is not all there: stage `stage` of
// `tasks` tasks waits for the tasks `missing`.
struct StageOutstanding {
  std::string dir, stage_file;
  std::uint64_t stage = 0, tasks = 0, runs = 0;
  std::vector<std::uint64_t> missing;
  bool written = false;  // the stage was written by this invocation
  std::string setting;   // the setting the stage runs, for people
};

class StagedExecutor final : public PlanExecutor {
 public:
  // new_stage_tasks: N for the stages this invocation writes (a stage already written keeps its own).
  StagedExecutor(std::string dir, StageIdentity id, std::uint64_t new_stage_tasks, const PlanGrid& grid)
      : dir_(std::move(dir)), id_(std::move(id)), new_stage_tasks_(new_stage_tasks), grid_(grid) {}
  std::vector<std::vector<double>> run(std::size_t point, std::size_t step, const std::vector<RunTask>& tasks,
                                       const std::vector<std::string>& names, TaskRunStats* stats) override;
  std::uint64_t stages() const { return stage_; }

 private:
  std::string dir_;
  StageIdentity id_;
  std::uint64_t new_stage_tasks_;
  const PlanGrid& grid_;
  std::uint64_t stage_ = 0;  // the batches asked for so far
};

// `plan --run-task DIR`: runs task `task` of DIR's latest stage on `threads` threads and writes
// its result file (nothing to do when a valid one is there). A task count of 0 stands for the
// stage's (a Slurm array's index is the task number: --array=1,4 reruns tasks 1 and 4). The exit status: 0, or 2 (with a
// ScenarioError) for a task count that is not the stage's, or a result file there that is invalid.
int run_stage_task(const std::string& dir, const StageIdentity& id, const PlanGrid& grid, const Shard& task,
                   unsigned threads, std::ostream& err);

}  // namespace brokersim
