// RabbitMQ quorum queues: at-least-once dead-lettering, as rabbit_fifo_dlx_worker does it
// (rabbitmq-server deps/rabbit/src/rabbit_fifo_dlx_worker.erl; the same rules at v3.10.8, v3.13.7
// and v4.2.9). One worker per source queue consumes the source's dead letters (at most
// dead_letter_worker_consumer_prefetch = 32 unsettled) and republishes each with publisher
// confirms; the source forgets a message only once its target confirmed it. What the target does
// not take stays with the worker and counts toward the source's length, and the worker retries it
// on its settle timer (dead_letter_worker_publisher_confirm_timeout, 180 000 ms by default in
// deps/rabbit/Makefile): a timer armed when the worker starts holding something, firing every
// period while it holds anything (maybe_set_timer/1), that republishes each held message
// published at least one period ago, or never published (redeliver_messages/1:
// `LastPub + SettleTimeout =< Now`, or `last_published_at = undefined`). Nothing else retries:
// a target re-declared after a deletion, or drained below its limit, gets the message at the
// next firing, not at once.
//
// Whether a quorum target takes a worker's publish (rabbit_fifo_client:enqueue/4): the worker is
// an enqueuer with a status. Its first publish registers it (register_enqueuer, answered at once:
// reject_publish if the target is over its limit, else go); rabbit_fifo applies every enqueue it
// receives and, after each command, tells its enqueuers reject_publish while it is over its limit
// (evaluate_limit/5: `ready + dead-letters held > max-length`, strictly) and go once it is back at
// or below 80% of it (is_below_soft_limit/1, ?LOW_LIMIT 0.8). That notice travels as a message, so
// dead letters the worker forwards in one batch (messages dead-lettered at the same instant) all
// get in past the limit; a dead letter at a later instant is rejected and held.

#include "models/brokers/rabbitmq.hpp"
#include "models/brokers/rabbitmq_quorum.hpp"
#include "models/world.hpp"

namespace brokersim {

namespace {

bool over_limit(const RabbitQueue& T, std::uint64_t held) {
  const QueueSpec& spec = T.spec();
  return (spec.max_length && T.ready() + held > static_cast<std::uint64_t>(*spec.max_length)) ||
         (spec.max_length_bytes && T.ready_bytes() > static_cast<std::uint64_t>(*spec.max_length_bytes));
}

// is_below_soft_limit: `Num =< trunc(Limit * 0.8)` for each limit set.
bool below_soft_limit(const RabbitQueue& T, std::uint64_t held) {
  const QueueSpec& spec = T.spec();
  const auto soft = [](std::int64_t limit) { return static_cast<std::uint64_t>(static_cast<double>(limit) * 0.8); };
  return (!spec.max_length || T.ready() + held <= soft(*spec.max_length)) &&
         (!spec.max_length_bytes || T.ready_bytes() <= soft(*spec.max_length_bytes));
}

}  // namespace

bool QuorumPolicy::on_dead_letter(std::uint32_t j, int q, DeathReason why) {
  if (!holds_dead_letters(core_.queue(q).spec())) return false;
  Worker& wk = workers_[q];
  Held h{j, q, why, sim::kNever, false};
  // Behind a worker holding its prefetch the message waits in the source, not yet attempted;
  // with the broker down there is no worker (it starts again with the broker).
  if (!core_.is_down() && wk.checked_out < kWorkerPrefetch) {
    h.checked_out = true;
    if (try_publish(h)) return true;
    ++wk.checked_out;
  }
  ++held_from_[q];
  held_.push_back(h);
  Job& job = w_.jobs[j];
  // On its way into the target, as a classic queue's dead letter is: a letter the worker holds for
  // a queue some consumer reads is still in the system (a run follows it past its stop until the
  // worker's retry delivers it), one for a queue nobody reads rests decided.
  job.queue = core_.queue(q).spec().dead_letter_index;
  job.where = Where::DeadLettering;
  w_.ledger.update_resting(job);
  if (h.checked_out) arm_timer(q);
  return true;
}

// One publish of a held (or new) dead letter: true if its target took it (and confirmed: the
// source forgets it). A target that does not exist is no route: nothing is published and the
// publish time stays as it was; a refusal is a publish now.
bool QuorumPolicy::try_publish(Held& h) {
  const int target = core_.queue(h.source).spec().dead_letter_index;
  if (core_.queue(target).deleted) return false;
  if (!accepts(workers_[h.source], h.job, target)) {
    h.published = w_.now;
    return false;
  }
  core_.republish_dead_letter(h.job, h.source, h.why);
  return true;
}

// A quorum target: the worker's enqueuer status toward it decides; only reject-publish stops
// enqueuers (drop-head takes everything and drops at the head). A classic target (a broker with
// queues of both types) has no enqueuer status: it answers each publish by its own overflow rule,
// refusing (a negative confirm) when full with reject-publish or reject-publish-dlx, and the
// worker keeps what it refused.
bool QuorumPolicy::accepts(EnqueuerState& wk, std::uint32_t j, int target) {
  const RabbitQueue& T = core_.queue(target);
  if (T.type() == QueueType::Classic) return !core_.refuses(target, j, true);
  if (T.spec().overflow != Overflow::RejectPublish) return true;
  const Time now = w_.now;
  if (wk.status == Enqueuer::Unregistered) {
    wk.status = over_limit(T, held_from(target)) ? Enqueuer::Blocked : Enqueuer::Go;
  } else if (wk.status == Enqueuer::Go && wk.blocked_at < now) {
    wk.status = Enqueuer::Blocked;  // the reject_publish notice has arrived
    wk.blocked_at = sim::kNever;
  }
  return wk.status == Enqueuer::Go;
}

// What the target tells its enqueuers after a change of its length.
void QuorumPolicy::enqueuer_status(int target) {
  auto& producers = publishers_[target];
  if (writers_[target].empty() && producers.empty()) return;
  const RabbitQueue& T = core_.queue(target);
  if (T.type() == QueueType::Classic || T.spec().overflow != Overflow::RejectPublish) return;
  const bool over = over_limit(T, held_from(target));
  const bool below = !over && below_soft_limit(T, held_from(target));
  const auto tell = [&](EnqueuerState& wk) {
    if (wk.status == Enqueuer::Unregistered) return;
    if (over && wk.status == Enqueuer::Go && wk.blocked_at == sim::kNever) wk.blocked_at = w_.now;
    if (below) {
      wk.status = Enqueuer::Go;
      wk.blocked_at = sim::kNever;
    }
  };
  for (int s : writers_[target]) tell(workers_[s]);
  for (EnqueuerState& p : producers) tell(p);
}

void QuorumPolicy::arm_timer(int source) {
  Worker& wk = workers_[source];
  if (wk.timer_at != sim::kNever) return;
  wk.timer_at = w_.now + retry_;
  w_.at(wk.timer_at, Ev::DlxTimer, static_cast<std::uint32_t>(source), ++wk.timer_gen);
}

void QuorumPolicy::on_dlx_timer(int source, std::uint32_t gen) {
  Worker& wk = workers_[source];
  if (core_.is_down() || gen != wk.timer_gen) return;
  wk.timer_at = sim::kNever;
  redeliver(source);
  if (wk.checked_out > 0) arm_timer(source);
}

// redeliver_messages: each held message of `source`, oldest first, published a period ago or
// never is published again; a message not yet with the worker is taken (and published at once)
// while the worker has room under its prefetch.
void QuorumPolicy::redeliver(int source) {
  Worker& wk = workers_[source];
  const Time now = w_.now;
  // Publishing may dead-letter more (an expiry pass in the target): they are appended, not
  // retried in this pass.
  std::size_t end = held_.size();
  for (std::size_t i = 0; i < end;) {
    Held h = held_[i];
    if (h.source != source) {
      ++i;
      continue;
    }
    if (!h.checked_out) {
      if (wk.checked_out >= kWorkerPrefetch) break;
      h.checked_out = true;
      ++wk.checked_out;
    } else if (h.published != sim::kNever && h.published + retry_ > now) {
      held_[i++] = h;
      continue;
    }
    if (try_publish(h)) {
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
      --end;
      --held_from_[source];
      --wk.checked_out;
    } else {
      held_[i++] = h;
    }
  }
}

void QuorumPolicy::reset_worker(Worker& wk) {
  wk.status = Enqueuer::Unregistered;
  wk.blocked_at = sim::kNever;
  wk.timer_at = sim::kNever;
  ++wk.timer_gen;
  wk.checked_out = 0;
}

void QuorumPolicy::on_queue_deleted(int q) {
  // remove_queue/2: the workers publishing to q drop their client of it.
  for (int s : writers_[q]) {
    workers_[s].status = Enqueuer::Unregistered;
    workers_[s].blocked_at = sim::kNever;
  }
  reset_worker(workers_[q]);  // the source's own worker goes with it
  for (EnqueuerState& p : publishers_[q]) p = EnqueuerState{};  // producers register again
  if (held_from_[q] == 0) return;
  std::erase_if(held_, [&](const Held& h) {
    if (h.source != q) return false;
    w_.decide(w_.jobs[h.job], Outcome::Lost);
    w_.leave(h.job);
    return true;
  });
  held_from_[q] = 0;
}

// A new worker checks out the source's dead letters again and publishes them at once.
void QuorumPolicy::on_broker_up() {
  // Clients reconnect to a restarted queue and register as enqueuers again.
  for (auto& by_producer : publishers_)
    for (EnqueuerState& p : by_producer) p = EnqueuerState{};
  if (!has_workers_) return;
  for (Worker& wk : workers_) reset_worker(wk);
  for (Held& h : held_) h.checked_out = false;
  for (std::size_t s = 0; s < workers_.size(); ++s) {
    if (held_from_[s] == 0) continue;
    redeliver(static_cast<int>(s));
    if (workers_[s].checked_out > 0) arm_timer(static_cast<int>(s));
  }
}

}  // namespace brokersim
