// How sure plan's answer is: for the chosen setting, at what confidence each target holds
// (Bonferroni over the targets), the targets over runs with their observed fraction and exact
// bound, and the chance a single run (a day, an hour) at that setting misses some target.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/plan/report.hpp"

namespace brokersim {

struct Assurance {
  bool at_bound = false;          // the targets on the means were judged at their bounds (--precision, --conservative)
  double joint_confidence = 0.95;
  double per_target_confidence = 0.95;  // 1 - 0.05/k (Bonferroni over k targets)
  std::uint64_t targets = 0;
  std::uint64_t runs = 0, runs_missed = 0;  // replications of the chosen setting; those in which some target failed
  double p_miss = 0, p_miss_upper = 1;      // runs_missed / runs, and its Clopper-Pearson 95% upper bound
  std::string statement;
  // What a run stands for (producers[].volume.per_run): days whose volume varies, or copies of one
  // day; each varying producer's expected multiplier and its cv (NaN where the kind has no simple cv).
  struct DayVolume {
    std::size_t producer = 0;
    double mean = 1, cv = 0;
    int fitted_days = 0;  // volume.fitted: the days fit --days measured the spread from (0: not given)
    double cv_low = 0, cv_high = 0;
  };
  // Producers whose runs replay one of a days_csv trace's whole days, and how many days it has.
  struct DaysReplayed {
    std::size_t producer;
    std::size_t days;
  };
  std::vector<DaysReplayed> days_replayed;
  std::vector<DayVolume> days;
  // Producers that say what they were fitted from (producers[].fitted, volume.fitted), and whether
  // the runs redraw those parameters (parameter_uncertainty).
  struct Fitted {
    std::size_t producer;
    std::uint64_t service_times, arrivals;
    int days;
  };
  std::vector<Fitted> fitted;
  bool parameters_redrawn = false;
  std::string runs_cover;
};

Assurance assurance_of(const PlanReport& rep, std::size_t p);
nlohmann::ordered_json assurance_json(const Assurance& a);

// One target's check at a setting (JSON `target_checks`): lhs, rhs, the half-width at its bound,
// holds; over runs: runs met, fraction, its lower bound and the fraction asked.
nlohmann::ordered_json target_checks_json(const PlanReport& rep, std::size_t p);

}  // namespace brokersim
