// --trace: one CSV row per job, in job order (docs/outcomes.md "--trace jobs.csv").
#pragma once

#include <cstdint>
#include <deque>
#include <iosfwd>
#include <optional>
#include <string>

#include "models/run_observer.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// The header row, written by whoever opens the file.
inline constexpr const char* kTraceHeader =
    "job,producer,queue,consumer,created_ms,expires_at_ms,published_ms,delivered_ms,received_ms,"
    "started_ms,finished_ms,ended_ms,outcome,redeliveries,dead_letterings,warmup,executions,first_started_ms,"
    "stage_publish_ms,stage_queue_ms,stage_held_ms,stage_transit_ms,stage_local_ms,stage_service_ms";

class TraceCsv final : public JobObserver {
 public:
  TraceCsv(std::ostream& out, const Scenario& s) : out_(out), s_(s) {}
  void job_ended(const Job& job, Outcome o, const JobAccount& account) override;
  void run_ended() override;

 private:
  std::ostream& out_;
  const Scenario& s_;
  // Outcomes come in the order they are decided; a row waits here until every earlier job has
  // ended.
  std::uint64_t next_ = 0;
  std::deque<std::optional<std::string>> pending_;
};

}  // namespace brokersim
