// What a run is given besides its scenario (output streams) and what it reports: outcomes, waits,
// per-queue and per-consumer figures, filled by the ledger (models/ledger.hpp); read by the
// reports, sweeps and tests.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct QueueResult {
  std::string name;
  std::uint64_t published = 0, delivered = 0;
  std::array<std::uint64_t, kDeathReasonCount> dead_lettered{};  // by DeathReason
  std::uint64_t dl(DeathReason why) const { return dead_lettered[static_cast<std::size_t>(why)]; }
  std::uint64_t max_ready = 0;
  double mean_ready = 0, mean_unacked = 0;
  std::uint64_t ready_at_end = 0;
  std::uint64_t max_bytes = 0;    // peak bytes held (ready + unacked bodies)
  double mean_bytes = 0;          // time-weighted
  double byte_seconds = 0;        // storage cost: bytes held integrated over time
  std::uint64_t deletions = 0;    // times deleted by x-expires
};

struct ConsumerResult {
  double utilization = 0;     // busy slot time / slot time while attached
  double mean_local = 0;      // received, not started
  std::uint64_t started = 0;
};

struct RunResult {
  std::uint64_t generated = 0;   // jobs created after warm-up: the sum of `outcomes`
  OutcomeCounts outcomes{};
  // Waits in ns (SCENARIO.md "Outputs"): queue per delivery, transit per receipt, local per
  // start or rejection, service per finished execution, sojourn per job with an outcome.
  sim::Histogram wait_queue, wait_transit, wait_local, wait_service, sojourn;
  // Jobs that expired in a broker queue: enqueue (in that queue) to expiry. wait_queue covers
  // delivered jobs only, so without this the queue wait of a run where most jobs expire there
  // would read as short.
  sim::Histogram wait_queue_expired;
  // expired_before_start, by where the budget went: rejected at receipt with no local wait (it
  // arrived stale: the budget was spent upstream, in the broker queue or in transit) vs went
  // stale in the consumer's local buffer. They add up to outcomes[ExpiredBeforeStart].
  std::uint64_t stale_on_receipt = 0, stale_in_local_buffer = 0;
  std::uint64_t completed = 0, completed_on_time = 0;
  double measured_s = 0;         // measurement window (end - warm-up), seconds
  double slot_utilization = 0;
  double idle_slots_with_backlog = 0;
  // Fraction of slot time a slot was idle while another consumer of its queue held received,
  // unstarted jobs: work stranded in the wrong prefetch buffer.
  double idle_slots_with_stranded_work = 0;
  std::uint64_t admitted_but_expired = 0, rejected_but_valid = 0;
  std::uint64_t duplicate_executions = 0;
  std::uint64_t redeliveries = 0;
  std::uint64_t consumer_timeouts = 0;  // channels closed by the delivery acknowledgement timeout
  // Jobs that started executing at the instant they were created (no wait anywhere); the
  // others, generated - started_at_once, are reported as jobs_waited (P(wait) in the models).
  std::uint64_t started_at_once = 0;
  std::vector<QueueResult> queues;
  std::vector<ConsumerResult> consumers;
  std::uint64_t events = 0;
  Time end_time = 0;
  std::uint64_t peak_in_system = 0;
  // Why the run ended: "time", "jobs" (all requested jobs settled), "drained" (nothing left to
  // happen), or a limit: "max_in_system", "max_events", "zero_time_loop" (more than 50 million
  // events at one simulated instant: time stopped moving).
  std::string stop_reason;
};

// One job of the job-level series (warmup_ms "auto"): its creation time and the metric's value
// for it; created < 0 for a job that never got an outcome (still in the system at the end).
struct JobSample {
  Time created = -1;
  double value = 0;
};

struct RunOptions {
  std::ostream* trace = nullptr;       // --trace: one CSV row per job, in job order
  std::ostream* timeseries = nullptr;  // --timeseries: one CSV row per observe.every_ms
  std::ostream* progress = nullptr;    // --progress: a line now and then, simulated time and jobs
  // warmup_ms "auto": per counted job, indexed by job id (creation order), its sojourn in ms or
  // (job_series_stale) 1 when it expired before it started, else 0. Only when asked: it costs a
  // vector entry per job.
  std::vector<JobSample>* job_series = nullptr;
  bool job_series_stale = false;
};

// Thrown when a run breaks an invariant (outcomes not adding up, time going backwards): a bug,
// never a property of the scenario.
struct InvariantError : std::logic_error {
  using std::logic_error::logic_error;
};

}  // namespace brokersim
