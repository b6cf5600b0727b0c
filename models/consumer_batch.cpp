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
//  - batch_handler.execution says how the handler runs the batch's messages. "concurrent": all at
//    once: every message starts at the batch's start and ends at its end; the last one frees the
//    slot (kExecKeepsSlot on the others). "sequential": in turn, as a handler that loops over its
//    array: each message starts when the one before it ends (Ev::BatchTurn), is judged by the
//    admission rule at its own start (its local wait includes its turn), and is decided at its
//    own end; the invocation lasts until its last message ends, and then (or when exec_timeout
//    stops it, timing out the rest) every message is settled at once and the slot is free.
//    Either way the invocation's time is the sum of its messages' service times.
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

// The invocation's limit from its start: exec_timeout's draw, or the tightest remaining budget of
// its messages on the consumer's clock; kNever without one.
Time Consumer::invocation_limit(World& w, const std::vector<std::uint32_t>& messages) {
  Time limit = sim::kNever;
  if (spec_->exec_timeout == ConsumerSpec::ExecTimeout::Fixed) return World::sample_ns(spec_->exec_timeout_value, timeout_rng);
  if (spec_->exec_timeout != ConsumerSpec::ExecTimeout::RemainingBudget) return limit;
  for (const std::uint32_t j : messages)
    if (w.jobs[j].expires_at != sim::kNever) limit = std::min(limit, std::max<Time>(0, w.jobs[j].expires_at - clock.now(w.now)));
  return limit;
}

void Consumer::start_batch(World& w) {
  if (spec_->batch.execution == ConsumerSpec::Batch::Execution::Sequential) {
    start_batch_in_turn(w);
    return;
  }
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
  for (const std::uint32_t j : batch_) run = sim::add_sat(run, w.jobs[j].service);
  const Time limit = invocation_limit(w, batch_);
  ExecResult whole = ExecResult::Completed;
  const double p = spec_->failure_probability;
  if (limit < run) {
    run = limit;
    whole = ExecResult::TimedOut;
  } else if (!spec_->batch.item_failures && p > 0 && batch_rng->bernoulli(p)) {
    whole = ExecResult::Failed;
  }
  meter_execution(w, w.now, run);
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

// A batch run in turn. The messages stale at the batch's start are rejected there, as "concurrent"
// rejects them, so that a batch of none makes no invocation; the others wait their turn.
void Consumer::start_batch_in_turn(World& w) {
  const std::size_t max = static_cast<std::size_t>(spec_->batch.max_messages);
  while (!local.empty() && spec_->admission != Admission::None && !admits(*spec_, w.jobs[local.front()].expires_at, clock.now(w.now))) {
    const std::uint32_t j = local.front();
    local.pop_front();
    reject_locally(w, j);
  }
  if (local.empty()) return;
  std::uint32_t run = 0;
  if (free_turns_.empty()) {
    run = static_cast<std::uint32_t>(turns_.size());
    turns_.emplace_back();
  } else {
    run = free_turns_.back();
    free_turns_.pop_back();
  }
  BatchInTurn& b = turns_[run];
  b.messages.clear();
  b.gens.clear();
  b.next = 0;
  while (b.messages.size() < max && !local.empty()) {
    b.messages.push_back(local.front());
    b.gens.push_back(w.jobs[local.front()].gen);
    local.pop_front();
  }
  busy_changed_in_batch(w, +1);
  b.started = w.now;
  b.stops_at = sim::add_sat(w.now, invocation_limit(w, b.messages));
  const double p = spec_->failure_probability;
  b.whole = !spec_->batch.item_failures && p > 0 && batch_rng->bernoulli(p) ? ExecResult::Failed : ExecResult::Completed;
  if (w.now >= w.s.warmup) ++invocations_;  // its duration is metered as it ends
  next_in_turn(w, run);
}

// The next message's turn, now: judged by the admission rule on the consumer's clock (rejected,
// the one after it goes at once), started, and its end scheduled (or the invocation's stop, if
// that comes first). None left: the batch is over.
void Consumer::next_in_turn(World& w, std::uint32_t run) {
  for (;;) {
    BatchInTurn& b = turns_[run];
    if (b.next == b.messages.size()) {
      end_batch_in_turn(w, run, b.whole);
      return;
    }
    const std::uint32_t k = b.next++;
    const std::uint32_t j = b.messages[k];
    if (w.jobs[j].gen != b.gens[k]) {
      b.messages[k] = kNoIndex;
      continue;
    }
    if (spec_->admission != Admission::None && !admits(*spec_, w.jobs[j].expires_at, clock.now(w.now))) {
      b.messages[k] = kNoIndex;
      reject_locally(w, j);
      continue;
    }
    begin_in_batch(w, j);
    ++batch_started_;
    const double p = spec_->failure_probability;
    b.running = b.whole == ExecResult::Completed && spec_->batch.item_failures && p > 0 && batch_rng->bernoulli(p)
                    ? ExecResult::Failed
                    : ExecResult::Completed;
    Time ends = sim::add_sat(w.now, w.jobs[j].service);
    if (ends > b.stops_at) {
      ends = b.stops_at;
      b.running = ExecResult::TimedOut;
    }
    w.at(ends, Ev::BatchTurn, static_cast<std::uint32_t>(index_), connection(), run);
    if (w.broker_hears_starts) w.broker->execution_started(j);  // last: it may move the pool
    return;
  }
}

void Consumer::batch_turn(World& w, std::uint32_t connection_then, std::uint32_t run) {
  if (connection_then != connection()) return;  // the connection, and the batch with it, is gone
  BatchInTurn& b = turns_[run];
  const std::uint32_t k = b.next - 1;
  const ExecResult result = b.running;
  Job& job = w.jobs[b.messages[k]];
  const bool live = job.gen == b.gens[k];
  if (live) end_execution_in_batch(w, job);
  if (result == ExecResult::TimedOut) {
    end_batch_in_turn(w, run, ExecResult::TimedOut);
    return;
  }
  // Its own outcome, at its own end; a failure of the whole invocation decides at the end.
  if (live && b.whole == ExecResult::Completed) decide_execution_in_batch(w, job, result);
  next_in_turn(w, run);
}

// The invocation is over (its last message ended, or exec_timeout stopped it): every message it
// holds is settled now, as the trigger completes or abandons a batch once the function returns.
// `why` other than Completed is the whole invocation's outcome (a failure drawn for all of it, or
// the timeout, which also times out the messages whose turn never came).
void Consumer::end_batch_in_turn(World& w, std::uint32_t run, ExecResult why) {
  busy_changed_in_batch(w, -1);
  BatchInTurn& b = turns_[run];
  meter_duration(w, b.started, w.now - b.started);
  for (std::size_t k = 0; k < b.messages.size(); ++k) {
    const std::uint32_t j = b.messages[k];
    if (j == kNoIndex || w.jobs[j].gen != b.gens[k]) continue;
    ExecResult result = why;
    if (why == ExecResult::Completed) {
      result = w.jobs[j].decision == Outcome::Failed ? ExecResult::Failed : ExecResult::Completed;
    } else {
      decide_execution_in_batch(w, w.jobs[j], why);
    }
    send_settlement_in_batch(w, j, result);
  }
  free_turns_.push_back(run);
  slot_freed_in_batch(w);
}

}  // namespace brokersim
