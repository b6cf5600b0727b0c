#include "models/consumer.hpp"

#include <algorithm>
#include <string>

#include "models/broker.hpp"
#include "models/world.hpp"

namespace brokersim {

namespace {
sim::Rng stream(std::uint64_t seed, std::uint64_t rep, int group, int member, const char* what) {
  // Named by group and member, not by the global index, so adding a consumer to one group does
  // not reshuffle the numbers of every consumer after it.
  return sim::Rng(seed, rep,
                  "consumers." + std::to_string(group) + "." + std::to_string(member) + "." + what);
}
}  // namespace

Consumer::Consumer(const ConsumerSpec& spec, int index, int group, int member, std::uint64_t seed,
                   std::uint64_t replication)
    : ConsumerHot{.spec_ = &spec, .index_ = index},
      ConsumerEnd{.ack_rng = stream(seed, replication, group, member, "ack")},
      ConsumerCold{.delivery_rng = stream(seed, replication, group, member, "delivery"),
                   .failure_rng = stream(seed, replication, group, member, "failure"),
                   .timeout_rng = stream(seed, replication, group, member, "timeout"),
                   .group_ = group} {
  sim::Rng clock_rng = stream(seed, replication, group, member, "clock");
  if (spec.batch.max_messages > 0) batch_rng = stream(seed, replication, group, member, "batch_failure");
  metering_ = static_cast<std::uint8_t>((spec.metering.executions ? kMeterExecutions : 0) |
                                        (spec.metering.activity ? kMeterActivity : 0));
  clock = LocalClock(sim::round_ns(spec.clock_offset.sample(clock_rng)));
}

void Consumer::connect(World& w) {
  if (attached || retired) return;
  become_replica(w);
  if (!w.broker->open_connection(*this)) return;  // the broker reconnects us when it can
  // busy is 0 here (connection_lost took it to 0, and nothing starts while detached), so its
  // integral needs no mark at the connection.
  attached = true;
  w.ledger.slots_attached(book(), w.now, slots());
  w.broker->consume(*this);
}

void Consumer::receive(World& w, std::uint32_t j, std::uint32_t transit) {
  Job& job = w.jobs[j];
  job.where = Where::Local;
  job.received = w.now;
  w.ledger.wait(Wait::Transit, job, transit != World::kLongTransit ? Time{transit} : w.now - job.delivered);
  if (spec_->admission == Admission::CheckAtReceiveAndStart &&
      !admits(*spec_, job.expires_at, clock.now(w.now))) {
    reject_locally(w, j);
    return;
  }
  if (spec_->eta != ConsumerSpec::Eta::Ignore && job.eta != sim::kNever) [[unlikely]]
    if (hold_for_eta(w, j)) return;
  take(w, j);
}

inline void Consumer::take(World& w, std::uint32_t j) {
  Job& job = w.jobs[j];
  if (batches()) [[unlikely]] {
    receive_for_batch(w, j);
    return;
  }
  // The common case, a free slot and nobody waiting before it: the job goes straight to the
  // slot (what start_buffered would do, without the round trip through the buffer).
  if (local.empty() && busy < slots() && attached && running_free(w.now)) {
    if (spec_->admission != Admission::None && !admits(*spec_, job.expires_at, clock.now(w.now)))
      reject_locally(w, j);
    else
      start(w, j);
    return;
  }
  // The ledger hears of the buffer once, after the job has had its chance at a free slot: a job
  // that starts at once never made the buffer non-empty (and costs no stranded-work update).
  const std::size_t before = local.size();
  local.push_back(j);
  buffer_changed(w.now, before);
  start_buffered(w);
  if ((before == 0) != local.empty()) w.ledger.local_changed(book(), index_, w.now, before, local.size());
}

// Celery's worker keeps an ETA task in its timer, outside the pool's queue, until the ETA by its
// own clock (celery/worker/strategy.py); with global QoS it raises its prefetch by one meanwhile,
// so that the task holds no place in the window, and lowers it as the task is due
// (consumer.py apply_eta_task). Both changes take effect at the broker at once.
bool Consumer::hold_for_eta(World& w, std::uint32_t j) {
  const Job& job = w.jobs[j];
  const Time local_now = clock.now(w.now);
  if (job.eta <= local_now) return false;
  w.at(w.now + (job.eta - local_now), Ev::EtaDue, j, job.gen, connection());
  if (spec_->eta == ConsumerSpec::Eta::HoldOutsidePrefetch) w.broker->prefetch_changed(*this, +1);
  return true;
}

void Consumer::eta_due(World& w, std::uint32_t j, std::uint32_t held_on) {
  if (held_on != connection()) return;  // the connection it was held on is gone, and the job with it
  if (spec_->eta == ConsumerSpec::Eta::HoldOutsidePrefetch) w.broker->prefetch_changed(*this, -1);
  take(w, j);
}

void Consumer::try_start(World& w, bool woken) {
  const std::size_t before = local.size();
  start_buffered(w, woken);
  if ((before == 0) != local.empty()) w.ledger.local_changed(book(), index_, w.now, before, local.size());
}

void Consumer::start_buffered(World& w, bool woken) {
  if (!attached || leaving || !running_free(w.now)) return;
  if (batches()) [[unlikely]] {
    start_batches(w, woken);
    return;
  }
  const std::size_t before = local.size();
  bool took = false;
  while (busy < slots() && !local.empty()) {
    const std::uint32_t j = local.front();
    local.pop_front();
    took = true;
    // The last responsible check: after all local waiting, immediately before execution.
    if (spec_->admission != Admission::None && !admits(*spec_, w.jobs[j].expires_at, clock.now(w.now))) {
      reject_locally(w, j);
      continue;
    }
    start(w, j);
  }
  if (took) buffer_changed(w.now, before);
}

inline void Consumer::busy_changed(World& w, int delta) {
  busy_area.change(w.now, delta);
  busy += delta;
  w.ledger.busy_changed(book(), w.now, delta);
}

void Consumer::busy_changed_in_batch(World& w, int delta) {
  const int before = busy;
  busy_changed(w, delta);
  if (metering_ & kMeterActivity) [[unlikely]] meter_activity(w, before, delta);
}

// Out of line and cold: building the message would otherwise sit in every start's path.
[[noreturn, gnu::cold, gnu::noinline]] static void started_twice(const Job& job) {
  throw InvariantError("job " + std::to_string(job.id) + " started twice in one delivery");
}

inline void Consumer::begin(World& w, std::uint32_t j) {
  Job& job = w.jobs[j];
  RunResult& r = w.ledger.r;
  job.where = Where::Executing;
  // One start per delivery: World::sent cleared `started` (keeping the first start) and reset
  // ran_settles, so that a start writes nothing on the job's second line.
  if (job.started >= 0) [[unlikely]] started_twice(job);
  job.started = w.now;
  w.ledger.starts(job);  // counts a duplicate execution by its cause
  job.ran_here = true;
  job.ran_at = index_;
  job.ran_connection = connection();
  job.unsettled = DuplicateCause::None;
  w.ledger.wait(Wait::Local, job, w.now - job.received);
  if (job.counted) {
    if (spec_->admission != Admission::None && w.now >= job.deadline) ++r.admitted_but_expired;
    if (job.executions == 1 && job.received_at_creation && w.now == job.received) ++r.started_at_once;
  }
}

void Consumer::begin_in_batch(World& w, std::uint32_t j) { begin(w, j); }

void Consumer::start(World& w, std::uint32_t j) {
  begin(w, j);
  busy_changed(w, +1);

  Job& job = w.jobs[j];
  Time run = job.service;
  ExecResult result = ExecResult::Completed;
  Time limit = sim::kNever;
  if (spec_->exec_timeout == ConsumerSpec::ExecTimeout::Fixed)
    limit = World::sample_ns(spec_->exec_timeout_value, timeout_rng);
  else if (spec_->exec_timeout == ConsumerSpec::ExecTimeout::RemainingBudget && job.expires_at != sim::kNever)
    limit = std::max<Time>(0, job.expires_at - clock.now(w.now));
  if (limit < run) {
    run = limit;
    result = ExecResult::TimedOut;
  } else if (spec_->failure_probability > 0 && failure_rng.bernoulli(spec_->failure_probability)) {
    result = ExecResult::Failed;
  }
  w.at(w.now + run, Ev::ExecDone, j, job.gen, exec_done_aux(result, false, job.executions));
  if (metering_ != 0) [[unlikely]] metered_start(w, run);
  // before-start: the admission check has passed; the ack goes as the slot takes the job.
  if (spec_->ack == AckMode::BeforeStart && job.early == Job::Early::None && !job.ghost) [[unlikely]]
    ack_early(w, j);
  if (w.broker_hears_starts) w.broker->execution_started(j);  // last: it may move the pool
}


inline Time Consumer::send_ack(World& w, std::uint32_t j, Job::Ack what) {
  Job& job = w.jobs[j];
  job.where = Where::Settling;
  job.ack = what;
  const Time arrives = w.now + World::sample_ns(w.s.broker.ack_latency, ack_rng);
  last_ack_arrival_ = std::max(last_ack_arrival_, arrives);
  w.at(arrives, Ev::AckArrive, j, job.gen);
  return arrives;
}

inline void Consumer::end_execution(World& w, Job& job) {
  job.finished = w.now;
  ++ended_;
  w.ledger.wait(Wait::Service, job, w.now - job.started);
}

inline void Consumer::decide_execution(World& w, Job& job, ExecResult result) {
  switch (result) {
    case ExecResult::TimedOut: w.decide(job, Outcome::TimedOut); break;
    case ExecResult::Failed: w.decide(job, Outcome::Failed); break;
    case ExecResult::Completed:
      w.decide(job, w.now < job.deadline ? Outcome::CompletedOnTime : Outcome::CompletedLate);
      break;
  }
}

inline void Consumer::send_settlement(World& w, std::uint32_t j, ExecResult result) {
  Job& job = w.jobs[j];
  job.ran_settles = send_ack(w, j, Job::Ack::Ack);
  // If the message still comes back with no cut of this connection before the settlement
  // arrives, the settlement did not take effect: a failed job's retry (Service Bus abandons it,
  // SQS does not delete it), or the lock or visibility lapsed first (or an outage lost it).
  // (An early delete that failed: the message comes back by its lapse, whatever the result.)
  const bool retried = job.early == Job::Early::None && ((result == ExecResult::Failed && !spec_->sqs.delete_failed) ||
                                                         (result == ExecResult::TimedOut && spec_->sqs.keep_timed_out));
  job.unsettled = retried ? DuplicateCause::FailedRetry : DuplicateCause::Lapse;
}

// An execution's slot is no longer busy; a metered group's activity period may close with it.
inline void Consumer::free_busy_slot(World& w) {
  busy_changed(w, -1);
  if (metering_ & kMeterActivity) [[unlikely]] meter_activity(w, busy + 1, -1);
}

// Inline: every execution's end frees its slot here.
inline void Consumer::slot_freed(World& w) {
  try_start(w);
  // The last execution of a leaving consumer is done: close once its settlements have arrived
  // (they travel ahead of the close on the same connection, so they are not returned).
  if (leaving) [[unlikely]] {
    if (busy == 0) schedule_close(w, std::max(w.now, last_ack_arrival_));
  }
}

void Consumer::end_execution_in_batch(World& w, Job& job) { end_execution(w, job); }
void Consumer::decide_execution_in_batch(World& w, Job& job, ExecResult result) { decide_execution(w, job, result); }
void Consumer::send_settlement_in_batch(World& w, std::uint32_t j, ExecResult result) { send_settlement(w, j, result); }
void Consumer::slot_freed_in_batch(World& w) { slot_freed(w); }

void Consumer::exec_done(World& w, std::uint32_t j, std::uint32_t aux) {
  Job& job = w.jobs[j];
  // The execution a killed process cut short (kill_process), its job started again since.
  if (job.executions != start_of(aux)) [[unlikely]] return;
  const ExecResult result = exec_result_of(aux);
  const bool keeps_slot = keeps_slot_of(aux);
  // Early-acked on a connection cut since (its ack still on the wire): the client is gone, the
  // ack's arrival decides what became of it (World::kept_by_client).
  if (job.early != Job::Early::None && job.ran_connection != connection()) [[unlikely]] return;
  if (job.finished >= 0) [[unlikely]] return;  // its process was killed first (kill_process)
  end_execution(w, job);
  if (!keeps_slot) free_busy_slot(w);
  decide_execution(w, job, result);
  if (job.early == Job::Early::OnTheWire || job.early == Job::Early::Released) [[unlikely]] {
    // Acked already: no settlement follows the execution (a failed or timed-out job keeps its
    // outcome and is not retried, requeued or dead-lettered).
    settle_acked(w, j);
    slot_freed(w);
    return;
  }
  send_settlement(w, j, result);
  if (keeps_slot) return;  // the batch's last message frees the slot
  slot_freed(w);
}

// An early-acked job's execution is over: it leaves now if its ack has arrived, else when it does.
void Consumer::settle_acked(World& w, std::uint32_t j) {
  if (w.jobs[j].early == Job::Early::Released) {
    release_kept(w, j);
  } else {
    w.jobs[j].where = Where::Settling;  // its early ack's arrival lets it leave
  }
}

// The pool replaces the process at once; what became of the task is on_process_lost's: acked, it
// is `lost` (and so is one whose early ack went out as it started: the broker is done with it);
// requeued, it is delivered again, a duplicate execution with cause worker_lost. The pending
// ExecDone finds `finished` set, and after a new start names an earlier one (exec_done_aux).
void Consumer::kill_process(World& w) {
  const std::uint32_t j = longest_running(w);
  if (j == kNoIndex) return;
  Job& job = w.jobs[j];
  job.finished = w.now;
  ++ended_;
  free_busy_slot(w);
  const bool requeue = spec_->on_process_lost == ConsumerSpec::OnProcessLost::Requeue;
  if (job.early == Job::Early::OnTheWire || job.early == Job::Early::Released) {
    w.decide(job, Outcome::Lost);
    settle_acked(w, j);
  } else if (requeue) {
    job.ran_settles = send_ack(w, j, Job::Ack::Requeue);
    job.unsettled = DuplicateCause::WorkerLost;
  } else {
    w.decide(job, Outcome::Lost);
    job.ran_settles = send_ack(w, j, Job::Ack::Ack);
    job.unsettled = DuplicateCause::Lapse;
  }
  slot_freed(w);
}

// Of the executions running on the current connection, the one started first (then the job
// created first): a scan of the jobs, as a fault is rare.
std::uint32_t Consumer::longest_running(World& w) const {
  if (busy == 0) return kNoIndex;
  std::uint32_t best = kNoIndex;
  w.jobs.for_each_live([&](std::uint32_t i, const Job& job) {
    if (job.where != Where::Executing || job.ran_at != index_ || job.ran_connection != connection() || job.finished >= 0)
      return;
    const Job* b = best == kNoIndex ? nullptr : &w.jobs[best];
    if (b == nullptr || job.started < b->started || (job.started == b->started && job.id < b->id)) best = i;
  });
  return best;
}

void Consumer::reject_locally(World& w, std::uint32_t j) {
  Job& job = w.jobs[j];
  // Judged on true time: delivered in time but stale on arrival (the transit took its budget),
  // or stale for another reason (it waited here, or was delivered late already).
  const bool in_transit = job.delivered < job.deadline && job.received >= job.deadline;
  w.decide(job, in_transit ? Outcome::ExpiredInTransit : Outcome::ExpiredBeforeStart);
  job.stale_on_receipt = job.received == w.now;
  w.ledger.wait(Wait::Local, job, w.now - job.received);
  if (job.counted) {
    if (job.deadline != sim::kNever && job.deadline - w.now > spec_->min_window) ++w.ledger.r.rejected_but_valid;
  }
  if (job.early == Job::Early::Released) {  // on-receipt: settled already (on_expired is ack)
    release_kept(w, j);
    return;
  }
  switch (spec_->on_expired) {
    case OnExpired::Ack: send_ack(w, j, Job::Ack::Ack); break;
    case OnExpired::Reject: send_ack(w, j, Job::Ack::Reject); break;
    case OnExpired::Requeue: send_ack(w, j, Job::Ack::Requeue); break;
    case OnExpired::Defer: send_ack(w, j, Job::Ack::Defer); break;
  }
}

// consumers[].ack before-start: the ack a settlement would carry, sent now, paying ack_latency;
// the job goes on executing (Job::Early).
void Consumer::ack_early(World& w, std::uint32_t j) {
  Job& job = w.jobs[j];
  job.early = Job::Early::OnTheWire;
  job.ack = Job::Ack::Ack;
  const Time arrives = w.now + World::sample_ns(w.s.broker.ack_latency, ack_rng);
  last_ack_arrival_ = std::max(last_ack_arrival_, arrives);
  job.ran_settles = arrives;
  job.unsettled = DuplicateCause::Lapse;
  w.at(arrives, Ev::AckArrive, j, job.gen);
}

void Consumer::keep(World& w, std::uint32_t j) {
  w.jobs[j].unacked_pos = static_cast<std::uint32_t>(kept_.size());
  kept_.push_back(j);
}

void Consumer::release_kept(World& w, std::uint32_t j) {
  const std::uint32_t pos = w.jobs[j].unacked_pos;
  const std::uint32_t last = kept_.back();
  kept_[pos] = last;
  w.jobs[last].unacked_pos = pos;
  kept_.pop_back();
  w.jobs[j].unacked_pos = kNoIndex;
  w.leave(j);
}

// Out of line: only metered groups call these.
// A one-job start (Consumer::start) of `run`, busy already counting it.
void Consumer::metered_start(World& w, Time run) {
  if (metering_ & kMeterExecutions) meter_execution(w, w.now, run);
  if (metering_ & kMeterActivity) meter_activity(w, busy - 1, +1);
}

void Consumer::meter_execution(const World& w, Time started, Time duration) {
  if (started < w.s.warmup) return;
  ++invocations_;
  meter_duration(w, started, duration);
}

void Consumer::meter_duration(const World& w, Time started, Time duration) {
  if (started < w.s.warmup) return;
  const Time ms = std::max(spec_->metering.execution_minimum, (duration + sim::kNsPerMs - 1) / sim::kNsPerMs * sim::kNsPerMs);
  billed_ms_ += static_cast<std::uint64_t>(ms / sim::kNsPerMs);
}

void Consumer::meter_activity(World& w, int before, int delta) {
  if (before == 0 && delta > 0) active_since_ = w.now;
  // A period in the measured span counts whole; one across the warm-up, its part after it.
  if (before > 0 && before + delta == 0 && (active_since_ >= w.s.warmup || w.now > w.s.warmup))
    active_ms_ += metered_period_ms(active_since_, w.now);
}

// An activity period as metered, the part of it after the warm-up: at least activity_minimum,
// then rounded up to whole activity_steps.
std::uint64_t Consumer::metered_period_ms(Time from, Time to) const {
  const Time step = std::max<Time>(spec_->metering.activity_step, 1);
  const Time length = to - std::max(from, measured_since_);
  const Time billed = std::max(spec_->metering.activity_minimum, (length + step - 1) / step * step);
  return static_cast<std::uint64_t>(billed / sim::kNsPerMs);
}

ConsumerResult Consumer::result(Time now) const {
  ConsumerResult cr;
  cr.utilization = busy_area.mean(now, measured_since_, busy) / static_cast<double>(slots());
  cr.mean_local = local_area.mean(now, measured_since_, static_cast<std::int64_t>(local.size()));
  cr.started = started();
  cr.invocations = invocations_;
  cr.billed_ms = billed_ms_;
  // An activity period still open as the span closes is billed up to its close.
  const bool open = (metering_ & kMeterActivity) && busy > 0 && (active_since_ >= measured_since_ || now > measured_since_);
  cr.active_ms = active_ms_ + (open ? metered_period_ms(active_since_, now) : 0);
  return cr;
}

void Consumer::stall(World& w, Time duration) {
  stalled_until = std::max(stalled_until, w.now + duration);
  stalled_ = w.now < stalled_until;
  w.at(stalled_until, Ev::StallEnd, static_cast<std::uint32_t>(index_));
}

void Consumer::stall_end(World& w) {
  if (stalled_ && w.now >= stalled_until) stalled_ = false;
  try_start(w, true);
}

void Consumer::crash(World& w) {
  if (!attached) return;
  connection_lost(w, DuplicateCause::Crash);
  w.broker->close_connection(*this);
}

void Consumer::connection_lost(World& w, DuplicateCause why) {
  cuts_.push_back(Cut{w.now, why});
  connections_lost_ = static_cast<std::uint32_t>(cuts_.size());
  attached = false;
  // What the broker no longer has (acked early, or settled as sent) is gone with the client:
  // in transit, buffered or executing.
  while (!kept_.empty()) {
    const std::uint32_t j = kept_.back();
    w.decide(w.jobs[j], Outcome::Lost);
    release_kept(w, j);
  }
  if (!batches()) cut_ += static_cast<std::uint64_t>(busy);
  // A batch running in turn goes with the connection: its pending Ev::BatchTurn names this one.
  turns_.clear();
  free_turns_.clear();
  if (metering_ & kMeterActivity) [[unlikely]] meter_activity(w, busy, -busy);
  busy_changed(w, -busy);
  w.ledger.slots_attached(book(), w.now, -slots());
  w.ledger.local_changed(book(), index_, w.now, local.size(), 0);
  const std::size_t buffered = local.size();
  local.clear();
  buffer_changed(w.now, buffered);
  stalled_until = 0;
  stalled_ = false;
  // Whatever closed the connection of a leaving consumer (its close, a crash, the broker), it
  // has left.
  if (leaving) retire(w);
}

void Consumer::become_replica(World& w) {
  if (replica) return;
  replica = true;
  w.ledger.replicas_changed(group_, w.now, +1);
}

void Consumer::retire(World& w) {
  leaving = false;
  retired = true;
  ++incarnation;
  if (replica) {
    replica = false;
    w.ledger.replicas_changed(group_, w.now, -1);
  }
}

void Consumer::leave(World& w) {
  if (retired || leaving) return;
  if (!attached) {  // not connected (yet, or any more): nothing to hand back
    retire(w);
    return;
  }
  leaving = true;
  w.broker->cancel(*this);
  if (busy == 0)
    schedule_close(w, std::max(w.now, last_ack_arrival_));
  else
    schedule_close(w, w.now + spec_->shutdown_grace);
}

void Consumer::schedule_close(World& w, Time at) {
  ++incarnation;  // voids the close scheduled before (the grace's end, once idle earlier)
  w.at(at, Ev::Close, static_cast<std::uint32_t>(index_), incarnation);
}

void Consumer::close_for_leave(World& w, std::uint32_t epoch) {
  if (!leaving || epoch != incarnation) return;
  connection_lost(w, DuplicateCause::ShutdownGrace);  // retires it
  w.broker->close_connection(*this);
}

}  // namespace brokersim
