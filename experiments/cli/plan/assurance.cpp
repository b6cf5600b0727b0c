#include "experiments/cli/plan/assurance.hpp"

#include <cmath>

#include "experiments/cli/plan/run_fraction.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;

std::string percent(double x) { return fmt(100 * x, 4) + "%"; }

ojson number_or_null(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

// The coefficient of variation of a per-run multiplier, where its kind gives one simply.
double cv_of(const Distribution& d) {
  const double mean = d.mean();
  if (!(mean > 0)) return NAN;
  switch (d.kind()) {
    case Distribution::Kind::Const: return 0;
    case Distribution::Kind::Exp: return 1;
    case Distribution::Kind::Lognormal: return d.param_b();
    case Distribution::Kind::Normal: return d.param_b() / mean;
    case Distribution::Kind::Uniform: return (d.param_b() - d.param_a()) / std::sqrt(12.0) / mean;
    case Distribution::Kind::Gamma: return 1 / std::sqrt(d.param_a());
    case Distribution::Kind::Empirical: {
      double ss = 0;
      for (double v : d.values()) ss += (v - mean) * (v - mean);
      return std::sqrt(ss / static_cast<double>(d.values().size())) / mean;
    }
    case Distribution::Kind::Weibull: return NAN;
  }
  return NAN;
}

// Which day-to-day variation the runs carry: a run is a day only as far as some producer's volume
// is drawn anew for it; without one, "P% of runs" means P% of copies of one day.
void describe_days(const Scenario& s, Assurance& a) {
  std::string varying, replayed;
  for (std::size_t p = 0; p < s.producers.size(); ++p) {
    // days_csv: each run one of a trace's whole days (its volume and shape), not a drawn volume.
    if (s.producers[p].arrivals.days() > 0) {
      a.days_replayed.push_back({p, s.producers[p].arrivals.days()});
      replayed += (replayed.empty() ? "" : ", ") + std::string("producers.") + std::to_string(p) + " " +
                  std::to_string(s.producers[p].arrivals.days()) + " days";
      continue;
    }
    const auto& per_run = s.producers[p].volume_per_run;
    if (!per_run || per_run->is_constant()) continue;
    const ProducerSpec& spec = s.producers[p];
    const Assurance::DayVolume d{p, spec.volume_multiplier * per_run->mean(), cv_of(*per_run), spec.volume_fitted_days,
                                 spec.volume_cv_low, spec.volume_cv_high};
    a.days.push_back(d);
    varying += (varying.empty() ? "" : ", ") + std::string("producers.") + std::to_string(p) + " mean " + fmt(d.mean, 3) +
               (std::isfinite(d.cv) ? " cv " + fmt(d.cv, 3) : std::string());
    // The spread's own uncertainty, where fit --days measured it: the runs use its point estimate.
    if (d.fitted_days > 0)
      varying += " as fitted from " + std::to_string(d.fitted_days) + " days (its 95% interval " + fmt(d.cv_low, 3) + " to " +
                 fmt(d.cv_high, 3) + (spec.draw_parameters ? ", carried into the runs: each redraws the spread and the level)"
                                                           : ", not carried into the runs)");
  }
  if (a.days.empty() && a.days_replayed.empty()) {
    a.runs_cover = "copies of one day: no producer's volume varies from run to run (producers[].volume.per_run), so "
                   "the runs leave out day-to-day variation";
    return;
  }
  a.runs_cover = "days";
  if (!a.days.empty()) a.runs_cover += " whose volume varies from run to run (" + varying + ", producers[].volume.per_run)";
  if (!a.days_replayed.empty())
    a.runs_cover += std::string(a.days.empty() ? "" : ", and") + " drawn from a trace's whole days, each with its own volume and shape (" +
                    replayed + ", arrivals days_csv)";
}

// Whether the runs carry the error of having fitted a finite log (parameter_uncertainty), said
// only where some producer says what it was fitted from (a hand-written scenario has no such error
// to speak of).
void describe_parameters(const Scenario& s, Assurance& a) {
  std::string sizes;
  bool redrawn = false;
  for (std::size_t p = 0; p < s.producers.size(); ++p) {
    const ProducerSpec& spec = s.producers[p];
    if (spec.fitted_service_times == 0 && spec.fitted_arrivals == 0 && spec.volume_fitted_days == 0) continue;
    a.fitted.push_back({p, spec.fitted_service_times, spec.fitted_arrivals, spec.volume_fitted_days});
    redrawn = redrawn || spec.draw_parameters;
    std::string of;
    if (spec.fitted_service_times > 0) of = "the service law from " + grouped(static_cast<std::int64_t>(spec.fitted_service_times)) + " values";
    if (spec.volume_fitted_days > 0)
      of += (of.empty() ? "" : ", ") + std::string("the volume from ") + std::to_string(spec.volume_fitted_days) + " days";
    else if (spec.fitted_arrivals > 0 && !spec.volume_per_run)
      of += (of.empty() ? "" : ", ") + std::string("the rates' level from ") + grouped(static_cast<std::int64_t>(spec.fitted_arrivals)) +
            " arrivals";
    if (!of.empty()) sizes += (sizes.empty() ? "" : "; ") + std::string("producers.") + std::to_string(p) + " " + of;
  }
  if (a.fitted.empty()) return;
  a.parameters_redrawn = redrawn;
  a.runs_cover += redrawn ? "; and over the fitted parameters' uncertainty, each run redrawing them (" + sizes +
                                ", parameter_uncertainty)"
                          : "; with the fitted parameters at their point estimates (" + sizes +
                                "): the runs leave out the error of a finite log (parameter_uncertainty true carries it)";
}

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
  describe_days(rep.grid.scenarios[p], a);
  describe_parameters(rep.grid.scenarios[p], a);
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
  ojson days = ojson::array();
  for (const auto& d : a.days) {
    days.push_back({{"producer", d.producer}, {"volume_mean", d.mean}, {"volume_cv", number_or_null(d.cv)}});
    if (d.fitted_days > 0) {
      days.back()["fitted_days"] = d.fitted_days;
      days.back()["volume_cv_interval"] = {d.cv_low, d.cv_high};
    }
  }
  j["runs_cover"] = {{"days_vary", !a.days.empty() || !a.days_replayed.empty()}, {"volumes", days}};
  // Only where some producer replays whole days (days_csv), so that other plans' JSON is as it was.
  if (!a.days_replayed.empty()) {
    ojson replayed = ojson::array();
    for (const auto& d : a.days_replayed) replayed.push_back({{"producer", d.producer}, {"days", d.days}});
    j["runs_cover"]["days_replayed"] = replayed;
  }
  // Only where some producer says what it was fitted from, so that other plans' JSON is as it was.
  if (!a.fitted.empty()) {
    ojson fitted = ojson::array();
    for (const auto& f : a.fitted) {
      fitted.push_back({{"producer", f.producer}});
      if (f.service_times > 0) fitted.back()["service_times"] = f.service_times;
      if (f.arrivals > 0) fitted.back()["arrivals"] = f.arrivals;
      if (f.days > 0) fitted.back()["days"] = f.days;
    }
    j["runs_cover"]["parameters"] = {{"redrawn", a.parameters_redrawn}, {"fitted", fitted}};
  }
  j["runs_cover"]["statement"] = a.runs_cover;
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
