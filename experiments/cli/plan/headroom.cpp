#include "experiments/cli/plan/headroom.hpp"

#include <cmath>

#include "experiments/cli/plan/search.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

double multiplier_at(std::size_t i) { return Headroom::multiplier_at(i); }

const char* verdict_name(LookVerdict v) {
  switch (v) {
    case LookVerdict::Meets: return "meets";
    case LookVerdict::ShownToMiss: return "shown_to_miss";
    case LookVerdict::NotShownToMeet: return "not_shown_to_meet";
  }
  return "";
}

std::string target_words(const std::vector<Target>& targets, std::size_t i) {
  return "target " + std::to_string(i + 1) + " (" + targets[i].text + ")";
}

// Whether target i's estimate is on the wrong side: the runs' mean (its margin, inside the
// threshold when positive), or for a target over runs the share of runs that met it.
bool estimate_misses(const PointResult& r, const std::vector<Target>& targets, std::size_t i) {
  const Target& t = targets[i];
  if (t.in_runs)
    return r.runs_judged[i] == 0 ||
           static_cast<double>(r.runs_met[i]) < *t.in_runs * static_cast<double>(r.runs_judged[i]);
  const bool strict = t.cmp == Cmp::Lt || t.cmp == Cmp::Gt;
  return !(strict ? r.margin[i] > 0 : r.margin[i] >= 0);
}

// What a failing target's estimate was, in words: "met in 57 of 60 runs" or "on the runs' means".
std::string estimate_words(const PointResult& r, const std::vector<Target>& targets, std::size_t i) {
  if (!targets[i].in_runs) return "on the runs' means";
  return "in " + std::to_string(r.runs_met[i]) + " of " + std::to_string(r.runs_judged[i]) + " runs";
}

}  // namespace

HeadroomLook look_verdict(double multiplier, const PointResult& r, const std::vector<Target>& targets, bool precision) {
  HeadroomLook look{multiplier, LookVerdict::Meets, ""};
  if (r.meets) return look;
  look.verdict = LookVerdict::NotShownToMeet;
  if (r.incomplete > 0) {
    look.why = grouped(static_cast<std::int64_t>(r.incomplete)) + " of its runs stopped at a limit or measured nothing";
    return look;
  }
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (r.holds[i]) continue;
    // --precision decides each target at its bounds: missed at the bound towards passing, or not
    // decided when its interval still straddles the threshold.
    const bool missed = precision ? r.decided[i] : estimate_misses(r, targets, i);
    if (missed) {
      look.verdict = LookVerdict::ShownToMiss;
      look.why = target_words(targets, i) + (precision ? " missed at its confidence bound after " +
                                                             grouped(static_cast<std::int64_t>(r.replications)) + " runs"
                                                       : " missed " + estimate_words(r, targets, i));
      return look;
    }
    if (look.why.empty())
      look.why = target_words(targets, i) +
                 (precision ? " undecided after " + grouped(static_cast<std::int64_t>(r.replications)) +
                                  " runs (its interval still straddles it)"
                            : " met " + estimate_words(r, targets, i) + " but not at its confidence bound");
  }
  return look;
}

std::string unscalable_volume(const Scenario& s, std::size_t producer) {
  const ArrivalSpec& a = s.producers[producer].arrivals;
  const std::string name = "producers." + std::to_string(producer);
  if (a.kind == ArrivalSpec::Kind::Trace && a.days() > 0)
    return name + " replays whole days of a trace (days_csv), each run one day at its own volume, which no volume "
                  "multiplier scales: for headroom, plan with a rate_schedule and a volume.per_run in its place "
                  "(fit --days writes both)";
  if (a.kind == ArrivalSpec::Kind::AtTimes || a.kind == ArrivalSpec::Kind::Trace)
    return name + " has arrivals at given times (" + (a.kind == ArrivalSpec::Kind::AtTimes ? "at_ms" : "trace_csv") +
           "), which no volume scales";
  return "";
}

void scale_volume(Scenario& s, const Scenario& base, std::size_t step) {
  for (std::size_t p = 0; p < base.producers.size(); ++p)
    s.producers[p].volume_multiplier = base.producers[p].volume_multiplier * multiplier_at(step);
}

Headroom find_headroom(const PlanGrid& grid, std::size_t best, const std::vector<Target>& targets,
                       const PlanOptions& o, PlanExecutor& executor) {
  Headroom h;
  for (std::size_t p = 0; p < grid.scenarios[best].producers.size(); ++p) {
    h.not_available = unscalable_volume(grid.scenarios[best], p);
    if (!h.not_available.empty()) return h;
  }
  // Each look runs the chosen setting afresh with its volume scaled, in a grid that is the plan's
  // own but for that one scenario (targets may name the setting's axes and slots_total).
  // One copy of the grid for every look; only the chosen scenario's volumes change between looks.
  PlanGrid g = grid;
  const auto meets = [&](std::size_t i) {
    scale_volume(g.scenarios[best], grid.scenarios[best], i);
    PointRunner runner(g, targets, o, nullptr, executor, i);
    h.judged.push_back(look_verdict(multiplier_at(i), runner.evaluate(best), targets, o.precision.has_value()));
    h.runs += runner.replications_spent();
    return h.judged.back().verdict == LookVerdict::Meets;
  };
  const std::size_t last = Headroom::kLastStep;
  if (meets(last)) {
    h.meets_up_to = Headroom::kMax;
    return h;
  }
  std::size_t lo = 0, hi = last;  // lo met (the plan's own judgement), hi did not
  HeadroomLook first_short = h.judged.back();
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (meets(mid)) {
      lo = mid;
    } else {
      hi = mid;
      first_short = h.judged.back();
    }
  }
  h.meets_up_to = multiplier_at(lo);
  h.misses_at = first_short;
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
  j["misses_at"] = h.misses_at ? nlohmann::ordered_json(h.misses_at->multiplier) : nlohmann::ordered_json(nullptr);
  j["misses_at_verdict"] = h.misses_at ? nlohmann::ordered_json(verdict_name(h.misses_at->verdict)) : nlohmann::ordered_json(nullptr);
  j["misses_at_why"] = h.misses_at ? nlohmann::ordered_json(h.misses_at->why) : nlohmann::ordered_json(nullptr);
  j["step"] = Headroom::kStep;
  j["max"] = Headroom::kMax;
  j["runs"] = h.runs;
  nlohmann::ordered_json looks = nlohmann::ordered_json::array();
  for (const HeadroomLook& l : h.judged)
    looks.push_back({{"multiplier", l.multiplier}, {"meets", l.verdict == LookVerdict::Meets}, {"verdict", verdict_name(l.verdict)}});
  j["judged"] = looks;
  return j;
}

std::string headroom_text(const Headroom& h) {
  if (!h.not_available.empty()) return "Headroom: not available: " + h.not_available;
  const auto pct = [](double m) { return fmt("%+.0f%%", 100 * (m - 1)); };
  std::string s = "Headroom: meets every target up to volume x" + fmt("%.2f", h.meets_up_to) + " (" + pct(h.meets_up_to) + ")";
  if (h.misses_at)
    s += (h.misses_at->verdict == LookVerdict::ShownToMiss ? "; shown to miss at x" : "; not shown to meet at x") +
         fmt("%.2f", h.misses_at->multiplier) + ", where " + h.misses_at->why;
  else
    s += "; the largest looked at";
  s += " (every producer's volume scaled, judged as above, bisection in steps of " + fmt("%.2f", Headroom::kStep) +
       " up to x" + fmt("%.2f", Headroom::kMax) + ", assuming more volume never helps; " + grouped(h.runs) + " runs)";
  return s;
}

}  // namespace brokersim
