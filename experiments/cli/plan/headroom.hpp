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
#include "experiments/cli/plan/search.hpp"

namespace brokersim {

// What a look at a volume showed. A look that does not meet every target either showed a miss (a
// target's estimate, the runs' mean or the share of runs meeting it, on the wrong side; with
// --precision, its bound towards passing) or could not show a meet (only a confidence bound fell
// short, --precision left it undecided, or runs stopped at a limit): "misses" alone would not say
// which.
enum class LookVerdict : std::uint8_t { Meets, ShownToMiss, NotShownToMeet };

struct HeadroomLook {
  double multiplier = 1;
  LookVerdict verdict = LookVerdict::Meets;
  std::string why;  // what made it miss or not meet: the target and how it was judged; empty when met
};

struct Headroom {
  static constexpr double kStep = 0.05, kMax = 4.0;
  static constexpr std::size_t kLastStep = 60;  // (kMax - 1) / kStep: look i scales by 1 + i x kStep
  static double multiplier_at(std::size_t i) { return 1.0 + kStep * static_cast<double>(i); }
  // Why there is none (a producer whose arrivals are given times or replayed days cannot be
  // scaled); empty when `meets_up_to` is measured.
  std::string not_available;
  double meets_up_to = 1;                // the largest multiplier judged to meet every target
  std::optional<HeadroomLook> misses_at; // the next step up, judged not to meet (nullopt: met at kMax)
  std::uint64_t runs = 0;                // replications spent on it
  std::vector<HeadroomLook> judged;      // each multiplier looked at, in order
};

// A look's verdict on the chosen setting at one volume, judged as plan judged it (`precision`:
// --precision's decisions at the bounds; otherwise on the estimates, or --conservative's bounds).
HeadroomLook look_verdict(double multiplier, const PointResult& r, const std::vector<Target>& targets, bool precision);

// Why a producer's volume cannot be scaled (its arrivals are given times, or whole days replayed),
// naming the key it has; empty when it can.
std::string unscalable_volume(const Scenario& s, std::size_t producer);

// The runs go through `executor`, each look's named by its step (PointRunner's volume_step).
Headroom find_headroom(const PlanGrid& grid, std::size_t best, const std::vector<Target>& targets,
                       const PlanOptions& o, PlanExecutor& executor);

// `s` (a copy of `base`) with every producer's volume multiplier scaled for headroom look `step`.
void scale_volume(Scenario& s, const Scenario& base, std::size_t step);

nlohmann::ordered_json headroom_json(const Headroom& h);
std::string headroom_text(const Headroom& h);

}  // namespace brokersim
