// A queue's rows as attempts of messages, and its failed attempts: what `fit` counts arrivals by,
// and what it leaves out of the service times and fits on their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/fit/mle.hpp"

namespace brokersim::fit {

// The rows of one queue grouped by message (the log's id column): a message arrives at its first
// enqueue, and each of its rows is an attempt (a retry, a redelivery, a batch abandoned). Without
// an id column each row is a message of one attempt.
struct Messages {
  bool by_id = false;
  std::size_t attempts = 0;         // rows
  std::size_t retried = 0;          // messages with more than one attempt
  std::size_t most = 0;             // the most attempts of one message
  std::vector<std::int64_t> arrivals;       // each message's first enqueue, from the origin, sorted
  // Messages with an attempt that started and ended, and of them those none of whose attempts
  // succeeded: the messages that ended failed. Told by outcome, not by which attempt came last:
  // the attempts' starts are read on their workers' clocks, which can disagree by more than two
  // attempts lie apart.
  std::size_t ended = 0, ended_failed = 0;
  std::size_t count() const { return arrivals.size(); }
  double attempts_per_message() const {
    return arrivals.empty() ? 0.0 : static_cast<double>(attempts) / static_cast<double>(arrivals.size());
  }
};

// `rows`: indices into log.rows, one queue's. O(rows log rows) with an id column.
Messages group_messages(const JobLog& log, const std::vector<std::size_t>& rows, std::int64_t origin);

// A started attempt that ended: succeeded, finished (no outcome column) or failed.
inline bool attempt_ended(const JobRow& r) {
  return r.started != kNoTime && (r.outcome == Outcome::Failed || r.outcome == Outcome::Succeeded || r.outcome == Outcome::Finished);
}

// An execution that ended as the log says it should: succeeded, or finished without an outcome
// column. Its duration is a service time; a failed execution's is not (it stopped part-way).
inline bool finished_normally(const JobRow& r) {
  return r.started != kNoTime && r.finished != kNoTime && r.outcome != Outcome::Failed;
}

// The failed attempts of one queue, from the log's outcome columns.
struct FailureFit {
  std::size_t ended = 0;            // started attempts that ended: succeeded (or finished) or failed
  std::size_t failed = 0;           // of them failed
  std::size_t failed_timed = 0;     // failed with a finish time: the durations below
  std::size_t messages_ended = 0;   // messages with an attempt that started and ended
  std::size_t messages_failed = 0;  // of them, those with no attempt that succeeded: ended failed
  std::optional<ServiceFit> durations;  // the failed attempts' durations (ms), fitted like service times
  double fraction_of_service = 0;   // their mean over the service times' mean
  double per_attempt() const { return ended ? static_cast<double>(failed) / static_cast<double>(ended) : 0.0; }
  double per_message() const {
    return messages_ended ? static_cast<double>(messages_failed) / static_cast<double>(messages_ended) : 0.0;
  }
  // brokersim's failure_probability is per execution; whether a failed execution is tried again
  // is the broker's and the client's (Service Bus abandons it, SQS keeps it, RabbitMQ acks it).
  // Tried again, it is the chance that an attempt fails; else the chance that a message ends failed.
  double probability(bool tried_again) const { return tried_again ? per_attempt() : per_message(); }
};

FailureFit fit_failures(const JobLog& log, const std::vector<std::size_t>& rows, const Messages& messages,
                        double service_mean_ms);

}  // namespace brokersim::fit
