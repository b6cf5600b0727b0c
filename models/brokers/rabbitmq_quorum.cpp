// RabbitMQ quorum queues: the steps that differ from a classic queue (rabbit_fifo, v4.2.9 and
// main for 4.3), each with its rule from docs/semantics.md part 2 section 2.
#include "models/brokers/rabbitmq_quorum.hpp"

#include <algorithm>
#include <utility>

#include "models/world.hpp"

namespace brokersim {

std::int64_t RabbitMqQuorum::delivery_limit(const QueueSpec& spec, const std::string& version) {
  if (spec.delivery_limit) return *spec.delivery_limit;  // -1 = disabled
  return version == "3.13" ? -1 : 20;                      // ?DEFAULT_DELIVERY_LIMIT since 4.0
}

RabbitMqQuorum::RabbitMqQuorum(World& w) : RabbitMqClassic(w) {
  // Requeue position is per queue: the returns queue with a limit, the tail without (D3).
  queues_.clear();
  for (const auto& spec : w.s.broker.queues) {
    limits_.push_back(delivery_limit(spec, w.s.broker.version));
    queues_.emplace_back(spec, limits_.back() >= 0 ? RequeueTo::Returns : RequeueTo::Tail);
  }
  // The consumer timeout: <= 4.2 the channel enforces it as for classic queues (the channel
  // tick); 4.3 the queue does, per delivery (on_message_lock).
  const bool v43 = w.s.broker.version == "4.3";
  consumer_timeout_on_ = w.s.broker.consumer_timeout.has_value() && !v43;
  if (v43 && w.s.broker.consumer_timeout) message_lock_ = *w.s.broker.consumer_timeout;
  unlimited_prefetch_ = kUnlimitedPrefetch;
  declare_renews_lease_ = false;
  all_durable_ = true;   // replicated and persisted whatever the message's delivery mode
  ttl0_discard_ = false; // TTL 0 is not the classic "deliver now or discard" (D7)
}

// maybe_set_msg_ttl: min(queue TTL, message TTL) from the enqueue; update_expiry_header turns a
// TTL of 0 into enqueue + 1 ms. A message entering a queue (published or dead-lettered) is new
// there, so its delivery count starts again.
Time RabbitMqQuorum::queue_expiry(std::uint32_t j, int q) {
  if (returns_.size() <= j) returns_.resize(std::max<std::size_t>(j + 1, returns_.size() * 2), 0);
  returns_[j] = 0;
  const Time expiry = queues_[q].expiry_for(w_.now, w_.jobs[j].message_ttl);
  return expiry == w_.now ? w_.now + sim::kNsPerMs : expiry;
}

// 4.3's consumer timeout (rabbit_fifo on main, apply_/3 {timeout, evaluate_consumer_timeout}):
// every checked-out message carries its own timeout, checkout time + consumer_timeout, and an
// absolute timer at the earliest one returns every message past it (return_multiple, not
// counted toward the delivery limit). The consumer enters the `timeout` status and gets nothing
// new until its client has settled each returned message (maybe_untimeout/2); its other
// deliveries stay with it, and the channel stays open (clients with consumer_cancel_notify get
// a basic.cancel; brokersim's client carries on, as a re-subscribing worker does). The client
// does not know: it still runs its stale copy, a ghost, whose settlement the queue ignores, and
// the returned message may run again elsewhere (a duplicate execution). A timer per delivery
// fires at exactly the times the single earliest-deadline timer would.
void RabbitMqQuorum::on_message_lock(std::uint32_t j, std::uint32_t gen) {
  Job& job = w_.jobs[j];
  const bool held = job.where == Where::Transit || job.where == Where::Local || job.where == Where::Executing ||
                    job.where == Where::Settling;
  // Same gen and same delivery: the job was neither settled and freed nor redelivered since.
  if (job.gen != gen || job.ghost || !held || job.delivered + message_lock_ != w_.now) return;
  const int q = job.queue;
  const int ci = job.consumer;
  Channel& ch = channels_[ci];
  ch.unhold(w_.jobs, j);
  unacked_changed(q, job, -1);
  ++w_.ledger.r.consumer_timeouts;
  const std::uint32_t live = w_.take_back(j);  // `job` may dangle from here on
  ch.ghosts.push_back(j);
  if (returns_.size() <= live) returns_.resize(std::max<std::size_t>(live + 1, returns_.size() * 2), 0);
  returns_[live] = returns_[j];
  ch.leave(dispatchers_[q], ci);  // in timeout status: out of the ring until its client has settled the ghost
  requeue(live, Return::Timeout);
  dispatch(q);
}

// return_one: 4.0-4.2 every return counts (nack requeue, crash, consumer timeout); 4.3 only
// failed deliveries (crash; basic.reject requeue=true, which brokersim's consumers never send).
// Past the limit, i.e. on the (limit+1)-th counted return, the message is dead-lettered with
// reason delivery_limit, or dropped without a target.
bool RabbitMqQuorum::returned_past_limit(std::uint32_t j, Return why) {
  Job& job = w_.jobs[j];
  const int q = job.queue;
  if (limits_[q] < 0) return false;
  const bool counts = w_.s.broker.version == "4.3" ? why == Return::Crash : true;
  if (!counts || ++returns_[j] <= static_cast<std::uint64_t>(limits_[q])) return false;
  w_.decide(job, queues_[q].spec().dead_letter_index >= 0 ? Outcome::DeadLettered : Outcome::Lost);
  dead_letter(j, q, DeathReason::DeliveryLimit);
  return true;
}

// x-expires: rabbit_fifo:is_expired/2 on the Ra tick, Ts > LastActive + Expires with no
// consumers; LastActive is the declaration or the last consumer leaving (declares do not renew
// it). Ticks are at multiples of 5 s, so the first tick strictly after the lease end deletes.
void RabbitMqQuorum::restart_lease(int q) {
  ClassicQueue& Q = queues_[q];
  if (!Q.spec().expires) return;
  ++Q.lease_gen;
  if (Q.consumers > 0) return;
  const Time lease_end = sim::add_sat(w_.now, *Q.spec().expires);
  const Time tick = (lease_end / kRaTick + 1) * kRaTick;
  w_.at(tick, Ev::QueueLease, static_cast<std::uint32_t>(q), Q.lease_gen);
}

// A deleted queue takes its unconfirmed dead-letters with it.
void RabbitMqQuorum::on_lease_end(int q, std::uint32_t gen) {
  RabbitMqClassic::on_lease_end(q, gen);
  if (!queues_[q].deleted || queues_[q].held == 0) return;
  std::erase_if(held_, [&](const Held& h) {
    if (h.source != q) return false;
    w_.decide(w_.jobs[h.job], Outcome::Lost);
    w_.leave(h.job);
    return true;
  });
  queues_[q].held = 0;
}

// at-least-once needs reject-publish on the source (with drop-head the broker falls back to
// at-most-once) and a target.
bool RabbitMqQuorum::holds_dead_letters(int q) const {
  const QueueSpec& spec = queues_[q].spec();
  return spec.dead_letter_at_least_once && spec.overflow == Overflow::RejectPublish && spec.dead_letter_index >= 0;
}

// At-least-once: a message its target cannot take now (full with reject-publish, deleted, broker
// down) stays in the source queue, counting toward its limit, until the target has room.
void RabbitMqQuorum::dead_letter(std::uint32_t j, int q, DeathReason why) {
  if (holds_dead_letters(q)) {
    const ClassicQueue& T = queues_[queues_[q].spec().dead_letter_index];
    const bool refused = down_ || T.deleted || (T.spec().overflow != Overflow::DropHead && T.full_for(w_.jobs[j].bytes));
    if (refused) {
      ++queues_[q].held;
      held_.push_back(Held{j, q, why});
      Job& job = w_.jobs[j];
      job.queue = q;
      job.where = Where::DeadLettering;
      w_.ledger.update_resting(job);
      return;
    }
    // Into the target now, not by a later hop: the next message of the same pass must see it
    // there (the target's confirm is what lets the source forget it).
    const bool was = std::exchange(dead_letter_now_, true);
    RabbitMqClassic::dead_letter(j, q, why);
    dead_letter_now_ = was;
    return;
  }
  RabbitMqClassic::dead_letter(j, q, why);
}

void RabbitMqQuorum::ready_changed(int q) {
  RabbitMqClassic::ready_changed(q);
  if (!held_.empty() && !releasing_) release_held(q);
}

// The dead-letter worker republishes held messages once their target has room, oldest first.
void RabbitMqQuorum::release_held(int target) {
  releasing_ = true;
  const bool was = std::exchange(dead_letter_now_, true);
  for (std::size_t i = 0; i < held_.size();) {
    const Held h = held_[i];
    const ClassicQueue& T = queues_[target];
    if (queues_[h.source].spec().dead_letter_index != target) {
      ++i;
      continue;
    }
    if (down_ || T.deleted || T.full_for(w_.jobs[h.job].bytes)) break;
    held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    --queues_[h.source].held;
    RabbitMqClassic::dead_letter(h.job, h.source, h.why);
  }
  dead_letter_now_ = was;
  releasing_ = false;
}

}  // namespace brokersim
