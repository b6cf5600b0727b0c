// plan's grid: the sweep grid with every point validated and costed before anything runs, the
// names a target or the cost may use, and the axis to bisect along.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/plan/expression.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/precision.hpp"

namespace brokersim {

// The command line of `plan`, as read (experiments/cli/commands/plan.cpp).
struct PlanOptions {
  std::string scenario;
  std::vector<std::string> sets, varies, target_texts;
  std::optional<std::string> cost, bisect;
  std::optional<std::uint64_t> seed;
  std::uint64_t replications = 5;
  unsigned threads = 1;
  bool json = false, conservative = false, progress = false;
  bool headroom = false;  // --headroom (plan/headroom.hpp)
  std::optional<PrecisionRule> precision;
  bool max_replications_given = false;  // --max-replications (else a target over runs raises the cap)
};

struct PlanGrid {
  SweepSpace space;
  std::vector<Scenario> scenarios;  // one per grid point
  std::vector<std::string> names;   // metric columns of a run
  std::map<std::string, std::size_t> metric_index, axis_index;
  // slots_total: count x slots over the groups, an autoscaled group at its ceiling (autoscale.max
  // x slots, or count when larger): the capacity to reserve. slots_min / slots_max: the range an
  // autoscaled fleet moves in (autoscale.min .. max); both equal slots_total for a fixed fleet.
  std::vector<double> slots_total, slots_min, slots_max, prefetch_total, cost;
  bool autoscaled = false;  // some point's fleet autoscales: settings show their slot range
  bool custom_cost = false;
  // --cost names a metric (fleet.slot_seconds: what an autoscaled fleet cost is only known after
  // the run): every point is run, then costed on its replication means.
  bool cost_from_metrics = false;
  // With cost_from_metrics: each point's cost per replication, its 95% half-width (Student t, or
  // Stein's with --precision; NaN until run or with 1 replication).
  std::vector<double> cost_ci95;

  std::size_t size() const { return scenarios.size(); }

  // The value of axis `a` at point p, which must be a number (`option` names who asks).
  double axis_number(std::size_t p, std::size_t a, const std::string& option) const;

  // The search order: cost, then (default cost) the prefetch sum, then grid order.
  bool cheaper(std::size_t x, std::size_t y) const {
    if (cost[x] != cost[y]) return cost[x] < cost[y];
    if (!custom_cost && prefetch_total[x] != prefetch_total[y]) return prefetch_total[x] < prefetch_total[y];
    return x < y;
  }
};

// The grid of `o`, every point validated; the target names checked and the costs computed
// (ScenarioError on an unknown name, with a did-you-mean).
PlanGrid build_grid(const PlanOptions& o, const std::vector<Target>& targets, const Expr* cost_expr);

// A scenario path's value at a grid point (after --set and the varied values), or nullopt; `got`
// receives the value when it is there but not a number.
std::optional<double> scenario_number(const nlohmann::json& doc, const Scenario& s, const std::string& path,
                                      std::string* got);
// The --cost error for a name that is no number at the point (`got` "" when it is not there).
[[noreturn]] void bad_cost_name(const PlanGrid& grid, const nlohmann::json& doc, const std::string& name,
                                const std::string& got);

// ScenarioError naming the point when its cost is NaN (0/0) or infinite (a division by zero).
void check_cost_value(const PlanGrid& grid, std::size_t p);

// Lines along an axis: for a fixed combination of the other paths, the points in the axis's order.
std::vector<std::vector<std::size_t>> lines_along(const PlanGrid& grid, std::size_t a);

// --bisect PATH (checked), none, or the longest axis along which the cost strictly increases.
std::optional<std::size_t> choose_bisect_axis(const PlanGrid& grid, const std::optional<std::string>& option);

}  // namespace brokersim
