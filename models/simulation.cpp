// The broker and its clients as one state machine over the event kernel.
//
// Every handler below is named after the broker or client step it models; the RabbitMQ rule each
// follows is in SEMANTICS.md part 2 (sections 1 and 4), cited where it matters.
#include "models/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <ostream>
#include <sstream>

#include "models/consumer.hpp"
#include "models/dispatcher.hpp"
#include "models/queue.hpp"
#include "models/workload.hpp"
#include "sim/event_queue.hpp"

namespace brokersim {
namespace {

// Event kinds, in the order simultaneous events run (the enum value is the priority class).
// The order is written down once, here, with its reasons:
//  - Warmup first: statistics restart before anything at that instant is counted.
//  - Faults next: a stall or crash "at t" must hold for everything else at t; a broker restart
//    likewise.
//  - Attach: a consumer that attaches at t is there for messages published at t. Declare and
//    QueueLease (x-expires) after it: a consumer attaching at the lease's end keeps the queue.
//  - QueueTimer before deliveries: a message whose TTL ends at t is not delivered at t.
//  - DeadLetter: a dead-lettered message reaches its target before new publishes at t. (It is
//    an event, not a call, so dead-letter chains through TTL-0 queues iterate, not recurse.)
//  - AckArrive before Publish: credit returned at t lets a consumer take a message published at t;
//    before ChannelTick too: an ack arriving at the tick is in time.
//  - Publish (after a publish delay), then Arrival (creation; publishes at once without delay).
//  - Receive, ExecDone, StallEnd: the consumer side; their mutual order does not change results.
//  - Observe last: a sample at t shows the state after everything that happened at t.
enum class Ev : std::uint32_t {
  Warmup,
  Fault,
  BrokerUp,
  Attach,
  Declare,
  QueueLease,
  QueueTimer,
  DeadLetter,
  AckArrive,
  ChannelTick,
  Publish,
  Arrival,
  Receive,
  ExecDone,
  StallEnd,
  Observe,
};

enum class ExecResult : std::uint32_t { Completed, TimedOut, Failed };

// rabbit_channel's channel_tick_interval: the consumer timeout is evaluated once per tick.
constexpr Time kChannelTick = Time{60'000} * sim::kNsPerMs;

class Simulation {
 public:
  Simulation(const Scenario& s, const RunOptions& o);
  RunResult run();

 private:
  // --- kernel access
  void at(Time t, Ev kind, std::uint32_t target, std::uint32_t tag = 0, std::uint32_t aux = 0) {
    if (t < now_) throw InvariantError("event scheduled in the past");
    events_.push(t, static_cast<std::uint8_t>(kind), static_cast<std::uint32_t>(kind), target, tag,
                 aux);
  }
  static Time sample_ns(const sim::Distribution& d, sim::Rng& rng) {
    return sim::round_ns(d.sample(rng));
  }

  // --- producers
  void on_arrival(std::uint32_t producer);
  void publish(std::uint32_t j);

  // --- broker
  void broker_publish(std::uint32_t j, int q, bool dead_letter);
  void deliver(std::uint32_t j, int q);
  void dispatch(int q);
  void drop_expired(int q);
  void arm_timer(int q);
  void expire(std::uint32_t j, int q);
  void dead_letter(std::uint32_t j, int q, int reason);
  void requeue(std::uint32_t j);
  void on_ack_arrive(std::uint32_t j, std::uint32_t gen);
  void give_credit(Consumer& c);

  // --- consumers
  void on_attach(int c);
  void on_receive(std::uint32_t j, std::uint32_t gen);
  void try_start(Consumer& c);
  void start(Consumer& c, std::uint32_t j);
  void on_exec_done(std::uint32_t j, std::uint32_t gen, ExecResult r);
  void reject_locally(Consumer& c, std::uint32_t j);
  void send_ack(Consumer& c, std::uint32_t j, Job::Ack what);
  void on_fault(const FaultSpec& f);
  void crash(Consumer& c);
  void on_channel_tick(Consumer& c, std::uint32_t epoch);
  void broker_down(Time duration);
  void broker_up();
  void declare(int q, bool periodic);
  void restart_lease(int q);
  void on_lease_end(int q, std::uint32_t gen);

  // --- bookkeeping
  void decide(Job& job, Outcome o) {
    job.decision = o;
    job.ended = now_;
  }
  void leave(std::uint32_t j);  // the broker is done with the job: its outcome is final
  void count_outcome(const Job& job, Outcome o);
  void update_resting(Job& job);
  void ready_changed(int q);
  void unacked_changed(int q, std::int64_t messages, std::int64_t bytes);
  void bytes_changed(int q);
  void busy_changed(Consumer& c, int delta);
  void refresh_backlog(int q);
  void on_observe();
  void on_warmup();
  void report_progress();
  void write_trace(const Job& job, Outcome o);
  void finish(RunResult& r);

  static constexpr std::uint64_t kMaxEventsAtOneInstant = 50'000'000;

  const Scenario& s_;
  const RunOptions& opt_;
  Time instant_ = -1;
  std::uint64_t events_at_instant_ = 0;
  sim::EventQueue events_;
  Time now_ = 0;
  JobPool jobs_;
  std::vector<ClassicQueue> queues_;
  std::vector<Dispatcher> dispatchers_;
  std::vector<std::uint8_t> queue_read_;  // some consumer group reads it
  std::vector<Producer> producers_;
  std::vector<Consumer> consumers_;
  sim::Rng broker_rng_;
  bool consumer_timeout_on_ = false;
  bool track_bytes_ = false;  // some producer sends non-empty bodies
  bool broker_down_ = false;
  Time broker_up_at_ = 0;

  std::uint64_t created_total_ = 0;  // including warm-up
  std::uint64_t unsettled_ = 0;      // alive and not resting decided in an unread queue
  RunResult r_;

  // Slot-time accounting for utilisation and idle-with-backlog.
  sim::TimeWeighted busy_slots_, attached_slots_;
  struct Backlog {
    int idle_slots = 0;  // idle slots of attached consumers reading this queue
    double value = 0;    // idle_slots if the queue has ready messages, else 0
    Time last = 0;
    double area = 0;
  };
  std::vector<Backlog> backlog_;

  // Trace rows come out in job order; rows wait here until every earlier job has ended.
  std::uint64_t trace_next_ = 0;
  std::deque<std::optional<std::string>> trace_pending_;
};

Simulation::Simulation(const Scenario& s, const RunOptions& o) : s_(s), opt_(o) {
  const auto nq = s.broker.queues.size();
  if (nq > 64) throw InvariantError("at most 64 queues are supported");
  queues_.reserve(nq);
  for (const auto& q : s.broker.queues) queues_.emplace_back(q);
  dispatchers_.resize(nq);
  queue_read_.assign(nq, 0);
  backlog_.resize(nq);
  for (std::size_t p = 0; p < s.producers.size(); ++p)
    producers_.emplace_back(s.producers[p], static_cast<int>(p), s.seed, s.replication);
  int index = 0;
  for (std::size_t g = 0; g < s.consumers.size(); ++g) {
    queue_read_[s.consumers[g].queue] = 1;
    for (int m = 0; m < s.consumers[g].count; ++m)
      consumers_.emplace_back(s.consumers[g], index++, static_cast<int>(g), m, s.seed,
                              s.replication);
  }
  r_.consumers.resize(consumers_.size());
  events_.reserve(1024);
  broker_rng_ = sim::Rng(s.seed, s.replication, "broker.expiry_slack");
  for (const auto& p : s.producers) track_bytes_ = track_bytes_ || !p.message_bytes.is_zero();
  // RabbitMQ 4.3 no longer evaluates consumer timeouts for classic queues (SEMANTICS.md D2).
  consumer_timeout_on_ = s.broker.consumer_timeout.has_value() && s.broker.version != "4.3";
}

RunResult Simulation::run() {
  if (s_.warmup > 0) at(s_.warmup, Ev::Warmup, 0);
  for (std::uint32_t f = 0; f < s_.faults.size(); ++f) at(s_.faults[f].at, Ev::Fault, f);
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    restart_lease(static_cast<int>(q));  // declared at time 0
    if (const auto& every = queues_[q].spec().declare_every) at(*every, Ev::Declare, static_cast<std::uint32_t>(q));
    // A one-off declare carries aux = 1: it does not schedule the next periodic one.
    for (Time t : queues_[q].spec().declare_at) at(t, Ev::Declare, static_cast<std::uint32_t>(q), 0, 1);
  }
  for (auto& c : consumers_) at(c.spec().start, Ev::Attach, static_cast<std::uint32_t>(c.index()));
  for (std::uint32_t p = 0; p < producers_.size(); ++p) {
    const Time t = producers_[p].next_arrival();
    if (t != sim::kNever && (!s_.stop_time || t <= *s_.stop_time)) at(t, Ev::Arrival, p);
  }
  if (s_.observe_every) {
    if (opt_.timeseries) {
      std::ostream& out = *opt_.timeseries;
      out << "time_ms";
      for (const auto& q : queues_) out << ',' << q.spec().name << ".ready," << q.spec().name << ".unacked";
      for (const auto& c : consumers_)
        out << ",consumer." << c.index() << ".local,consumer." << c.index() << ".executing";
      out << '\n';
    }
    at(0, Ev::Observe, 0);
  }

  r_.stop_reason = "drained";
  bool by_time = false;
  while (!events_.empty()) {
    const sim::Event ev = events_.top();
    if (s_.stop_time && ev.time > *s_.stop_time) {
      by_time = true;
      r_.stop_reason = "time";
      break;
    }
    events_.pop();
    now_ = ev.time;
    if (++r_.events > s_.limits.max_events) {
      r_.stop_reason = "max_events";
      break;
    }
    if (ev.time != instant_) {
      instant_ = ev.time;
      events_at_instant_ = 0;
    } else if (++events_at_instant_ > kMaxEventsAtOneInstant) {
      // Simulated time stopped moving: e.g. a consumer requeueing an expired job that the
      // broker, with zero latencies, redelivers at once, forever.
      r_.stop_reason = "zero_time_loop";
      break;
    }
    switch (static_cast<Ev>(ev.kind)) {
      case Ev::Warmup: on_warmup(); break;
      case Ev::Fault: on_fault(s_.faults[ev.target]); break;
      case Ev::BrokerUp:
        if (broker_down_ && now_ >= broker_up_at_) broker_up();
        break;
      case Ev::Attach: on_attach(static_cast<int>(ev.target)); break;
      case Ev::Declare: declare(static_cast<int>(ev.target), ev.aux == 0); break;
      case Ev::QueueLease: on_lease_end(static_cast<int>(ev.target), ev.tag); break;
      case Ev::ChannelTick: on_channel_tick(consumers_[ev.target], ev.tag); break;
      case Ev::QueueTimer:
        // While the broker is down its queue processes are gone; the restart runs the pass.
        if (!broker_down_ && ev.tag == queues_[ev.target].timer_gen()) {
          queues_[ev.target].timer_fired();
          drop_expired(static_cast<int>(ev.target));
          dispatch(static_cast<int>(ev.target));
        }
        break;
      case Ev::DeadLetter:
        if (jobs_[ev.target].gen == ev.tag) broker_publish(ev.target, static_cast<int>(ev.aux), true);
        break;
      case Ev::AckArrive: on_ack_arrive(ev.target, ev.tag); break;
      case Ev::Publish:
        if (jobs_[ev.target].gen == ev.tag) publish(ev.target);
        break;
      case Ev::Arrival: on_arrival(ev.target); break;
      case Ev::Receive: on_receive(ev.target, ev.tag); break;
      case Ev::ExecDone: on_exec_done(ev.target, ev.tag, static_cast<ExecResult>(ev.aux)); break;
      case Ev::StallEnd: try_start(consumers_[ev.target]); break;
      case Ev::Observe: on_observe(); break;
    }
    if (opt_.progress && (r_.events & 0x3fffff) == 0) report_progress();
    if (jobs_.live() > s_.limits.max_in_system) {
      r_.stop_reason = "max_in_system";
      break;
    }
    if (s_.stop_jobs && created_total_ >= *s_.stop_jobs && unsettled_ == 0) {
      r_.stop_reason = "jobs";
      break;
    }
  }
  // A run given a time span covers all of it, even when nothing happened towards its end.
  if (s_.stop_time && (by_time || r_.stop_reason == "drained")) now_ = *s_.stop_time;
  if (opt_.progress && r_.events > 0x3fffff) *opt_.progress << '\n';
  RunResult result;
  finish(result);
  return result;
}

// ------------------------------------------------------------------------------ producers

void Simulation::on_arrival(std::uint32_t p) {
  Producer& prod = producers_[p];
  const std::uint32_t j = jobs_.allocate();
  Job& job = jobs_[j];
  const Producer::JobDraw d = prod.draw();
  job.id = created_total_++;
  job.producer = static_cast<std::int32_t>(p);
  job.queue = prod.spec().queue;
  job.counted = now_ >= s_.warmup;
  job.created = now_;
  job.service = d.service;
  job.message_ttl = d.message_ttl;
  job.bytes = static_cast<std::uint32_t>(sim::round_ns(prod.spec().message_bytes.sample(prod.size_rng())));
  job.persistent = prod.spec().persistent;
  if (d.deadline != sim::kNever) {
    job.deadline = now_ + d.deadline;
    // The job carries its deadline in the producer's clock: that is all a consumer can see.
    job.expires_at = job.deadline + prod.clock_offset();
  }
  if (job.counted) ++r_.generated;
  ++unsettled_;
  r_.peak_in_system = std::max<std::uint64_t>(r_.peak_in_system, jobs_.live());

  if (d.publish_delay > 0)
    at(now_ + d.publish_delay, Ev::Publish, j, job.gen);
  else
    publish(j);

  if (!s_.stop_jobs || created_total_ < *s_.stop_jobs) {
    const Time t = prod.next_arrival();
    if (t != sim::kNever && (!s_.stop_time || t <= *s_.stop_time)) at(t, Ev::Arrival, p);
  }
}

void Simulation::publish(std::uint32_t j) {
  Job& job = jobs_[j];
  const Producer& prod = producers_[job.producer];
  job.published = now_;
  const Time producer_now = now_ + prod.clock_offset();
  if (job.expires_at != sim::kNever && job.expires_at <= producer_now) {
    decide(job, Outcome::RejectedAtPublish);  // never publish work that is already stale
    leave(j);
    return;
  }
  if (prod.spec().expiration == ProducerSpec::Expiration::RemainingBudget &&
      job.expires_at != sim::kNever)
    job.message_ttl = job.expires_at - producer_now;
  broker_publish(j, job.queue, false);
}

// ------------------------------------------------------------------------------ broker

// rabbit_amqqueue_process: overflow check, then attempt_delivery, then enqueue + drop-head +
// head-expiry pass (SEMANTICS.md "ordering of checks at publish").
void Simulation::broker_publish(std::uint32_t j, int q, bool dead_letter) {
  ClassicQueue& Q = queues_[q];
  const QueueSpec& spec = Q.spec();
  Job& job = jobs_[j];
  job.queue = q;
  if (broker_down_ || Q.deleted) {
    // No broker to take it, or no queue to route it to (the default exchange drops it).
    decide(job, broker_down_ && !dead_letter ? Outcome::RejectedAtPublish : Outcome::Lost);
    leave(j);
    return;
  }
  if (job.counted) ++Q.published;

  if (spec.overflow != Overflow::DropHead && Q.full_for(job.bytes)) {
    if (dead_letter) {
      // Dead-letter republishing has no publisher confirms: a refusing target loses the message.
      decide(job, Outcome::Lost);
      leave(j);
      return;
    }
    decide(job, Outcome::RejectedAtPublish);
    if (spec.overflow == Overflow::RejectPublishDlx)
      this->dead_letter(j, q, 2);
    else
      leave(j);
    return;
  }

  job.queue_expiry = Q.expiry_for(now_, job.message_ttl);
  job.ready_since = now_;
  if (Q.empty() && !dispatchers_[q].empty()) {
    // attempt_delivery before enqueue: this is also why expiration 0 is delivered when (and
    // only when) a consumer can take the message at once.
    job.seq = Q.take_seq();
    deliver(j, q);
    return;
  }
  if (job.queue_expiry <= now_ && spec.message_ttl && *spec.message_ttl == 0 &&
      spec.dead_letter_index < 0) {
    // deliver_or_enqueue's `ttl = 0, dlx = undefined` branch: discarded at once.
    decide(job, Outcome::ExpiredInQueue);
    leave(j);
    return;
  }
  job.seq = Q.enqueue(j, job.bytes, job.queue_expiry);
  job.where = Where::Ready;
  update_resting(job);
  bool head_dropped = false;
  if (spec.overflow == Overflow::DropHead) {
    while (Q.over_limit()) {
      // An already-expired head is dropped as maxlen, not expired (SEMANTICS.md D8).
      const Message m = Q.pop_head();
      head_dropped = true;
      Job& victim = jobs_[m.job];
      decide(victim, spec.dead_letter_index >= 0 ? Outcome::DeadLettered : Outcome::Lost);
      this->dead_letter(m.job, q, 2);
    }
  }
  ready_changed(q);
  if (Q.ready() == 1 || head_dropped) drop_expired(q);
}

void Simulation::deliver(std::uint32_t j, int q) {
  ClassicQueue& Q = queues_[q];
  Job& job = jobs_[j];
  const int ci = dispatchers_[q].take();
  Consumer& c = consumers_[ci];
  c.in_ring = false;
  if (job.redelivered) {
    ++job.redeliveries;
    ++r_.redeliveries;
  }
  job.redelivered = true;
  job.where = Where::Transit;
  job.consumer = ci;
  job.queue = q;
  job.delivered = now_;
  update_resting(job);
  if (job.counted) {
    ++Q.delivered;
    r_.wait_queue.add(now_ - job.ready_since);
  }
  c.track(jobs_, j);
  unacked_changed(q, +1, job.bytes);
  if (consumer_timeout_on_ && !c.ticking) {
    // Ticks keep their phase from the channel's opening, so the timeout fires in [T, T + 60 s].
    const Time k = (now_ - c.attached_at) / kChannelTick + 1;
    at(c.attached_at + k * kChannelTick, Ev::ChannelTick, static_cast<std::uint32_t>(ci), c.epoch);
    c.ticking = true;
  }
  if (c.has_credit()) {
    dispatchers_[q].add(ci, c.spec().priority);
    c.in_ring = true;
  }
  at(now_ + sample_ns(s_.broker.delivery_latency, c.delivery_rng), Ev::Receive, j, job.gen);
}

void Simulation::dispatch(int q) {
  if (broker_down_) return;
  ClassicQueue& Q = queues_[q];
  bool fetched = false;
  while (!Q.empty() && !dispatchers_[q].empty()) {
    // Expired messages are never delivered (SEMANTICS.md D1): an overdue head goes first.
    if (Q.head_expired(now_)) {
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
void Simulation::drop_expired(int q) {
  ClassicQueue& Q = queues_[q];
  bool dropped = false;
  while (Q.head_expired(now_)) {
    expire(Q.pop_head().job, q);
    dropped = true;
  }
  if (dropped) ready_changed(q);
  arm_timer(q);
}

void Simulation::arm_timer(int q) {
  if (auto t = queues_[q].arm_timer(now_)) {
    // Real brokers fire a few ms late (scheduling); expiry_slack_ms models that lateness.
    const Time slack = s_.broker.expiry_slack.is_zero() ? 0 : sample_ns(s_.broker.expiry_slack, broker_rng_);
    at(*t + slack, Ev::QueueTimer, static_cast<std::uint32_t>(q), queues_[q].timer_gen());
  }
}

void Simulation::expire(std::uint32_t j, int q) {
  Job& job = jobs_[j];
  decide(job, Outcome::ExpiredInQueue);
  dead_letter(j, q, 0);
}

// reason: 0 expired, 1 rejected, 2 maxlen. The caller has made the decision; moving to a
// dead-letter queue changes nothing by itself.
void Simulation::dead_letter(std::uint32_t j, int q, int reason) {
  ClassicQueue& Q = queues_[q];
  Job& job = jobs_[j];
  const int target = Q.spec().dead_letter_index;
  if (target < 0) {
    leave(j);
    return;
  }
  if (job.counted) {
    if (reason == 0) ++Q.dl_expired;
    if (reason == 1) ++Q.dl_rejected;
    if (reason == 2) ++Q.dl_maxlen;
  }
  job.dead_lettered_from |= std::uint64_t{1} << q;
  if (reason == 1) job.rejected_death = true;
  // Cycle detection (rabbit_dead_letter:detect_cycles/3): a target already in the death history
  // is dropped unless a rejection is somewhere in the cycle.
  if (reason != 1 && (job.dead_lettered_from >> target & 1u) && !job.rejected_death) {
    leave(j);
    return;
  }
  ++job.deaths;
  job.message_ttl = -1;      // the per-message TTL is stripped from the dead-lettered copy
  job.redelivered = false;   // a new message in the target queue: its first delivery is not a redelivery
  job.where = Where::DeadLettering;
  job.queue = target;
  update_resting(job);
  at(now_, Ev::DeadLetter, j, job.gen, static_cast<std::uint32_t>(target));
}

// basic.nack requeue=true: back to the original position with the original expiry; then the
// head pass runs (requeue_and_run), so an expired message that lands at the head goes at once.
void Simulation::requeue(std::uint32_t j) {
  Job& job = jobs_[j];
  const int q = job.queue;
  ClassicQueue& Q = queues_[q];
  Q.requeue(Message{job.seq, j, job.bytes, job.queue_expiry});
  job.where = Where::Ready;
  job.ready_since = now_;
  update_resting(job);
  ready_changed(q);
  if (!broker_down_) drop_expired(q);
}

void Simulation::give_credit(Consumer& c) {
  if (!c.in_ring && c.has_credit()) {
    dispatchers_[c.queue()].add(c.index(), c.spec().priority);
    c.in_ring = true;
  }
}

void Simulation::on_ack_arrive(std::uint32_t j, std::uint32_t gen) {
  Job& job = jobs_[j];
  if (job.gen != gen) return;  // the channel was closed meanwhile: this ack never arrives
  Consumer& c = consumers_[job.consumer];
  const int q = job.queue;
  c.untrack(jobs_, j);
  unacked_changed(q, -1, -static_cast<std::int64_t>(job.bytes));
  switch (job.ack) {
    case Job::Ack::Ack: leave(j); break;
    case Job::Ack::Reject: dead_letter(j, q, 1); break;
    case Job::Ack::Requeue: requeue(j); break;
  }
  give_credit(c);
  dispatch(c.queue());
}

// ------------------------------------------------------------------------------ consumers

void Simulation::on_attach(int ci) {
  Consumer& c = consumers_[ci];
  if (c.attached) return;
  if (broker_down_) {
    c.reconnect_when_broker_up = true;  // nothing to connect to yet
    return;
  }
  c.attached = true;
  c.attached_at = now_;
  c.ticking = false;
  ClassicQueue& Q = queues_[c.queue()];
  if (Q.deleted) {
    // Clients declare the queue they consume from: consuming re-creates a deleted queue.
    Q.deleted = false;
  }
  ++Q.consumers;
  ++Q.lease_gen;  // a queue with a consumer does not expire
  c.busy_tw.set(now_, 0);
  attached_slots_.add(now_, c.slots());
  backlog_[c.queue()].idle_slots += c.slots();
  refresh_backlog(c.queue());
  give_credit(c);
  dispatch(c.queue());
}

void Simulation::on_receive(std::uint32_t j, std::uint32_t gen) {
  Job& job = jobs_[j];
  if (job.gen != gen) return;
  Consumer& c = consumers_[job.consumer];
  job.where = Where::Local;
  job.received = now_;
  if (job.counted) r_.wait_transit.add(now_ - job.delivered);
  if (c.spec().admission == Admission::CheckAtReceiveAndStart &&
      !admits(c.spec(), job.expires_at, c.clock.now(now_))) {
    reject_locally(c, j);
    return;
  }
  c.local.push_back(j);
  c.local_tw.set(now_, static_cast<double>(c.local.size()));
  try_start(c);
}

void Simulation::try_start(Consumer& c) {
  if (!c.attached || now_ < c.stalled_until) return;
  bool took = false;
  while (c.busy < c.slots() && !c.local.empty()) {
    const std::uint32_t j = c.local.front();
    c.local.pop_front();
    took = true;
    Job& job = jobs_[j];
    // The last responsible check: after all local waiting, immediately before execution.
    if (c.spec().admission != Admission::None && !admits(c.spec(), job.expires_at, c.clock.now(now_))) {
      reject_locally(c, j);
      continue;
    }
    start(c, j);
  }
  if (took) c.local_tw.set(now_, static_cast<double>(c.local.size()));
}

void Simulation::start(Consumer& c, std::uint32_t j) {
  Job& job = jobs_[j];
  const ConsumerSpec& spec = c.spec();
  job.where = Where::Executing;
  job.started = now_;
  if (++job.executions > 1) ++r_.duplicate_executions;
  if (job.counted) {
    r_.wait_local.add(now_ - job.received);
    if (spec.admission != Admission::None && now_ >= job.deadline) ++r_.admitted_but_expired;
    if (job.executions == 1 && now_ == job.created) ++r_.started_at_once;
  }
  ++r_.consumers[c.index()].started;
  busy_changed(c, +1);

  Time run = job.service;
  ExecResult result = ExecResult::Completed;
  Time limit = sim::kNever;
  if (spec.exec_timeout == ConsumerSpec::ExecTimeout::Fixed)
    limit = sample_ns(spec.exec_timeout_value, c.timeout_rng);
  else if (spec.exec_timeout == ConsumerSpec::ExecTimeout::RemainingBudget &&
           job.expires_at != sim::kNever)
    limit = std::max<Time>(0, job.expires_at - c.clock.now(now_));
  if (limit < run) {
    run = limit;
    result = ExecResult::TimedOut;
  } else if (spec.failure_probability > 0 && c.failure_rng.bernoulli(spec.failure_probability)) {
    result = ExecResult::Failed;
  }
  at(now_ + run, Ev::ExecDone, j, job.gen, static_cast<std::uint32_t>(result));
}

void Simulation::on_exec_done(std::uint32_t j, std::uint32_t gen, ExecResult result) {
  Job& job = jobs_[j];
  if (job.gen != gen) return;
  Consumer& c = consumers_[job.consumer];
  job.finished = now_;
  if (job.counted) r_.wait_service.add(now_ - job.started);
  busy_changed(c, -1);
  switch (result) {
    case ExecResult::TimedOut: decide(job, Outcome::TimedOut); break;
    case ExecResult::Failed: decide(job, Outcome::Failed); break;
    case ExecResult::Completed:
      decide(job, now_ < job.deadline ? Outcome::CompletedOnTime : Outcome::CompletedLate);
      break;
  }
  send_ack(c, j, Job::Ack::Ack);
  try_start(c);
}

void Simulation::reject_locally(Consumer& c, std::uint32_t j) {
  Job& job = jobs_[j];
  // Judged on true time: delivered in time but stale on arrival (the transit took its budget),
  // or stale for another reason (it waited here, or was delivered late already).
  const bool in_transit = job.delivered < job.deadline && job.received >= job.deadline;
  decide(job, in_transit ? Outcome::ExpiredInTransit : Outcome::ExpiredBeforeStart);
  if (job.counted) {
    r_.wait_local.add(now_ - job.received);
    if (job.deadline != sim::kNever && job.deadline - now_ > c.spec().min_window) ++r_.rejected_but_valid;
  }
  switch (c.spec().on_expired) {
    case OnExpired::Ack: send_ack(c, j, Job::Ack::Ack); break;
    case OnExpired::Reject: send_ack(c, j, Job::Ack::Reject); break;
    case OnExpired::Requeue: send_ack(c, j, Job::Ack::Requeue); break;
  }
}

void Simulation::send_ack(Consumer& c, std::uint32_t j, Job::Ack what) {
  Job& job = jobs_[j];
  job.where = Where::Settling;
  job.ack = what;
  at(now_ + sample_ns(s_.broker.ack_latency, c.ack_rng), Ev::AckArrive, j, job.gen);
}

void Simulation::on_fault(const FaultSpec& f) {
  switch (f.kind) {
    case FaultSpec::Kind::Stall: {
      Consumer& c = consumers_[f.consumer];
      c.stalled_until = std::max(c.stalled_until, now_ + f.duration);
      at(c.stalled_until, Ev::StallEnd, static_cast<std::uint32_t>(f.consumer));
      break;
    }
    case FaultSpec::Kind::ClockStep: consumers_[f.consumer].clock.step(f.step); break;
    case FaultSpec::Kind::Crash: {
      Consumer& c = consumers_[f.consumer];
      if (!c.attached) break;
      crash(c);
      if (f.restart) at(now_ + f.duration, Ev::Attach, static_cast<std::uint32_t>(f.consumer));
      break;
    }
    case FaultSpec::Kind::BrokerDown: broker_down(f.duration); break;
  }
}

// The broker stops. Connections drop: every consumer's unacked deliveries are back in their
// queues (the broker never saw the acks). Transient messages die with the broker; persistent
// ones are on disk. Expiry is absolute wall-clock time, so TTLs keep running meanwhile.
void Simulation::broker_down(Time duration) {
  broker_up_at_ = std::max(broker_up_at_, now_ + duration);
  at(broker_up_at_, Ev::BrokerUp, 0);
  if (broker_down_) return;
  broker_down_ = true;
  for (auto& c : consumers_) {
    if (!c.attached) continue;
    crash(c);
    c.reconnect_when_broker_up = true;
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    ClassicQueue& Q = queues_[q];
    for (const Message& m : Q.take_all()) {
      Job& job = jobs_[m.job];
      if (job.persistent) {
        Q.requeue(m);
      } else {
        decide(job, Outcome::Lost);
        leave(m.job);
      }
    }
    ready_changed(static_cast<int>(q));
  }
}

// Recovery: process_args_policy runs drop_expired_msgs on every queue (the overdue head run
// goes), queue-expiry leases restart, and clients reconnect.
void Simulation::broker_up() {
  broker_down_ = false;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    queues_[q].timer_fired();
    drop_expired(static_cast<int>(q));
    restart_lease(static_cast<int>(q));
  }
  for (auto& c : consumers_) {
    if (!c.reconnect_when_broker_up) continue;
    c.reconnect_when_broker_up = false;
    on_attach(c.index());
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) dispatch(static_cast<int>(q));
}

// Delivery acknowledgement timeout (RabbitMQ <= 4.2): once per channel tick, the oldest unacked
// delivery is checked; past consumer_timeout the channel is closed with PRECONDITION_FAILED and
// all its unacked deliveries are requeued. The client opens a new channel at once.
void Simulation::on_channel_tick(Consumer& c, std::uint32_t epoch) {
  if (epoch != c.epoch || !c.attached) return;
  if (c.unacked_jobs().empty()) {
    c.ticking = false;  // restarted, in phase, by the next delivery
    return;
  }
  Time oldest = sim::kNever;
  for (std::uint32_t j : c.unacked_jobs()) oldest = std::min(oldest, jobs_[j].delivered);
  if (now_ - oldest > *s_.broker.consumer_timeout) {
    ++r_.consumer_timeouts;
    crash(c);
    at(now_, Ev::Attach, static_cast<std::uint32_t>(c.index()));
    return;
  }
  at(now_ + kChannelTick, Ev::ChannelTick, static_cast<std::uint32_t>(c.index()), c.epoch);
}

// queue.declare (passive or not) renews the x-expires lease and re-creates a deleted queue.
void Simulation::declare(int q, bool periodic) {
  ClassicQueue& Q = queues_[q];
  if (!broker_down_) {
    Q.deleted = false;
    restart_lease(q);
  }
  if (!periodic) return;
  const Time next = now_ + *Q.spec().declare_every;
  if (s_.stop_time ? next <= *s_.stop_time : !events_.empty()) at(next, Ev::Declare, static_cast<std::uint32_t>(q));
}

void Simulation::restart_lease(int q) {
  ClassicQueue& Q = queues_[q];
  if (!Q.spec().expires) return;
  ++Q.lease_gen;
  if (Q.consumers == 0) at(now_ + *Q.spec().expires, Ev::QueueLease, static_cast<std::uint32_t>(q), Q.lease_gen);
}

// The queue was unused for expires_ms: it is deleted, and its messages with it. They are not
// dead-lettered (dlx.md): lost.
void Simulation::on_lease_end(int q, std::uint32_t gen) {
  ClassicQueue& Q = queues_[q];
  if (broker_down_ || gen != Q.lease_gen || Q.consumers > 0 || Q.deleted) return;
  Q.deleted = true;
  ++Q.deletions;
  for (const Message& m : Q.take_all()) {
    decide(jobs_[m.job], Outcome::Lost);
    leave(m.job);
  }
  ready_changed(q);
}

// The connection is gone: every unacked delivery (in transit, buffered, executing, or whose ack
// was still on the wire) is requeued at its original position, redelivered.
void Simulation::crash(Consumer& c) {
  const int q = c.queue();
  c.attached = false;
  ++c.epoch;
  c.ticking = false;
  if (c.in_ring) dispatchers_[q].erase(c.index());
  c.in_ring = false;
  busy_changed(c, -c.busy);
  attached_slots_.add(now_, -c.slots());
  backlog_[q].idle_slots -= c.slots();
  c.local.clear();
  c.local_tw.set(now_, 0);
  c.stalled_until = 0;
  const std::vector<std::uint32_t> unacked = c.unacked_jobs();
  ClassicQueue& Q = queues_[q];
  for (std::uint32_t j : unacked) {
    c.untrack(jobs_, j);
    ++jobs_[j].gen;  // its pending receive / completion / ack events are void now
    unacked_changed(q, -1, -static_cast<std::int64_t>(jobs_[j].bytes));
    requeue(j);
  }
  refresh_backlog(q);
  if (--Q.consumers == 0) restart_lease(q);
  dispatch(q);
}

// ------------------------------------------------------------------------------ bookkeeping

void Simulation::leave(std::uint32_t j) {
  Job& job = jobs_[j];
  count_outcome(job, job.decision);
  if (!job.settled_resting) --unsettled_;
  jobs_.release(j);
}

void Simulation::count_outcome(const Job& job, Outcome o) {
  if (opt_.trace) write_trace(job, o);
  if (!job.counted) return;
  ++r_.outcomes[static_cast<std::size_t>(o)];
  if (o == Outcome::InSystem) return;
  r_.sojourn.add(job.ended - job.created);
  if (o == Outcome::CompletedOnTime || o == Outcome::CompletedLate) ++r_.completed;
  if (o == Outcome::CompletedOnTime) ++r_.completed_on_time;
}

// A decided job resting in a queue no consumer reads is settled: nothing more will happen to it
// unless the queue's own TTL moves it on.
void Simulation::update_resting(Job& job) {
  const bool resting = (job.where == Where::Ready || job.where == Where::DeadLettering) &&
                       !queue_read_[job.queue] && job.decision != Outcome::None;
  if (resting != job.settled_resting) {
    job.settled_resting = resting;
    if (resting) --unsettled_; else ++unsettled_;
  }
}

void Simulation::ready_changed(int q) {
  ClassicQueue& Q = queues_[q];
  Q.ready_tw.set(now_, static_cast<double>(Q.ready()));
  Q.max_ready = std::max<std::uint64_t>(Q.max_ready, Q.ready());
  if (track_bytes_) bytes_changed(q);
  refresh_backlog(q);
}

void Simulation::unacked_changed(int q, std::int64_t messages, std::int64_t bytes) {
  ClassicQueue& Q = queues_[q];
  Q.unacked = static_cast<std::uint64_t>(static_cast<std::int64_t>(Q.unacked) + messages);
  Q.unacked_bytes = static_cast<std::uint64_t>(static_cast<std::int64_t>(Q.unacked_bytes) + bytes);
  Q.unacked_tw.set(now_, static_cast<double>(Q.unacked));
  if (track_bytes_) bytes_changed(q);
}

void Simulation::bytes_changed(int q) {
  ClassicQueue& Q = queues_[q];
  const std::uint64_t held = Q.ready_bytes() + Q.unacked_bytes;
  Q.bytes_tw.set(now_, static_cast<double>(held));
  Q.max_bytes = std::max(Q.max_bytes, held);
}

void Simulation::busy_changed(Consumer& c, int delta) {
  c.busy += delta;
  c.busy_tw.set(now_, c.busy);
  busy_slots_.add(now_, delta);
  backlog_[c.queue()].idle_slots -= delta;
  refresh_backlog(c.queue());
}

void Simulation::refresh_backlog(int q) {
  Backlog& b = backlog_[q];
  b.area += b.value * static_cast<double>(now_ - b.last);
  b.last = now_;
  b.value = queues_[q].empty() ? 0.0 : b.idle_slots;
}

void Simulation::on_warmup() {
  for (auto& Q : queues_) {
    Q.ready_tw.reset(now_);
    Q.unacked_tw.reset(now_);
    Q.bytes_tw.reset(now_);
    Q.max_ready = Q.ready();
    Q.max_bytes = Q.ready_bytes() + Q.unacked_bytes;
  }
  for (auto& c : consumers_) {
    c.busy_tw.reset(now_);
    c.local_tw.reset(now_);
  }
  busy_slots_.reset(now_);
  attached_slots_.reset(now_);
  for (std::size_t q = 0; q < backlog_.size(); ++q) {
    refresh_backlog(static_cast<int>(q));
    backlog_[q].area = 0;
  }
}

void Simulation::report_progress() {
  std::ostream& out = *opt_.progress;
  out << "\rsimulated " << sim::to_ms(now_) / 1000.0 << " s";
  if (s_.stop_time) out << " of " << sim::to_ms(*s_.stop_time) / 1000.0 << " s";
  out << ", " << created_total_ << " jobs";
  if (s_.stop_jobs) out << " of " << *s_.stop_jobs;
  out << ", " << r_.events << " events   " << std::flush;
}

void Simulation::on_observe() {
  if (opt_.timeseries) {
    std::ostream& out = *opt_.timeseries;
    out << sim::to_ms(now_);
    for (const auto& Q : queues_) out << ',' << Q.ready() << ',' << Q.unacked;
    for (const auto& c : consumers_) out << ',' << c.local.size() << ',' << c.busy;
    out << '\n';
  }
  // A timed run is sampled over its whole span; a run that stops on its jobs is sampled only
  // while something else can still happen, so sampling never keeps a finished run alive.
  const Time next = now_ + *s_.observe_every;
  if (s_.stop_time ? next <= *s_.stop_time : !events_.empty()) at(next, Ev::Observe, 0);
}

void Simulation::write_trace(const Job& job, Outcome o) {
  std::ostringstream row;
  auto t = [&](Time v) {
    row << ',';
    if (v >= 0) row << sim::to_ms(v);
  };
  row << job.id << ',' << job.producer << ',';
  if (job.delivered >= 0) row << queues_[job.queue].spec().name;
  row << ',';
  if (job.delivered >= 0) row << job.consumer;
  t(job.created);
  row << ',';
  if (job.deadline != sim::kNever) row << sim::to_ms(job.expires_at);
  t(job.published);
  t(job.delivered);
  t(job.received);
  t(job.started);
  t(job.finished);
  t(o == Outcome::InSystem ? -1 : job.ended);
  row << ',' << outcome_name(o) << ',' << job.redeliveries << ',' << job.deaths << '\n';

  const std::uint64_t slot = job.id - trace_next_;
  if (trace_pending_.size() <= slot) trace_pending_.resize(slot + 1);
  trace_pending_[slot] = row.str();
  while (!trace_pending_.empty() && trace_pending_.front()) {
    *opt_.trace << *trace_pending_.front();
    trace_pending_.pop_front();
    ++trace_next_;
  }
}

void Simulation::finish(RunResult& r) {
  // Jobs still alive: waiting in a queue some consumer reads, in transit, waiting locally or
  // executing are in the system whatever was decided before; a decided job resting in an unread
  // queue, or whose ack is on its way, keeps its decision.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> alive;
  jobs_.for_each_live([&](std::uint32_t i, Job& job) { alive.emplace_back(job.id, i); });
  std::sort(alive.begin(), alive.end());
  for (auto [id, i] : alive) {
    Job& job = jobs_[i];
    const bool moving = job.where == Where::Created || job.where == Where::Transit ||
                        job.where == Where::Local || job.where == Where::Executing ||
                        ((job.where == Where::Ready || job.where == Where::DeadLettering) && queue_read_[job.queue]);
    count_outcome(job, moving || job.decision == Outcome::None ? Outcome::InSystem : job.decision);
  }
  if (opt_.trace) opt_.trace->flush();

  r_.end_time = now_;
  const Time span = now_ - std::min(s_.warmup, now_);
  r_.measured_s = sim::to_ms(span) / 1000.0;
  const double slot_area = attached_slots_.area(now_);
  r_.slot_utilization = slot_area > 0 ? busy_slots_.area(now_) / slot_area : 0.0;
  double backlog_area = 0;
  for (std::size_t q = 0; q < backlog_.size(); ++q) {
    refresh_backlog(static_cast<int>(q));
    backlog_area += backlog_[q].area;
  }
  r_.idle_slots_with_backlog = slot_area > 0 ? backlog_area / slot_area : 0.0;
  for (const auto& Q : queues_) {
    QueueResult qr;
    qr.name = Q.spec().name;
    qr.published = Q.published;
    qr.delivered = Q.delivered;
    qr.dl_expired = Q.dl_expired;
    qr.dl_rejected = Q.dl_rejected;
    qr.dl_maxlen = Q.dl_maxlen;
    qr.max_ready = Q.max_ready;
    qr.mean_ready = Q.ready_tw.mean(now_);
    qr.mean_unacked = Q.unacked_tw.mean(now_);
    qr.ready_at_end = Q.ready();
    qr.max_bytes = Q.max_bytes;
    qr.mean_bytes = Q.bytes_tw.mean(now_);
    qr.byte_seconds = Q.bytes_tw.area(now_) / 1e9;
    qr.deletions = Q.deletions;
    r_.queues.push_back(qr);
  }
  for (const auto& c : consumers_) {
    ConsumerResult& cr = r_.consumers[c.index()];
    const double slot_time = static_cast<double>(c.slots());
    cr.utilization = c.busy_tw.mean(now_) / slot_time;
    cr.mean_local = c.local_tw.mean(now_);
  }

  std::uint64_t sum = 0;
  for (auto n : r_.outcomes) sum += n;
  if (sum != r_.generated)
    throw InvariantError("outcomes add up to " + std::to_string(sum) + " but " +
                         std::to_string(r_.generated) + " jobs were generated");
  r = std::move(r_);
}

}  // namespace

RunResult simulate(const Scenario& scenario, const RunOptions& options) {
  Simulation sim(scenario, options);
  return sim.run();
}

}  // namespace brokersim
