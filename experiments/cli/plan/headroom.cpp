#include "experiments/cli/plan/headroom.hpp"

#include <cmath>

#include "experiments/cli/plan/search.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

double multiplier_at(std::size_t i) { return Headroom::multiplier_at(i); }

}  // namespace

void scale_volume(Scenario& s, const Scenario& base, std::size_t step) {
  for (std::size_t p = 0; p < base.producers.size(); ++p)
    s.producers[p].volume_multiplier = base.producers[p].volume_multiplier * multiplier_at(step);
}

Headroom find_headroom(const PlanGrid& grid, std::size_t best, const std::vector<Target>& targets,
                       const PlanOptions& o, PlanExecutor& executor) {
  Headroom h;
  for (std::size_t p = 0; p < grid.scenarios[best].producers.size(); ++p) {
    const auto kind = grid.scenarios[best].producers[p].arrivals.kind;
    if (kind == ArrivalSpec::Kind::AtTimes || kind == ArrivalSpec::Kind::Trace) {
      h.not_available = "producers." + std::to_string(p) + " has arrivals at given times (at_ms or trace_csv), which no volume scales";
      return h;
    }
  }
  // Each look runs the chosen setting afresh with its volume scaled, in a grid that is the plan's
  // own but for that one scenario (targets may name the setting's axes and slots_total).
  // One copy of the grid for every look; only the chosen scenario's volumes change between looks.
  PlanGrid g = grid;
  const auto meets = [&](std::size_t i) {
    scale_volume(g.scenarios[best], grid.scenarios[best], i);
    PointRunner runner(g, targets, o, nullptr, executor, i);
    const bool met = runner.evaluate(best).meets;
    h.runs += runner.replications_spent();
    h.judged.emplace_back(multiplier_at(i), met);
    return met;
  };
  const std::size_t last = Headroom::kLastStep;
  if (meets(last)) {
    h.meets_up_to = Headroom::kMax;
    return h;
  }
  std::size_t lo = 0, hi = last;  // lo met (the plan's own judgement), hi missed
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (meets(mid) ? lo : hi) = mid;
  }
  h.meets_up_to = multiplier_at(lo);
  h.misses_at = multiplier_at(hi);
  return h;
}

nlohmann::ordered_json headroom_json(const Headroom& h) {
  nlohmann::ordered_json j;
  if (!h.not_available.empty()) {
    j["available"] = false;
    j["reason"] = h.not_available;
    return j;
  }
  j["available"] = true;
  j["meets_up_to"] = h.meets_up_to;
  j["misses_at"] = h.misses_at ? nlohmann::ordered_json(*h.misses_at) : nlohmann::ordered_json(nullptr);
  j["step"] = Headroom::kStep;
  j["max"] = Headroom::kMax;
  j["runs"] = h.runs;
  nlohmann::ordered_json looks = nlohmann::ordered_json::array();
  for (const auto& [m, met] : h.judged) looks.push_back({{"multiplier", m}, {"meets", met}});
  j["judged"] = looks;
  return j;
}

std::string headroom_text(const Headroom& h) {
  if (!h.not_available.empty()) return "Headroom: not available: " + h.not_available;
  const auto pct = [](double m) { return fmt("%+.0f%%", 100 * (m - 1)); };
  std::string s = "Headroom: meets every target up to volume x" + fmt("%.2f", h.meets_up_to) + " (" + pct(h.meets_up_to) + ")";
  s += h.misses_at ? "; misses at x" + fmt("%.2f", *h.misses_at) : std::string("; the largest looked at");
  s += " (every producer's volume scaled, judged as above, bisection in steps of " + fmt("%.2f", Headroom::kStep) +
       " up to x" + fmt("%.2f", Headroom::kMax) + ", assuming more volume never helps; " + grouped(h.runs) + " runs)";
  return s;
}

}  // namespace brokersim
