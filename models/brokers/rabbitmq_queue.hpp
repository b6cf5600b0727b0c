// A RabbitMQ queue's ready list and its head-expiry timer (docs/semantics.md part 2, sections 1
// and 2), of either queue type.
//
// Messages are held in publication order (by a per-queue sequence number); a returned message
// goes where its type puts it (RequeueTo). Expiry is evaluated only at the head: expired messages
// behind a live head stay in the list and are counted (depth, max-length), exactly as the broker
// does. The queue itself makes no decisions about jobs; the broker (rabbitmq.cpp) asks it for the
// expired head run and for the next message to deliver, and its type's policy
// (rabbitmq_classic.hpp, rabbitmq_quorum.hpp) for what differs.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "models/scenario.hpp"
#include "sim/fifo.hpp"

namespace brokersim {

struct Message {
  std::uint64_t seq;
  std::uint32_t job;
  std::uint32_t bytes;
  Time expiry;  // absolute, true clock; kNever = does not expire
  bool counted; // its job was created after the warm-up: it counts in the queue's levels
};

// Where a returned (requeued) message goes. Classic queues: back to its original position.
// Quorum queues with a delivery limit: to the returns queue, served before every ready message in
// return order; without a limit: to the tail, as a new message (docs/semantics.md part 2, D3).
enum class RequeueTo : std::uint8_t { OriginalPosition, Returns, Tail };

// Why a delivery came back to its queue: what counts toward a quorum queue's delivery limit
// depends on it.
enum class ReturnCause : std::uint8_t { Nack, Crash, Timeout };

class RabbitQueue {
 public:
  // The queue's type is its spec's (QueueType, models/scenario.hpp).
  RabbitQueue(const QueueSpec& spec, RequeueTo requeue_to) : spec_(&spec), type_(spec.rabbitmq.type), requeue_to_(requeue_to) {}

  const QueueSpec& spec() const { return *spec_; }
  QueueType type() const { return type_; }
  std::size_t ready() const { return ready_.size(); }
  std::uint64_t ready_bytes() const { return ready_bytes_; }
  bool empty() const { return ready_.empty(); }
  const Message& head() const { return ready_.front(); }

  // Expiry stamped once, at enqueue into this queue: now + min(queue TTL, message TTL).
  Time expiry_for(Time now, Time message_ttl) const {
    Time ttl = sim::kNever;
    if (spec_->message_ttl) ttl = *spec_->message_ttl;
    if (message_ttl >= 0 && message_ttl < ttl) ttl = message_ttl;
    return sim::add_sat(now, ttl);
  }

  std::uint64_t enqueue(std::uint32_t job, std::uint32_t bytes, Time expiry, bool counted) {
    const std::uint64_t seq = next_seq_++;
    ready_.push_back(Message{seq, job, bytes, expiry, counted});
    ready_bytes_ += bytes;
    return seq;
  }
  // A sequence number for a message handed to a consumer without entering the ready list, so
  // that a requeue can still put it back where it belongs.
  std::uint64_t take_seq() { return next_seq_++; }

  // A returned message, by requeue_to (above), keeping its original expiry.
  void requeue(const Message& m);

  Message pop_head() {
    Message m = ready_.front();
    ready_.pop_front();
    if (returns_ > 0) --returns_;
    ready_bytes_ -= m.bytes;
    return m;
  }

  // Would one more message of `bytes` exceed max-length or max-length-bytes? `also_counted`:
  // messages that count toward the length without being ready (a quorum queue's held dead-letters).
  bool full_for(std::uint64_t bytes, std::uint64_t also_counted) const {
    return (spec_->max_length && ready_.size() + also_counted + 1 > static_cast<std::uint64_t>(*spec_->max_length)) ||
           (spec_->max_length_bytes && ready_bytes_ + bytes > static_cast<std::uint64_t>(*spec_->max_length_bytes));
  }
  bool over_limit() const {
    return (spec_->max_length && ready_.size() > static_cast<std::uint64_t>(*spec_->max_length)) ||
           (spec_->max_length_bytes && ready_bytes_ > static_cast<std::uint64_t>(*spec_->max_length_bytes));
  }
  // Queue deletion (x-expires), a broker restart: every ready message goes with it, in order.
  std::vector<Message> take_all() {
    std::vector<Message> all;
    all.reserve(ready_.size());
    for (std::size_t i = 0; i < ready_.size(); ++i) all.push_back(ready_[i]);
    ready_.clear();
    ready_bytes_ = 0;
    returns_ = 0;
    return all;
  }

  bool head_expired(Time now) const { return !ready_.empty() && ready_.front().expiry <= now; }

  // The head-expiry timer, as rabbit_amqqueue_process:ensure_ttl_timer/2 keeps it: armed for the
  // head's expiry with the delay rounded up to whole milliseconds ("always fire later"), and
  // re-armed only when the new head expires more than 1 ms before the armed time. Returns the
  // time to schedule a timer event for, or nullopt when the armed timer will do (decided inline:
  // the queue asks after every delivery, and the armed timer usually does).
  std::optional<Time> arm_timer(Time now) {
    if (ready_.empty()) return std::nullopt;
    const Time expiry = ready_.front().expiry;
    if (expiry == sim::kNever) return std::nullopt;
    if (timer_at_ != sim::kNever && expiry >= timer_at_ - sim::kNsPerMs) return std::nullopt;
    return rearm(now, expiry);
  }
  // The timer event fired (or was superseded): its generation, to ignore stale timer events.
  std::uint32_t timer_gen() const { return timer_gen_; }
  void timer_fired() { timer_at_ = sim::kNever; }

  // x-expires: consumers attached, the lease timer's generation, and whether it is deleted.
  int consumers = 0;
  std::uint32_t lease_gen = 0;
  bool deleted = false;

 private:
  const QueueSpec* spec_;
  QueueType type_;
  RequeueTo requeue_to_;
  Time rearm(Time now, Time expiry);

  sim::Fifo<Message> ready_;
  std::size_t returns_ = 0;  // the returns queue: the first returns_ messages of ready_
  std::uint64_t ready_bytes_ = 0;
  std::uint64_t next_seq_ = 0;
  Time timer_at_ = sim::kNever;
  std::uint32_t timer_gen_ = 0;
};

}  // namespace brokersim
