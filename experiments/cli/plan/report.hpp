// plan's report: the cheapest setting that meets the targets (or the closest tried and why it
// misses), the settings tried, the caveats, as text or as one JSON object.
#pragma once

#include <cmath>
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "experiments/cli/plan/expression.hpp"
#include "experiments/cli/plan/costed_grid.hpp"
#include "experiments/cli/plan/headroom.hpp"
#include "experiments/cli/plan/search.hpp"

namespace brokersim {

struct PlanReport {
  const PlanOptions& options;
  const PlanGrid& grid;
  const std::vector<Target>& targets;
  const PointRunner& runner;
  std::optional<std::size_t> bisect, best, closest;
  std::vector<std::string> shown;  // metrics to show: those in the targets, then the standard few
  std::string cost_text;
  // A measured cost: the settings that meet the targets tied on cost with the cheapest (their
  // intervals overlap), in cost order; `best` is the one with the safest bound among them.
  std::vector<std::size_t> tied;
  std::optional<Headroom> headroom;  // --headroom, for the chosen setting

  const PointResult& result(std::size_t p) const { return runner.results().at(p); }
};

// The metrics to show: those in the targets, then the standard few the grid has.
std::vector<std::string> shown_metrics(const PlanGrid& grid, const std::vector<Target>& targets);

// A chosen setting whose target holds on the mean by less than the margin's own 95% half-width
// could well miss it on another sample of the same length: say so, rather than let the mean
// decide alone (2 replications accepted 0.005 +- 0.050 against 0.01).
struct Caveat {
  std::optional<std::size_t> target;  // index into the targets; nullopt: about every target
  double margin = NAN, ci95 = NAN;
  std::string message;
};

std::vector<Caveat> caveats_of(const PlanReport& rep);

// Why nothing was chosen, in one sentence: which targets the closest setting tried misses.
std::string unmet_reason(const PlanReport& rep);

// Whether a target names a window's percentile (or its window_max / window_min), which rests on the
// window's samples (plan then states the minimum).
bool names_window_percentile(const std::vector<Target>& targets);

// The replications the most demanding target over runs needs (0: none is over runs), each
// target at its Bonferroni-corrected confidence.
std::uint64_t runs_needed_of(const std::vector<Target>& targets);

void print_plan_json(std::ostream& out, const PlanReport& rep);
void print_plan_text(std::ostream& out, const PlanReport& rep);

}  // namespace brokersim
