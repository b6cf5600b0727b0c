// The load a scenario offers each queue's consumers, computed from the scenario alone (before
// running): arrival rate x mean service time, in erlangs, against the slots that read the queue.
// The summary opens with it, and the warnings below catch the unit mistakes it makes visible.
#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace brokersim {

struct QueueLoad {
  int queue = 0;
  double rate_per_s = 0;       // mean over the run (a rate_schedule: time-weighted to stop.time_ms)
  double peak_rate_per_s = 0;  // rate_schedule: its highest step; otherwise the mean
  double peak_from_ms = 0;     // when the peak starts
  bool scheduled = false;      // some producer follows a rate_schedule
  double mean_service_ms = 0;  // weighted by each producer's rate
  int slots = 0;               // count x slots over the groups reading the queue
  double erlangs() const { return rate_per_s * mean_service_ms / 1000.0; }
  double utilization() const { return slots > 0 ? erlangs() / slots : 0.0; }
  double peak_utilization() const { return slots > 0 ? peak_rate_per_s * mean_service_ms / 1000.0 / slots : 0.0; }
};

// One entry per queue some producer publishes to, in queue order.
std::vector<QueueLoad> offered_load(const Scenario& s);

// Likely unit mistakes (printed on stderr; the run still goes ahead): a deadline shorter than
// the mean service time, a queue with producers and no consumer, an offered load far above the
// fleet's capacity for the whole run.
std::vector<std::string> scenario_warnings(const Scenario& s);

}  // namespace brokersim
