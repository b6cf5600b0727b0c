// The load a scenario offers each queue's consumers, computed from the scenario alone (before
// running): arrival rate x mean service time, in erlangs, against the slots that read the queue.
// The summary opens with it, and the warnings below catch the unit mistakes it makes visible.
// The load covers the span the run measures, [warmup_ms, stop.time_ms], as the throughput does,
// and an autoscaled group counts at its ceiling (autoscale.max): the capacity the fleet can reach.
#pragma once

#include <string>
#include <vector>

#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

struct QueueLoad {
  int queue = 0;
  double rate_per_s = 0;       // mean over [warmup_ms, stop.time_ms] (a rate_schedule: time-weighted)
  double peak_rate_per_s = 0;  // rate_schedule: its highest step in that span; otherwise the mean
  double peak_from_ms = 0;     // when the peak starts (at warmup_ms when it started before)
  bool scheduled = false;      // some producer follows a rate_schedule
  double mean_service_ms = 0;  // weighted by each producer's rate
  int slots = 0;               // count x slots over the groups reading the queue (autoscaled: max x slots)
  bool autoscaled = false;     // some group reading it autoscales: `slots` is its ceiling
  double mean_slots = 0;       // after a run (with_mean_slots): the groups' mean replicas x slots
  // The queue's pool: the queues joined to it by groups reading several queues (itself alone
  // otherwise), whose slots they share. Utilisation is the pool's: its erlangs over its slots.
  double pool_erlangs = 0, pool_peak_erlangs = 0, pool_mean_slots = 0;
  int pool_slots = 0;
  int pool_queues = 1;
  double erlangs() const { return rate_per_s * mean_service_ms / 1000.0; }
  double utilization() const { return pool_slots > 0 ? pool_erlangs / pool_slots : 0.0; }
  double peak_utilization() const { return pool_slots > 0 ? pool_peak_erlangs / pool_slots : 0.0; }
  double mean_slots_utilization() const { return pool_mean_slots > 0 ? pool_erlangs / pool_mean_slots : 0.0; }
};

// One entry per queue some producer publishes to, in queue order.
std::vector<QueueLoad> offered_load(const Scenario& s);

// Whether the run reports a queue's mean slots: some group reading it autoscales, leaves or names
// those keys (even as null, so that a sweep varying them keeps one set of metrics).
bool reports_mean_slots(const Scenario& s, int queue);

// The same loads with mean_slots from a run's fleet figures (mean replicas per group).
std::vector<QueueLoad> offered_load(const Scenario& s, const std::vector<GroupFleetResult>& groups);

// Likely unit mistakes (printed on stderr; the run still goes ahead): a deadline shorter than
// the mean service time, a queue with producers and no consumer, an offered load far above the
// fleet's capacity for the whole run.
std::vector<std::string> scenario_warnings(const Scenario& s);

}  // namespace brokersim
