// The grid of a sweep or a plan: the varied scenario paths (--vary, or the scenario's "sweep"
// block), their cartesian product numbered in row-major order, and the scenario of any point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// The largest grid a sweep runs (and a merge accepts in shard metadata).
inline constexpr std::size_t kMaxGridPoints = 10'000'000;

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

}  // namespace brokersim
