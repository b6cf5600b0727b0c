// A sweep split into shards (--shard K/N, a Kubernetes Indexed Job, a Slurm array): which points
// a shard runs, and the metadata written beside its CSV that `merge` puts back together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/input_file.hpp"

namespace brokersim {

// Shard `index` of `count` runs the grid points p with p % count == index.
struct Shard {
  std::uint64_t index = 0, count = 1;
};

// --shard K/N; else --shard-count N with JOB_COMPLETION_INDEX; else SLURM_ARRAY_TASK_ID with
// SLURM_ARRAY_TASK_COUNT (and _MIN); else the whole grid.
// `option` and `count_option` name the two options (plan --run-task: --task and --task-count).
Shard select_shard(const boost::program_options::variables_map& vm, const std::string& option = "shard",
                   const std::string& count_option = "shard-count");

// FILE.meta.json: the sweep's identity, the shard, the grid index of each CSV row, and the CSV
// itself as `csv_rows` (its rows after the header) and `csv_fnv1a64` (FNV-1a 64 of its bytes, 16
// hex digits): a CSV that is not the one this metadata was written with is told apart.
std::string write_meta_text(nlohmann::ordered_json meta, const Shard& shard, const std::vector<std::size_t>& rows,
                            const std::string& csv);

// A shard's metadata, read and checked by `merge`: every key of the right type, every number an
// integer in range and consistent with the grid (points = the product of the axes' label counts,
// at most kMaxGridPoints; rows = exactly the shard's points in order). `identity` is the document
// without the per-shard keys (shard, rows, csv_rows, csv_fnv1a64, inputs): equal for shards of one
// sweep. `inputs` are the files the shard's points read (absent: none), which differ between
// shards when a grid path names the file.
// sweep --window-columns: the most windows a grid point may give columns (windows.K.NAME).
inline constexpr std::size_t kMaxWindowColumns = 100;

struct ShardMeta {
  nlohmann::ordered_json identity;
  std::size_t points = 0;
  std::vector<std::string> paths;                 // grid[a].path
  std::vector<std::vector<std::string>> labels;   // grid[a].labels
  Shard shard;
  std::vector<std::size_t> rows;
  std::size_t csv_rows = 0;
  std::string csv_fnv1a64;
  std::vector<PinnedInput> inputs;
  bool spread = false;  // sweep --spread: NAME_p05 and NAME_p95 follow each NAME_mean, NAME_ci95
};

// ScenarioError "NAME: KEY: expected ..., got ..." (NAME is how messages name the file) on
// anything else, invalid JSON included.
ShardMeta read_shard_meta(const std::string& name, const std::string& text);

}  // namespace brokersim
