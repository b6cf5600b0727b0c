#include "models/ledger.hpp"

#include <algorithm>
#include <utility>

#include "models/results.hpp"

namespace brokersim {

Ledger::Ledger(const Scenario& s, const RunOptions& o)
    : s_(s),
      observer_(o.job_observer),
      idleness_(s.broker.queues.size()),
      outcomes_(o, o.state_observer != nullptr && s.observe_every.has_value()),
      windows_(s.observe_window.value_or(0), s.warmup),
      replicas_(s.consumers.size()) {
  queues_.resize(s.broker.queues.size());
  for (const auto& c : s.consumers) {
    queues_[c.queue].read = true;
    for (int q : c.other_queues) queues_[q].read = true;
    if (c.reads_several()) {
      std::vector<int> reads{c.queue};
      reads.insert(reads.end(), c.other_queues.begin(), c.other_queues.end());
      idleness_.add_union(c.slot_book, reads);
    }
  }
  if (s.reports_jobs_by_queue()) {
    by_queue_.resize(s.broker.queues.size());
    by_queue_on_ = true;
  }
  for (const auto& p : s.producers) track_bytes_ = track_bytes_ || !p.message_bytes.is_zero();
  tallies_ = by_queue_on_ || windows_.on();
}

void Ledger::warmup(Time now) {
  for (auto& b : queues_) b.warmup(now);
  idleness_.warmup(now);
  replicas_.warmup(now);
}

void Ledger::close_span(Time end) {
  span_end_ = end;
  r.end_time = end;
  const Time span = end - std::min(s_.warmup, end);
  r.measured_s = sim::to_ms(span) / 1000.0;
  idleness_.finish(end, r);
  for (std::size_t q = 0; q < queues_.size(); ++q) r.queues.push_back(queues_[q].result(s_.broker.queues[q].name, end));
  r.groups = replicas_.finish(end, r.measured_s, s_.consumers);
  r.peak_replicas_total = replicas_.peak_total();
  // Counters of events of any job (not of the counted jobs' own fates) stop with the span.
  for (std::size_t c = 0; c < kCounterCount; ++c)
    if (kCounters[c].stops_with_span) span_counters_[c] = r.*kCounters[c].field;
  span_duplicates_by_cause_ = r.duplicates_by_cause;
}

void Ledger::finish(Time now, JobPool& jobs, RunResult& out) {
  // Jobs still alive: waiting in a queue some consumer reads, in transit, waiting locally or
  // executing (or whose requeue is on its way back) are in the system whatever was decided
  // before; a decided job resting in an unread queue, or whose ack is on its way, keeps its decision.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> alive;
  jobs.for_each_live([&](std::uint32_t i, Job& job) {
    if (!job.ghost) alive.emplace_back(job.id, i);  // a ghost is a copy, not a job
  });
  std::sort(alive.begin(), alive.end());
  for (auto [id, i] : alive) {
    Job& job = jobs[i];
    // A requeue on its way back to the broker is a job about to wait in the queue again; a
    // deferred message its client will receive back is one about to be delivered again.
    const bool moving = job.where == Where::Created || job.where == Where::Transit ||
                        job.where == Where::Local || job.where == Where::Executing ||
                        (job.where == Where::Settling && job.ack == Job::Ack::Requeue) ||
                        (job.where == Where::Deferred && job.deferred_back) ||
                        ((job.where == Where::Ready || job.where == Where::DeadLettering) && queues_[job.queue].read);
    count_outcome(job, moving || job.decision == Outcome::None ? Outcome::InSystem : job.decision);
  }
  if (observer_) observer_->run_ended();
  if (span_end_ == sim::kNever) close_span(now);
  // What the counted jobs did after the span (a run that followed them) still counts: their
  // queues' counters and their windows; the rest is as the span ended.
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    r.queues[q].published = queues_[q].published;
    r.queues[q].delivered = queues_[q].delivered;
    r.queues[q].expired = queues_[q].expired;
    r.queues[q].dead_lettered = queues_[q].dead_lettered;
  }
  r.windows = windows_.finish(span_end_);
  r.by_queue = by_queue_;
  for (std::size_t c = 0; c < kCounterCount; ++c)
    if (kCounters[c].stops_with_span) r.*kCounters[c].field = span_counters_[c];
  r.duplicates_by_cause = span_duplicates_by_cause_;

  std::uint64_t sum = 0;
  for (auto n : r.outcomes) sum += n;
  if (sum != r.generated)
    throw InvariantError("outcomes add up to " + std::to_string(sum) + " but " +
                         std::to_string(r.generated) + " jobs were generated");
  // Every duplicate execution has a cause (a start with none is a path the model does not blame).
  std::uint64_t by_cause = 0;
  for (const DuplicateCauseMetric& m : kDuplicateCauses) by_cause += r.duplicates_by_cause[index(m.cause)];
  if (by_cause != r.duplicate_executions)
    throw InvariantError("duplicate executions by cause add up to " + std::to_string(by_cause) + " but " +
                         std::to_string(r.duplicate_executions) + " were counted");
  out = std::move(r);
}

}  // namespace brokersim
