// The model's event kinds, and the priority class each runs in when several are due at one
// instant. Every part of the model schedules with these; models/simulation.cpp routes each kind
// to its handler. The kernel orders ties by priority class, then insertion order
// (sim/event_queue.hpp); a kind names what happens, its class when, among simultaneous events,
// it happens. The classes are written down once, below, in order, each with its reason.
#pragma once

#include <cstdint>

namespace brokersim {

enum class Ev : std::uint32_t {
  Warmup,       // kernel: statistics restart
  Fault,        // faults (scenario `faults`)
  BrokerUp,     // broker: a broker restarts
  Attach,       // consumer
  ReplicaUp,    // fleet: an autoscaled replica's start latency is over
  Leave,        // fleet: a group's stop_ms
  Declare,      // broker
  QueueLease,   // broker: x-expires
  SessionIdle,  // broker: a Service Bus session held with nothing to receive reaches its idle timeout
  QueueTimer,   // broker: a message's TTL
  DeadLetter,   // broker
  DlxTimer,     // broker: a quorum queue's dead-letter worker retries what its target refused
  AckArrive,    // broker: a consumer's settlement arrives
  ChannelTick,  // broker
  Heartbeat,    // broker: an SQS handler's ChangeMessageVisibility heartbeat
  Lease,        // broker: a lock (Azure Service Bus) or visibility timeout (SQS) lapses
  Activate,     // broker: a scheduled or delayed message becomes available
  Publish,      // producer: a publish after its delay
  Arrival,      // producer: a job is created (and published at once without delay)
  Receive,      // consumer
  ExecDone,     // consumer
  StallEnd,     // consumer
  Close,        // consumer: a leaving consumer closes its connection
  Scale,        // fleet: an autoscaler's sync
  Observe,      // kernel: a sample of the state (--timeseries)
  // consumer: a batch run in turn (batch_handler.execution "sequential") ends one message's
  // execution and starts the next. After the older kinds, so that none of them changes its number
  // (the event streams' fingerprints hash the kind).
  BatchTurn,
  EtaDue,  // consumer: a job it holds for its ETA may start (last, for the same reason)
};

// The priority classes, earliest first: among events due at the same instant, a lower class runs
// first (then insertion order). Classes added later sit where they belong; the relative order of
// the others is unchanged, so runs without them are the same event for event.
enum class Priority : std::uint8_t {
  // Statistics restart before anything at that instant is counted.
  RestartStatistics,
  // A stall or crash "at t" holds for everything else at t; a broker restart likewise.
  Fault,
  BrokerRestart,
  // A consumer that attaches at t is there for messages published at t; an autoscaled replica
  // attaches with them. A group leaving at t (stop_ms, a scale-down) takes no message published
  // at t.
  Attach,
  ReplicaAttach,
  Leave,
  // Declare and the queue lease (x-expires) after Attach: a consumer attaching at the lease's
  // end keeps the queue. A Service Bus session's idle timeout with them.
  Declare,
  QueueLease,
  SessionIdle,
  // A message whose TTL ends at t is not delivered at t.
  Expiry,
  // A dead-lettered message reaches its target before new publishes at t. (An event, not a call,
  // so dead-letter chains through TTL-0 queues iterate, not recurse.) The at-least-once
  // dead-letter worker's retry at t then finds what was dead-lettered at t already in the target.
  DeadLetter,
  DeadLetterRetry,
  // A settlement arriving at t returns credit in time for a message published at t, and is in
  // time for a channel tick at t and for a lock or visibility lapsing at t.
  Settlement,
  ChannelTick,
  // An SQS heartbeat sent as the visibility ends is in time, as a settlement is.
  Heartbeat,
  // A lapsed lock or visibility returns a message that was in the queue before anything that
  // becomes available or is published at t.
  LeaseLapse,
  // A scheduled or delayed message becoming available at t was published earlier than a publish
  // at t; a publish after its delay was created earlier than a job created at t.
  Activate,
  Publish,
  Arrival,
  // The consumer side; the mutual order of these three does not change results.
  Receive,
  ExecutionEnd,
  StallEnd,
  // A leaving consumer's connection closes after settlements arriving at t, and executions
  // ending at t, are in, before the rest goes back.
  Close,
  // An autoscaler's sync reads a metric that includes everything that happened at t; a sample
  // at t shows the state after it.
  Scale,
  Observe,
};

// The one table from kind to priority class.
constexpr Priority priority_of(Ev kind) {
  switch (kind) {
    case Ev::Warmup: return Priority::RestartStatistics;
    case Ev::Fault: return Priority::Fault;
    case Ev::BrokerUp: return Priority::BrokerRestart;
    case Ev::Attach: return Priority::Attach;
    case Ev::ReplicaUp: return Priority::ReplicaAttach;
    case Ev::Leave: return Priority::Leave;
    case Ev::Declare: return Priority::Declare;
    case Ev::QueueLease: return Priority::QueueLease;
    case Ev::SessionIdle: return Priority::SessionIdle;
    case Ev::QueueTimer: return Priority::Expiry;
    case Ev::DeadLetter: return Priority::DeadLetter;
    case Ev::DlxTimer: return Priority::DeadLetterRetry;
    case Ev::AckArrive: return Priority::Settlement;
    case Ev::ChannelTick: return Priority::ChannelTick;
    case Ev::Heartbeat: return Priority::Heartbeat;
    case Ev::Lease: return Priority::LeaseLapse;
    case Ev::Activate: return Priority::Activate;
    case Ev::Publish: return Priority::Publish;
    case Ev::Arrival: return Priority::Arrival;
    case Ev::Receive: return Priority::Receive;
    case Ev::ExecDone:
    case Ev::BatchTurn: return Priority::ExecutionEnd;
    case Ev::StallEnd: return Priority::StallEnd;
    case Ev::Close: return Priority::Close;
    case Ev::Scale: return Priority::Scale;
    case Ev::Observe: return Priority::Observe;
    // A job whose ETA comes at t joins the buffer as a receipt at t would.
    case Ev::EtaDue: return Priority::Receive;
  }
  return Priority::Observe;  // unreachable: every kind is listed above
}

// Periodic ticks: they sample or sync and keep no run alive by themselves (World::schedule_tick).
constexpr bool is_tick(Ev kind) { return kind == Ev::Observe || kind == Ev::Scale; }

// How an execution ended; carried in the ExecDone event.
enum class ExecResult : std::uint32_t { Completed, TimedOut, Failed };
// Or-ed into an ExecDone's result: a message of a batch whose execution goes on holding its slot
// (every message of a batch but the last ends at the same instant; the last frees the slot).
inline constexpr std::uint32_t kExecKeepsSlot = 0x100;

// An ExecDone's aux: the result, kExecKeepsSlot, and in bits 16-23 which start of the job it ends
// (Job::executions at the start, mod 256). An execution cut short by a killed process leaves its
// ExecDone pending, with the job's gen unchanged when it is requeued; once the job starts again
// that ExecDone names an earlier start and is ignored.
inline constexpr std::uint32_t exec_done_aux(ExecResult result, bool keeps_slot, std::uint8_t start) {
  return static_cast<std::uint32_t>(result) | (keeps_slot ? kExecKeepsSlot : 0) | std::uint32_t{start} << 16;
}
inline constexpr ExecResult exec_result_of(std::uint32_t aux) { return static_cast<ExecResult>(aux & 0xff); }
inline constexpr bool keeps_slot_of(std::uint32_t aux) { return (aux & kExecKeepsSlot) != 0; }
inline constexpr std::uint8_t start_of(std::uint32_t aux) { return static_cast<std::uint8_t>(aux >> 16); }

}  // namespace brokersim
