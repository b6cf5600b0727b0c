// Azure Service Bus queues (docs/semantics.md part 1 "004" and part 2 section 5): where a RabbitMQ
// prefetch buffer holds messages with no broker clock running, a Service Bus client holds them
// *locked*, and the lock clock runs from the moment the broker sends them.
//
// The rules, each where it is applied (azure_servicebus.cpp):
//  - expires-at = enqueued + TTL (the producer's expiration_ms), the entity's default_ttl_ms
//    capping longer TTLs; a scheduled message (scheduled_delay_ms) is enqueued, with a new
//    sequence number and its TTL starting, at activation.                          enqueue()
//  - lazy expiry: an expired message is never delivered, but it stays counted in the queue until
//    a receive reaches it; it is then dropped, or dead-lettered with reason TTLExpiredException
//    when dead_letter_on_expiration is set.                                dispatch(), expire()
//  - peek-lock: the lock (lock_duration_ms) starts when the broker sends the message, runs while
//    it is in transit and in the client's prefetch buffer (the client cannot renew it there), and
//    is renewed while the handler executes, for at most the consumer's MaxAutoLockRenewalDuration
//    (max_auto_lock_renewal_ms; absent: no limit).             deliver(), execution_started()
//  - a lapsed lock is an abandon: the message is the broker's again (delivery count + 1, back at
//    its sequence position, "at or near the front"), while the client keeps a stale copy that it
//    still executes and whose Complete fails: a duplicate execution.                  lapse()
//  - a locked message is protected from expiry; when its lock lapses or it is abandoned, expiry
//    takes effect at once.                                                          abandon()
//  - a failed or timed-out execution is abandoned (the processor abandons on an exception), and
//    on_expired "requeue" abandons, "reject" dead-letters (reason `rejected`, the word RabbitMQ
//    users know; an application's DeadLetter() names its own reason); an abandon that finds the
//    message delivered max_delivery_count times dead-letters it with reason
//    MaxDeliveryCountExceeded (at most max_delivery_count deliveries).     settle(), abandon()
//  - auto-delete-on-idle (auto_delete_on_idle_ms, at least 5 min): a queue with no client
//    attached and nothing sent for that long is deleted with its messages (`lost`); later sends
//    fail (`rejected_at_publish`).                                   azure_servicebus_receivers.cpp
//  - receive-and-delete: the message is settled when it is sent: no lock, no unacked count, no
//    redelivery; what the client holds is lost if it crashes.
//  - deferral: a deferred message rests in its queue, receivable only by its sequence number; a
//    client with receive_deferred_after_ms receives it back that long after its Defer() (locked
//    again, a delivery like any other: delivery count + 1, max_delivery_count applies); one whose
//    TTL passed meanwhile is expired by that receive (dropped, or dead-lettered with
//    dead_letter_on_expiration) and not returned.                     settle(), receive_deferred()
//
// The client (models/consumer.cpp) is the broker-agnostic one; on this broker its settings mean
//  - prefetch P > 0: PrefetchCount, a hard cap on the messages the client holds (in transit,
//    buffered, executing, settling); slots: MaxConcurrentCalls, of which at most P can be busy;
//  - prefetch 0 (Service Bus's default): no prefetch buffer, one receive per free slot;
//  - batch_handler (the Functions trigger's batches): a receive takes up to the client's room
//    (ReceiveMessagesAsync(maxMessages): what is available, up to maxMessages) in one response,
//    one delivery latency for all of it, each message under its own lock; a client whose every
//    slot runs receives nothing.                                          dispatch(), has_credit()
// A crashed client's peek-locked messages stay locked until their locks lapse (a buffered
// message at its own lock end, an executing one a lock duration after the crash, since it was
// being renewed), then they are available again with their delivery count + 1.
// Dead-lettered messages go to the queue named by dead_letter_to, standing for the dead-letter
// sub-queue (or ForwardDeadLetteredMessagesTo); without one they rest in the entity's own
// sub-queue, read by no consumer, and keep their outcome. The dead-letter queue ignores TTL.
// Sessions (requires_session): every message carries a session id (the producer's `session`);
// a client accepts a free session (at most `slots` at once: MaxConcurrentSessions, one call per
// session) and holds it until the session has nothing left, and a session has at most one
// message out at a time, so its messages are handled in order by one client, which keeps a session
// with nothing left for its SessionIdleTimeout (session_idle_timeout_ms). A crashed client's
// sessions are free again. A holder with max_auto_lock_renewal_ms holds each session under a
// session lock (one lock duration, renewed from the acceptance for at most that long): its
// messages have no lock of their own, and when the session lock lapses the client loses the
// session and the message it has out (delivery count + 1, available again in the session, the
// client's copy runs on and its settlement fails); the session is free to be accepted again.
// When a receive meets an expired message of a session, every waiting
// message of that session expires with it (seed 004; unverified, docs/semantics.md D6).
//                                                                      azure_servicebus_sessions.cpp
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "models/broker.hpp"
#include "models/brokers/client_record.hpp"
#include "models/brokers/ready_level.hpp"
#include "models/consumer.hpp"
#include "models/death_reason.hpp"
#include "models/job.hpp"
#include "models/scenario.hpp"
#include "sim/rng.hpp"

namespace brokersim {

class AzureServiceBus final : public Broker {
 public:
  explicit AzureServiceBus(World& w);

  void start() override;
  void publish(std::uint32_t j) override;
  bool open_connection(Consumer& c) override;
  void consume(Consumer& c) override;
  void cancel(Consumer& c) override;
  void close_connection(Consumer& c) override;
  void settle(std::uint32_t j, std::uint32_t gen) override;
  void execution_started(std::uint32_t j) override;
  void on_event(const sim::Event& ev) override;
  void down(Time duration) override;

 private:
  // A queue's available messages in retrieval (sequence number) order: fresh enqueues arrive in
  // order; abandoned and lapsed ones keep their sequence number, so they go back in front.
  struct Entity {
    const QueueSpec* spec = nullptr;
    std::deque<std::pair<std::uint64_t, std::uint32_t>> fresh;  // (seq, job), seq ascending
    std::set<std::pair<std::uint64_t, std::uint32_t>> returned;
    std::uint64_t next_seq = 0;
    ReadyLevel level;  // expired ones included
    // requires_session: the available messages by session instead of `fresh` / `returned`.
    struct Session {
      std::set<std::pair<std::uint64_t, std::uint32_t>> ready;
      int holder = -1;  // the consumer that accepted it
      bool out = false; // a message of it is with its holder
      std::uint32_t idle = 0;  // held with nothing to receive: the token of its idle timeout, else 0
      // Its session lock, when its holder limits the renewal (max_auto_lock_renewal_ms): the token
      // of the lock's lapse (else 0) and the lock's end.
      std::uint32_t lock = 0;
      Time locked_until = 0;
    };
    std::map<std::int64_t, Session> sessions;
    std::map<std::uint32_t, std::int64_t> idle_waits;  // idle timeout token -> session id
    std::uint32_t next_idle = 0;
    std::map<std::uint32_t, std::int64_t> lock_waits;  // session lock lapse token -> session id
    std::uint32_t next_lock = 0;
    // Lock ends of its deliveries, in delivery order: one lock duration per queue makes them
    // ascending, so one timer per queue (at the oldest end still valid) replaces a timer per
    // delivery; settled and renewed locks are skipped when the timer fires (measured: a timer
    // per delivery made a run of M/M/10 40% slower than on rabbitmq-classic).
    struct LockEnd {
      Time at;
      std::uint32_t job, gen, epoch;
    };
    std::deque<LockEnd> lock_ends;
    std::uint32_t lock_timer_gen = 0;
    bool lock_timer_armed = false;
    // auto_delete_on_idle_ms (QueueSpec::expires): idle while no client is attached and nothing
    // is sent; `idle_gen` voids a pending deletion.
    int receivers = 0;
    std::uint32_t idle_gen = 0;
    bool deleted = false;
  };
  // What the broker knows of a client: the messages it holds against its PrefetchCount, and the
  // sessions it has accepted.
  struct Receiver : ClientRecord {
    int sessions = 0;
    SendOrder order;  // of its receive link; a new connection starts its own
  };
  // Per job (by pool index): its peek-lock. `epoch` grows whenever the pending lock end is void
  // (settled, renewed by execution, lapsed), so a stale Ev::Lease is ignored.
  struct Lock {
    std::uint32_t epoch = 0;
    std::uint32_t deliveries = 0;  // in the current queue: the DeliveryCount
    Time locked_until = 0;
    bool renewed = false;  // executing: the client renews it
    bool orphan = false;   // its client crashed: nobody holds it, the lock still runs
    std::int64_t session = -1;  // its session id (requires_session queues)
  };

  Lock& lock_of(std::uint32_t j);
  bool receive_and_delete(const Consumer& c) const { return c.spec().servicebus.receive_and_delete; }
  bool has_credit(const Consumer& c) const;
  void give_credit(Consumer& c);

  void enqueue(std::uint32_t j, int q, bool dead_letter);
  void push_ready(std::uint32_t j, int q, bool returned);
  std::uint32_t pop_ready(int q);
  void dispatch(int q);
  // The link a delivery travels on. The client's receive link hands over its deliveries in the
  // order it sent them (Receiver::order). A session's link has one message out at a time, and a
  // receive by sequence number is answered on the entity's management link: neither waits
  // behind the receive link.
  enum class Link : std::uint8_t { Receive, Own };
  // latency >= 0: one message of a batch receive (one response, one latency for all of it); the
  // caller puts the client back in the ring when the receive is done.
  void deliver(std::uint32_t j, int q, int ci, Time latency = -1, Link link = Link::Receive);
  void reach_client(Receiver& r, std::uint32_t j, Time on_its_own, Link link);
  void receive_batch(std::uint32_t j, int q, int ci);
  // Sessions (azure_servicebus_sessions.cpp).
  bool sessions_on(int q) const { return entities_[static_cast<std::size_t>(q)].spec->servicebus.requires_session; }
  void push_session(std::uint32_t j, int q);
  void dispatch_sessions(int q);
  std::uint32_t next_for(int q, int ci);
  void session_back(std::uint32_t j);
  void release_sessions(int ci, int q);
  void session_idle_end(int q, std::uint32_t token);
  bool session_lock_holds(int q, int ci) const;
  void session_lock_end(int q, std::uint32_t token);
  // Ev::Lease's aux for a session lock's lapse (target: the queue; tag: the lock's token).
  static constexpr std::uint32_t kSessionLockTimer = 0xfffffffeu;
  void lapse(std::uint32_t j);
  Time renewed_lock_end(std::uint32_t j);
  bool lock_end_valid(const Entity::LockEnd& e);
  void arm_lock_timer(int q);
  void on_lock_timer(int q, std::uint32_t gen);
  // Ev::Lease's aux for the queue's lock timer (a single job's lease carries its lock epoch).
  static constexpr std::uint32_t kQueueLockTimer = 0xffffffffu;
  void abandon(std::uint32_t j);
  void receive_deferred(std::uint32_t j);
  // Ev::Activate's aux for a deferred message received back by its sequence number (a scheduled
  // message's activation carries 0).
  static constexpr std::uint32_t kDeferredReceive = 1;
  void expire(std::uint32_t j, int q);
  void dead_letter(std::uint32_t j, int q, DeathReason why);
  void orphan(std::uint32_t j, Time until);
  void ready_changed(int q);
  void up();
  void restart_idle(int q);
  void on_idle_end(int q, std::uint32_t gen);

  World& w_;
  std::vector<Entity> entities_;
  std::vector<Dispatcher> dispatchers_;
  std::vector<Receiver> receivers_;  // by consumer index
  std::vector<Lock> locks_;          // by job pool index
  std::vector<sim::Rng> schedule_rngs_;  // by producer: scheduled_delay_ms draws
  std::vector<sim::Rng> session_rngs_;   // by producer: session id draws
  bool down_ = false;
  Time up_at_ = 0;
};

}  // namespace brokersim
