// A sweep split into shards (--shard K/N, a Kubernetes Indexed Job, a Slurm array): which points
// a shard runs, and the metadata written beside its CSV that `merge` puts back together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

namespace brokersim {

// Shard `index` of `count` runs the grid points p with p % count == index.
struct Shard {
  std::uint64_t index = 0, count = 1;
};

// --shard K/N; else --shard-count N with JOB_COMPLETION_INDEX; else SLURM_ARRAY_TASK_ID with
// SLURM_ARRAY_TASK_COUNT (and _MIN); else the whole grid.
Shard select_shard(const boost::program_options::variables_map& vm);

// FILE.meta.json: the sweep's identity, the shard and the grid index of each CSV row.
std::string write_meta_text(nlohmann::ordered_json meta, const Shard& shard, const std::vector<std::size_t>& rows);

}  // namespace brokersim
