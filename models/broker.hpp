// The broker interface: everything a client or the kernel asks of a broker, whichever it is.
//
// An abstract class rather than a template parameter: a job crosses it a handful of times
// (publish, the settlement, a timer), which costs a few indirect calls per job against some
// 2,500 instructions (measured in docs/architecture.md: within noise of the monolithic class),
// while it keeps brokers in their own translation units and a run's broker a scenario choice.
//
// Contract, for every broker:
//  - Jobs are pool indices (World::jobs). The broker owns a job from publish() until it calls
//    World::leave() (acked, dropped, lost, refused); it may hand it to a consumer meanwhile by
//    World::sent and then World::receive_at (Ev::Receive with the job's current gen and its
//    consumer; job.where = Transit, job.consumer set). Every decision is World::decide(); every
//    counter goes to the Ledger.
//  - A consumer settles a delivery by setting job.ack and scheduling Ev::AckArrive; the broker
//    sees it in settle(), never earlier. A broker that voids a delivery (a closed channel, a
//    lapsed lock) bumps job.gen so that the consumer's pending events for it are ignored.
//  - The broker's own timers are Ev kinds it schedules and receives back in on_event().
//  - Where a broker's clock runs while a client holds a message (an Azure Service Bus lock, an
//    SQS visibility timeout), the broker hears when a job leaves the client's buffer for a slot
//    (execution_started, called only when World::broker_hears_starts is set, so that brokers
//    without such a clock pay nothing), and takes a lapsed message back with World::take_back:
//    the client keeps a stale copy (a ghost) that runs and settles, and the broker drops it in
//    settle() (World::drop_ghost).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/events.hpp"
#include "sim/event_queue.hpp"

namespace brokersim {

class Consumer;
struct World;

class Broker {
 public:
  virtual ~Broker() = default;

  // The run begins: the broker schedules its own first timers (queue leases, declares).
  virtual void start() = 0;

  // --- producer side
  // The job reaches the broker, for queue job.queue (after the producer's own checks).
  virtual void publish(std::uint32_t job) = 0;

  // --- consumer side
  // A client asks to connect. False while the broker cannot take connections (it is down); the
  // broker then connects the client itself (Consumer::connect) once it can.
  virtual bool open_connection(Consumer& c) = 0;
  // The connected client subscribes to its queue: the broker may deliver to it from now on.
  virtual void consume(Consumer& c) = 0;
  // The client cancels its subscription (basic.cancel, when it is about to leave): no new
  // deliveries; what it holds stays unsettled until it settles it or its connection closes.
  // A broker that has no such call keeps delivering, and the leaving client keeps what arrives
  // unstarted, handing it back when it closes (the default).
  virtual void cancel(Consumer& /*c*/) {}
  // The client's connection is gone (crash, fault): whatever it held unsettled goes back to the
  // broker by this broker's rules. Consumer::connection_lost() has already run.
  virtual void close_connection(Consumer& c) = 0;
  // The consumer's settlement of a delivery (job.ack: ack, reject, requeue) arrives; gen is the
  // job's gen when it was sent (a settlement for a voided delivery never arrives).
  virtual void settle(std::uint32_t job, std::uint32_t gen) = 0;
  // The consumer starts executing the job (see the contract above).
  virtual void execution_started(std::uint32_t /*job*/) {}
  // The client changes its prefetch by `delta` on its live connection (consumers[].eta
  // hold-outside-prefetch: Celery's basic.qos raised for each ETA task it holds). Only the kinds
  // whose loader accepts that mode implement it.
  virtual void prefetch_changed(Consumer& /*c*/, int /*delta*/) {}
  // --- kernel: the broker's own timers (Ev kinds the broker scheduled)
  virtual void on_event(const sim::Event& ev) = 0;

  // --- faults
  virtual void down(sim::Time duration) = 0;

  // --- the measured span closed: the figures only this kind knows (SQS's receive sizes), in
  // the order its descriptor lists them (BrokerKindModel::figures, models/broker_kind.hpp).
  virtual void report(std::vector<double>& /*figures*/) const {}
};

// The broker a scenario names (broker.kind).
std::unique_ptr<Broker> make_broker(World& world);

}  // namespace brokersim
