// Azure Service Bus: the clients (receivers attaching, their PrefetchCount credit, a crash) and
// the namespace becoming unreachable and coming back.
#include <algorithm>

#include "models/brokers/azure_servicebus.hpp"
#include "models/world.hpp"

namespace brokersim {

// PrefetchCount caps what the client holds; without prefetch each concurrent call receives one
// message (ServiceBusProcessorOptions, service-bus-prefetch.md).
bool AzureServiceBus::has_credit(const Consumer& c) const {
  const Receiver& r = receivers_[static_cast<std::size_t>(c.index())];
  // A batch handler receives nothing while every slot runs: the Functions trigger's batch loop
  // awaits the function before its next ReceiveMessagesAsync (ServiceBusListener), so meanwhile
  // the messages wait available in the queue, not locked in a busy instance's buffer.
  if (c.spec().batch.max_messages > 0 && c.busy >= c.slots()) return false;
  const int spec_prefetch = c.spec().prefetch;
  const std::size_t cap = static_cast<std::size_t>(spec_prefetch > 0 ? spec_prefetch : c.slots());
  return r.listening() && r.held.size() < cap;
}

void AzureServiceBus::give_credit(Consumer& c) {
  receivers_[static_cast<std::size_t>(c.index())].rejoin(dispatchers_[static_cast<std::size_t>(c.queue())], c.index(), 0,
                                                        [&] { return has_credit(c); });
}

bool AzureServiceBus::open_connection(Consumer& c) {
  return connect_unless_down(receivers_[static_cast<std::size_t>(c.index())], down_);
}

// A processor that is stopping (its group leaves) receives nothing new; what it holds stays
// locked to it until it settles it or its lock lapses.
void AzureServiceBus::cancel(Consumer& c) {
  receivers_[static_cast<std::size_t>(c.index())].cancel(dispatchers_[static_cast<std::size_t>(c.queue())], c.index());
}

void AzureServiceBus::consume(Consumer& c) {
  receivers_[static_cast<std::size_t>(c.index())].subscribe();
  Entity& E = entities_[static_cast<std::size_t>(c.queue())];
  ++E.receivers;
  ++E.idle_gen;  // a listening client keeps the queue active
  give_credit(c);
  dispatch(c.queue());
}

// The client is gone. Its peek-locked messages stay locked until their locks lapse (a buffered
// one at its lock end; one whose handler was renewing it, a lock duration from now), then they
// are abandoned like any lapsed lock. Receive-and-delete messages were already deleted at the
// broker: they are lost with the client's memory (message-transfers-locks-settlement.md).
void AzureServiceBus::close_connection(Consumer& c) {
  Receiver& r = receivers_[static_cast<std::size_t>(c.index())];
  const int q = c.queue();
  r.close(dispatchers_[static_cast<std::size_t>(q)], c.index());
  r.order = {};
  const auto held = r.held;  // a copy: unhold changes r.held
  for (std::uint32_t j : held) {
    r.unhold(w_.jobs, j);
    Job& job = w_.jobs[j];
    if (job.ghost) {
      w_.drop_ghost(j);
    } else if (receive_and_delete(c)) {
      session_back(j);
      w_.decide(job, Outcome::Lost);
      w_.leave(j);
    } else {
      const Lock& lock = lock_of(j);
      orphan(j, lock.renewed ? renewed_lock_end(j) : lock.locked_until);
    }
  }
  release_sessions(c.index(), q);
  if (--entities_[static_cast<std::size_t>(q)].receivers == 0) restart_idle(q);
  dispatch(q);
}

// Idleness (message-expiration.md, temporary entities): no sends, no receives. A client attached
// to the queue counts as receiving (it keeps a receive pending), so only an unread queue idles.
void AzureServiceBus::restart_idle(int q) {
  Entity& E = entities_[static_cast<std::size_t>(q)];
  if (!E.spec->expires || E.deleted) return;
  ++E.idle_gen;
  if (E.receivers == 0) w_.at(sim::add_sat(w_.now, *E.spec->expires), Ev::QueueLease, static_cast<std::uint32_t>(q), E.idle_gen);
}

// Deleted: its messages go with it (not dead-lettered: the sub-queue is deleted too).
void AzureServiceBus::on_idle_end(int q, std::uint32_t gen) {
  Entity& E = entities_[static_cast<std::size_t>(q)];
  if (gen != E.idle_gen || E.receivers > 0 || E.deleted) return;
  E.deleted = true;
  w_.ledger.queue_deleted(q);
  std::vector<std::uint32_t> gone;
  for (const auto& [seq, j] : E.fresh) gone.push_back(j);
  for (const auto& [seq, j] : E.returned) gone.push_back(j);
  for (const auto& [id, session] : E.sessions)
    for (const auto& [seq, j] : session.ready) gone.push_back(j);
  E.fresh.clear();
  E.returned.clear();
  E.sessions.clear();
  E.level.clear();
  for (std::uint32_t j : gone) {
    w_.decide(w_.jobs[j], Outcome::Lost);
    w_.leave(j);
  }
  ready_changed(q);
}

// Nobody holds the message any more, but its lock runs until `until`; the client's pending
// events for it are void.
void AzureServiceBus::orphan(std::uint32_t j, Time until) {
  Job& job = w_.jobs[j];
  ++job.gen;
  job.where = Where::Transit;
  Lock& lock = lock_of(j);
  ++lock.epoch;
  lock.orphan = true;
  lock.renewed = false;
  lock.locked_until = std::max(until, w_.now);
  w_.at(lock.locked_until, Ev::Lease, j, job.gen, lock.epoch);
}

// The namespace is unreachable: sends fail, nothing is received, settlements do not arrive (the
// messages stay locked until their locks lapse). Clients keep what they hold. Messages are
// durable and every clock (TTL, locks, schedules) keeps running.
void AzureServiceBus::down(Time duration) {
  up_at_ = std::max(up_at_, w_.now + duration);
  w_.at(up_at_, Ev::BrokerUp, 0);
  down_ = true;
}

void AzureServiceBus::up() {
  down_ = false;
  reconnect_waiting(receivers_, w_.consumers, w_);
  for (std::size_t q = 0; q < entities_.size(); ++q) dispatch(static_cast<int>(q));
}

}  // namespace brokersim
