// Azure Service Bus: the message path (enqueue, scheduled activation, lazy expiry, delivery under
// a peek-lock, lock lapse, abandon, dead-lettering, settlement). The rules are listed in
// azure_servicebus.hpp with their sources in docs/semantics.md part 2 section 5.
#include "models/broker_kind.hpp"
#include "models/brokers/azure_servicebus.hpp"

#include <algorithm>
#include <string>

#include "models/world.hpp"

namespace brokersim {

AzureServiceBus::AzureServiceBus(World& w) : w_(w) {
  for (const auto& q : w.s.broker.queues) {
    entities_.emplace_back();
    entities_.back().spec = &q;
  }
  dispatchers_.resize(entities_.size());
  receivers_.resize(w.consumers.size());
  for (std::size_t p = 0; p < w.s.producers.size(); ++p)
  {
    const std::string name = "producers." + std::to_string(p);
    schedule_rngs_.emplace_back(w.s.seed, w.s.replication, name + ".scheduled");
    session_rngs_.emplace_back(w.s.seed, w.s.replication, name + ".session");
  }
}

void AzureServiceBus::start() {
  for (std::size_t q = 0; q < entities_.size(); ++q) restart_idle(static_cast<int>(q));
  // Only peek-lock needs to hear starts: the handler renews the lock while it runs.
  for (const auto& c : w_.s.consumers) w_.broker_hears_starts = w_.broker_hears_starts || !c.servicebus.receive_and_delete;
}

AzureServiceBus::Lock& AzureServiceBus::lock_of(std::uint32_t j) {
  if (locks_.size() <= j) locks_.resize(std::max<std::size_t>(w_.jobs.capacity(), j + 1));
  return locks_[j];
}

void AzureServiceBus::on_event(const sim::Event& ev) {
  const std::uint32_t j = ev.target;
  switch (static_cast<Ev>(ev.kind)) {
    case Ev::Lease:
      if (ev.aux == kQueueLockTimer) {
        on_lock_timer(static_cast<int>(ev.target), ev.tag);
      } else if (ev.aux == kSessionLockTimer) {
        session_lock_end(static_cast<int>(ev.target), ev.tag);
      } else if (w_.jobs[j].gen == ev.tag && lock_of(j).epoch == ev.aux) {
        lapse(j);  // an orphan's lock (its client crashed or its settlement was lost)
      }
      break;
    case Ev::Activate:
      if (w_.jobs[j].gen != ev.tag) break;
      if (ev.aux == kDeferredReceive) {
        receive_deferred(j);
      } else if (entities_[w_.jobs[j].queue].deleted) {
        w_.decide(w_.jobs[j], Outcome::Lost);  // its entity was deleted while it waited
        w_.leave(j);
      } else {
        enqueue(j, w_.jobs[j].queue, false);
      }
      break;
    case Ev::QueueLease: on_idle_end(static_cast<int>(ev.target), ev.tag); break;
    case Ev::SessionIdle: session_idle_end(static_cast<int>(ev.target), ev.tag); break;
    case Ev::BrokerUp:
      if (down_ && w_.now >= up_at_) up();
      break;
    default: throw InvariantError("azure-servicebus: not a broker event");
  }
}

// Send: while the namespace is unreachable the send fails. A scheduled message waits in the
// broker's store, invisible, until its enqueue time (message-sequencing.md, scheduled messages).
void AzureServiceBus::publish(std::uint32_t j) {
  Job& job = w_.jobs[j];
  if (down_) {
    w_.decide(job, Outcome::RejectedAtPublish);
    w_.leave(j);
    return;
  }
  const ProducerSpec& producer = w_.s.producers[static_cast<std::size_t>(job.producer)];
  if (producer.servicebus.session) {
    lock_of(j).session = sim::round_ns(producer.servicebus.session->sample(session_rngs_[static_cast<std::size_t>(job.producer)]));
  }
  if (producer.servicebus.scheduled_delay) {
    const Time delay = World::sample_ns(*producer.servicebus.scheduled_delay, schedule_rngs_[static_cast<std::size_t>(job.producer)]);
    if (delay > 0) {
      w_.at(sim::add_sat(w_.now, delay), Ev::Activate, j, job.gen);
      return;
    }
  }
  enqueue(j, job.queue, false);
}

// A message enters a queue (sent, activated, or dead-lettered into it): a new sequence number,
// delivery count 0, and expires-at = now + min(message TTL, the entity's default TTL). The
// dead-letter queue ignores TTL (service-bus-dead-letter-queues.md).
void AzureServiceBus::enqueue(std::uint32_t j, int q, bool dead_letter) {
  Job& job = w_.jobs[j];
  const QueueSpec& spec = *entities_[q].spec;
  job.queue = q;
  if (entities_[q].deleted) {
    // MessagingEntityNotFound: a send fails; a dead-letter forward has nowhere to go.
    w_.decide(job, dead_letter ? Outcome::Lost : Outcome::RejectedAtPublish);
    w_.leave(j);
    return;
  }
  restart_idle(q);  // a send is activity
  w_.ledger.published(job, q);
  Lock& lock = lock_of(j);
  lock.deliveries = 0;
  ++lock.epoch;
  job.redelivered = false;
  Time expiry = sim::kNever;
  if (!dead_letter) {
    Time ttl = job.message_ttl >= 0 ? job.message_ttl : sim::kNever;
    if (spec.servicebus.default_ttl) ttl = std::min(ttl, *spec.servicebus.default_ttl);
    if (ttl != sim::kNever) expiry = sim::add_sat(w_.now, ttl);
  }
  job.queue_expiry = expiry;
  job.seq = entities_[q].next_seq++;
  push_ready(j, q, false);
  ready_changed(q);
  dispatch(q);
}

void AzureServiceBus::push_ready(std::uint32_t j, int q, bool returned) {
  Entity& E = entities_[q];
  Job& job = w_.jobs[j];
  if (sessions_on(q)) {
    push_session(j, q);
  } else if (returned) {
    E.returned.emplace(job.seq, j);
  } else {
    E.fresh.emplace_back(job.seq, j);
  }
  E.level.add(job);
  job.where = Where::Ready;
  job.ready_since = w_.now;
  w_.ledger.update_resting(job);
}

// The next message in retrieval order: the lowest sequence number of either list.
std::uint32_t AzureServiceBus::pop_ready(int q) {
  Entity& E = entities_[q];
  std::uint32_t j;
  if (!E.returned.empty() && (E.fresh.empty() || E.returned.begin()->first < E.fresh.front().first)) {
    j = E.returned.begin()->second;
    E.returned.erase(E.returned.begin());
  } else {
    j = E.fresh.front().second;
    E.fresh.pop_front();
  }
  E.level.remove(w_.jobs[j]);
  return j;
}

// Receives while some client has credit. "Receive never returns an expired message": an expired
// one met on the way is removed then (lazy expiry, message-expiration.md), which is also the
// only time it stops being counted.
void AzureServiceBus::dispatch(int q) {
  if (down_) return;
  if (sessions_on(q)) {
    dispatch_sessions(q);
    return;
  }
  Entity& E = entities_[q];
  bool popped = false;
  while (E.level.ready > 0 && !dispatchers_[q].empty()) {
    const std::uint32_t j = pop_ready(q);
    popped = true;
    if (w_.jobs[j].queue_expiry <= w_.now) {
      expire(j, q);
      continue;
    }
    const int ci = take_turn(dispatchers_[q], receivers_);
    if (w_.consumers[static_cast<std::size_t>(ci)].spec().batch.max_messages > 0) [[unlikely]]
      receive_batch(j, q, ci);
    else
      deliver(j, q, ci);
  }
  if (popped) ready_changed(q);
}

// A batch receive (ReceiveMessagesAsync with maxMessages, as the Functions trigger's batch loop
// calls it): the client gets what is available, up to its room, in one response. An expired
// message met on the way is removed as by any receive.
void AzureServiceBus::receive_batch(std::uint32_t j, int q, int ci) {
  Consumer& c = w_.consumers[static_cast<std::size_t>(ci)];
  const Time latency = World::sample_ns(w_.s.broker.delivery_latency, c.delivery_rng);
  deliver(j, q, ci, latency);
  while (entities_[q].level.ready > 0 && has_credit(c)) {
    const std::uint32_t k = pop_ready(q);
    if (w_.jobs[k].queue_expiry <= w_.now)
      expire(k, q);
    else
      deliver(k, q, ci, latency);
  }
  give_credit(c);
}

// Peek-lock: the lock starts as the broker sends the message, before the client has it
// (service-bus-prefetch.md: prefetched messages are already locked, their lock timer running).
void AzureServiceBus::deliver(std::uint32_t j, int q, int ci, Time latency, Link link) {
  Job& job = w_.jobs[j];
  Consumer& c = w_.consumers[static_cast<std::size_t>(ci)];
  Receiver& r = receivers_[static_cast<std::size_t>(ci)];
  Lock& lock = lock_of(j);
  w_.sent(job, q, ci, lock.deliveries > 0);
  ++lock.deliveries;
  r.hold(w_.jobs, j);
  if (!receive_and_delete(c)) {
    w_.ledger.unacked_changed(q, w_.now, job, +1);
    ++lock.epoch;
    lock.orphan = false;
    if (session_lock_holds(q, ci)) {
      // The session's lock covers it, renewed by the processor while it holds the session: if the
      // client goes, it ends a lock duration later or at the session lock's end.
      lock.renewed = true;
      lock.locked_until = entities_[q].sessions.at(lock.session).locked_until;
    } else {
      lock.renewed = false;
      lock.locked_until = sim::add_sat(w_.now, entities_[q].spec->servicebus.lock_duration);
      entities_[q].lock_ends.push_back(Entity::LockEnd{lock.locked_until, j, job.gen, lock.epoch});
      if (!entities_[q].lock_timer_armed) arm_lock_timer(q);
    }
  }
  if (latency >= 0) {  // one message of a batch receive (receive_batch)
    reach_client(r, j, w_.now + latency, link);
    return;
  }
  // (A deferred message received back comes outside the ring's turns: its client may be in it.)
  if (!r.in_ring && has_credit(c)) r.join(dispatchers_[q], ci, 0);
  reach_client(r, j, w_.now + World::sample_ns(w_.s.broker.delivery_latency, c.delivery_rng), link);
}

void AzureServiceBus::reach_client(Receiver& r, std::uint32_t j, Time on_its_own, Link link) {
  w_.receive_at(link == Link::Receive ? r.order.arrival(on_its_own) : on_its_own, j);
}

// The handler has the message: the processor renews its lock while it runs, for at most the
// consumer's MaxAutoLockRenewalDuration from the handler's start (5 min by default in the .NET
// ServiceBusProcessorOptions; absent here: no limit). Renewal is continuous here, so a lock
// renewed until start + M ends one lock duration later, start + M + lock_duration: the SDK renews
// a little before each expiry, so the real end is at most that. M = 0: no renewal at all, the
// lock ends when it would have (the processor with auto-renewal off).
void AzureServiceBus::execution_started(std::uint32_t j) {
  const Job& job = w_.jobs[j];
  const Consumer& c = w_.consumers[static_cast<std::size_t>(job.consumer)];
  const ConsumerSpec& spec = c.spec();
  // A batch handler whose every slot now runs waits out of the ring (has_credit): its settlements
  // bring it back (give_credit).
  if (spec.batch.max_messages > 0 && !has_credit(c)) [[unlikely]]
    receivers_[static_cast<std::size_t>(c.index())].leave(dispatchers_[static_cast<std::size_t>(c.queue())], c.index());
  if (job.ghost || spec.servicebus.receive_and_delete) return;
  if (session_lock_holds(job.queue, job.consumer)) return;  // the session's lock covers it
  if (spec.servicebus.max_auto_lock_renewal && *spec.servicebus.max_auto_lock_renewal == 0) return;
  Lock& lock = lock_of(j);
  ++lock.epoch;
  lock.renewed = true;
  if (spec.servicebus.max_auto_lock_renewal) {
    const Time lock_duration = entities_[static_cast<std::size_t>(job.queue)].spec->servicebus.lock_duration;
    lock.locked_until = sim::add_sat(sim::add_sat(w_.now, *spec.servicebus.max_auto_lock_renewal), lock_duration);
    w_.at(lock.locked_until, Ev::Lease, j, job.gen, lock.epoch);
  }
}

// The end of a lock its handler was renewing, if renewal stopped now (the client crashed, or its
// settlement was lost): one lock duration from now, or the capped end if that is earlier.
Time AzureServiceBus::renewed_lock_end(std::uint32_t j) {
  const Job& job = w_.jobs[j];
  const Lock& lock = lock_of(j);
  const Time end = sim::add_sat(w_.now, entities_[static_cast<std::size_t>(job.queue)].spec->servicebus.lock_duration);
  const auto& cap = w_.consumers[static_cast<std::size_t>(job.consumer)].spec().servicebus.max_auto_lock_renewal;
  return cap ? std::min(end, lock.locked_until) : end;
}

bool AzureServiceBus::lock_end_valid(const Entity::LockEnd& e) {
  return w_.jobs[e.job].gen == e.gen && lock_of(e.job).epoch == e.epoch;
}

// At the oldest lock end still valid now (older ones were settled or renewed meanwhile).
void AzureServiceBus::arm_lock_timer(int q) {
  Entity& E = entities_[q];
  while (!E.lock_ends.empty() && !lock_end_valid(E.lock_ends.front())) E.lock_ends.pop_front();
  E.lock_timer_armed = !E.lock_ends.empty();
  if (E.lock_timer_armed)
    w_.at(std::max(E.lock_ends.front().at, w_.now), Ev::Lease, static_cast<std::uint32_t>(q), ++E.lock_timer_gen,
          kQueueLockTimer);
}

void AzureServiceBus::on_lock_timer(int q, std::uint32_t gen) {
  Entity& E = entities_[q];
  if (gen != E.lock_timer_gen) return;
  E.lock_timer_armed = false;
  while (!E.lock_ends.empty() && E.lock_ends.front().at <= w_.now) {
    const Entity::LockEnd e = E.lock_ends.front();
    E.lock_ends.pop_front();
    if (lock_end_valid(e)) lapse(e.job);  // may deliver again, appending later lock ends
  }
  if (!E.lock_timer_armed) arm_lock_timer(q);
}

// The lock lapsed before the client settled: the broker treats it as an abandon. If a client
// still holds the message, its copy becomes a ghost that runs and whose settlement fails.
void AzureServiceBus::lapse(std::uint32_t j) {
  const int q = w_.jobs[j].queue;
  w_.ledger.unacked_changed(q, w_.now, w_.jobs[j], -1);
  session_back(j);
  if (lock_of(j).orphan) {
    abandon(j);
  } else {
    const std::uint32_t live = w_.take_back(j);
    const Lock held = lock_of(j);
    lock_of(live) = held;
    ++lock_of(j).epoch;
    abandon(live);
  }
  dispatch(q);
}

// The message is back from a client (abandoned, failed, or its lock lapsed): its delivery count
// went up with the delivery. Past max_delivery_count it is dead-lettered
// (service-bus-dead-letter-queues.md, maximum delivery count); an expired message is expired at
// once (message-expiration.md: "if the lock expires or the message is abandoned, expiry takes
// immediate effect"); otherwise it is available again at its sequence position.
void AzureServiceBus::abandon(std::uint32_t j) {
  Job& job = w_.jobs[j];
  const int q = job.queue;
  Lock& lock = lock_of(j);
  ++lock.epoch;
  lock.orphan = false;
  if (entities_[q].deleted) {
    w_.decide(job, Outcome::Lost);
    w_.leave(j);
    return;
  }
  if (lock.deliveries >= static_cast<std::uint32_t>(entities_[q].spec->servicebus.max_delivery_count)) {
    w_.decide(job, Outcome::DeadLettered);
    dead_letter(j, q, DeathReason::MaxDeliveryCountExceeded);
    return;
  }
  if (job.queue_expiry <= w_.now) {
    expire(j, q);
    return;
  }
  push_ready(j, q, true);
  ready_changed(q);
}

// Its client asks for the deferred message by sequence number (ServiceBusReceiver /
// ProcessorReceiveActions.ReceiveDeferredMessagesAsync). The receive is a delivery like any other:
// the message is locked again (the processor's MaxAutoLockRenewalDuration applies to it, says the
// ProcessorReceiveActions page), its delivery count goes up, and a message already delivered
// max_delivery_count times is dead-lettered instead (Azure/azure-service-bus#375: deferring with
// MaxDeliveryCount 1 ends in the dead-letter queue). "When a client tries to retrieve a deferred
// message, it's checked for expired condition and moved to a dead-letter queue if it's already
// expired" (message-deferral.md), only with dead-lettering on expiration, else dropped: nothing is
// returned. The sequence number lived in the client: a client gone (crashed, left) never asks,
// and the message rests. An outage fails the call; the client asks again when the namespace is
// back. An entity deleted meanwhile took the message with it.
void AzureServiceBus::receive_deferred(std::uint32_t j) {
  Job& job = w_.jobs[j];
  if (job.where != Where::Deferred || !job.deferred_back)
    throw InvariantError("azure-servicebus: a receive by sequence number of a message not deferred");
  const int q = job.queue;
  const int ci = job.consumer;
  if (down_) {
    w_.at(std::max(up_at_, w_.now), Ev::Activate, j, job.gen, kDeferredReceive);
    return;
  }
  job.deferred_back = false;
  w_.ledger.update_resting(job);  // resting, unless the receive moves it on
  if (entities_[q].deleted) {
    w_.decide(job, Outcome::Lost);
    w_.leave(j);
    return;
  }
  if (!receivers_[static_cast<std::size_t>(ci)].listening()) return;  // nobody asks: it rests
  if (job.queue_expiry <= w_.now) {
    expire(j, q);
    return;
  }
  if (lock_of(j).deliveries >= static_cast<std::uint32_t>(entities_[q].spec->servicebus.max_delivery_count)) {
    w_.decide(job, Outcome::DeadLettered);
    dead_letter(j, q, DeathReason::MaxDeliveryCountExceeded);
    return;
  }
  deliver(j, q, ci, -1, Link::Own);
}

void AzureServiceBus::expire(std::uint32_t j, int q) {
  Job& job = w_.jobs[j];
  w_.ledger.expired_in_queue(job, w_.now);
  w_.decide(job, Outcome::ExpiredInQueue);
  if (entities_[q].spec->servicebus.dead_letter_on_expiration) {
    dead_letter(j, q, DeathReason::TTLExpiredException);
  } else {
    w_.leave(j);
  }
}

// Into the dead-letter sub-queue: dead_letter_to names the queue that stands for it; without one
// the message rests where no consumer reads and keeps its decision. The caller has decided.
void AzureServiceBus::dead_letter(std::uint32_t j, int q, DeathReason why) {
  Job& job = w_.jobs[j];
  w_.ledger.dead_lettered(job, q, why);
  const int target = entities_[q].spec->dead_letter_index;
  if (target < 0) {
    w_.leave(j);
    return;
  }
  ++job.deaths;
  job.message_ttl = -1;
  job.where = Where::DeadLettering;
  job.queue = target;
  enqueue(j, target, true);
}

// The client's settlement arrives. A ghost's Complete fails (MessageLockLost): only the credit
// it held comes back. Peek-lock: Complete removes the message; a failed or timed-out execution
// and a requeue are abandons; a reject is the client's DeadLetter().
void AzureServiceBus::settle(std::uint32_t j, std::uint32_t gen) {
  Job& job = w_.jobs[j];
  if (job.gen != gen) return;  // voided: its client crashed
  Consumer& c = w_.consumers[static_cast<std::size_t>(job.consumer)];
  const int q = job.queue;
  receivers_[static_cast<std::size_t>(c.index())].unhold(w_.jobs, j);
  if (job.ghost) {
    w_.drop_ghost(j);
  } else if (receive_and_delete(c)) {
    session_back(j);
    w_.leave(j);  // settled when it was sent; the client's decision is its outcome
  } else if (down_) {
    // The settlement cannot reach the broker: the message stays locked until its lock lapses.
    orphan(j, lock_of(j).renewed ? renewed_lock_end(j) : sim::add_sat(w_.now, entities_[q].spec->servicebus.lock_duration));
  } else {
    w_.ledger.unacked_changed(q, w_.now, job, -1);
    session_back(j);
    ++lock_of(j).epoch;  // settled: its lock end is void, whatever happens to the message next
    const bool failed = job.decision == Outcome::Failed || job.decision == Outcome::TimedOut;
    switch (job.ack) {
      case Job::Ack::Ack:
        if (failed) {
          abandon(j);
        } else {
          w_.leave(j);
        }
        break;
      case Job::Ack::Reject: dead_letter(j, q, DeathReason::Rejected); break;
      case Job::Ack::Requeue: abandon(j); break;
      case Job::Ack::Defer:
        // Defer(): the message stays in the queue, receivable only by its sequence number; its
        // consumer's decision stands meanwhile. An expired deferred message is not dead-lettered,
        // even with dead_letter_on_expiration, until a receive by sequence number finds it
        // (message-deferral.md). Without receive_deferred_after_ms nobody asks for it: it rests,
        // decided, until the run ends; with it, its client asks for it back that long from now.
        job.where = Where::Deferred;
        job.ready_since = w_.now;  // received back, its deferred time is a queue wait
        job.deferred_back = c.spec().servicebus.receive_deferred_after.has_value();
        w_.ledger.update_resting(job);
        if (job.deferred_back)
          w_.at(sim::add_sat(w_.now, *c.spec().servicebus.receive_deferred_after), Ev::Activate, j, job.gen, kDeferredReceive);
        break;
    }
  }
  give_credit(c);
  dispatch(c.queue());
}

void AzureServiceBus::ready_changed(int q) {
  const Entity& E = entities_[q];
  w_.ledger.ready_changed(q, w_.now, E.level.ready, E.level.bytes);
}

namespace {

std::unique_ptr<Broker> make_azure_servicebus(World& w) { return std::make_unique<AzureServiceBus>(w); }

// A consumer's explicit DeadLetter() (on_expired: reject) keeps RabbitMQ's word `rejected`.
constexpr DeathReason kReasons[] = {DeathReason::TTLExpiredException, DeathReason::MaxDeliveryCountExceeded,
                                    DeathReason::Rejected};
std::span<const DeathReason> death_reasons(const BrokerSpec&) { return kReasons; }

}  // namespace

// A processor with prefetch 0 receives what its handlers take, nothing ahead.
const BrokerKindModel kAzureServiceBusKind{"azure-servicebus", make_azure_servicebus, death_reasons, 0};

}  // namespace brokersim
