// The metric tables: each outcome and wait a run reports is declared here once. The text summary
// (experiments/cli/report.cpp), the windows (WindowResult) and the time series iterate these tables;
// the JSON, sweeps, `plan` targets and `metrics` take them through the metric registry
// (experiments/cli/metrics/registry.cpp). Adding a wait costs its enumerator and its row here, the
// call that records it (Ledger::wait) and its line in docs/outcomes.md; the counters are in
// results.hpp (kCounters).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "models/job.hpp"

namespace brokersim {

// The outcomes in output order (`outcomes.*`, `fraction.*`, the summary's table); the time
// series has them all but `in_system` (a job still in the system has no final outcome yet).
inline constexpr Outcome kReportedOutcomes[] = {
    Outcome::RejectedAtPublish, Outcome::ExpiredInQueue,  Outcome::ExpiredInTransit,
    Outcome::ExpiredBeforeStart, Outcome::CompletedOnTime, Outcome::CompletedLate,
    Outcome::TimedOut,          Outcome::Failed,          Outcome::Lost,
    Outcome::DeadLettered,      Outcome::InSystem,
};

// The waits, in output order (`wait_ms.NAME`, the summary's table). Each is a histogram in ns
// over the counted jobs that went through the stage; docs/outcomes.md gives each population.
enum class Wait : std::uint8_t { Queue, QueueExpired, Transit, Local, Service, Sojourn };

struct WaitMetric {
  Wait wait;
  std::string_view name;   // wait_ms.NAME
  std::string_view stage;  // the summary's row: "stage (span)"
  std::string_view span;
  bool shown_when_empty;   // the summary shows the row even without a sample
};

inline constexpr WaitMetric kWaits[] = {
    {Wait::Queue, "queue", "queue", "enqueue -> delivery", true},
    // Jobs that expired in a broker queue, enqueue (in that queue) to expiry: `queue` covers
    // delivered jobs only, so without it a run where most jobs expire there would read as short.
    {Wait::QueueExpired, "queue_expired", "queue", "enqueue -> expiry", false},
    {Wait::Transit, "transit", "transit", "delivery -> receipt", true},
    {Wait::Local, "local", "local", "receipt -> start", true},
    {Wait::Service, "service", "service", "start -> finish", true},
    {Wait::Sojourn, "sojourn", "sojourn", "creation -> outcome", true},
};
inline constexpr std::size_t kWaitCount = std::size(kWaits);

constexpr bool waits_in_enum_order() {
  for (std::size_t i = 0; i < kWaitCount; ++i)
    if (kWaits[i].wait != static_cast<Wait>(i)) return false;
  return true;
}
static_assert(waits_in_enum_order(), "kWaits is indexed by Wait: one row per enumerator, in its order");

constexpr std::size_t index(Wait w) { return static_cast<std::size_t>(w); }

// The causes of duplicate executions, in output order (`duplicate_executions_by_cause.NAME`, the
// summary's sentence); they add up to `duplicate_executions` (checked at the end of every run).
// A new cause costs its DuplicateCause enumerator (job.hpp), its row here, where the model
// records it, and its line in docs/outcomes.md.
struct DuplicateCauseMetric {
  DuplicateCause cause;
  std::string_view name;  // duplicate_executions_by_cause.NAME
  std::string_view said;  // in the summary: "N <said>"
};
inline constexpr DuplicateCauseMetric kDuplicateCauses[] = {
    {DuplicateCause::Lapse, "lapse", "after a lock or visibility lapse"},
    {DuplicateCause::ShutdownGrace, "shutdown_grace", "cut at a leaving consumer's shutdown grace"},
    {DuplicateCause::Crash, "crash", "after a consumer crash"},
    {DuplicateCause::ConsumerTimeout, "consumer_timeout", "after a consumer timeout"},
    {DuplicateCause::BrokerRestart, "broker_restart", "after a broker restart"},
    {DuplicateCause::FailedRetry, "failed_retry", "retries of failed executions"},
    {DuplicateCause::WorkerLost, "worker_lost", "after a pool process was killed"},
};
static_assert(std::size(kDuplicateCauses) == kDuplicateCauseCount - 1, "one row per DuplicateCause but None");
constexpr std::size_t index(DuplicateCause c) { return static_cast<std::size_t>(c); }

}  // namespace brokersim
