#include "experiments/cli/analytic/comparison.hpp"

#include <cstdio>
#include <ostream>
#include <vector>

#include "experiments/cli/analytic/values.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

// The models give the steady state; a single run is a sample path from an empty system. With no
// warm-up its averages include the fill-up, and at rho >= 1 the fill-up lasts long (the queue
// grows until abandonment balances it): a comparison can then show a transient, not a bias.
std::vector<std::string> transient_warnings(const Scenario& s, const AnalyticFit& f) {
  std::vector<std::string> warnings;
  const double rho = f.lambda / (f.c * f.mu);
  if (rho >= 1)
    warnings.push_back("offered load lambda / (c mu) = " + fmt(rho, 4) +
                       " >= 1: from an empty start the queue builds up for a long time before it settles, so the "
                       "run may compare a transient with the model's steady state (a long warmup_ms helps)");
  if (s.auto_warmup) {
    if (!s.auto_warmup->steady)
      warnings.emplace_back("warmup_ms \"auto\": no steady state was reached in the run (its series still trends at "
                         "its end), so the run compares a transient with the model's steady state; run longer");
    else if (s.auto_warmup->trending)
      warnings.emplace_back("warmup_ms \"auto\": the data kept after the warm-up still trends (bias check, run.warmup_trend_t), "
                         "so the run may compare a transient with the model's steady state; run longer");
  } else if (s.warmup == 0)
    warnings.emplace_back("warmup_ms is 0: the run's averages include the start from an empty system (a transient), "
                       "the model gives the steady state; set warmup_ms");
  return warnings;
}

}  // namespace

std::string failure_text(const AnalyticFit& f) {
  if (f.failures.size() <= 1) return f.reason;
  std::string text = "no closed-form model: " + std::to_string(f.failures.size()) + " assumptions fail:";
  for (const auto& why : f.failures) text += "\n  - " + why;
  return text;
}

nlohmann::ordered_json compare_analytic_json(const Scenario& s, const RunResult& r) {
  const AnalyticFit f = fit_analytic(s);
  nlohmann::ordered_json j = analytic_json(f, analytic_values(f));
  if (f.model == AnalyticModel::None) return j;
  const AnalyticValues sim = simulated_values(f, r);
  nlohmann::ordered_json sj;
  for (const auto& m : analytic_metrics()) sj[m.name] = nan_as_null(sim.*m.member * m.scale);
  j["simulated"] = sj;
  j["warnings"] = transient_warnings(s, f);
  return j;
}

void print_compare_analytic(std::ostream& out, const Scenario& s, const RunResult& r) {
  const AnalyticFit f = fit_analytic(s);
  out << '\n';
  if (f.model == AnalyticModel::None) {
    out << "Analytic comparison: " << failure_text(f) << '\n';
    return;
  }
  const AnalyticValues a = analytic_values(f), sim = simulated_values(f, r);
  out << "Analytic comparison: " << f.name << (f.exact ? " (exact)" : " (approximation)") << ": " << f.description << '\n';
  for (const auto& w : transient_warnings(s, f)) out << "  warning: " << w << '\n';
  char line[160];
  std::snprintf(line, sizeof line, "  %-22s %14s %14s\n", "", "exact", "simulated");
  out << line;
  for (const auto& m : analytic_metrics()) {
    const double x = a.*m.member, y = sim.*m.member;
    if (std::isnan(x) && std::isnan(y)) continue;
    std::snprintf(line, sizeof line, "  %-22s %14s %14s\n", m.name, fmt(x * m.scale).c_str(), fmt(y * m.scale).c_str());
    out << line;
  }
  out << "  (a single run: compare within its sampling error; `brokersim analytic --validate` uses replications)\n";
}

}  // namespace brokersim
