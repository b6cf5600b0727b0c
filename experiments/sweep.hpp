// Parameter sweeps (brokersim sweep / merge / plan): the grid, the thread pool that runs
// (scenario, replication) tasks, the metrics a run is reduced to, and their statistics.
//
// The pieces are separate so that `sweep` (every point of a grid, CSV out) and `plan` (a search
// over the same grid for the cheapest point that meets a target) share one implementation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/replication/statistics.hpp"
#include "experiments/text.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// One varied scenario path and its values, in the order given. `labels` are the CSV cells: the
// value as the user wrote it (list items verbatim, range values in shortest round-trip form,
// JSON values as compact JSON, strings bare).
struct SweepAxis {
  std::string path;
  std::vector<nlohmann::json> values;
  std::vector<std::string> labels;
};

// "PATH=LIST": LIST is `1,2,4,8` (each item JSON if it parses, else a string), an inclusive range
// `start:stop:step` (numbers, floats allowed; integers stay integers), or a JSON array
// `[{"const": 1}, {"exp": {"mean": 2}}]` for values that contain commas. ScenarioError (exit 2)
// naming --vary and what was given on anything else.
SweepAxis parse_vary(const std::string& spec);

// The scenario file's "sweep" block: {"PATH": [values...], ...}, axes in the order nlohmann::json
// iterates (sorted by path).
std::vector<SweepAxis> axes_from_block(const nlohmann::json& block);

// Grid points are numbered 0..size-1 in row-major order: the first axis varies slowest.
std::size_t grid_size(const std::vector<SweepAxis>& axes);
std::vector<std::size_t> grid_coords(const std::vector<SweepAxis>& axes, std::size_t point);

// The scenario document (after --set, "sweep" removed), its folder, the seed override and the
// axes: everything needed to build the scenario of any grid point.
struct SweepSpace {
  nlohmann::json base;
  std::string base_dir;
  std::optional<std::uint64_t> seed;
  std::vector<SweepAxis> axes;

  std::size_t size() const { return grid_size(axes); }
  nlohmann::json point_doc(std::size_t point) const;
  Scenario point_scenario(std::size_t point) const;  // validated; ScenarioError names the point
  std::string point_label(std::size_t point) const;  // "consumers.0.prefetch=4, consumers.0.count=3"
  std::uint64_t effective_seed() const;
};

// read the file, apply `sets`, take the axes from `varies` or else from the file's sweep block.
SweepSpace load_sweep_space(const std::string& path, const std::vector<std::string>& sets,
                            const std::vector<std::string>& varies, std::optional<std::uint64_t> seed);

// Every point must validate before anything runs: each axis value alone first (error
// "--vary PATH=VALUE: <loader message>"), then every combination ("grid point I (P=V, ...): ...").
// Returns the scenarios of `keep` points (empty: none kept), in the order of `keep`.
std::vector<Scenario> validate_points(const SweepSpace& space, const std::vector<std::size_t>& keep);

// 64-bit FNV-1a, printed as 16 hex digits.
std::string hash_hex(const std::string& text);

// The metrics of a run: every numeric leaf of result_json() flattened with dots, except `seed`
// and `replication`, in result_json's order. The names depend only on the scenario's queues.
std::vector<std::string> metric_names(const Scenario& scenario);
// The metrics of a grid: the union over its points, in order of first appearance (point 0's
// first). Points may differ: the dead-letter reasons are the broker kind's own, so a sweep over
// broker.kind has a column for each kind's reasons, empty in the rows of the other kinds.
std::vector<std::string> metric_names(const SweepSpace& space);

struct RunTask {
  const Scenario* scenario;
  std::uint64_t replication;  // Scenario::replication for this run (the seed is kept)
};

using TaskDone = std::function<void(std::size_t, const std::vector<std::vector<double>>&)>;

struct TaskRunStats {
  std::size_t limited = 0;           // runs stopped early at a limit (max_in_system, max_events, zero-time loop)
  std::size_t measured_nothing = 0;  // runs that ended before warmup_ms or created no job after it
  // Per task of the last run_tasks call: incomplete_run() of its run ("" when it measured
  // normally); set before on_done(i, ...) is called for task i.
  std::vector<std::string> incomplete;
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

// Number of worker threads from --threads (default: hardware_concurrency, at least 1).
unsigned thread_count(const std::optional<std::string>& option);

// Progress on stderr: points done / total, rate and time left, at most a few times a second.
class Progress {
 public:
  Progress(std::ostream* err, std::size_t total, std::string what);
  void update(std::size_t done);
  void finish();

 private:
  std::ostream* err_;
  std::size_t total_;
  std::string what_;
  double start_ = 0, last_ = -1;
  std::size_t base_ = 0, printed_ = static_cast<std::size_t>(-1);
  bool started_ = false, tty_;
};

}  // namespace brokersim
