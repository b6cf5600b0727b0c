#include "experiments/cli/plan/assurance.hpp"

#include <cmath>

#include "experiments/cli/plan/run_fraction.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;

std::string percent(double x) { return fmt(100 * x, 4) + "%"; }

ojson number_or_null(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

}  // namespace

Assurance assurance_of(const PlanReport& rep, std::size_t p) {
  const PointResult& r = rep.result(p);
  Assurance a;
  a.at_bound = rep.options.precision.has_value() || rep.options.conservative;
  a.targets = rep.targets.size();
  a.per_target_confidence = bonferroni(a.joint_confidence, a.targets);
  a.runs = r.replications;
  a.runs_missed = r.runs_missed;
  a.p_miss = a.runs ? static_cast<double>(a.runs_missed) / static_cast<double>(a.runs) : NAN;
  a.p_miss_upper = clopper_pearson_upper(a.runs_missed, a.runs, 0.95);
  const std::string each = a.targets == 1 ? std::string("95%")
                                          : percent(a.per_target_confidence) + " each (Bonferroni over " +
                                                std::to_string(a.targets) + " targets, 95% jointly)";
  bool any_mean = false, any_runs = false;
  for (const auto& t : rep.targets) (t.in_runs ? any_runs : any_mean) = true;
  std::string s;
  if (any_mean && a.at_bound)
    s = (a.targets == 1 ? "the target holds at its 95% confidence bound" : "each target holds at its bound, " + each);
  else if (any_mean)
    s = "judged on the replication means only (no --precision or --conservative): no confidence statement for " +
        std::string(any_runs ? "the targets on means" : "the targets");
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    if (!rep.targets[i].in_runs) continue;
    const double need = *rep.targets[i].in_runs;
    s += (s.empty() ? "" : "; ") + std::string("target ") + std::to_string(i + 1) + " held in " +
         std::to_string(r.runs_met[i]) + " of " + std::to_string(r.runs_judged[i]) + " runs, at least " +
         percent(r.fraction_bound[i]) + " of runs at " + percent(r.fraction_confidence[i]) +
         " confidence (Clopper-Pearson" +
         (rep.options.precision && r.runs_judged[i] > rep.options.precision->first
              ? std::string(", at a later look of the sequential rule, the error spent across its looks")
              : std::string()) +
         "), asked " + percent(need);
  }
  s += "; P(miss) per run estimated " + std::to_string(a.runs_missed) + " of " + std::to_string(a.runs) + " = " +
       percent(a.p_miss) + " (95% upper bound " + percent(a.p_miss_upper) + ")";
  a.statement = s;
  return a;
}

ojson assurance_json(const Assurance& a) {
  ojson j;
  j["judged_at"] = a.at_bound ? "bound" : "mean";
  j["joint_confidence"] = a.joint_confidence;
  j["per_target_confidence"] = a.per_target_confidence;
  j["bonferroni_targets"] = a.targets;
  j["runs"] = a.runs;
  j["runs_missed"] = a.runs_missed;
  j["p_miss_per_run"] = number_or_null(a.p_miss);
  j["p_miss_per_run_upper95"] = a.p_miss_upper;
  j["statement"] = a.statement;
  return j;
}

ojson target_checks_json(const PlanReport& rep, std::size_t p) {
  const PointResult& r = rep.result(p);
  ojson checks = ojson::array();
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    ojson c;
    c["target"] = rep.targets[i].text;
    c["lhs"] = number_or_null(r.lhs[i]);
    c["rhs"] = number_or_null(r.rhs[i]);
    c["bound_half_width"] = number_or_null(r.margin_bound[i]);
    c["holds"] = r.holds[i];
    c["runs_met"] = r.runs_met[i];
    // The metric's margin to its threshold (positive inside it), in the metric's units, and as a
    // fraction of the threshold: null where the threshold is 0 (never divided by 0).
    c["margin"] = number_or_null(r.margin[i]);
    c["margin_relative"] = number_or_null(relative_to_threshold(r.margin[i], r.rhs[i]));
    c["margin_at_bound"] = number_or_null(r.margin_at_bound[i]);
    c["margin_at_bound_relative"] = number_or_null(relative_to_threshold(r.margin_at_bound[i], r.rhs[i]));
    // A target on a fraction of jobs: the pooled count its bound is at least the binomial bound of.
    if (!std::isnan(r.count_jobs[i])) c["count"] = {{"events", r.count_events[i]}, {"jobs", r.count_jobs[i]}};
    if (const auto& need = rep.targets[i].in_runs) {
      c["in_runs"] = *need;
      c["runs_judged"] = r.runs_judged[i];
      c["fraction"] = r.runs_judged[i] ? static_cast<double>(r.runs_met[i]) / static_cast<double>(r.runs_judged[i]) : 0.0;
      c["fraction_confidence"] = r.fraction_confidence[i];
      c["fraction_lower_bound"] = r.fraction_bound[i];
      c["fraction_lower_bound_over_asked"] = r.fraction_bound[i] - *need;
      c["margin_at_run_quantile"] = number_or_null(r.margin_at_run_quantile[i]);
      c["margin_at_run_quantile_relative"] = number_or_null(relative_to_threshold(r.margin_at_run_quantile[i], r.rhs[i]));
    }
    checks.push_back(c);
  }
  return checks;
}

}  // namespace brokersim
