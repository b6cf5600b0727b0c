#include "experiments/replication/shards.hpp"

#include <cstdlib>
#include <optional>

#include "experiments/cli_options.hpp"
#include "experiments/text.hpp"
#include "models/scenario.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const std::string what = "K/N with integers 0 <= K < N";
  if (slash == std::string::npos) throw ScenarioError("--shard", what, quote(text));
  Shard s;
  try {
    s.index = parse_count("--shard", text.substr(0, slash), 0);
    s.count = parse_count("--shard", text.substr(slash + 1), 1);
  } catch (const ScenarioError&) {
    throw ScenarioError("--shard", what, quote(text));
  }
  if (s.index >= s.count) throw ScenarioError("--shard", what, quote(text));
  return s;
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

}  // namespace

Shard select_shard(const po::variables_map& vm) {
  if (vm.count("shard")) return parse_shard(vm["shard"].as<std::string>());
  if (vm.count("shard-count")) {
    const auto index = env("JOB_COMPLETION_INDEX");
    if (!index)
      throw ScenarioError("--shard-count", "JOB_COMPLETION_INDEX in the environment (a Kubernetes Indexed Job)", "nothing");
    Shard s;
    s.count = parse_count("--shard-count", vm["shard-count"].as<std::string>(), 1);
    s.index = parse_count("JOB_COMPLETION_INDEX", *index, 0);
    if (s.index >= s.count)
      throw ScenarioError("JOB_COMPLETION_INDEX", "an integer below --shard-count (" + std::to_string(s.count) + ")", quote(*index));
    return s;
  }
  if (const auto id = env("SLURM_ARRAY_TASK_ID")) {
    const auto count = env("SLURM_ARRAY_TASK_COUNT");
    if (!count) throw ScenarioError("SLURM_ARRAY_TASK_COUNT", "the array size beside SLURM_ARRAY_TASK_ID", "nothing");
    Shard s;
    s.count = parse_count("SLURM_ARRAY_TASK_COUNT", *count, 1);
    const std::uint64_t task = parse_count("SLURM_ARRAY_TASK_ID", *id, 0);
    std::uint64_t min = 0;
    if (const auto m = env("SLURM_ARRAY_TASK_MIN")) min = parse_count("SLURM_ARRAY_TASK_MIN", *m, 0);
    if (task < min || task - min >= s.count)
      throw ScenarioError("SLURM_ARRAY_TASK_ID",
                          "an integer from SLURM_ARRAY_TASK_MIN (" + std::to_string(min) + ") below MIN + SLURM_ARRAY_TASK_COUNT (" +
                              std::to_string(min + s.count) + "); use --shard K/N for arrays with a step",
                          quote(*id));
    s.index = task - min;
    return s;
  }
  return {};
}

std::string write_meta_text(nlohmann::ordered_json meta, const Shard& shard, const std::vector<std::size_t>& rows) {
  meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
  meta["rows"] = rows;
  return meta.dump(2) + "\n";
}

}  // namespace brokersim
