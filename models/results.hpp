// What a run is given besides its scenario (output streams) and what it reports: outcomes, waits,
// per-queue and per-consumer figures, filled by the ledger (models/ledger.hpp); read by the
// reports, sweeps and tests.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <cstdint>
#include <iosfwd>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/metrics.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct QueueResult {
  std::string name;
  std::uint64_t published = 0, delivered = 0;  // messages in (publishes, dead letters) and deliveries
  // Messages whose TTL ended in this queue (dead-lettered or dropped): a message figure, so a job
  // that expired here and again in this queue's dead-letter queue counts once in each queue.
  std::uint64_t expired = 0;
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
  // The executions metered (a batch handler's invocations, or each execution with
  // ConsumerSpec::Metering::executions) and their durations each rounded up to 1 ms (and to the
  // metering's minimum), in the measured span (Consumer::invocations); the instance's activity
  // periods, as metered, in ms (Metering::activity).
  std::uint64_t invocations = 0, billed_ms = 0, active_ms = 0;
};

// A wait histogram for one window: the buckets of sim::Histogram (so a window's quantiles read
// like the whole run's), kept sparse, because a run may have thousands of windows and a full
// histogram is 30 KB.
class SparseHistogram {
 public:
  void add(std::int64_t v) {
    const std::uint64_t u = v < 0 ? 0 : static_cast<std::uint64_t>(v);
    ++counts_[static_cast<std::uint32_t>(sim::Histogram::index(u))];
    ++n_;
    sum_ += static_cast<double>(u);
    max_ = std::max(max_, u);
    min_ = std::min(min_, u);
  }
  void merge(const SparseHistogram& o) {
    for (const auto& [b, c] : o.counts_) counts_[b] += c;
    n_ += o.n_;
    sum_ += o.sum_;
    max_ = std::max(max_, o.max_);
    min_ = std::min(min_, o.min_);
  }
  std::uint64_t count() const { return n_; }
  double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0.0; }
  std::int64_t max() const { return n_ ? static_cast<std::int64_t>(max_) : 0; }
  // As sim::Histogram::quantile: nearest rank, the bucket's midpoint clamped to the range seen.
  double quantile(double q) const {
    if (n_ == 0) return 0.0;
    const double target = std::max(1.0, std::ceil(q * static_cast<double>(n_) - 1e-9));
    std::uint64_t seen = 0;
    for (const auto& [b, c] : counts_) {
      seen += c;
      if (static_cast<double>(seen) >= target) {
        const double mid = (static_cast<double>(sim::Histogram::lower(b)) + static_cast<double>(sim::Histogram::upper(b))) / 2.0;
        return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
      }
    }
    return static_cast<double>(max_);
  }

 private:
  std::map<std::uint32_t, std::uint64_t> counts_;
  std::uint64_t n_ = 0;
  double sum_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
};

// What the counted jobs of a span came to: the whole run's (RunResult, sim::Histogram waits) or
// those created in one window of observe.window_ms, whenever their outcome came (WindowResult,
// SparseHistogram waits). Waits in ns, one histogram per row of kWaits.
template <class Histogram>
struct Tally {
  std::uint64_t generated = 0;  // the sum of `outcomes`
  OutcomeCounts outcomes{};
  std::uint64_t completed = 0, completed_on_time = 0;
  // Of completed_on_time, the jobs that had no deadline (never late: "completed", not "on time").
  std::uint64_t completed_without_deadline = 0;
  std::array<Histogram, kWaitCount> waits{};
  Histogram& wait(Wait w) { return waits[index(w)]; }
  const Histogram& wait(Wait w) const { return waits[index(w)]; }
};

struct WindowResult : Tally<SparseHistogram> {
  Time from = 0, to = 0;
  void merge(const WindowResult& o) {
    generated += o.generated;
    for (std::size_t i = 0; i < outcomes.size(); ++i) outcomes[i] += o.outcomes[i];
    completed += o.completed;
    completed_on_time += o.completed_on_time;
    completed_without_deadline += o.completed_without_deadline;
    for (std::size_t w = 0; w < kWaitCount; ++w) waits[w].merge(o.waits[w]);
  }
};

// What a consumer group cost over the measured span (after the warm-up): a replica counts from
// its request (start_ms, or the autoscaler's decision, so its start latency is paid) until its
// connection closes after it left.
// Why a run ended: its span ("time"), all requested jobs settled ("jobs"), nothing left to happen
// ("drained"), or a limit: "max_in_system", "max_events", "zero_time_loop" (more than 50 million
// events at one simulated instant: time stopped moving). A run stopped by a limit is incomplete.
enum class StopReason : std::uint8_t { Time, Jobs, Drained, MaxInSystem, MaxEvents, ZeroTimeLoop };
inline constexpr StopReason kStopReasons[] = {StopReason::Time, StopReason::Jobs, StopReason::Drained,
                                              StopReason::MaxInSystem, StopReason::MaxEvents, StopReason::ZeroTimeLoop};
// The name in outputs and docs ("max_in_system").
constexpr std::string_view stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Time: return "time";
    case StopReason::Jobs: return "jobs";
    case StopReason::Drained: return "drained";
    case StopReason::MaxInSystem: return "max_in_system";
    case StopReason::MaxEvents: return "max_events";
    case StopReason::ZeroTimeLoop: return "zero_time_loop";
  }
  return "";
}
constexpr bool stopped_by_limit(StopReason r) {
  return r == StopReason::MaxInSystem || r == StopReason::MaxEvents || r == StopReason::ZeroTimeLoop;
}

struct GroupFleetResult {
  double consumer_seconds = 0, slot_seconds = 0;
  // Replica time with the count taken as one while the group has none (a platform that always
  // bills at least one instance: Functions Premium).
  double at_least_one_seconds = 0;
  double mean_replicas = 0;
  int peak_replicas = 0;
};

// A run's figures; the tally counts the jobs created after the warm-up (docs/outcomes.md).
struct RunResult : Tally<sim::Histogram> {
  // expired_before_start, by where the budget went: rejected at receipt with no local wait (it
  // arrived stale: the budget was spent upstream, in the broker queue or in transit) vs went
  // stale in the consumer's local buffer. They add up to outcomes[ExpiredBeforeStart].
  std::uint64_t stale_on_receipt = 0, stale_in_local_buffer = 0;
  double measured_s = 0;         // measurement window (end - warm-up), seconds
  double slot_utilization = 0;
  double idle_slots_with_backlog = 0;
  // Fraction of slot time a slot was idle while another consumer of its queue held received,
  // unstarted jobs: work stranded in the wrong prefetch buffer.
  double idle_slots_with_stranded_work = 0;
  std::uint64_t admitted_but_expired = 0, rejected_but_valid = 0;
  std::uint64_t duplicate_executions = 0;
  // duplicate_executions by cause (kDuplicateCauses, by DuplicateCause; None stays 0 in a sound run)
  std::array<std::uint64_t, kDuplicateCauseCount> duplicates_by_cause{};
  std::uint64_t redeliveries = 0;
  std::uint64_t consumer_timeouts = 0;  // channels closed by the delivery acknowledgement timeout
  // Jobs that started executing at the instant they were created (no wait anywhere); the
  // others, generated - started_at_once, are reported as jobs_waited (P(wait) in the models).
  std::uint64_t started_at_once = 0;
  std::vector<QueueResult> queues;
  std::vector<ConsumerResult> consumers;
  std::vector<WindowResult> windows;       // observe.window_ms only
  // With producers publishing to several queues: the counted jobs by the queue their producer
  // publishes to (jobs_by_queue.NAME in the outputs), by queue index; empty otherwise.
  std::vector<WindowResult> by_queue;
  std::vector<GroupFleetResult> groups;    // per consumer group
  // Completions (on time, or on time and late) of any job inside the measured span: the rates'
  // numerators (Ledger::count_outcome).
  std::uint64_t span_completed = 0, span_completed_on_time = 0;
  std::uint64_t span_completed_without_deadline = 0;  // of span_completed_on_time, jobs with no deadline
  int peak_replicas_total = 0;             // most replicas of all groups at once (the text summary's)
  // The broker kind's own figures (BrokerKindModel::figures: SQS's receives), taken as the
  // measured span closes.
  std::vector<double> broker_figures;
  // Each producer's volume multiplier in this run (producers[].volume: the fixed multiplier times
  // this run's per_run draw), by producer index.
  std::vector<double> volumes;
  std::vector<double> days;  // by producer: the day of a days_csv trace the run replayed
  // By producer: the mean of this run's service-time distribution, ms (redrawn under
  // parameter_uncertainty).
  std::vector<double> service_means_ms;
  std::uint64_t events = 0;
  Time end_time = 0;
  Time followed = 0;  // how long a timed run went on past stop.time_ms following its jobs
  std::uint64_t peak_in_system = 0;
  StopReason stop_reason = StopReason::Drained;
};

// The plain counters of `run --json`, in output order (after the slot figures). Adding one costs
// its field above, its row here, the call that counts it and its line in docs/outcomes.md: the
// metric registry (experiments/cli/metrics/registry.cpp) gives it to run --json, sweeps, plans and
// `metrics`, and the ledger stops it with the span if it says so.
struct CounterMetric {
  std::uint64_t RunResult::*field;
  std::string_view name;
  std::string_view unit;    // what one of it is: "jobs", "executions", ...
  std::string_view counts;  // what it counts, for `metrics --describe`
  // Counted for any job's events (not the counted jobs' own fates): frozen at the measured span's
  // end (Ledger::close_span), so that a run following its jobs past the stop does not add to it.
  bool stops_with_span;
};
inline constexpr CounterMetric kCounters[] = {
    {&RunResult::admitted_but_expired, "admitted_but_expired", "jobs",
     "jobs a consumer admitted though already expired (its clock is skewed)", false},
    {&RunResult::rejected_but_valid, "rejected_but_valid", "jobs",
     "jobs a consumer rejected as stale though still valid in true time", false},
    {&RunResult::duplicate_executions, "duplicate_executions", "executions", "executions of a job that had started before",
     true},
    {&RunResult::redeliveries, "redeliveries", "deliveries", "deliveries of a message delivered before", true},
    {&RunResult::consumer_timeouts, "consumer_timeouts", "channels",
     "channels closed by the delivery acknowledgement timeout", true},
};
inline constexpr std::size_t kCounterCount = std::size(kCounters);

// One job of the job-level series (warmup_ms "auto"): its creation time and the metric's value
// for it; created < 0 for a job that never got an outcome (still in the system at the end).
struct JobSample {
  Time created = -1;
  double value = 0;
};

class JobObserver;
class StateObserver;

struct RunOptions {
  // Who hears of the jobs' outcomes and of the state (models/run_observer.hpp): the --trace and
  // --timeseries CSV writers of the output layer (experiments/cli/outputs/), or a test's own.
  JobObserver* job_observer = nullptr;
  StateObserver* state_observer = nullptr;
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
