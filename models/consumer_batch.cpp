// consumers[].batch_handler: a client whose handler takes a batch of messages in one execution,
// as AWS Lambda's SQS event source mapping invokes a function with up to BatchSize messages
// (docs/scenario.md, docs/framework-aws-lambda.md). The rules:
//  - Received messages wait in the client's buffer (the Local stage) until a slot is free and
//    either max_messages of them are there, or min_messages of them (when set: the Functions
//    trigger's minMessageBatchSize), or the batching window, opened by the oldest of them
//    arriving, has ended (window 0: what one receive brought, at once). A batch short of
//    max_messages starts only on a wake (Ev::StallEnd), which runs after every settlement,
//    receive and execution end of its instant: a slot freed at t, whose deletes free the
//    client's room at t, takes what the receives at t bring, not the first of them.
//  - At the batch's start each message is judged on its own by the admission rule: a message that
//    went stale while its batch filled is rejected there (expired_before_start), the rest run.
//  - One execution, one slot: its time is the sum of its messages' service times (a handler that
//    loops over its records). The exec_timeout applies to the execution: past it, every message
//    of the batch timed out.
//  - failure_probability is drawn once per execution (a function that throws fails its whole
//    batch), or once per message with item_failures (the handler reports which items failed,
//    Lambda's ReportBatchItemFailures). Each message then settles as one message would: the
//    broker's rules say what a failed or timed-out one becomes (SQS: not deleted, back after its
//    visibility timeout).
//  - Every message of a batch ends at the batch's end; the last one frees the slot
//    (kExecKeepsSlot on the others).
#include <algorithm>

#include "models/broker.hpp"
#include "models/consumer.hpp"
#include "models/world.hpp"

namespace brokersim {

void Consumer::receive_for_batch(World& w, std::uint32_t j) {
  const std::size_t before = local.size();
  local.push_back(j);
  buffer_changed(w.now, before);
  // The first message of a batch opens its window (a StallEnd runs after every Receive of the
  // same instant: with window 0 a receive's whole response is in before the batch starts).
  if (before == 0) wake_for_window(w);
  if (local.size() >= static_cast<std::size_t>(spec_->batch.max_messages)) {
    start_buffered(w);
  } else if (local.size() == min_messages()) {
    // Enough for a batch: it starts once the rest of this instant's receives are in.
    w.at(w.now, Ev::StallEnd, static_cast<std::uint32_t>(index_));
  }
  if ((before == 0) != local.empty()) w.ledger.local_changed(book(), index_, w.now, before, local.size());
}

void Consumer::wake_for_window(World& w) {
  const Time opens = w.jobs[local.front()].received;
  // (Without min_messages the wake is at the window's end: a full batch starts on its own.)
  const bool enough = spec_->batch.min_messages > 0 && local.size() >= min_messages();
  const Time at = enough ? w.now : std::max(w.now, sim::add_sat(opens, spec_->batch.window));
  w.at(at, Ev::StallEnd, static_cast<std::uint32_t>(index_));
}

std::size_t Consumer::min_messages() const {
  const int min = spec_->batch.min_messages > 0 ? spec_->batch.min_messages : spec_->batch.max_messages;
  return static_cast<std::size_t>(min);
}

// Called with the consumer attached and not stalled (start_buffered); woken: see Consumer::stall_end.
void Consumer::start_batches(World& w, bool woken) {
  const std::size_t before = local.size();
  bool took = false;
  while (busy < slots() && !local.empty()) {
    const bool full = local.size() >= static_cast<std::size_t>(spec_->batch.max_messages);
    const bool enough = local.size() >= min_messages();
    if (!full && (!woken || (!enough && w.now < sim::add_sat(w.jobs[local.front()].received, spec_->batch.window)))) {
      wake_for_window(w);  // at the window's end, or now: after the rest of this instant
      break;
    }
    start_batch(w);
    took = true;
  }
  if (!took) return;
  buffer_changed(w.now, before);
  if (!local.empty()) wake_for_window(w);  // the rest's window
}

void Consumer::start_batch(World& w) {
  batch_.clear();
  while (batch_.size() < static_cast<std::size_t>(spec_->batch.max_messages) && !local.empty()) {
    const std::uint32_t j = local.front();
    local.pop_front();
    if (spec_->admission != Admission::None && !admits(*spec_, w.jobs[j].expires_at, clock.now(w.now))) {
      reject_locally(w, j);
      continue;
    }
    batch_.push_back(j);
  }
  if (batch_.empty()) return;
  busy_changed_in_batch(w, +1);
  Time run = 0;
  Time limit = sim::kNever;
  for (const std::uint32_t j : batch_) {
    const Job& job = w.jobs[j];
    run = sim::add_sat(run, job.service);
    if (spec_->exec_timeout == ConsumerSpec::ExecTimeout::RemainingBudget && job.expires_at != sim::kNever)
      limit = std::min(limit, std::max<Time>(0, job.expires_at - clock.now(w.now)));
  }
  if (spec_->exec_timeout == ConsumerSpec::ExecTimeout::Fixed) limit = World::sample_ns(spec_->exec_timeout_value, timeout_rng);
  ExecResult whole = ExecResult::Completed;
  const double p = spec_->failure_probability;
  if (limit < run) {
    run = limit;
    whole = ExecResult::TimedOut;
  } else if (!spec_->batch.item_failures && p > 0 && batch_rng->bernoulli(p)) {
    whole = ExecResult::Failed;
  }
  if (w.now >= w.s.warmup) {
    ++invocations_;
    billed_ms_ += static_cast<std::uint64_t>((run + sim::kNsPerMs - 1) / sim::kNsPerMs);
  }
  const Time ends = w.now + run;
  for (std::size_t k = 0; k < batch_.size(); ++k) {
    const std::uint32_t j = batch_[k];
    begin_in_batch(w, j);
    ++batch_started_;
    ExecResult result = whole;
    if (whole == ExecResult::Completed && spec_->batch.item_failures && p > 0 && batch_rng->bernoulli(p))
      result = ExecResult::Failed;
    w.at(ends, Ev::ExecDone, j, w.jobs[j].gen, exec_done_aux(result, k + 1 < batch_.size(), w.jobs[j].executions));
  }
  // A heartbeat, if the client has one, runs per message; last: it may move the pool.
  if (w.broker_hears_starts)
    for (const std::uint32_t j : batch_) w.broker->execution_started(j);
}

}  // namespace brokersim
