#include "experiments/cli/plan/costed_grid.hpp"

#include <algorithm>
#include <cmath>

#include "experiments/cli/metrics/billing.hpp"
#include "experiments/cli/options.hpp"
#include "experiments/cli/plan/window_names.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using json = nlohmann::json;

// " (did you mean "X"?)" for the nearest candidate within a typo or two (more for long names,
// whose dotted prefixes make a transposed pair cost 2), else nothing.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 8);
  std::size_t best_distance = limit + 1;
  std::string best;
  for (const auto& c : candidates) {
    const std::size_t gap = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (gap > limit) continue;
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best.empty() ? std::string() : " (did you mean " + quote(best) + "?)";
}

// Every name a target may use, for the did-you-mean: metrics, varied paths, slots_total.
std::vector<std::string> target_names(const PlanGrid& grid) {
  std::vector<std::string> names = grid.names;
  for (const auto& a : grid.space.axes) names.push_back(a.path);
  names.emplace_back("slots_total");
  return names;
}

void check_target_names(PlanGrid& grid, const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    for (const auto& u : used)
      if (is_window_name(u) && !grid.metric_index.count(u)) {
        // windows.K.METRIC: checked, then a column of its own that the runs fill (pool.cpp).
        check_window_name(u, grid.scenarios);
        grid.metric_index[u] = grid.names.size();
        grid.names.push_back(u);
      } else if (!grid.metric_index.count(u) && !grid.axis_index.count(u) && u != "slots_total") {
        // sweep's wait_ms.STAGE.pNN_pooled columns: figures of a point's pooled jobs, which plan's
        // runs (in other processes under --stage-dir) do not bring back.
        const auto steady = pooled_quantile_columns(grid.names);
        if (std::any_of(steady.begin(), steady.end(), [&](const PooledQuantileColumn& q) { return q.name == u; }))
          throw ScenarioError("--target", "a metric of a run (plan does not judge the steady-state quantiles yet; " +
                                              u.substr(0, u.size() - 7) + " is the expected per-run quantile)",
                              quote(u));
        // A platform's figure this scenario's plans do not have: say what they are billed by.
        if (const auto why = billing_refusal(grid.scenarios[0], u)) throw ScenarioError("--target: " + *why);
        throw ScenarioError("--target: expected metric names (as in sweep's CSV, without _mean: "
                            "fraction.expired_in_queue, wait_ms.local.p95, throughput_per_s, ...), got " + quote(u) +
                            did_you_mean(u, target_names(grid)) + "; `brokersim metrics SCENARIO.json` lists them all");
      }
  }
}

// The numeric leaves of a scenario document as dotted paths (consumers.0.count), for the
// did-you-mean of --cost.
void numeric_paths(const json& v, const std::string& prefix, std::vector<std::string>& out) {
  if (v.is_number()) out.push_back(prefix);
  if (!v.is_object() && !v.is_array()) return;
  std::size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    const std::string key = v.is_object() ? it.key() : std::to_string(i);
    numeric_paths(it.value(), prefix.empty() ? key : prefix + "." + key, out);
  }
}

// The capacity keys a file may leave to their defaults; --cost reads those from the validated
// scenario, so `consumers.0.count*consumers.0.slots` works whether or not slots is written.
std::optional<double> consumer_default(const Scenario& s, const std::string& path) {
  const auto first = path.find('.'), last = path.rfind('.');
  if (path.compare(0, first, "consumers") != 0 || first == last) return std::nullopt;
  const std::string index = path.substr(first + 1, last - first - 1), key = path.substr(last + 1);
  if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::size_t g = std::stoul(index);
  if (g >= s.consumers.size()) return std::nullopt;
  if (key == "count") return s.consumers[g].count;
  if (key == "slots") return s.consumers[g].slots;
  if (key == "prefetch") return s.consumers[g].prefetch;
  return std::nullopt;
}

// Names in --cost: slots_total, a varied path, or any numeric scenario path (read per point, so a
// path under a varied one follows it).
void compute_costs(PlanGrid& grid, const Expr* cost_expr) {
  const std::size_t n = grid.size();
  grid.slots_total.assign(n, 0);
  grid.slots_min.assign(n, 0);
  grid.slots_max.assign(n, 0);
  grid.prefetch_total.assign(n, 0);
  grid.cost.assign(n, 0);
  grid.custom_cost = cost_expr != nullptr;
  for (std::size_t p = 0; p < n; ++p) {
    for (const auto& c : grid.scenarios[p].consumers) {
      const double ceiling = static_cast<double>(c.members()) * c.slots;
      grid.slots_total[p] += ceiling;
      grid.slots_max[p] += ceiling;
      grid.slots_min[p] += static_cast<double>(c.autoscale ? c.autoscale->min : c.count) * c.slots;
      grid.prefetch_total[p] += c.prefetch;
      if (c.autoscale) grid.autoscaled = true;
    }
  }
  if (!cost_expr) {
    grid.cost = grid.slots_total;
    return;
  }
  std::vector<std::string> used;
  cost_expr->names(used);
  const bool reads_scenario = std::any_of(used.begin(), used.end(), [&](const std::string& u) {
    return u != "slots_total" && !grid.axis_index.count(u) && !grid.metric_index.count(u);
  });
  for (std::size_t p = 0; p < n; ++p) {
    const json doc = reads_scenario ? grid.space.point_doc(p) : json();
    grid.cost[p] = cost_expr->eval([&](const std::string& name) -> double {
      if (name == "slots_total") return grid.slots_total[p];
      if (const auto it = grid.axis_index.find(name); it != grid.axis_index.end())
        return grid.axis_number(p, it->second, "--cost");
      if (grid.metric_index.count(name)) {
        grid.cost_from_metrics = true;
        return 0.0;  // known after the run (search_by_measured_cost)
      }
      std::string got;
      if (const auto v = scenario_number(doc, grid.scenarios[p], name, &got)) return *v;
      bad_cost_name(grid, doc, name, got);
    });
  }
  // With metrics in it, the cost is known only after the runs (checked there).
  if (!grid.cost_from_metrics)
    for (std::size_t p = 0; p < n; ++p) check_cost_value(grid, p);
}

// An axis qualifies for bisection when its values are numbers and, along every line, the primary
// cost strictly increases with the value (or strictly decreases: then it is reversed).
bool cost_monotone_along(const PlanGrid& grid, std::size_t a) {
  const auto& axis = grid.space.axes[a];
  for (const auto& v : axis.values)
    if (!v.is_number()) return false;
  if (axis.values.size() < 2) return false;
  for (const auto& line : lines_along(grid, a)) {
    std::vector<std::size_t> by_value = line;
    std::sort(by_value.begin(), by_value.end(), [&](std::size_t x, std::size_t y) {
      return grid.axis_number(x, a, "--bisect") < grid.axis_number(y, a, "--bisect");
    });
    bool up = true, down = true;
    for (std::size_t i = 1; i < by_value.size(); ++i) {
      up = up && grid.cost[by_value[i]] > grid.cost[by_value[i - 1]];
      down = down && grid.cost[by_value[i]] < grid.cost[by_value[i - 1]];
    }
    if (!up && !down) return false;
  }
  return true;
}

}  // namespace

double PlanGrid::axis_number(std::size_t p, std::size_t a, const std::string& option) const {
  const auto coords = grid_coords(space.axes, p);
  const json& v = space.axes[a].values[coords[a]];
  if (!v.is_number())
    throw ScenarioError(option + ": expected numeric values of " + space.axes[a].path + ", got " +
                        quote(space.axes[a].labels[coords[a]]));
  return v.get<double>();
}

std::optional<double> scenario_number(const json& doc, const Scenario& s, const std::string& path, std::string* got) {
  std::string pointer;
  for (char c : path) pointer += c == '.' ? '/' : c;
  try {
    const json::json_pointer ptr("/" + pointer);
    if (doc.contains(ptr)) {
      const json& v = doc.at(ptr);
      if (v.is_number()) return v.get<double>();
      if (got) *got = v.dump(-1, ' ', false, json::error_handler_t::replace);
      return std::nullopt;
    }
  } catch (const json::exception&) {
    // not a path into this document (an array indexed by a word): as if missing
  }
  return consumer_default(s, path);
}

// A cost that is NaN or infinite at a setting cannot be ordered: an error naming the setting.
void check_cost_value(const PlanGrid& grid, std::size_t p) {
  const double v = grid.cost[p];
  if (std::isfinite(v)) return;
  const std::string label = grid.space.point_label(p);
  throw ScenarioError(std::string("--cost: the cost is ") +
                      (std::isnan(v) ? "not a number (0/0, or a metric without a value)"
                                    : "infinite (a division by zero, or a value past the largest number, 1.8e308)") +
                      " at " + (label.empty() ? std::string("the scenario's setting") : label));
}

void bad_cost_name(const PlanGrid& grid, const json& doc, const std::string& name, const std::string& got) {
  std::vector<std::string> candidates{"slots_total"};
  for (const auto& a : grid.space.axes) candidates.push_back(a.path);
  for (const auto& m : grid.names) candidates.push_back(m);  // a cost over metrics (fleet.slot_seconds)
  numeric_paths(doc, "", candidates);
  for (std::size_t g = 0; g < grid.scenarios[0].consumers.size(); ++g)
    for (const char* k : {"count", "slots", "prefetch"}) candidates.push_back("consumers." + std::to_string(g) + "." + k);
  if (!got.empty())
    throw ScenarioError("--cost: expected a number at scenario path " + name + ", got " + got);
  // A platform's figure this scenario's plans do not have: say what they are billed by.
  if (const auto why = billing_refusal(grid.scenarios[0], name)) throw ScenarioError("--cost: " + *why);
  // The fleet costs are reported only where the fleet can change (docs/outcomes.md): the message
  // offers them as an example, so a scenario without them says why, not just "expected".
  if (name.starts_with("fleet.") && std::find(candidates.begin(), candidates.end(), "fleet.slot_seconds") == candidates.end())
    throw ScenarioError("--cost: " + quote(name) + " is reported only when a consumer group names autoscale or stop_ms "
                        "(even as null) or observe.window_ms is set, and this scenario has none of them: cost a fixed "
                        "fleet with slots_total or consumers.N.count*consumers.N.slots, or add \"autoscale\": null to "
                        "the group to get the fleet metrics");
  throw ScenarioError("--cost: expected varied paths, slots_total, metric names (fleet.slot_seconds) or numeric scenario paths "
                      "(consumers.0.count), got " +
                      quote(name) + did_you_mean(name, candidates));
}

PlanGrid build_grid(const PlanOptions& o, const std::vector<Target>& targets, const Expr* cost_expr) {
  PlanGrid grid;
  grid.space = load_sweep_space(o.scenario, o.sets, o.varies, o.seed);
  check_grid_runs(grid.space.size(), o.replications);
  std::vector<std::size_t> all(grid.space.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  grid.scenarios = validate_points(grid.space, all);
  grid.names = metric_names(grid.space);
  for (std::size_t i = 0; i < grid.names.size(); ++i) grid.metric_index[grid.names[i]] = i;
  for (std::size_t a = 0; a < grid.space.axes.size(); ++a) grid.axis_index[grid.space.axes[a].path] = a;
  check_target_names(grid, targets);
  compute_costs(grid, cost_expr);
  return grid;
}

std::vector<std::vector<std::size_t>> lines_along(const PlanGrid& grid, std::size_t a) {
  const auto& axes = grid.space.axes;
  std::vector<std::vector<std::size_t>> lines;
  const std::size_t len = axes[a].values.size();
  std::size_t stride = 1;
  for (std::size_t b = a + 1; b < axes.size(); ++b) stride *= axes[b].values.size();
  for (std::size_t p = 0; p < grid.size(); ++p) {
    if (grid_coords(axes, p)[a] != 0) continue;
    std::vector<std::size_t> line;
    for (std::size_t i = 0; i < len; ++i) line.push_back(p + i * stride);
    lines.push_back(line);
  }
  return lines;
}

std::optional<std::size_t> choose_bisect_axis(const PlanGrid& grid, const std::optional<std::string>& option) {
  const auto& axes = grid.space.axes;
  std::optional<std::size_t> bisect;
  if (option) {
    if (*option == "none") return std::nullopt;
    const auto it = grid.axis_index.find(*option);
    if (it == grid.axis_index.end()) throw ScenarioError("--bisect: expected a varied path or none, got " + quote(*option));
    if (!cost_monotone_along(grid, it->second))
      throw ScenarioError("--bisect: expected a path along which the cost strictly increases, got " + quote(*option));
    return it->second;
  }
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (cost_monotone_along(grid, a) && (!bisect || axes[a].values.size() > axes[*bisect].values.size())) bisect = a;
  return bisect;
}

}  // namespace brokersim
