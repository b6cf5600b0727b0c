// RabbitMQ: the message path, for queues of either type. Every handler is named after the broker
// step it models; the rule each follows is in docs/semantics.md part 2 (sections 1, 2 and 4),
// cited where it matters, and where the types differ the queue's policy answers (rabbitmq.hpp).
#include "models/broker_kind.hpp"
#include "models/brokers/rabbitmq.hpp"

#include <algorithm>
#include <utility>

#include "models/world.hpp"

namespace brokersim {

RabbitMq::RabbitMq(World& w) : w_(w), quorum_(*this, w, w.s.broker, w.consumers.size()) {
  const auto nq = w.s.broker.queues.size();
  // Cycle detection keeps the queues a message was dead-lettered from as bits of one word.
  if (nq > 64) throw InvariantError("at most 64 queues are supported");
  queues_.reserve(nq);
  for (const auto& spec : w.s.broker.queues) {
    const int q = static_cast<int>(queues_.size());
    // Each queue follows its own type's policy (broker.queues.NAME.type, the kind's by default).
    const RequeueTo requeue_to = spec.rabbitmq.type == QueueType::Quorum ? quorum_.requeue_to(q) : classic_.requeue_to(q);
    queues_.emplace_back(spec, requeue_to);
  }
  dispatchers_.resize(nq);
  channels_.resize(w.consumers.size());
  for (const auto& c : w.consumers) {
    Channel& ch = channels_[c.index()];
    ch.type = queues_[c.queue()].type();
    ch.window = granted_window(c);
    ch.no_ack = c.spec().ack == AckMode::OnReceipt;
    ch.priority = c.spec().priority;
  }
  consumer_count_ = static_cast<int>(w.consumers.size());
  bool several = false;
  for (const auto& c : w.consumers) several = several || c.spec().reads_several();
  several_ = several;
  if (several) {
    subs_first_.reserve(w.consumers.size() + 1);
    for (const auto& c : w.consumers) {
      subs_first_.push_back(static_cast<std::uint32_t>(subs_.size()));
      for (int q : c.spec().other_queues) subs_.push_back(Subscription{c.index(), q});
    }
    subs_first_.push_back(static_cast<std::uint32_t>(subs_.size()));
  }
  slack_rng_ = sim::Rng(w.s.seed, w.s.replication, "broker.expiry_slack");
  limiter_rng_ = sim::Rng(w.s.seed, w.s.replication, "broker.limiter");
  // <= 4.2 the channel evaluates the consumer timeout, for either type; 4.3 no longer does
  // (docs/semantics.md D2), and a quorum queue does it itself, per delivery (QuorumPolicy).
  consumer_timeout_on_ = w.s.broker.rabbitmq.consumer_timeout.has_value() && w.s.broker.version != "4.3";
}

void RabbitMq::on_event(const sim::Event& ev) {
  const auto q = static_cast<int>(ev.target);
  switch (static_cast<Ev>(ev.kind)) {
    case Ev::BrokerUp:
      if (down_ && w_.now >= up_at_) up();
      break;
    case Ev::Declare: declare(q, ev.aux == 0); break;
    case Ev::QueueLease: on_lease_end(q, ev.tag); break;
    case Ev::ChannelTick: on_channel_tick(w_.consumers[ev.target], ev.tag); break;
    // Only the quorum policy arms these two.
    case Ev::Lease: quorum_.on_message_lock(ev.target, ev.tag); break;
    case Ev::QueueTimer:
      // While the broker is down its queue processes are gone; the restart runs the pass.
      if (!down_ && ev.tag == queues_[q].timer_gen()) {
        queues_[q].timer_fired();
        drop_expired(q);
        dispatch(q);
      }
      break;
    case Ev::DeadLetter:
      if (w_.jobs[ev.target].gen == ev.tag) enqueue(ev.target, static_cast<int>(ev.aux), true);
      break;
    case Ev::DlxTimer: quorum_.on_dlx_timer(q, ev.tag); break;
    default: throw InvariantError("rabbitmq: not a broker event");
  }
}

void RabbitMq::publish(std::uint32_t j) { enqueue(j, w_.jobs[j].queue, false); }

// rabbit_amqqueue_process: overflow check, then attempt_delivery, then enqueue + drop-head +
// head-expiry pass (docs/semantics.md "ordering of checks at publish").
void RabbitMq::enqueue(std::uint32_t j, int q, bool dead_letter) {
  RabbitQueue& Q = queues_[q];
  const QueueSpec& spec = Q.spec();
  Job& job = w_.jobs[j];
  job.queue = q;
  if (down_ || Q.deleted) {
    // No broker to take it, or no queue to route it to (the default exchange drops it).
    w_.decide(job, down_ && !dead_letter ? Outcome::RejectedAtPublish : Outcome::Lost);
    w_.leave(j);
    return;
  }
  w_.ledger.published(job, q);

  if (policy(q, [&](auto& p) { return p.refuses(Q, q, j, job, dead_letter); })) {
    if (dead_letter) {
      // Dead-letter republishing has no publisher confirms: a refusing target loses the message.
      w_.decide(job, Outcome::Lost);
      w_.leave(j);
      return;
    }
    w_.decide(job, Outcome::RejectedAtPublish);
    if (spec.overflow == Overflow::RejectPublishDlx)
      this->dead_letter(j, q, DeathReason::Maxlen);
    else
      w_.leave(j);
    return;
  }

  job.queue_expiry = policy(q, [&](auto& p) { return p.expiry(Q, j, job, w_.now); });
  job.ready_since = w_.now;
  if (Q.empty() && !dispatchers_[q].empty()) {
    // attempt_delivery before enqueue: this is also why expiration 0 is delivered when (and
    // only when) a consumer can take the message at once.
    job.seq = Q.take_seq();
    deliver(j, q);
    return;
  }
  if (policy(q, [&](const auto& p) { return p.discards_at_once(Q, job, w_.now); })) {
    w_.ledger.expired_in_queue(job, w_.now);
    w_.decide(job, Outcome::ExpiredInQueue);
    w_.leave(j);
    return;
  }
  job.seq = Q.enqueue(j, job.bytes, job.queue_expiry, job.counted);
  job.where = Where::Ready;
  w_.ledger.update_resting(job);
  bool head_dropped = false;
  if (spec.overflow == Overflow::DropHead) {
    while (Q.over_limit()) {
      // An already-expired head is dropped as maxlen, not expired (docs/semantics.md D8).
      const Message m = Q.pop_head();
      head_dropped = true;
      w_.decide(w_.jobs[m.job], spec.dead_letter_index >= 0 ? Outcome::DeadLettered : Outcome::Lost);
      this->dead_letter(m.job, q, DeathReason::Maxlen);
    }
  }
  ready_changed(q);
  if (Q.ready() == 1 || head_dropped) drop_expired(q);
}

void RabbitMq::deliver(std::uint32_t j, int q) {
  Job& job = w_.jobs[j];
  const int entry = dispatchers_[q].take();
  int ci = entry;
  if (!several_ || entry < consumer_count_) [[likely]] {
    channels_[entry].in_ring = false;
  } else {
    Subscription& sub = subs_[static_cast<std::size_t>(entry - consumer_count_)];
    sub.in_ring = false;
    ci = sub.consumer;
  }
  Consumer& c = w_.consumers[ci];
  Channel& ch = channels_[ci];
  w_.sent(job, q, ci, job.redelivered);
  if (ch.no_ack) [[unlikely]] {
    // basic.consume no-ack: settled as it is sent, the client's from here on (lost with it).
    job.early = Job::Early::Released;
    c.keep(w_, j);
    if (!reads_several(ci)) [[likely]] {
      if (has_credit(ch, ci)) ch.join(dispatchers_[q], ci, ch.priority);
    } else {
      after_delivery(ch, ci, entry);
    }
    send_on(ch, c, j);
    return;
  }
  ch.hold(w_.jobs, j);
  if (several_ && entry >= consumer_count_) [[unlikely]] ++subs_[static_cast<std::size_t>(entry - consumer_count_)].unacked;
  unacked_changed(q, job, +1);
  if (consumer_timeout_on_ && !ch.ticking) {
    // Ticks keep their phase from the channel's opening, so the timeout fires in [T, T + 60 s].
    const Time k = (w_.now - ch.opened_at) / kChannelTick + 1;
    w_.at(ch.opened_at + k * kChannelTick, Ev::ChannelTick, static_cast<std::uint32_t>(ci), ch.epoch);
    ch.ticking = true;
  }
  policy(ch, [&](auto& p) { p.on_deliver(j, job); });
  if (!reads_several(ci)) [[likely]] {
    if (has_credit(ch, ci)) ch.join(dispatchers_[q], ci, ch.priority);
  } else {
    after_delivery(ch, ci, entry);
  }
  send_on(ch, c, j);
}

// The delivery latency is drawn per delivery; the channel keeps the order (SendOrder).
void RabbitMq::send_on(Channel& ch, Consumer& c, std::uint32_t j) {
  w_.receive_at(ch.order.arrival(w_.now + World::sample_ns(w_.s.broker.delivery_latency, c.delivery_rng)), j);
}

void RabbitMq::dispatch(int q) {
  if (down_) return;
  RabbitQueue& Q = queues_[q];
  bool fetched = false;
  while (!Q.empty() && !dispatchers_[q].empty()) {
    // Expired messages are never delivered (docs/semantics.md D1): an overdue head goes first.
    if (Q.head_expired(w_.now)) {
      expire(Q.pop_head().job, q);
    } else {
      deliver(Q.pop_head().job, q);
    }
    fetched = true;
  }
  if (fetched) {
    ready_changed(q);
    drop_expired(q);  // the pass after every fetch
  }
}

// drop_expired_msgs: drop the consecutive run of expired messages at the head, then re-arm.
void RabbitMq::drop_expired(int q) {
  RabbitQueue& Q = queues_[q];
  bool dropped = false;
  while (Q.head_expired(w_.now)) {
    expire(Q.pop_head().job, q);
    dropped = true;
  }
  if (dropped) ready_changed(q);
  arm_timer(q);
}

void RabbitMq::arm_timer(int q) {
  if (auto t = queues_[q].arm_timer(w_.now)) {
    // Real brokers fire a few ms late (scheduling); expiry_slack_ms models that lateness.
    const Time slack = w_.s.broker.rabbitmq.expiry_slack.is_zero() ? 0 : World::sample_ns(w_.s.broker.rabbitmq.expiry_slack, slack_rng_);
    w_.at(*t + slack, Ev::QueueTimer, static_cast<std::uint32_t>(q), queues_[q].timer_gen());
  }
}

void RabbitMq::expire(std::uint32_t j, int q) {
  w_.ledger.expired_in_queue(w_.jobs[j], w_.now);
  w_.decide(w_.jobs[j], Outcome::ExpiredInQueue);
  dead_letter(j, q, DeathReason::Expired);
}

// The caller has made the decision; moving to a dead-letter queue changes nothing by itself. A
// quorum queue dead-lettering at least once keeps what its target refuses.
void RabbitMq::dead_letter(std::uint32_t j, int q, DeathReason why) {
  if (!policy(q, [&](auto& p) { return p.on_dead_letter(j, q, why); })) move_to_dead_letter(j, q, why);
}

RabbitMq::DeathHistory& RabbitMq::death_history(std::uint32_t j) {
  if (j >= deaths_.size()) deaths_.resize(std::max<std::size_t>(j + 1, 2 * deaths_.size()));
  DeathHistory& h = deaths_[j];
  if (h.job != w_.jobs[j].id) h = DeathHistory{w_.jobs[j].id};
  return h;
}

void RabbitMq::republish_dead_letter(std::uint32_t j, int source, DeathReason why) {
  const bool was = std::exchange(dead_letter_now_, true);
  move_to_dead_letter(j, source, why);
  dead_letter_now_ = was;
}

void RabbitMq::move_to_dead_letter(std::uint32_t j, int q, DeathReason why) {
  Job& job = w_.jobs[j];
  const int target = queues_[q].spec().dead_letter_index;
  if (target < 0) {
    w_.leave(j);
    return;
  }
  w_.ledger.dead_lettered(job, q, why);
  DeathHistory& history = death_history(j);
  history.from |= std::uint64_t{1} << q;
  if (why == DeathReason::Rejected) history.rejected = true;
  // Cycle detection (rabbit_dead_letter:detect_cycles/3): a target already in the death history
  // is dropped unless a rejection is somewhere in the cycle.
  if (why != DeathReason::Rejected && (history.from >> target & 1u) && !history.rejected) {
    w_.leave(j);
    return;
  }
  ++job.deaths;
  job.message_ttl = -1;      // the per-message TTL is stripped from the dead-lettered copy
  job.redelivered = false;   // a new message in the target queue: its first delivery is not a redelivery
  job.where = Where::DeadLettering;
  job.queue = target;
  w_.ledger.update_resting(job);
  if (dead_letter_now_) {
    enqueue(j, target, true);
  } else {
    w_.at(w_.now, Ev::DeadLetter, j, job.gen, static_cast<std::uint32_t>(target));
  }
}

// basic.nack requeue=true: back where the queue's type puts it (RequeueTo) with the original
// expiry; then the head pass runs (requeue_and_run), so an expired message that lands at the head
// goes at once.
void RabbitMq::requeue(std::uint32_t j, ReturnCause why) {
  const int q = w_.jobs[j].queue;
  if (policy(q, [&](auto& p) { return p.on_return(j, why); })) return;
  Job& job = w_.jobs[j];
  queues_[q].requeue(Message{job.seq, j, job.bytes, job.queue_expiry, job.counted});
  job.where = Where::Ready;
  job.ready_since = w_.now;
  w_.ledger.update_resting(job);
  ready_changed(q);
  if (!down_) drop_expired(q);
}

void RabbitMq::settle(std::uint32_t j, std::uint32_t gen) {
  Job& job = w_.jobs[j];
  if (job.gen != gen) return;  // the channel was closed meanwhile: this ack never arrives
  if (job.ghost) {
    policy(job.queue, [&](auto& p) { p.on_ghost_settled(j); });
    return;
  }
  Consumer& c = w_.consumers[job.consumer];
  const int q = job.queue;
  channels_[job.consumer].unhold(w_.jobs, j);
  const bool several = reads_several(job.consumer);
  if (several) [[unlikely]]
    if (Subscription* sub = subscription_of(job.consumer, q)) --sub->unacked;
  unacked_changed(q, job, -1);
  switch (job.ack) {
    case Job::Ack::Ack:
      if (!w_.kept_by_client(j)) w_.leave(j);  // an early ack leaves the job with its client
      break;
    case Job::Ack::Reject: dead_letter(j, q, DeathReason::Rejected); break;
    case Job::Ack::Requeue: requeue(j, ReturnCause::Nack); break;
    case Job::Ack::Defer: throw InvariantError("rabbitmq: a consumer deferred a message (the loader refuses on_expired defer)");
  }
  if (several) [[unlikely]] {
    give_credit(c);
    // Per subscription, only the settled message's queue has new credit; per channel, every one.
    if (c.spec().prefetch_scope == ConsumerSpec::PrefetchScope::Channel) dispatch_for(c);
    else dispatch(q);
    return;
  }
  // A consumer of one queue was sent the message from it, and nothing moved it since (a message
  // the broker took back is a ghost, settled above): q is c.queue(), read from the job's line
  // rather than the consumer's.
  rejoin_one_queue(channels_[job.consumer], job.consumer, q);
  dispatch(q);
}

std::uint32_t RabbitMq::granted_window(const Consumer& c) {
  // No-ack consumers (consumers[].ack on-receipt) have no prefetch limit: nothing is unacked.
  const int prefetch = c.spec().ack == AckMode::OnReceipt ? 0 : c.spec().prefetch;
  return policy(channels_[c.index()], [&](const auto& p) { return p.window(prefetch); });
}

// basic.qos with a new prefetch count on a live channel (consumers[].eta hold-outside-prefetch:
// Celery's global QoS, one window for the channel). A limit of 0 stays without limit. A lowered
// window takes the channel out of its rings if it has no credit left.
void RabbitMq::prefetch_changed(Consumer& c, int delta) {
  const int ci = c.index();
  Channel& ch = channels_[ci];
  if (ch.window == 0 || !ch.listening()) return;
  ch.window = static_cast<std::uint32_t>(static_cast<std::int64_t>(ch.window) + delta);
  if (delta > 0) {
    give_credit(c);
    dispatch_for(c);
  } else if (reads_several(ci) ? !entry_credit(ch, ci, ci) : !has_credit(ch, ci)) {
    withhold_credit(ci);
  }
}

// Credit: the prefetch window and the channel's unacked deliveries.
void RabbitMq::give_credit(Consumer& c) {
  Channel& ch = channels_[c.index()];
  if (!reads_several(c.index())) [[likely]] {
    rejoin_one_queue(ch, c.index(), c.queue());
  } else {
    ch.rejoin(dispatchers_[c.queue()], c.index(), ch.priority, [&] { return entry_credit(ch, c.index(), c.index()); });
    for (auto s = subs_first_[c.index()]; s < subs_first_[c.index() + 1]; ++s) {
      const int entry = consumer_count_ + static_cast<int>(s);
      if (!subs_[s].in_ring && entry_credit(ch, c.index(), entry)) join_entry(c.index(), entry);
    }
  }
}

void RabbitMq::withhold_credit(int ci) {
  channels_[ci].leave(dispatchers_[w_.consumers[ci].queue()], ci);
  if (reads_several(ci)) [[unlikely]] leave_entries(ci);
}

void RabbitMq::release_delivery(std::uint32_t j) {
  Job& job = w_.jobs[j];
  channels_[job.consumer].unhold(w_.jobs, j);
  if (several_) [[unlikely]]
    if (Subscription* sub = subscription_of(job.consumer, job.queue)) --sub->unacked;
  unacked_changed(job.queue, job, -1);
}

// --- channels consuming several queues

RabbitMq::Subscription* RabbitMq::subscription_of(int ci, int q) {
  for (auto s = subs_first_[ci]; s < subs_first_[ci + 1]; ++s)
    if (subs_[s].queue == q) return &subs_[s];
  return nullptr;  // the channel's first queue: its count is the rest of ch.held
}

// Whether ring entry `entry` of channel ci may take one more delivery: the channel's own checks,
// then its window, per channel or per subscription.
bool RabbitMq::entry_credit(const Channel& ch, int ci, int entry) {
  if (!ch.listening() || policy(ch, [&](const auto& p) { return p.in_timeout(ci); })) return false;
  if (ch.window == 0) return true;
  if (w_.consumers[ci].spec().prefetch_scope == ConsumerSpec::PrefetchScope::Channel) return ch.held.size() < ch.window;
  std::uint32_t unacked = 0;
  if (entry >= consumer_count_) {
    unacked = subs_[static_cast<std::size_t>(entry - consumer_count_)].unacked;
  } else {
    unacked = static_cast<std::uint32_t>(ch.held.size());
    for (auto s = subs_first_[ci]; s < subs_first_[ci + 1]; ++s) unacked -= subs_[s].unacked;
  }
  return unacked < ch.window;
}

void RabbitMq::join_entry(int ci, int entry) {
  const int priority = channels_[ci].priority;
  if (entry < consumer_count_) {
    channels_[ci].join(dispatchers_[w_.consumers[ci].queue()], ci, priority);
  } else {
    Subscription& sub = subs_[static_cast<std::size_t>(entry - consumer_count_)];
    dispatchers_[sub.queue].add(entry, priority);
    sub.in_ring = true;
  }
}

// Every subscription of ci but the first out of its queue's ring (the caller handles the first).
void RabbitMq::leave_entries(int ci) {
  for (auto s = subs_first_[ci]; s < subs_first_[ci + 1]; ++s) {
    Subscription& sub = subs_[s];
    if (sub.in_ring) dispatchers_[sub.queue].erase(consumer_count_ + static_cast<int>(s));
    sub.in_ring = false;
  }
}

// The delivery just sent through `entry` of a channel reading several queues used up some of the
// window (a channel of one queue rejoins its ring in deliver itself). Per subscription: back into
// this queue's ring if the subscription has credit left. Per channel: a full window takes the
// channel out of every queue's ring (each queue's next attempt would be refused by the channel's
// limiter, rabbit_limiter:can_send/3).
void RabbitMq::after_delivery(Channel& ch, int ci, int entry) {
  if (entry_credit(ch, ci, entry)) {
    join_entry(ci, entry);
  } else if (w_.consumers[ci].spec().prefetch_scope == ConsumerSpec::PrefetchScope::Channel) {
    ch.leave(dispatchers_[w_.consumers[ci].queue()], ci);
    leave_entries(ci);
  }
}

// A channel's window reopened: each of its queues delivers while it may. With
// one window for the channel, the queues compete for it: rabbit_limiter:notify_queues/1 wakes the
// queues it had refused (those with messages waiting) in a list rotated at a uniformly random
// place, "ensuring that each queue has an equal chance of being notified first".
void RabbitMq::dispatch_for(Consumer& c) {
  if (!reads_several(c.index())) {
    dispatch(c.queue());
    return;
  }
  const int ci = c.index();
  const std::size_t n = 1 + (subs_first_[ci + 1] - subs_first_[ci]);
  const auto queue_at = [&](std::size_t i) { return i == 0 ? c.queue() : subs_[subs_first_[ci] + i - 1].queue; };
  std::size_t waiting = 0;
  for (std::size_t i = 0; i < n; ++i) waiting += !queues_[queue_at(i)].empty();
  // Rotate among the queues with messages: the k-th of them is woken first.
  std::size_t first = 0;
  if (waiting >= 2 && c.spec().prefetch_scope == ConsumerSpec::PrefetchScope::Channel) {
    const auto k = static_cast<std::size_t>(limiter_rng_.below(waiting));
    for (std::size_t i = 0, seen = 0; i < n; ++i) {
      if (queues_[queue_at(i)].empty()) continue;
      if (seen++ == k) {
        first = i;
        break;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) dispatch(queue_at((first + i) % n));
}

bool RabbitMq::refuses(int q, std::uint32_t j, bool dead_letter) {
  return policy(q, [&](auto& p) { return p.refuses(queues_[q], q, j, w_.jobs[j], dead_letter); });
}

void RabbitMq::ready_changed(int q) {
  const RabbitQueue& Q = queues_[q];
  w_.ledger.ready_changed(q, w_.now, Q.ready(), Q.ready_bytes());
  policy(q, [&](auto& p) { p.on_ready_changed(q); });
}

void RabbitMq::unacked_changed(int q, Job& job, int delta) {
  w_.ledger.unacked_changed(q, w_.now, job, delta);
}

namespace {

std::unique_ptr<Broker> make_rabbitmq(World& w) { return std::make_unique<RabbitMq>(w); }

using enum DeathReason;
constexpr DeathReason kClassicReasons[] = {Expired, Rejected, Maxlen};
constexpr DeathReason kQuorumReasons[] = {Expired, Rejected, Maxlen, DeliveryLimit};

// A classic broker holding a quorum queue (broker.queues.NAME.type) reports the quorum reasons.
std::span<const DeathReason> classic_death_reasons(const BrokerSpec& broker) {
  for (const QueueSpec& q : broker.queues)
    if (q.rabbitmq.type == QueueType::Quorum) return kQuorumReasons;
  return kClassicReasons;
}
std::span<const DeathReason> quorum_death_reasons(const BrokerSpec&) { return kQuorumReasons; }

}  // namespace

const BrokerKindModel kRabbitmqClassicKind{"rabbitmq-classic", make_rabbitmq, classic_death_reasons};
const BrokerKindModel kRabbitmqQuorumKind{"rabbitmq-quorum", make_rabbitmq, quorum_death_reasons};

}  // namespace brokersim
