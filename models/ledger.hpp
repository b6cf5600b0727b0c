// The books of a run, kept the same way whichever broker runs. The Ledger composes one part per
// concept (models/ledger/): the queue books (counters and levels), slot idleness, outcomes,
// windows, job copies and the fleet's replicas; it tells the job observer (the trace) each
// outcome, and checks at the end that the outcomes add up.
//
// Brokers and clients report what happened (a job was published, delivered, dead-lettered; the
// ready count or the busy slots changed); the ledger decides what counts (jobs created after the
// warm-up; time averages from the warm-up on) so that every broker follows one rule.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/ledger/job_copies.hpp"
#include "models/ledger/outcome_book.hpp"
#include "models/ledger/queue_book.hpp"
#include "models/ledger/replica_book.hpp"
#include "models/ledger/slot_idleness.hpp"
#include "models/ledger/windows.hpp"
#include "models/metrics.hpp"
#include "models/results.hpp"
#include "models/run_observer.hpp"
#include "models/scenario.hpp"

namespace brokersim {

class Ledger {
 public:
  Ledger(const Scenario& s, const RunOptions& o);

  QueueBook& queue(int q) { return queues_[static_cast<std::size_t>(q)]; }
  const QueueBook& queue(int q) const { return queues_[static_cast<std::size_t>(q)]; }

  // --- what brokers report
  void published(const Job& job, int q) {
    ++queues_[q].publishes;
    if (job.counted) ++queues_[q].published;
  }
  // A message's TTL ended in the queue it is in (job.queue). Every expiry is a message figure of
  // that queue (`queues.NAME.expired`: a dead-letter queue's second expiry of the same job
  // included). The job's figure, its queue wait until this expiry, is kept only if this expiry
  // can still decide its outcome (not a job decided for good, below) and is counted once the
  // outcome is final and is expired_in_queue (count_outcome): one sample per such job.
  void expired_in_queue(Job& job, Time now) {
    if (!job.counted) return;
    ++queues_[static_cast<std::size_t>(job.queue)].expired;
    if (!decided_for_good(job)) job.queue_expiry_wait = now - job.ready_since;
  }
  // A job decided and resting in a queue no consumer reads (a dead-letter queue) has its outcome
  // for good: what happens to its message there (a second expiry, a drop, the queue's deletion)
  // is the queue's, not the job's (docs/outcomes.md, "decided once"). World::decide keeps the
  // decision and its time. A message on its way into such a queue is not there yet (a target
  // refusing it makes the job lost); one dead-lettered on into a queue some consumer reads is
  // in the system again, and a consumer there decides anew. (A message deferred in a queue its
  // consumers read is not in a queue no consumer reads: a receive by sequence number decides it.)
  static bool decided_for_good(const Job& job) { return job.settled_resting && job.where == Where::Ready; }
  void delivered(const Job& job, int q, Time now) {
    if (!job.counted) return;
    ++queues_[q].delivered;
    add_wait(Wait::Queue, job, now - job.ready_since);
  }
  // A wait (a row of kWaits) of a job, for the run and the job's window: counted jobs only.
  void wait(Wait w, const Job& job, Time d) {
    if (job.counted) add_wait(w, job, d);
  }
  // The window (observe.window_ms) a job was created in; nullptr without windows or for a
  // warm-up job.
  void dead_lettered(const Job& job, int q, DeathReason why) {
    if (job.counted) ++queues_[q].dead_lettered[static_cast<std::size_t>(why)];
  }
  void ready_changed(int q, Time now, std::uint64_t ready, std::uint64_t ready_bytes) {
    queues_[q].ready_changed(now, ready, ready_bytes, track_bytes_);
    idleness_.ready_changed(q, now, ready != 0);
  }
  // A delivery leaves the unacked count when the broker has the message back (settled,
  // returned, lapsed): the end of its delivery's stages (World::sent, ledger/job_stages).
  void unacked_changed(int q, Time now, Job& job, int delta) {
    queues_[q].unacked_changed(now, job, delta, track_bytes_);
    if (delta < 0) job.back = now;
  }
  void queue_deleted(int q) { ++queues_[q].deletions; }

  // --- what consumers report
  void slots_attached(int q, Time now, int delta) { idleness_.slots_attached(q, now, delta); }
  void busy_changed(int q, Time now, int delta) { idleness_.busy_changed(q, now, delta); }
  // Where the stranded-work figure asks a consumer's idle slots (SlotIdleness::set_idle_of).
  void set_idle_of(SlotIdleness::IdleOf idle_of, const void* owner) { idleness_.set_idle_of(idle_of, owner); }
  void local_changed(int q, int consumer, Time now, std::size_t before, std::size_t after) {
    idleness_.local_changed(q, consumer, now, before, after);
  }
  void replicas_changed(int group, Time now, int delta) { replicas_.changed(group, now, delta); }
  int replicas(int group) const { return replicas_.replicas(group); }
  // Outcomes final since the last call (every job, warm-up included: --timeseries shows the
  // state, not the measurement), by Outcome; the count restarts.
  OutcomeCounts take_interval_outcomes() { return outcomes_.take_interval(); }

  // --- outcomes
  void job_created(const Job& job) {
    if (job.counted) ++r.generated;
    if (tallies_) [[unlikely]] {
      if (by_queue_on_ && job.counted) ++by_queue_of(job).generated;
      windows_.job_created(job);
    }
    outcomes_.job_created(job);
  }
  void count_outcome(Job& job, Outcome o);
  // A decided job resting in a queue no consumer reads is settled.
  void update_resting(Job& job) { outcomes_.update_resting(job, queues_[job.queue].read); }
  bool settled() const { return outcomes_.settled(); }
  bool counted_settled() const { return outcomes_.counted_settled(); }
  void job_left(const Job& job) {
    outcomes_.job_left(job);
    if (copies_.any()) copies_.gone(job);
  }

  // --- copies of one job (models/ledger/job_copies.hpp)
  void copy_made(const Job& live) { copies_.made(live); }
  void copy_gone(const Job& job) { copies_.gone(job); }
  // The job (any copy) starts executing; a start after its first is a duplicate execution,
  // counted by its cause: the most recent reason it had to run again, or for a ghost that had not
  // started when its message was taken back, that take-back (whose reason passes to the other
  // copy if this one is the first to run).
  void starts(Job& job) {
    const bool again = copies_.started_again(job);
    if (job.ghost && job.unsettled != DuplicateCause::None) {
      if (again) duplicate(job.unsettled);
      else copies_.may_run_again(job, job.unsettled);
    } else if (again) {
      duplicate(copies_.take_reason(job));
    }
  }
  void may_run_again(Job& job, DuplicateCause why) { copies_.may_run_again(job, why); }

  void warmup(Time now);
  // The end of the measured span (stop.time_ms, or the run's end): the time averages, slot
  // figures, windows and fleet costs are taken here; a run following its jobs past the stop
  // goes on counting only their outcomes and waits. Once per run (finish() calls it if the run
  // did not).
  void close_span(Time end);
  // End of run: the jobs still alive get their outcome, results are filled in (but the
  // consumers': each consumer reports its own), and the outcomes must add up to the jobs
  // generated (InvariantError otherwise).
  void finish(Time now, JobPool& jobs, RunResult& out);

  RunResult r;                         // filled as the run goes
  std::uint64_t created_total = 0;     // including warm-up

 private:
  void duplicate(DuplicateCause why) {
    ++r.duplicate_executions;
    ++r.duplicates_by_cause[index(why)];
  }
  JobAccount account(const Job& job, Outcome o) const {
    return {copies_.executions(job), copies_.first_started(job), o == Outcome::InSystem ? JobStages{} : stages_of(job, o)};
  }
  void add_wait(Wait w, const Job& job, Time d) {
    r.wait(w).add(d);
    if (tallies_) [[unlikely]] {
      if (WindowResult* win = windows_.of(job)) win->wait(w).add(d);
      if (by_queue_on_) by_queue_of(job).wait(w).add(d);
    }
  }


  const Scenario& s_;
  Time span_end_ = sim::kNever;  // close_span's time; completions after it are in no rate
  // close_span's values of the kCounters rows that stop with the span (by row; the others unused),
  // and of the duplicate executions by cause.
  std::array<std::uint64_t, kCounterCount> span_counters_{};
  std::array<std::uint64_t, kDuplicateCauseCount> span_duplicates_by_cause_{};
  bool track_bytes_ = false;  // some producer sends non-empty bodies
  JobObserver* observer_;     // the trace, when asked for
  std::vector<QueueBook> queues_;
  SlotIdleness idleness_;
  OutcomeBook outcomes_;
  Windows windows_;
  JobCopies copies_;
  ReplicaBook replicas_;
  // Counted jobs by the queue their producer publishes to (RunResult::by_queue), when producers
  // publish to several queues (Scenario::reports_jobs_by_queue).
  std::vector<WindowResult> by_queue_;
  bool by_queue_on_ = false;
  bool tallies_ = false;  // windows or by_queue: one test on the per-job path for both
  WindowResult& by_queue_of(const Job& job) {
    return by_queue_[static_cast<std::size_t>(s_.producers[static_cast<std::size_t>(job.producer)].queue)];
  }
};

// Inline: called for every job from the brokers' and clients' translation units.
inline void Ledger::count_outcome(Job& job, Outcome o) {
  if (observer_) observer_->job_ended(job, o, account(job, o));
  outcomes_.interval(o);
  // Rates count the completions inside the measured span, whichever job they are: in steady
  // state their mean is the completion rate (jobs created before the warm-up finish inside it
  // as the span's own unfinished jobs finish after it).
  if ((o == Outcome::CompletedOnTime || o == Outcome::CompletedLate) && job.ended >= s_.warmup &&
      job.ended <= span_end_) {
    ++r.span_completed;
    r.span_completed_on_time += o == Outcome::CompletedOnTime;
    r.span_completed_without_deadline += o == Outcome::CompletedOnTime && job.deadline == sim::kNever;
  }
  if (job.queue_expiry_wait >= 0) [[unlikely]] {
    // The queue wait of the expiry that decided it, only if that is its outcome.
    if (o == Outcome::ExpiredInQueue) add_wait(Wait::QueueExpired, job, job.queue_expiry_wait);
    job.queue_expiry_wait = -1;
  }
  if (!job.counted) return;
  outcomes_.count(r, job, o);
  if (tallies_) [[unlikely]] {
    if (windows_.on()) windows_.outcome(job, o);
    if (by_queue_on_) tally_outcome(by_queue_of(job), job, o);
  }
}

}  // namespace brokersim
