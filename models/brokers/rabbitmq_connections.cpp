// RabbitMQ, queues of either type: consumers attaching and leaving, the delivery acknowledgement
// timeout, queue leases (x-expires) and declares, and the broker going down and coming back.
#include "models/brokers/rabbitmq.hpp"

#include <algorithm>

#include "models/world.hpp"

namespace brokersim {

void RabbitMq::start() {
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    restart_lease(static_cast<int>(q));  // declared at time 0
    const QueueSpec& spec = queues_[q].spec();
    if (spec.declare_every) w_.at(*spec.declare_every, Ev::Declare, static_cast<std::uint32_t>(q));
    // A one-off declare carries aux = 1: it does not schedule the next periodic one.
    for (Time t : spec.declare_at) w_.at(t, Ev::Declare, static_cast<std::uint32_t>(q), 0, 1);
  }
}

bool RabbitMq::open_connection(Consumer& c) {
  return connect_unless_down(channels_[c.index()], down_);
}

void RabbitMq::consume(Consumer& c) {
  Channel& ch = channels_[c.index()];
  ch.subscribe();
  ch.opened_at = w_.now;
  ch.ticking = false;
  const auto subscribe_to = [&](int q) {
    RabbitQueue& Q = queues_[q];
    // Clients declare the queue they consume from: consuming re-creates a deleted queue.
    Q.deleted = false;
    ++Q.consumers;
    ++Q.lease_gen;  // a queue with a consumer does not expire
  };
  subscribe_to(c.queue());
  for (int q : c.spec().other_queues) subscribe_to(q);
  give_credit(c);
  // The client subscribes to its queues one after the other, in the group's `queue` order, and
  // the first subscription fills what it may of the window before the next one exists: no random
  // wake-up here (that is the limiter's, when an ack reopens a shared window: dispatch_for).
  dispatch(c.queue());
  for (int q : c.spec().other_queues) dispatch(q);
}

// basic.cancel: out of the dispatch ring, and no credit until the client consumes again.
void RabbitMq::cancel(Consumer& c) {
  channels_[c.index()].cancel(dispatchers_[c.queue()], c.index());
  if (reads_several(c.index())) leave_entries(c.index());
}

// The connection is gone: every unacked delivery (in transit, buffered, executing, or whose ack
// was still on the wire) is requeued at its original position, redelivered.
void RabbitMq::close_connection(Consumer& c) { close_connection(c, ReturnCause::Crash); }

void RabbitMq::close_connection(Consumer& c, ReturnCause why) {
  Channel& ch = channels_[c.index()];
  ch.close(dispatchers_[c.queue()], c.index());
  if (reads_several(c.index())) {
    leave_entries(c.index());
    for (auto s = subs_first_[c.index()]; s < subs_first_[c.index() + 1]; ++s) subs_[s].unacked = 0;
  }
  ++ch.epoch;
  ch.ticking = false;
  ch.order = {};
  ch.window = granted_window(c);  // a prefetch the client raised was its channel's
  // The client's stale copies of deliveries the queue took back die with it.
  policy(ch, [&](auto& p) { p.on_channel_closed(c.index()); });
  const auto unacked = ch.held;  // a copy: unhold changes ch.held
  for (std::uint32_t j : unacked) {
    ch.unhold(w_.jobs, j);
    ++w_.jobs[j].gen;  // its pending receive / completion / ack events are void now
    unacked_changed(w_.jobs[j].queue, w_.jobs[j], -1);
    requeue(j, why);
  }
  const auto unsubscribe = [&](int q) {
    if (--queues_[q].consumers == 0) restart_lease(q);
  };
  unsubscribe(c.queue());
  for (int q : c.spec().other_queues) unsubscribe(q);
  dispatch_for(c);
}

// The broker closes the channel itself: the client loses what it held, as in a crash.
void RabbitMq::close_channel(Consumer& c, ReturnCause why) {
  c.connection_lost(w_, why == ReturnCause::Timeout ? DuplicateCause::ConsumerTimeout : DuplicateCause::BrokerRestart);
  close_connection(c, why);
}

// Delivery acknowledgement timeout (RabbitMQ <= 4.2): once per channel tick, the oldest unacked
// delivery is checked; past consumer_timeout the channel is closed with PRECONDITION_FAILED and
// all its unacked deliveries are requeued. The client opens a new channel at once.
void RabbitMq::on_channel_tick(Consumer& c, std::uint32_t epoch) {
  Channel& ch = channels_[c.index()];
  if (epoch != ch.epoch || !ch.open) return;
  if (ch.held.empty()) {
    ch.ticking = false;  // restarted, in phase, by the next delivery
    return;
  }
  Time oldest = sim::kNever;
  for (std::uint32_t j : ch.held) oldest = std::min(oldest, w_.jobs[j].delivered);
  if (w_.now - oldest > *w_.s.broker.rabbitmq.consumer_timeout) {
    ++w_.ledger.r.consumer_timeouts;
    close_channel(c, ReturnCause::Timeout);
    w_.at(w_.now, Ev::Attach, static_cast<std::uint32_t>(c.index()));
    return;
  }
  w_.at(w_.now + kChannelTick, Ev::ChannelTick, static_cast<std::uint32_t>(c.index()), ch.epoch);
}

// queue.declare (passive or not) renews the x-expires lease and re-creates a deleted queue.
void RabbitMq::declare(int q, bool periodic) {
  RabbitQueue& Q = queues_[q];
  if (!down_ && (policy(q, [](const auto& p) { return p.declare_renews_lease(); }) || Q.deleted)) {
    Q.deleted = false;
    restart_lease(q);
  }
  if (!periodic) return;
  const Time next = w_.now + *Q.spec().declare_every;
  if (w_.s.stop_time ? next <= w_.horizon : !w_.events.empty())
    w_.at(next, Ev::Declare, static_cast<std::uint32_t>(q));
}

void RabbitMq::restart_lease(int q) {
  RabbitQueue& Q = queues_[q];
  if (!Q.spec().expires) return;
  ++Q.lease_gen;
  if (Q.consumers > 0) return;
  const Time end = policy(q, [&](const auto& p) { return p.lease_end(w_.now, *Q.spec().expires); });
  w_.at(end, Ev::QueueLease, static_cast<std::uint32_t>(q), Q.lease_gen);
}

// The queue was unused for expires_ms: it is deleted, and its messages with it. They are not
// dead-lettered (dlx.md): lost. A quorum queue's unconfirmed dead-letters go with it.
void RabbitMq::on_lease_end(int q, std::uint32_t gen) {
  RabbitQueue& Q = queues_[q];
  if (!down_ && gen == Q.lease_gen && Q.consumers == 0 && !Q.deleted) {
    Q.deleted = true;
    w_.ledger.queue_deleted(q);
    for (const Message& m : Q.take_all()) {
      w_.decide(w_.jobs[m.job], Outcome::Lost);
      w_.leave(m.job);
    }
    ready_changed(q);
  }
  if (Q.deleted) policy(q, [&](auto& p) { p.on_queue_deleted(q); });
}

// The broker stops. Connections drop: every consumer's unacked deliveries are back in their
// queues (the broker never saw the acks). Transient messages die with the broker; persistent
// ones are on disk. Expiry is absolute wall-clock time, so TTLs keep running meanwhile.
void RabbitMq::down(Time duration) {
  up_at_ = std::max(up_at_, w_.now + duration);
  w_.at(up_at_, Ev::BrokerUp, 0);
  if (down_) return;
  down_ = true;
  for (auto& c : w_.consumers) {
    if (!c.attached) continue;
    close_channel(c, ReturnCause::Crash);
    channels_[c.index()].reconnect_when_up = true;
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    RabbitQueue& Q = queues_[q];
    for (const Message& m : Q.take_all()) {
      if (policy(static_cast<int>(q), [&](const auto& p) { return p.survives_restart(w_.jobs[m.job]); })) {
        Q.requeue(m);
      } else {
        w_.decide(w_.jobs[m.job], Outcome::Lost);
        w_.leave(m.job);
      }
    }
    ready_changed(static_cast<int>(q));
  }
}

// Recovery: process_args_policy runs drop_expired_msgs on every queue (the overdue head run
// goes), queue-expiry leases restart, and clients reconnect.
void RabbitMq::up() {
  down_ = false;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    queues_[q].timer_fired();
    drop_expired(static_cast<int>(q));
    restart_lease(static_cast<int>(q));
  }
  classic_.on_broker_up();
  quorum_.on_broker_up();
  reconnect_waiting(channels_, w_.consumers, w_);
  for (std::size_t q = 0; q < queues_.size(); ++q) dispatch(static_cast<int>(q));
}

}  // namespace brokersim
