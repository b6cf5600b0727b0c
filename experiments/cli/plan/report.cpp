#include "experiments/cli/plan/report.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <nlohmann/json.hpp>

#include "experiments/cli/plan/assurance.hpp"
#include "experiments/cli/plan/run_fraction.hpp"
#include "experiments/cli/plan/window_names.hpp"
#include "experiments/cli/text.hpp"
#include "models/ledger/windows.hpp"

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

ojson setting_json(const PlanReport& rep, std::size_t p) {
  const PlanGrid& grid = rep.grid;
  ojson s;
  s["point"] = p;
  ojson values = ojson::object();
  const auto coords = grid_coords(grid.space.axes, p);
  for (std::size_t a = 0; a < grid.space.axes.size(); ++a)
    values[grid.space.axes[a].path] = ojson::parse(grid.space.axes[a].values[coords[a]].dump());
  s["setting"] = values;
  s["cost"] = grid.cost[p];
  if (grid.cost_from_metrics)
    s["cost_ci95"] = p < grid.cost_ci95.size() && !std::isnan(grid.cost_ci95[p]) ? ojson(grid.cost_ci95[p]) : ojson(nullptr);
  s["slots_total"] = grid.slots_total[p];
  if (grid.autoscaled) {
    s["slots_min"] = grid.slots_min[p];
    s["slots_max"] = grid.slots_max[p];
  }
  const PointResult& r = rep.result(p);
  s["meets"] = r.meets;
  s["undecided"] = r.undecided;
  s["replications"] = r.replications;
  s["targets"] = r.lhs;
  s["target_checks"] = target_checks_json(rep, p);
  s["runs_missed"] = r.runs_missed;
  ojson metrics = ojson::object();
  for (const auto& m : rep.shown) {
    const std::size_t i = grid.metric_index.at(m);
    metrics[m]["mean"] = r.summary.mean[i];
    if (std::isnan(r.summary.ci95[i]))
      metrics[m]["ci95"] = nullptr;
    else
      metrics[m]["ci95"] = r.summary.ci95[i];
  }
  s["metrics"] = metrics;
  return s;
}

void print_plan_header(std::ostream& out, const PlanReport& rep) {
  const PlanGrid& grid = rep.grid;
  const std::uint64_t replications = rep.options.replications;
  out << "brokersim plan: scenario \"" << grid.scenarios[0].name << "\", seed " << grid.scenarios[0].seed << ", ";
  if (const auto& pr = rep.options.precision)
    out << "replications per setting chosen by --precision " << fmt(pr->rel) << " (or within " << fmt(pr->abs) << "), "
        << pr->first << " to " << pr->max_replications << "\n"
        << "guarantee: a setting is accepted when every target holds at its 95% confidence bound, rejected when one"
           " misses it at the other bound, else undecided (not accepted)\n";
  else
    out << replications << " replication" << (replications == 1 ? "" : "s") << " per setting\n";
  for (std::size_t i = 0; i < rep.targets.size(); ++i) out << "target " << i + 1 << ": " << rep.targets[i].text << '\n';
  if (names_window_percentile(rep.targets)) out << "window percentiles: " << window_percentile_rule() << '\n';
  if (const std::uint64_t n = runs_needed_of(rep.targets))
    out << "targets over runs need at least " << n << " replications per setting (n met out of n must give a"
        << " Clopper-Pearson lower bound at least P)\n";
  if (rep.options.conservative) out << "conservative: each target must hold at its 95% confidence bound, not just on the mean\n";
  if ((rep.options.conservative || rep.options.precision) && rep.targets.size() > 1)
    out << "bounds: Bonferroni over " << rep.targets.size() << " targets, each at " << fmt(100 * bonferroni(0.95, rep.targets.size()), 4)
        << "% so that all hold together at 95%\n";
  out << "cost: " << rep.cost_text << '\n';
  out << "searched " << grid.size() << " grid points, ran " << rep.runner.tried().size();
  if (rep.options.precision) out << " (" << rep.runner.replications_spent() << " replications in all)";
  if (rep.bisect) {
    const std::string& path = grid.space.axes[*rep.bisect].path;
    out << " (bisecting " << path << " for each setting of the other paths, assuming that a"
        << " costlier " << path << " never misses a target a cheaper one meets)";
  } else if (grid.cost_from_metrics) {
    out << " (every one: the cost is measured by the runs)";
  } else {
    out << " (in order of cost, up to the first that meets the target)";
  }
  out << "\n\n";
}

// "30.04% of the threshold", or "absolute: the threshold is 0" where a relative margin would
// divide by 0.
std::string of_threshold(double margin, double threshold) {
  const double rel = relative_to_threshold(margin, threshold);
  if (std::isnan(margin)) return "no value";
  return std::isnan(rel) ? "absolute: the threshold is 0" : fmt(100 * rel, 4) + "% of the threshold";
}

std::string bound_name(const PlanReport& rep) {
  return fmt(100 * bonferroni(0.95, rep.targets.size()), 4) + "% bound";
}

// Each target's margin at a setting, under its own label: the metric's margin to its threshold on
// the means (and at its bound), and for a target over runs the runs meeting it, the margin of
// the run at its P quantile and the Clopper-Pearson bound on the fraction of runs.
void print_target_margins(std::ostream& out, const PlanReport& rep, std::size_t p) {
  const PointResult& r = rep.result(p);
  out << "  Targets (margin: how far the left-hand side is inside the threshold, in its units; negative: a miss):\n";
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    const Target& t = rep.targets[i];
    out << "  target " << i + 1 << " (" << t.text << "): margin to the threshold " << fmt(r.rhs[i]) << ": "
        << fmt(r.margin[i]) << " on the mean (" << of_threshold(r.margin[i], r.rhs[i]) << ")";
    if (!std::isnan(r.margin_at_bound[i]))
      out << "; at its " << bound_name(rep) << " " << fmt(r.margin_at_bound[i]) << " ("
          << of_threshold(r.margin_at_bound[i], r.rhs[i]) << ")";
    out << '\n';
    if (!std::isnan(r.count_jobs[i]))
      out << "    events counted: " << std::llround(r.count_events[i]) << " in " << std::llround(r.count_jobs[i])
          << " jobs; its bound is at least the exact binomial (Clopper-Pearson) bound on that count (no event in n jobs:"
          << " up to 1 - 0.025^(1/n), about 3.7/n)\n";
    if (!t.in_runs) continue;
    const double n = static_cast<double>(r.runs_judged[i]);
    out << "    runs meeting it: " << r.runs_met[i] << " of " << r.runs_judged[i] << " ("
        << (n > 0 ? fmt(100 * static_cast<double>(r.runs_met[i]) / n, 4) : std::string("-")) << "%); the run at the "
        << fmt(100 * *t.in_runs, 6) << "% quantile: margin " << fmt(r.margin_at_run_quantile[i]) << " ("
        << of_threshold(r.margin_at_run_quantile[i], r.rhs[i]) << ")\n"
        << "    fraction of runs meeting it, Clopper-Pearson lower bound at "
        << fmt(100 * r.fraction_confidence[i], 4) << "%"
        << " confidence: " << fmt(100 * r.fraction_bound[i], 4) << "%, asked " << fmt(100 * *t.in_runs, 6) << "%";
    if (r.runs_judged[i] != r.replications)
      out << " (judged at the look of its first " << r.runs_judged[i] << " of " << r.replications << " runs)";
    out << '\n';
  }
  out << '\n';
}

// The least safe target of a tied setting, by what its safety measures.
std::string least_safe_words(const PlanReport& rep, std::size_t p) {
  const PointResult& r = rep.result(p);
  if (r.safety.empty()) return "no target";
  const std::size_t i = r.worst_target();
  std::string w = "least safe target " + std::to_string(i + 1) + ": ";
  if (const auto& need = rep.targets[i].in_runs)
    return w + "Clopper-Pearson lower bound " + fmt(100 * r.fraction_bound[i], 4) + "% of runs meeting it, asked " +
           fmt(100 * *need, 6) + "% (bound over asked " + fmt(100 * r.safety[i], 4) + "% of it); its margin to the threshold " +
           fmt(r.margin[i]) + " on the mean (" + of_threshold(r.margin[i], r.rhs[i]) + ")";
  const double at_bound = std::isnan(r.margin_at_bound[i]) ? r.margin[i] : r.margin_at_bound[i];
  return w + "margin to the threshold " + fmt(at_bound) + (std::isnan(r.margin_at_bound[i]) ? " on the mean" : " at its " + bound_name(rep)) +
         " (" + of_threshold(at_bound, r.rhs[i]) + ")";
}

void print_setting(std::ostream& out, const PlanReport& rep, std::size_t p) {
  const PlanGrid& grid = rep.grid;
  out << "  " << grid.space.point_label(p) << "  (cost " << fmt(grid.cost[p]);
  if (grid.cost_from_metrics && p < grid.cost_ci95.size() && !std::isnan(grid.cost_ci95[p]))
    out << " ± " << fmt(grid.cost_ci95[p]);
  if (grid.custom_cost) out << ", slots_total " << fmt(grid.slots_total[p]);
  if (grid.autoscaled) out << ", slots " << fmt(grid.slots_min[p]) << ".." << fmt(grid.slots_max[p]) << " autoscaled";
  out << ")\n\n";
  out << "  " << pad("metric", 34) << pad("mean", 14) << "ci95\n";
  const PointResult& r = rep.result(p);
  for (const auto& m : rep.shown) {
    const std::size_t i = grid.metric_index.at(m);
    out << "  " << pad(m, 34) << pad(fmt(r.summary.mean[i]), 14)
        << (std::isnan(r.summary.ci95[i]) ? std::string("-") : "± " + fmt(r.summary.ci95[i])) << '\n';
  }
  out << '\n';
  print_target_margins(out, rep, p);
}

void print_tried_table(std::ostream& out, const PlanReport& rep) {
  const auto& axes = rep.grid.space.axes;
  out << "Settings tried (in the order run):\n  ";
  std::vector<std::size_t> widths;
  for (const auto& a : axes) {
    widths.push_back(std::max<std::size_t>(a.path.size() + 2, 8));
    out << pad(a.path, widths.back());
  }
  out << pad("cost", 10);
  if (rep.options.precision) out << pad("reps", 6);
  for (std::size_t i = 0; i < rep.targets.size(); ++i) out << pad("target " + std::to_string(i + 1), 14);
  out << "meets\n";
  for (std::size_t p : rep.runner.tried()) {
    const auto coords = grid_coords(axes, p);
    out << "  ";
    for (std::size_t a = 0; a < axes.size(); ++a) out << pad(axes[a].labels[coords[a]], widths[a]);
    out << pad(fmt(rep.grid.cost[p]), 10);
    if (rep.options.precision) out << pad(std::to_string(rep.result(p).replications), 6);
    for (double l : rep.result(p).lhs) out << pad(fmt(l), 14);
    out << (rep.result(p).meets ? "yes" : rep.result(p).undecided ? "undecided" : "no") << '\n';
  }
  out << "(target N: the left-hand side of target N, on the replication means)\n";
}

}  // namespace

std::uint64_t runs_needed_of(const std::vector<Target>& targets) {
  std::uint64_t n = 0;
  for (const auto& t : targets)
    if (t.in_runs) n = std::max(n, runs_needed(*t.in_runs, bonferroni(0.95, targets.size())));
  return n;
}

bool names_window_percentile(const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    if (std::any_of(used.begin(), used.end(), is_window_percentile)) return true;
  }
  return false;
}

std::vector<std::string> shown_metrics(const PlanGrid& grid, const std::vector<Target>& targets) {
  std::vector<std::string> shown;
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    for (const auto& u : used)
      if (grid.metric_index.count(u) && std::find(shown.begin(), shown.end(), u) == shown.end()) shown.push_back(u);
  }
  for (const char* m : {"throughput_per_s", "goodput_per_s", "slot_utilization", "wait_ms.local.p95", "wait_ms.queue.p95"})
    if (grid.metric_index.count(m) && std::find(shown.begin(), shown.end(), m) == shown.end()) shown.emplace_back(m);
  return shown;
}

std::vector<Caveat> caveats_of(const PlanReport& rep) {
  std::vector<Caveat> caveats;
  if (!rep.best) return caveats;
  if (rep.options.replications == 1 && !rep.options.precision) {
    caveats.push_back({std::nullopt, NAN, NAN,
                       "1 replication per setting: the targets were judged on a single run, with no confidence "
                       "interval; run more --replications (and --conservative)"});
    return caveats;
  }
  const PointResult& r = rep.result(*rep.best);
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    const double margin = r.lhs[i] - r.rhs[i], hw = r.margin_ci95[i];
    if (!(hw > std::fabs(margin))) continue;
    caveats.push_back({i, margin, hw,
                       "target " + std::to_string(i + 1) + " (" + rep.targets[i].text + ") holds on the mean by " +
                           fmt(std::fabs(margin)) + ", less than its 95% confidence half-width " + fmt(hw) +
                           ": this setting may miss it; judge it with --conservative or run more --replications"});
  }
  return caveats;
}

std::string unmet_reason(const PlanReport& rep) {
  std::string reason = "no setting in the grid meets every target";
  if (!rep.closest) return reason;
  const PointResult& r = rep.result(*rep.closest);
  reason += "; the closest tried, " + rep.grid.space.point_label(*rep.closest) + ", misses ";
  bool first = true;
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    if (r.holds[i]) continue;
    if (rep.targets[i].in_runs) {
      reason += (first ? "target " : ", target ") + std::to_string(i + 1) + " (" + rep.targets[i].text + ": held in " +
                std::to_string(r.runs_met[i]) + " of " + std::to_string(r.runs_judged[i]) + " runs, lower bound " +
                fmt(100 * r.fraction_bound[i], 4) + "% of runs; the run at the " + fmt(100 * *rep.targets[i].in_runs, 6) +
                "% quantile: margin to the threshold " + fmt(r.margin_at_run_quantile[i]) + ", " +
                of_threshold(r.margin_at_run_quantile[i], r.rhs[i]) + ")";
      first = false;
      continue;
    }
    reason += (first ? "target " : ", target ") + std::to_string(i + 1) + " (" + rep.targets[i].text +
              ": the left-hand side is " + fmt(r.lhs[i]) +
              (std::isnan(r.margin_ci95[i]) ? std::string() : " ± " + fmt(r.margin_ci95[i])) + "; margin to the threshold " +
              fmt(r.margin[i]) + ", " + of_threshold(r.margin[i], r.rhs[i]) + ")";
    first = false;
  }
  return reason;
}

void print_plan_json(std::ostream& out, const PlanReport& rep) {
  const PlanGrid& grid = rep.grid;
  ojson j;
  j["scenario"] = grid.scenarios[0].name;
  j["seed"] = grid.scenarios[0].seed;
  j["replications"] = rep.options.precision ? rep.options.precision->first : rep.options.replications;
  if (rep.options.precision) {
    const PrecisionRule& pr = *rep.options.precision;
    j["precision"] = {{"rel", pr.rel}, {"abs", pr.abs}, {"first_stage", pr.first}, {"max_replications", pr.max_replications}};
  }
  j["replications_run"] = rep.runner.replications_spent();
  j["targets"] = rep.options.target_texts;
  j["cost"] = rep.cost_text;
  j["conservative"] = rep.options.conservative;
  j["grid_points"] = grid.size();
  j["points_run"] = rep.runner.tried().size();
  j["bisect"] = rep.bisect ? ojson(grid.space.axes[*rep.bisect].path) : ojson(nullptr);
  j["met"] = rep.best.has_value();
  j["best"] = rep.best ? setting_json(rep, *rep.best) : ojson(nullptr);
  j["risk"] = rep.best ? assurance_json(assurance_of(rep, *rep.best)) : ojson(nullptr);
  if (rep.headroom) j["headroom"] = headroom_json(*rep.headroom);
  const std::uint64_t runs_needed = runs_needed_of(rep.targets);
  j["runs_needed"] = runs_needed ? ojson(runs_needed) : ojson(nullptr);
  if (names_window_percentile(rep.targets))
    j["window_percentiles"] = {{"min_samples", {{"p50", window_min_samples(0.50)}, {"p95", window_min_samples(0.95)},
                                                {"p99", window_min_samples(0.99)}}},
                               {"rule", window_percentile_rule()}};
  j["tied"] = ojson::array();
  for (std::size_t p : rep.tied) {
    ojson t;
    t["point"] = p;
    t["label"] = grid.space.point_label(p);
    t["cost"] = grid.cost[p];
    t["cost_ci95"] = std::isnan(grid.cost_ci95[p]) ? ojson(nullptr) : ojson(grid.cost_ci95[p]);
    const double worst = rep.result(p).worst_safety();
    t["worst_safety"] = std::isfinite(worst) ? ojson(worst) : ojson(nullptr);
    t["worst_target"] = rep.result(p).safety.empty() ? ojson(nullptr) : ojson(rep.result(p).worst_target() + 1);
    j["tied"].push_back(t);
  }
  if (!rep.best) j["closest"] = rep.closest ? setting_json(rep, *rep.closest) : ojson(nullptr);
  if (!rep.best) j["reason"] = unmet_reason(rep);
  j["undecided"] = ojson::array();
  for (std::size_t p : rep.runner.tried())
    if (rep.result(p).undecided) j["undecided"].push_back(p);
  j["caveats"] = ojson::array();
  for (const auto& c : caveats_of(rep)) {
    ojson cj;
    cj["target"] = c.target ? ojson(*c.target + 1) : ojson(nullptr);
    cj["margin"] = std::isnan(c.margin) ? ojson(nullptr) : ojson(c.margin);
    cj["ci95"] = std::isnan(c.ci95) ? ojson(nullptr) : ojson(c.ci95);
    cj["message"] = c.message;
    j["caveats"].push_back(cj);
  }
  j["tried"] = ojson::array();
  for (std::size_t p : rep.runner.tried()) j["tried"].push_back(setting_json(rep, p));
  out << j.dump(2) << '\n';
}

void print_plan_text(std::ostream& out, const PlanReport& rep) {
  print_plan_header(out, rep);
  if (rep.best) {
    out << "Cheapest setting that meets the target:\n";
    print_setting(out, rep, *rep.best);
    const Assurance a = assurance_of(rep, *rep.best);
    out << "How sure: " << a.statement << "\nRuns are " << a.runs_cover << '\n';
    if (rep.headroom) out << headroom_text(*rep.headroom) << '\n';
    out << '\n';
    if (rep.tied.size() > 1) {
      out << "Tied on cost (their cost intervals overlap the cheapest's), chosen by the safest worst target margin at its bound:\n";
      for (std::size_t p : rep.tied)
        out << "  " << rep.grid.space.point_label(p) << "  cost " << fmt(rep.grid.cost[p]) << " ± "
            << fmt(rep.grid.cost_ci95[p]) << ", " << least_safe_words(rep, p) << (p == *rep.best ? "  <- chosen" : "") << '\n';
      out << '\n';
    }
  } else {
    out << "no setting in the grid meets the target\n\n";
    if (rep.closest) {
      out << "Closest setting tried:\n";
      print_setting(out, rep, *rep.closest);
    }
  }
  print_tried_table(out, rep);
  std::string undecided;
  for (std::size_t p : rep.runner.tried())
    if (rep.result(p).undecided) undecided += "\n  " + rep.grid.space.point_label(p);
  if (!undecided.empty())
    out << "Undecided after --max-replications or at the precision asked (their intervals straddle a target; not"
           " accepted, so a cheaper one of them may in truth meet it):" << undecided << '\n';
}

}  // namespace brokersim
