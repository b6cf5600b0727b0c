// Amazon SQS standard queues (broker.kind "amazon-sqs"; docs/semantics.md part 2, sections 6 and 7):
// a pull broker whose clock runs while a client holds a message. Rules and where they live:
//   amazon_sqs.cpp          send (queue delay), ReceiveMessage batches, the visibility timeout
//                           and its lapse (a duplicate when the client still holds the message),
//                           redrive after max_receive_count, retention from the original enqueue
//   amazon_sqs_clients.cpp  consumers polling and crashing, DeleteMessage and
//                           ChangeMessageVisibility (settle), a stale receipt handle, outages
//
// What brokersim's common keys mean here (docs/scenario.md, "amazon-sqs"):
//  - A consumer is a buffered client (the Java AmazonSQSBufferedAsyncClient's prefetching, or any
//    client with a local queue). `prefetch` caps the messages it holds (received and not yet
//    deleted: in transit, buffered, executing, their delete on the wire), as it caps unacked
//    deliveries on RabbitMQ, so one sweep means the same on both; 0 = no buffer: it receives only
//    for its free slots. A client with room is in a long poll: as soon as messages are visible it
//    gets up to min(batch_size, room) of them in one response (one delivery latency for the
//    batch). Waiting clients are answered in turn (round robin).
//  - The visibility timeout starts at the receive on the server: time in transit and in the
//    client's buffer counts (sqs-client-side-buffering-request-batching.html). When it lapses
//    while the client still holds the message, the message is visible again (at the tail: a
//    standard queue does not keep order) and the client's copy runs anyway (a ghost,
//    World::take_back): a duplicate execution when someone receives it again.
//  - A completed, expired (`on_expired: ack`) or timed-out job is deleted (DeleteMessage); a
//    failed one is not and comes back when its visibility lapses; `on_expired: requeue` is
//    ChangeMessageVisibility(0): visible at once. There is no reject (refused by the loader).
//  - A delete with a stale receipt handle (from a lapsed receive) deletes the message only if
//    nobody received it since: "you must provide the most recently received receipt handle
//    (otherwise, the request succeeds, but the message will not be deleted)" (DeleteMessage API
//    reference).
//  - ReceiveCount grows with every receive; the receive that would make it exceed
//    max_receive_count moves the message to dead_letter_to instead (vector 42), reason
//    `max_receive_count`, outcome dead_lettered. It counts again from 0 in the dead-letter queue.
//  - Retention: a message is deleted (outcome expired_in_queue) retention_ms after its original
//    enqueue, also in the dead-letter queue (standard queues keep the timestamp on redrive). The
//    docs do not say what happens to an in-flight message at that point: brokersim lets the
//    client's delete win and deletes it when its visibility lapses instead of making it visible.
//  - A queue's delay_ms hides new messages (not redriven ones) for that long; the retention
//    clock runs meanwhile. Per-message timers are not a key: a producer's publish_delay_ms gives
//    the same visibility (see docs/scenario.md).
//  - A consumer's visibility_timeout_ms is ReceiveMessage's VisibilityTimeout: its receives use it
//    instead of the queue's. Its visibility_heartbeat is the usual fix for jobs longer than the
//    timeout: while the handler runs, every `every_ms` from its start, the client calls
//    ChangeMessageVisibility(extend_ms), which sets the visibility to end extend_ms after the call
//    (not after the old end). A call that would make the total visibility exceed 12 hours from the
//    receive is rejected ("you can continue to call ChangeMessageVisibility to extend the
//    visibility timeout to the maximum allowed time. If you try to extend the visibility timeout
//    beyond the maximum, your request is rejected": ChangeMessageVisibility API reference), and
//    the client stops calling. The call's own latency is not modelled (it takes effect as sent);
//    during an outage it fails and the next one is tried. A stale copy (a ghost) sends none.
//  - ReceiveMessage responses are counted by size (receives_by_size, run --json `receives`): a
//    long poll returns as soon as messages are visible, so a response carries what was visible
//    then, up to min(batch_size, room). Empty responses are not modelled (a waiting client's
//    long poll is answered when a message comes).
//  - A consumer crash leaves its in-flight messages invisible until their visibility lapses.
//  - broker_down: sends are refused, receives return nothing and deletes fail (the message
//    comes back when its visibility lapses); every clock keeps running.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "models/broker.hpp"
#include "models/brokers/client_record.hpp"
#include "models/brokers/ready_level.hpp"
#include "models/job.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// ReceiveMessage's MaxNumberOfMessages is 1..10.
inline constexpr std::size_t kMaxReceiveBatch = 10;

class AmazonSqs : public Broker {
 public:
  explicit AmazonSqs(World& w);

  void start() override;
  void publish(std::uint32_t j) override;
  bool open_connection(Consumer& c) override;
  void consume(Consumer& c) override;
  void cancel(Consumer& c) override;
  void close_connection(Consumer& c) override;
  void settle(std::uint32_t j, std::uint32_t gen) override;
  void prefetch_changed(Consumer& c, int delta) override;
  void on_event(const sim::Event& ev) override;
  void down(Time duration) override;
  void execution_started(std::uint32_t j) override;
  void report(std::vector<double>& figures) const override;  // amazon_sqs_kind.cpp

 private:
  // The longest total visibility of one receive (ChangeMessageVisibility API reference: 12 hours).
  static constexpr Time kMaxVisibility = Time{43'200'000} * sim::kNsPerMs;
  // Where a message is, as SQS sees it. A ghost (a client's stale copy) is in none of them.
  enum class State : std::uint8_t { None, Delayed, Visible, InFlight };

  // Broker state by job pool index. `token` grows on every change of state and is never reset
  // (not even when the index is reused), so (index, token) names one stay of one message: a
  // timer or a list entry carrying an older token is stale.
  struct Message {
    std::uint32_t token = 0;
    State state = State::None;
    std::uint32_t receives = 0;        // ReceiveCount in its current queue
    std::uint32_t live = kNoIndex;     // a ghost: the index its message was taken back to
    std::uint32_t live_token = 0;      // ... and that copy's token then (not received since)
    Time received_at = 0;              // the last receive, on the server (the 12 h limit counts from it)
    Time visible_until = 0;            // in flight: when its visibility ends (heartbeats move it)
  };

  struct Queue {
    std::deque<std::pair<std::uint32_t, std::uint32_t>> visible;  // (job, token), oldest first
    ReadyLevel level;  // the visible messages
    std::uint64_t messages = 0;  // every message the queue holds (delayed, visible, in flight)
    // Retention deadlines, earliest first: (deadline, job id, pool index). An entry is stale once
    // the message left the queue; stale entries are skipped and pruned when they outnumber the
    // live ones. One timer (QueueTimer) is armed for the earliest. A min-heap (std::push_heap).
    struct Due {
      Time at;
      std::uint64_t id;
      std::uint32_t job;
      bool operator>(const Due& o) const { return at > o.at; }
    };
    std::vector<Due> due;
    Time timer_at = sim::kNever;
    std::uint32_t timer_gen = 0;
    // Visibility deadlines, earliest first (then in push order): one timer (Lease) for the
    // earliest serves them all, rather than an event per receive. Entries of deleted messages,
    // and those a heartbeat moved (at != visible_until), are stale and skipped. A min-heap: a
    // per-receive timeout or a heartbeat can push a deadline earlier than others; with one
    // timeout per queue and no heartbeat, pushes are in deadline order and it pops like a FIFO.
    struct Lapse {
      Time at;
      std::uint64_t seq;
      std::uint32_t job, token;
      bool operator>(const Lapse& o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };
    std::vector<Lapse> lapses;
    std::uint64_t lapse_seq = 0;
    bool lapse_timer = false;  // a Lease event is pending, or the lapses are being handled now
    Time lapse_at = 0;         // ... for this time
    std::uint32_t lapse_gen = 0;
  };

  Message& msg(std::uint32_t j);
  // A change of state: the token grows with it, making every older timer or list entry stale.
  Message& set_state(std::uint32_t j, State state) {
    Message& m = msg(j);
    ++m.token;
    m.state = state;
    return m;
  }
  std::uint32_t capacity(const Consumer& c) const;
  bool has_room(const Consumer& c) const;
  void give_room(Consumer& c);

  // amazon_sqs.cpp
  void enter(std::uint32_t j, int q);  // a message arrives in queue q (sent or redriven)
  void make_visible(std::uint32_t j);
  void take_off_visible(std::uint32_t j);
  void dispatch(int q);
  void deliver(std::uint32_t j, int ci, Time latency);
  void redrive(std::uint32_t j);
  void arrive(std::uint32_t j, int q);  // the redriven message reaches its dead-letter queue
  void lapses_due(int q, std::uint32_t gen);
  void push_lapse(int q, std::uint32_t j);
  void pop_lapse(Queue& Q);
  void arm_lapses(int q);
  bool lapse_stale(const Queue::Lapse& l) const;
  void lapse(std::uint32_t j, std::uint32_t token);
  void activate(std::uint32_t j, std::uint32_t token);
  void retention_due(int q, std::uint32_t gen);
  void track_retention(std::uint32_t j);
  void arm_retention(int q);
  bool holds(std::uint32_t j, std::uint64_t id, int q) const;
  void delete_expired(std::uint32_t j);
  void gone(std::uint32_t j);  // the message leaves its queue (deleted, expired, redriven)
  bool in_client(std::uint32_t j) const;
  void ready_changed(int q);

  // amazon_sqs_clients.cpp
  void settle_ghost(std::uint32_t j);
  void settle_early(std::uint32_t j);
  bool kept_back(const Job& job) const;
  void heartbeat(std::uint32_t j, std::uint32_t gen, std::uint32_t token);

  World& w_;
  std::vector<Queue> queues_;
  std::vector<Dispatcher> dispatchers_;
  std::vector<ClientRecord> clients_;  // by consumer index: the messages each holds (in flight)
  // By consumer index: what the client added to its prefetch (prefetch_changed) since it started.
  std::vector<std::uint32_t> raised_;
  std::vector<Message> messages_;  // by job pool index, grown on demand
  bool down_ = false;
  Time up_at_ = 0;
  std::array<std::uint64_t, kMaxReceiveBatch + 1> receives_by_size_{};  // responses after the warm-up, by messages carried
};

}  // namespace brokersim
