// plan --headroom: how much more volume the chosen setting still carries. Every producer's
// volume multiplier (producers[].volume.multiplier) is scaled by m, and the largest m on a grid
// 1.00, 1.05, ..., 4.00 at which the setting still meets every target, judged as plan judged it
// (same replications, seeds, --precision or --conservative), is found by bisection, assuming
// that more volume never meets a target that less volume misses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/plan/costed_grid.hpp"
#include "experiments/cli/plan/executor.hpp"
#include "experiments/cli/plan/expression.hpp"

namespace brokersim {

struct Headroom {
  static constexpr double kStep = 0.05, kMax = 4.0;
  static constexpr std::size_t kLastStep = 60;  // (kMax - 1) / kStep: look i scales by 1 + i x kStep
  static double multiplier_at(std::size_t i) { return 1.0 + kStep * static_cast<double>(i); }
  // Why there is none (a producer whose arrivals are given times cannot be scaled); empty when
  // `meets_up_to` is measured.
  std::string not_available;
  double meets_up_to = 1;                // the largest multiplier judged to meet every target
  std::optional<double> misses_at;       // the next step up, judged to miss (nullopt: met at kMax)
  std::uint64_t runs = 0;                // replications spent on it
  std::vector<std::pair<double, bool>> judged;  // each multiplier looked at, in order, and whether it met
};

// The runs go through `executor`, each look's named by its step (PointRunner's volume_step).
Headroom find_headroom(const PlanGrid& grid, std::size_t best, const std::vector<Target>& targets,
                       const PlanOptions& o, PlanExecutor& executor);

// `s` (a copy of `base`) with every producer's volume multiplier scaled for headroom look `step`.
void scale_volume(Scenario& s, const Scenario& base, std::size_t step);

nlohmann::ordered_json headroom_json(const Headroom& h);
std::string headroom_text(const Headroom& h);

}  // namespace brokersim
