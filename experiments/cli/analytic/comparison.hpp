// `run --compare-analytic`: the exact model's values beside a run's, with the reasons a single
// run may differ from a steady state; and the text for a scenario that fits no model.
#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/cli/analytic/fit.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// Side by side (text), or the "analytic" object of run --json.
void print_compare_analytic(std::ostream& out, const Scenario& s, const RunResult& r);
nlohmann::ordered_json compare_analytic_json(const Scenario& s, const RunResult& r);

// Why no model fits: one failing assumption on the reason's line; several, one per line under it.
std::string failure_text(const AnalyticFit& f);

}  // namespace brokersim
