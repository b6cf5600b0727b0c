// Every job's final outcome, counted once: the run's tally, the split of expired_before_start by
// cause, the job-level series (warmup_ms "auto"), the count per --timeseries interval; and the
// jobs still unsettled, which tells a run that stops on its jobs when it is done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/job.hpp"
#include "models/ledger/tally.hpp"
#include "models/results.hpp"

namespace brokersim {

class OutcomeBook {
 public:
  // per_interval: --timeseries is written, so the outcomes of each interval are counted.
  OutcomeBook(const RunOptions& o, bool per_interval)
      : series_(o.job_series), series_stale_(o.job_series_stale), per_interval_(per_interval) {}

  void job_created(const Job& job) {
    ++unsettled_;
    counted_unsettled_ += job.counted;
  }
  // Every job's outcome (warm-up included: --timeseries shows the state, not the measurement).
  void interval(Outcome o) {
    if (per_interval_) ++interval_[static_cast<std::size_t>(o)];
  }
  // A counted job's outcome.
  void count(RunResult& r, const Job& job, Outcome o) {
    tally_outcome(r, job, o);
    if (o == Outcome::InSystem) return;
    if (series_) record_sample(job, o);
    if (o == Outcome::ExpiredBeforeStart) ++(job.stale_on_receipt ? r.stale_on_receipt : r.stale_in_local_buffer);
  }
  // Outcomes final since the last call, by Outcome; the count restarts.
  OutcomeCounts take_interval() {
    OutcomeCounts out = interval_;
    interval_ = {};
    return out;
  }

  // A decided job resting in a queue no consumer reads (`queue_read` false) is settled: nothing
  // more will happen to it unless the queue's own TTL moves it on.
  void update_resting(Job& job, bool queue_read) {
    const bool resting = ((job.where == Where::Ready || job.where == Where::DeadLettering) && !queue_read &&
                          job.decision != Outcome::None) ||
                         (job.where == Where::Deferred && !job.deferred_back);
    if (resting != job.settled_resting) {
      job.settled_resting = resting;
      const std::uint64_t d = resting ? ~std::uint64_t{0} : 1;  // -1 or +1, modulo 2^64
      unsettled_ += d;
      if (job.counted) counted_unsettled_ += d;
    }
  }
  void job_left(const Job& job) {
    if (job.settled_resting) return;
    --unsettled_;
    counted_unsettled_ -= job.counted;
  }
  bool settled() const { return unsettled_ == 0; }
  // Every counted job settled: what a timed run following its jobs past the stop waits for.
  bool counted_settled() const { return counted_unsettled_ == 0; }

 private:
  void record_sample(const Job& job, Outcome o);

  std::vector<JobSample>* series_;
  bool series_stale_;
  bool per_interval_;
  OutcomeCounts interval_{};
  std::uint64_t unsettled_ = 0;  // alive and not resting decided in an unread queue
  std::uint64_t counted_unsettled_ = 0;  // of them, counted
};

}  // namespace brokersim
