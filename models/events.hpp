// The model's event kinds, in the order simultaneous events run: the enum value is the priority
// class the kernel orders ties by (then insertion order). Every part of the model schedules with
// these; models/simulation.cpp routes each kind to its handler. The order is written down once,
// here, with its reasons:
//  - Warmup first: statistics restart before anything at that instant is counted.
//  - Faults next: a stall or crash "at t" must hold for everything else at t; a broker restart
//    likewise.
//  - Attach: a consumer that attaches at t is there for messages published at t. Declare and
//    QueueLease (x-expires) after it: a consumer attaching at the lease's end keeps the queue.
//  - QueueTimer before deliveries: a message whose TTL ends at t is not delivered at t.
//  - DeadLetter: a dead-lettered message reaches its target before new publishes at t. (It is
//    an event, not a call, so dead-letter chains through TTL-0 queues iterate, not recurse.)
//  - DlxTimer (the at-least-once dead-letter worker's retry) after DeadLetter: a dead letter
//    retried at t finds what was dead-lettered at t already in the target.
//  - AckArrive before Publish: credit returned at t lets a consumer take a message published at t;
//    before ChannelTick and Lease too: an ack arriving at the tick, or as its lock or visibility
//    lapses, is in time.
//  - Heartbeat (an SQS handler extends its message's visibility) before Lease: a heartbeat sent
//    as the visibility ends is in time, as an ack is.
//  - Lease (a lock or visibility timeout lapses) before Activate and Publish: the message it
//    returns was in the queue first.
//  - Activate (a scheduled or delayed message becomes available) before Publish: it was
//    published earlier.
//  - Publish (after a publish delay), then Arrival (creation; publishes at once without delay).
//  - Receive, ExecDone, StallEnd: the consumer side; their mutual order does not change results.
//  - ReplicaUp (an autoscaled replica attaches) with Attach; Leave (consumers[].stop_ms, a
//    scale-down) after them: a group leaving at t takes no message published at t.
//  - Close (a leaving consumer's connection closes) after AckArrive and ExecDone: settlements
//    arriving at t, and executions ending at t, are in before the rest goes back.
//  - Scale (an autoscaler's sync) just before Observe: the metric read at t includes
//    everything that happened at t.
//  - Observe last: a sample at t shows the state after everything that happened at t.
// (Kinds added later sit where they belong; the relative order of the others is unchanged, so
// runs without them are the same event for event.)
#pragma once

#include <cstdint>

namespace brokersim {

enum class Ev : std::uint32_t {
  Warmup,       // kernel
  Fault,        // faults (scenario `faults`)
  BrokerUp,     // broker
  Attach,       // consumer
  ReplicaUp,    // fleet: an autoscaled replica's start latency is over
  Leave,        // fleet: a group's stop_ms
  Declare,      // broker
  QueueLease,   // broker
  SessionIdle,  // broker: a Service Bus session held with nothing to receive reaches its idle timeout
  QueueTimer,   // broker
  DeadLetter,   // broker
  DlxTimer,     // broker: a quorum queue's dead-letter worker retries what its target refused
  AckArrive,    // broker: a consumer's settlement arrives
  ChannelTick,  // broker
  Heartbeat,    // broker: an SQS handler's ChangeMessageVisibility heartbeat (before Lease: in time)
  Lease,        // broker: a lock (Azure Service Bus) or visibility timeout (SQS) lapses
  Activate,     // broker: a scheduled or delayed message becomes available
  Publish,      // producer
  Arrival,      // producer
  Receive,      // consumer
  ExecDone,     // consumer
  StallEnd,     // consumer
  Close,        // consumer: a leaving consumer closes its connection
  Scale,        // fleet: an autoscaler's sync
  Observe,      // kernel
};

// Periodic ticks: they sample or sync and keep no run alive by themselves (World::schedule_tick).
constexpr bool is_tick(Ev kind) { return kind == Ev::Observe || kind == Ev::Scale; }

// How an execution ended; carried in the ExecDone event.
enum class ExecResult : std::uint32_t { Completed, TimedOut, Failed };

}  // namespace brokersim
