// Amazon SQS standard queues: the message path. The rules, and the sources, are in
// amazon_sqs.hpp; docs/semantics.md part 2 section 6 has the table.
#include "models/brokers/amazon_sqs.hpp"

#include <algorithm>

#include "models/world.hpp"

namespace brokersim {

AmazonSqs::AmazonSqs(World& w) : w_(w) {
  queues_.resize(w.s.broker.queues.size());
  dispatchers_.resize(w.s.broker.queues.size());
  clients_.resize(w.consumers.size());
  raised_.resize(w.consumers.size());
}

AmazonSqs::Message& AmazonSqs::msg(std::uint32_t j) {
  if (messages_.size() <= j) messages_.resize(std::max<std::size_t>(j + 1, w_.jobs.capacity()));
  return messages_[j];
}

void AmazonSqs::on_event(const sim::Event& ev) {
  switch (static_cast<Ev>(ev.kind)) {
    case Ev::Lease: lapses_due(static_cast<int>(ev.target), ev.tag); break;
    case Ev::Heartbeat: heartbeat(ev.target, ev.tag, ev.aux); break;
    case Ev::Activate: activate(ev.target, ev.aux); break;
    case Ev::QueueTimer: retention_due(static_cast<int>(ev.target), ev.tag); break;
    case Ev::DeadLetter:
      if (w_.jobs[ev.target].gen == ev.tag) arrive(ev.target, static_cast<int>(ev.aux));
      break;
    case Ev::BrokerUp:
      if (down_ && w_.now >= up_at_) {
        down_ = false;
        for (std::size_t q = 0; q < queues_.size(); ++q) dispatch(static_cast<int>(q));
      }
      break;
    default: throw InvariantError("amazon-sqs: not a broker event");
  }
}

// SendMessage: stored at once; hidden for the queue's delay first, if it has one.
void AmazonSqs::publish(std::uint32_t j) {
  Job& job = w_.jobs[j];
  const int q = job.queue;
  if (down_) {
    w_.decide(job, Outcome::RejectedAtPublish);  // the send fails: the producer gets an error
    w_.leave(j);
    return;
  }
  w_.ledger.published(job, q);
  const QueueSpec& spec = w_.s.broker.queues[q];
  job.queue_expiry = sim::add_sat(w_.now, spec.sqs.retention);
  enter(j, q);
  if (spec.sqs.delay > 0) {
    const Message& m = set_state(j, State::Delayed);
    job.where = Where::Ready;
    w_.ledger.update_resting(job);
    w_.at(w_.now + spec.sqs.delay, Ev::Activate, j, 0, m.token);
    return;
  }
  make_visible(j);
  dispatch(q);
}

void AmazonSqs::enter(std::uint32_t j, int q) {
  Message& m = msg(j);
  m.receives = 0;
  m.live = kNoIndex;
  ++queues_[q].messages;
  track_retention(j);
}

void AmazonSqs::activate(std::uint32_t j, std::uint32_t token) {
  if (j >= messages_.size() || messages_[j].token != token || messages_[j].state != State::Delayed) return;
  make_visible(j);
  dispatch(w_.jobs[j].queue);
}

// Visible again or for the first time: at the tail (a standard queue keeps no order for returns).
void AmazonSqs::make_visible(std::uint32_t j) {
  Job& job = w_.jobs[j];
  const Message& m = set_state(j, State::Visible);
  Queue& Q = queues_[job.queue];
  job.where = Where::Ready;
  job.ready_since = w_.now;
  Q.visible.emplace_back(j, m.token);
  Q.level.add(job);
  w_.ledger.update_resting(job);
  ready_changed(job.queue);
}

// Out of the visible set (its list entry, if not at the head, goes stale); the caller says where
// it goes and reports the new level.
void AmazonSqs::take_off_visible(std::uint32_t j) {
  Job& job = w_.jobs[j];
  set_state(j, State::None);
  Queue& Q = queues_[job.queue];
  Q.level.remove(job);
  if (Q.level.ready == 0) Q.visible.clear();  // only stale entries are left
}

// ReceiveMessage: every waiting client, in turn, gets up to min(batch_size, room) visible
// messages in one response. A message whose retention has run out is deleted rather than
// delivered; the receive that would exceed max_receive_count redrives it instead.
void AmazonSqs::dispatch(int q) {
  if (down_) return;
  Queue& Q = queues_[q];
  const QueueSpec& spec = w_.s.broker.queues[q];
  bool took = false;
  while (Q.level.ready > 0 && !dispatchers_[q].empty()) {
    const int ci = take_turn(dispatchers_[q], clients_);
    Consumer& c = w_.consumers[ci];
    const ClientRecord& cl = clients_[ci];
    const auto want = std::min<std::size_t>(capacity(c) - cl.held.size(), static_cast<std::size_t>(c.spec().sqs.batch_size));
    Time latency = -1;  // one response: one latency for the whole batch
    std::size_t got = 0;
    while (got < want && Q.level.ready > 0) {
      const auto [j, token] = Q.visible.front();
      Q.visible.pop_front();
      if (messages_[j].token != token || messages_[j].state != State::Visible) continue;
      take_off_visible(j);
      took = true;
      if (w_.now >= w_.jobs[j].queue_expiry) {
        delete_expired(j);
      } else if (spec.sqs.max_receive_count && messages_[j].receives >= static_cast<std::uint32_t>(*spec.sqs.max_receive_count)) {
        redrive(j);
      } else {
        if (latency < 0) latency = World::sample_ns(w_.s.broker.delivery_latency, c.delivery_rng);
        deliver(j, ci, latency);
        ++got;
      }
    }
    if (got > 0 && w_.now >= w_.s.warmup) ++receives_by_size_[got];
    give_room(c);
  }
  if (took) ready_changed(q);
}

// The visibility timeout starts now, at the receive on the server: the receive's own
// VisibilityTimeout if the consumer sets one, else the queue's.
void AmazonSqs::deliver(std::uint32_t j, int ci, Time latency) {
  Job& job = w_.jobs[j];
  Message& m = set_state(j, State::InFlight);
  const int q = job.queue;
  ++m.receives;
  m.received_at = w_.now;
  m.visible_until = sim::add_sat(
      w_.now, w_.consumers[ci].spec().sqs.receive_visibility_timeout.value_or(w_.s.broker.queues[q].sqs.visibility_timeout));
  w_.sent(job, q, ci, job.redelivered);
  clients_[ci].hold(w_.jobs, j);
  w_.ledger.unacked_changed(q, w_.now, job, +1);
  push_lapse(q, j);
  w_.receive_at(w_.now + latency, j);
}

// A new visibility end for in-flight message j (its visible_until); the timer moves earlier if
// this end is earlier than the one it is armed for.
void AmazonSqs::push_lapse(int q, std::uint32_t j) {
  Queue& Q = queues_[q];
  const Message& m = messages_[j];
  Q.lapses.push_back(Queue::Lapse{m.visible_until, Q.lapse_seq++, j, m.token});
  std::push_heap(Q.lapses.begin(), Q.lapses.end(), std::greater<>());
  if (!Q.lapse_timer || m.visible_until < Q.lapse_at) arm_lapses(q);
}

void AmazonSqs::pop_lapse(Queue& Q) {
  std::pop_heap(Q.lapses.begin(), Q.lapses.end(), std::greater<>());
  Q.lapses.pop_back();
}

// The redrive policy moves the message to its dead-letter queue (by an Ev::DeadLetter hop, so
// that a dispatch never runs inside another). Standard queues keep the original enqueue
// timestamp: the retention of the dead-letter queue counts from it (vector 43).
void AmazonSqs::redrive(std::uint32_t j) {
  Job& job = w_.jobs[j];
  const int q = job.queue;
  const int target = w_.s.broker.queues[q].dead_letter_index;
  w_.decide(job, Outcome::DeadLettered);
  w_.ledger.dead_lettered(job, q, DeathReason::MaxReceiveCount);
  gone(j);
  ++job.deaths;
  job.redelivered = false;  // a new message in the target queue
  job.where = Where::DeadLettering;
  job.queue = target;
  w_.ledger.update_resting(job);
  w_.at(w_.now, Ev::DeadLetter, j, job.gen, static_cast<std::uint32_t>(target));
}

void AmazonSqs::arrive(std::uint32_t j, int q) {
  Job& job = w_.jobs[j];
  w_.ledger.published(job, q);
  job.queue_expiry = sim::add_sat(job.published, w_.s.broker.queues[q].sqs.retention);
  enter(j, q);
  make_visible(j);
  dispatch(q);
}

bool AmazonSqs::lapse_stale(const Queue::Lapse& l) const {
  const Message& m = messages_[l.job];
  return m.token != l.token || m.state != State::InFlight || m.visible_until != l.at;
}

void AmazonSqs::arm_lapses(int q) {
  Queue& Q = queues_[q];
  while (!Q.lapses.empty() && lapse_stale(Q.lapses.front())) pop_lapse(Q);
  Q.lapse_timer = !Q.lapses.empty();
  if (Q.lapse_timer) {
    Q.lapse_at = Q.lapses.front().at;
    w_.at(Q.lapse_at, Ev::Lease, static_cast<std::uint32_t>(q), ++Q.lapse_gen);
  }
}

// The visibility timer: every in-flight message whose visibility ended by now lapses, in receive
// order. Messages received meanwhile (by the dispatches a lapse runs) lapse later: the timer is
// re-armed after the pass.
void AmazonSqs::lapses_due(int q, std::uint32_t gen) {
  Queue& Q = queues_[q];
  if (gen != Q.lapse_gen) return;
  while (!Q.lapses.empty() && Q.lapses.front().at <= w_.now) {
    const Queue::Lapse l = Q.lapses.front();
    pop_lapse(Q);
    if (!lapse_stale(l)) lapse(l.job, l.token);
  }
  arm_lapses(q);
}

// The visibility timeout lapsed without a delete. If the client still holds the message, the
// broker takes it back and the client runs a stale copy (a ghost); the message is visible again,
// or deleted if its retention ran out meanwhile.
void AmazonSqs::lapse(std::uint32_t j, std::uint32_t token) {
  if (messages_[j].token != token || messages_[j].state != State::InFlight) return;
  const int q = w_.jobs[j].queue;
  std::uint32_t ghost = kNoIndex;
  if (in_client(j)) {
    ghost = j;
    j = w_.take_back(ghost);  // moves the pool: no Job& across this
    Message& lm = set_state(j, State::InFlight);
    Message& gm = set_state(ghost, State::None);
    lm.receives = gm.receives;
    lm.live = kNoIndex;
    gm.live = j;
    w_.jobs[j].unacked_pos = kNoIndex;  // the client holds the ghost, not this copy
    track_retention(j);
  }
  if (w_.now >= w_.jobs[j].queue_expiry) {
    delete_expired(j);
  } else {
    w_.ledger.unacked_changed(q, w_.now, w_.jobs[j], -1);
    make_visible(j);
  }
  if (ghost != kNoIndex) messages_[ghost].live_token = messages_[j].token;
  dispatch(q);
}

bool AmazonSqs::in_client(std::uint32_t j) const {
  const Where where = w_.jobs[j].where;
  return where == Where::Transit || where == Where::Local || where == Where::Executing || where == Where::Settling;
}

// Retention deleted it (or a receive found it past retention): expired_in_queue, the nearest
// outcome (docs/outcomes.md).
void AmazonSqs::delete_expired(std::uint32_t j) {
  Job& job = w_.jobs[j];
  w_.ledger.expired_in_queue(job, w_.now);
  w_.decide(job, Outcome::ExpiredInQueue);
  gone(j);
  w_.leave(j);
}

void AmazonSqs::gone(std::uint32_t j) {
  Job& job = w_.jobs[j];
  Message& m = msg(j);
  Queue& Q = queues_[job.queue];
  if (m.state == State::Visible) {
    take_off_visible(j);
    ready_changed(job.queue);
  } else if (m.state == State::InFlight) {
    w_.ledger.unacked_changed(job.queue, w_.now, job, -1);
  }
  ++m.token;
  m.state = State::None;
  --Q.messages;
  // Keep the visibility deadlines to the messages in flight (the armed timer stays; it re-arms).
  while (!Q.lapses.empty() && lapse_stale(Q.lapses.front())) pop_lapse(Q);
}

bool AmazonSqs::holds(std::uint32_t j, std::uint64_t id, int q) const {
  const Job& job = w_.jobs[j];
  return job.id == id && !job.ghost && job.queue == q && j < messages_.size() && messages_[j].state != State::None;
}

void AmazonSqs::track_retention(std::uint32_t j) {
  const Job& job = w_.jobs[j];
  const int q = job.queue;
  Queue& Q = queues_[q];
  Q.due.push_back(Queue::Due{job.queue_expiry, job.id, j});
  std::push_heap(Q.due.begin(), Q.due.end(), std::greater<>());
  if (Q.due.size() > 2 * Q.messages + 64) {
    // Entries of messages that left long before their retention: prune, so memory follows the
    // messages held, not the run length.
    std::erase_if(Q.due, [&](const Queue::Due& d) { return !holds(d.job, d.id, q); });
    std::make_heap(Q.due.begin(), Q.due.end(), std::greater<>());
  }
  arm_retention(q);
}

void AmazonSqs::arm_retention(int q) {
  Queue& Q = queues_[q];
  if (Q.due.empty() || Q.due.front().at >= Q.timer_at) return;
  Q.timer_at = Q.due.front().at;
  ++Q.timer_gen;
  w_.at(std::max(Q.timer_at, w_.now), Ev::QueueTimer, static_cast<std::uint32_t>(q), Q.timer_gen);
}

// The retention timer: delete every stored message past its retention. An in-flight one is left
// to its client's delete, or deleted when its visibility lapses (amazon_sqs.hpp).
void AmazonSqs::retention_due(int q, std::uint32_t gen) {
  Queue& Q = queues_[q];
  if (gen != Q.timer_gen) return;
  Q.timer_at = sim::kNever;
  bool dropped = false;
  while (!Q.due.empty()) {
    const Queue::Due d = Q.due.front();
    const bool live = holds(d.job, d.id, q);
    if (live && d.at > w_.now) break;
    std::pop_heap(Q.due.begin(), Q.due.end(), std::greater<>());
    Q.due.pop_back();
    if (live && messages_[d.job].state != State::InFlight) {
      delete_expired(d.job);
      dropped = true;
    }
  }
  arm_retention(q);
  if (dropped) dispatch(q);
}

void AmazonSqs::ready_changed(int q) {
  const Queue& Q = queues_[q];
  w_.ledger.ready_changed(q, w_.now, Q.level.ready, Q.level.bytes);
}

}  // namespace brokersim
