// The load a scenario offers each queue's consumers, computed from the scenario alone (before
// running): arrival rate x mean service time, in erlangs, against the slots that read the queue.
// The summary opens with it, and the warnings below catch the unit mistakes it makes visible.
// The load covers the span the run measures, [warmup_ms, stop.time_ms], as the throughput does,
// and an autoscaled group counts at its ceiling (autoscale.max): the capacity the fleet can reach.
// Beside the mean, the peak: a load averaged over a run hides a burst that holds every slot for
// half an hour. A rate_schedule's peak is its highest step; arrivals at given times (at_ms,
// trace_csv, days_csv) peak in their busiest window of kPeakWindowMs, which for a schedule of
// steps that long or longer is the same figure as its highest step.
#pragma once

#include <string>
#include <vector>

#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// One minute: short beside the half-hour bursts a mean hides, long enough to be a rate (a
// minute's arrivals at the rates planned for are tens to thousands), and a rate_schedule's
// steps are rarely shorter. A measured span shorter than this is its own window.
inline constexpr double kPeakWindowMs = 60'000;

struct QueueLoad {
  int queue = 0;
  double rate_per_s = 0;       // mean over [warmup_ms, stop.time_ms] (a rate_schedule: time-weighted)
  // A rate_schedule: its highest step in that span; arrivals at given times: the arrivals of their
  // busiest window (peak_window_ms) in that span, per second (days_csv: the busiest of any day);
  // otherwise the mean. Several producers' peaks add up.
  double peak_rate_per_s = 0;
  double peak_from_ms = 0;     // when the peak starts (at warmup_ms when it started before; days_csv: time of day)
  bool scheduled = false;      // some producer follows a rate_schedule
  // Some producer's arrivals are at given times: the window their peak is counted over (0 when
  // that window is the whole measured span: the peak is then the mean).
  double peak_window_ms = 0;
  int peak_day = -1;           // days_csv: the day (from 0, as producers.N.day) of the busiest window
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
