// RabbitMQ quorum queues: the steps only quorum queues take (rabbit_fifo, v4.2.9 and main for
// 4.3), each with its rule from docs/semantics.md part 2 section 2.
#include "models/brokers/rabbitmq_quorum.hpp"

#include <algorithm>
#include <utility>

#include "models/brokers/rabbitmq.hpp"
#include "models/world.hpp"

namespace brokersim {

std::int64_t QuorumPolicy::delivery_limit(const QueueSpec& spec, const std::string& version) {
  if (spec.rabbitmq.delivery_limit) return *spec.rabbitmq.delivery_limit;  // -1 = disabled
  return version == "3.13" ? -1 : 20;                      // ?DEFAULT_DELIVERY_LIMIT since 4.0
}

QuorumPolicy::QuorumPolicy(RabbitMq& core, World& w, const BrokerSpec& broker, std::size_t consumers)
    : core_(core), w_(w) {
  const auto is_quorum = [](const QueueSpec& spec) { return spec.rabbitmq.type == QueueType::Quorum; };
  if (std::none_of(broker.queues.begin(), broker.queues.end(), is_quorum)) return;
  // By queue, for every queue (a classic queue's entry is never asked).

  for (const auto& spec : broker.queues) limits_.push_back(delivery_limit(spec, broker.version));
  held_from_.resize(broker.queues.size(), 0);
  workers_.resize(broker.queues.size());
  writers_.resize(broker.queues.size());
  publishers_.resize(broker.queues.size());
  for (std::size_t q = 0; q < broker.queues.size(); ++q) {
    if (!holds_dead_letters(broker.queues[q])) continue;
    writers_[static_cast<std::size_t>(broker.queues[q].dead_letter_index)].push_back(static_cast<int>(q));
    has_workers_ = true;
  }
  retry_ = broker.rabbitmq.dead_letter_confirm_timeout;
  // The consumer timeout: <= 4.2 the channel enforces it as for classic queues (the core's
  // channel tick); 4.3 the queue does, per delivery (on_message_lock).
  v43_ = broker.version == "4.3";
  if (v43_ && broker.rabbitmq.consumer_timeout) {
    message_lock_ = *broker.rabbitmq.consumer_timeout;
    ghosts_.resize(consumers);
  }
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
void QuorumPolicy::lock_delivery(std::uint32_t j, const Job& job) {
  w_.at(w_.now + message_lock_, Ev::Lease, j, job.gen);
}

void QuorumPolicy::on_message_lock(std::uint32_t j, std::uint32_t gen) {
  Job& job = w_.jobs[j];
  const bool held = job.where == Where::Transit || job.where == Where::Local || job.where == Where::Executing ||
                    job.where == Where::Settling;
  // Same gen and same delivery: the job was neither settled and freed nor redelivered since.
  // Acked early (consumers[].ack before-start): settled, no timeout applies any more.
  if (job.gen != gen || job.ghost || !held || job.delivered + message_lock_ != w_.now ||
      job.early == Job::Early::Released)
    return;
  const int q = job.queue;
  const int ci = job.consumer;
  core_.release_delivery(j);
  ++w_.ledger.r.consumer_timeouts;
  const std::uint32_t live = w_.take_back(j, DuplicateCause::ConsumerTimeout);  // `job` may dangle from here on
  ghosts_[ci].push_back(j);
  const std::uint32_t returns = returns_of(j);
  returns_of(live) = returns;
  core_.withhold_credit(ci);  // in timeout status: out of the ring until its client has settled the ghost
  core_.requeue(live, ReturnCause::Timeout);
  core_.dispatch(q);
}

// The client settles a delivery the queue had taken back: the settlement is void (its message
// may be with another consumer by now); once the client has settled every one of them, the
// consumer leaves its timeout status and gets deliveries again.
void QuorumPolicy::on_ghost_settled(std::uint32_t j) {
  Consumer& c = w_.consumers[w_.jobs[j].consumer];
  std::vector<std::uint32_t>& ghosts = ghosts_[c.index()];
  ghosts.erase(std::find(ghosts.begin(), ghosts.end(), j));
  w_.drop_ghost(j);
  core_.give_credit(c);
  core_.dispatch_for(c);
}

void QuorumPolicy::on_channel_closed(int ci) {
  if (ghosts_.empty()) return;
  for (std::uint32_t j : ghosts_[ci]) w_.drop_ghost(j);
  ghosts_[ci].clear();
}

// return_one: 4.0-4.2 every return counts (nack requeue, crash, consumer timeout); 4.3 only
// failed deliveries (crash; basic.reject requeue=true, which brokersim's consumers never send).
// Past the limit, i.e. on the (limit+1)-th counted return, the message is dead-lettered with
// reason delivery_limit, or dropped without a target.
bool QuorumPolicy::on_return(std::uint32_t j, ReturnCause why) {
  Job& job = w_.jobs[j];
  const int q = job.queue;
  if (limits_[q] < 0) return false;
  const bool counts = v43_ ? why == ReturnCause::Crash : true;
  if (!counts || ++returns_[j] <= static_cast<std::uint64_t>(limits_[q])) return false;
  w_.decide(job, core_.queue(q).spec().dead_letter_index >= 0 ? Outcome::DeadLettered : Outcome::Lost);
  core_.dead_letter(j, q, DeathReason::DeliveryLimit);
  return true;
}

}  // namespace brokersim
