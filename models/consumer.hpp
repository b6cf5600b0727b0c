// A consumer: a local FIFO buffer of received jobs, `slots` execution slots, a local clock, and
// the admission rule that decides, after all local waiting, whether a job is still worth
// starting. The consumer knows no broker's rules: it receives deliveries, runs them, and sends
// its settlement back through the Broker interface. What the broker keeps about it (prefetch
// credit, unacked deliveries, channel timers) is the broker's own state.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/clock.hpp"
#include "models/events.hpp"
#include "models/job.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"
#include "sim/rng.hpp"
#include "sim/small_fifo.hpp"
#include "sim/stats.hpp"

namespace brokersim {

struct World;

// docs/scenario.md's admission rule: remaining = expires_at - local_clock - uncertainty; reject when
// remaining <= 0 or remaining < min_window. A job without a deadline is always admitted.
inline bool admits(const ConsumerSpec& spec, Time expires_at, Time local_now) {
  if (expires_at == sim::kNever) return true;
  const Time remaining = expires_at - local_now - spec.uncertainty;
  return remaining > 0 && remaining >= spec.min_window;
}

// A lost connection: when and why (see Consumer::cut_of).
struct ConnectionCut {
  Time at;
  DuplicateCause why;
};

// A consumer's state in three plain parts, by when it is touched. In a large fleet a consumer's
// record has left the cache by each receipt and each execution's end (docs/performance.md, stops
// 53 and 56): every line either moment reads is a cache miss. ConsumerHot is the one line both
// read (a receipt may start the job; an execution's end starts the next from the buffer),
// ConsumerEnd the line only an execution's end reads (the settlement it sends draws its ack
// latency there), and ConsumerCold what most jobs never touch: the delivery stream (the broker
// draws from it as it sends, a moment when it touches no other line of the consumer), the lost
// connections, the kept jobs, the other random streams and the counters read at the end. A name
// ending in `_` is the Consumer's own; the others are public through Consumer's using-declarations.
struct ConsumerHot {
  const ConsumerSpec* spec_;
  int index_;
  std::uint32_t connections_lost_ = 0;  // cuts_.size(): every start reads it
  int busy = 0;
  bool attached = false;
  bool leaving = false;   // cancelled its subscription; closes when idle or at the grace's end
  bool stalled_ = false;  // stalled until ConsumerCold::stalled_until, unless that has passed
  // ConsumerSpec::metering, on this line so that a start and a change of busy read no other:
  // kMeterExecutions, kMeterActivity.
  std::uint8_t metering_ = 0;
  LocalClock clock{};
  // The time integrals of `busy` and of `local.size()` since the warm-up (measured_since_).
  sim::CountIntegral busy_area{};
  sim::CountIntegral local_area{};
  sim::SmallFifo<std::uint32_t, 2> local{};  // received, not started, in arrival order
};
static_assert(sizeof(ConsumerHot) == 64, "a consumer's receipt and execution's end read one line");

struct ConsumerEnd {
  sim::Rng ack_rng;
  Time last_ack_arrival_ = 0;  // the latest settlement this consumer sent arrives then
  // Executions that ended, warm-up included (a batch handler's are counted apart): with those cut
  // by a lost connection and those running, the executions started (Consumer::started).
  std::uint64_t ended_ = 0;
};
static_assert(sizeof(ConsumerEnd) <= 64, "an execution's end reads one line more");

// A batch run in turn (batch_handler.execution "sequential"): its messages in their order, the
// one whose turn is next, and what the whole invocation shares (its start, the time its
// exec_timeout stops it, a failure drawn for all of it). A message rejected at its turn is
// kNoIndex here (its settlement went as it was rejected); each message keeps the gen it was taken
// with, so a message the broker voided meanwhile (an orphaned delivery) is passed over, not settled.
struct BatchInTurn {
  std::vector<std::uint32_t> messages{}, gens{};
  std::uint32_t next = 0;  // messages[next - 1] runs
  Time started = 0, stops_at = sim::kNever;
  ExecResult whole = ExecResult::Completed, running = ExecResult::Completed;
};

struct ConsumerCold {
  alignas(64) sim::Rng delivery_rng;
  std::uint64_t invocations_ = 0;       // batch executions started after the warm-up
  std::uint64_t billed_ms_ = 0;         // ... their durations, each rounded up to a whole ms
  std::uint64_t active_ms_ = 0;         // activity periods ended in the measured span, as metered
  Time active_since_ = 0;               // the open activity period's start (busy > 0)
  std::uint64_t cut_ = 0;               // executions cut by a lost connection (not a batch handler's)
  std::uint64_t batch_started_ = 0;     // a batch handler's executions started, one per message
  Time stalled_until = 0;
  bool replica = false;   // counted in its group's replicas (models/fleet.cpp)
  bool retired = false;   // left: connects no more until revived
  std::vector<ConnectionCut> cuts_{};  // one per connection lost, in order
  std::vector<std::uint32_t> kept_{};  // see Consumer::keep; each job's Job::unacked_pos is its position here
  sim::Rng failure_rng, timeout_rng;
  // A batch handler's failure draws (per execution, or per message with item failures): a
  // stream of its own, made only for batch handlers.
  std::optional<sim::Rng> batch_rng{};
  std::vector<std::uint32_t> batch_{};  // the batch being started (scratch)
  std::vector<BatchInTurn> turns_{};    // batches run in turn, by the id their Ev::BatchTurn carries
  std::vector<std::uint32_t> free_turns_{};
  int group_ = 0;
  std::uint32_t incarnation = 0;  // grows with every leave: voids Ev::Close / Ev::ReplicaUp of a past life
  Time measured_since_ = 0;       // the warm-up's end: busy_area and local_area start there
};

class alignas(64) Consumer : private ConsumerHot, private ConsumerEnd, private ConsumerCold {
 public:
  Consumer(const ConsumerSpec& spec, int index, int group, int member, std::uint64_t seed,
           std::uint64_t replication);

  const ConsumerSpec& spec() const { return *spec_; }
  int index() const { return index_; }
  int queue() const { return spec_->queue; }
  int slots() const { return spec_->slots; }
  int idle_slots() const { return attached ? slots() - busy : 0; }  // what the ledger's stranded work asks

  // --- events
  void connect(World& w);                  // Ev::Attach: start, restart, or reconnect
  // Ev::Receive (the job's gen already checked), with its transit wait (World::receive_at).
  void receive(World& w, std::uint32_t j, std::uint32_t transit);
  // Ev::EtaDue (gen checked): the ETA of a job held since its receipt on connection `connection`
  // has come (consumers[].eta).
  void eta_due(World& w, std::uint32_t j, std::uint32_t connection);
  // Ev::ExecDone (gen checked), its aux as exec_done_aux wrote it: the result, whether a batch's
  // message keeps the slot (its batch's last message has not ended yet), and which start it ends.
  void exec_done(World& w, std::uint32_t j, std::uint32_t aux);
  // Ev::BatchTurn of batch `run`, scheduled on connection `connection` (a batch run in turn: the
  // running message's execution ends, the next one's starts).
  void batch_turn(World& w, std::uint32_t connection, std::uint32_t run);
  // After every change of slots: free ones take from the buffer.
  void try_start(World& w) { try_start(w, false); }
  // Ev::StallEnd: a stall may be over; a batch handler may start a batch short of max_messages,
  // once everything else at this instant is in.
  void stall_end(World& w);

  // --- faults
  void stall(World& w, Time duration);
  void crash(World& w);                    // the process dies: connection_lost + the broker's part
  // faults[].kill_process: the process running the longest-running execution dies (a Celery pool
  // process killed by a signal or the OOM killer); the consumer and its connection live on.
  // Nothing happens when nothing is executing.
  void kill_process(World& w);
  // The client's part of losing its connection: its buffer and running work are gone (the
  // broker takes back what was unsettled). Called by crash() and by a broker closing a channel;
  // `why` is what an execution cut by it will be blamed for if it runs again.
  void connection_lost(World& w, DuplicateCause why);

  // Jobs the broker is done with while this client still has them (an early ack arrived, or the
  // broker settled the message as it sent it: consumers[].ack before-start / on-receipt): they
  // leave when decided here, and are `lost` if the connection goes first.
  void keep(World& w, std::uint32_t j);

  // Each lost connection, in order: when and why. A job remembers the connection it started on
  // (Job::ran_connection); if that one was cut before its settlement arrived, the cut is why
  // the job may run again (World::sent). One entry per connection lost.
  using Cut = ConnectionCut;
  std::uint32_t connection() const { return connections_lost_; }  // cuts_.size(), on the hot line
  const Cut* cut_of(std::uint32_t connection) const {
    return connection < cuts_.size() ? &cuts_[connection] : nullptr;
  }

  // --- leaving (consumers[].stop_ms, a scale-down): no new deliveries, the executing jobs get
  // shutdown_grace_ms, then the connection closes and the broker takes back the rest.
  void leave(World& w);
  void close_for_leave(World& w, std::uint32_t epoch);  // Ev::Close (epoch checked here)
  // The member becomes a replica again (autoscaler): it may connect once more.
  void revive() { retired = false; }
  // A replica exists from its request until it has left; the ledger counts it.
  void become_replica(World& w);

  // Its figures: time averages from the warm-up on, starts over the whole run.
  void warmup(Time now) {
    busy_area.reset(now, busy);
    local_area.reset(now, static_cast<std::int64_t>(local.size()));
    measured_since_ = now;
  }
  ConsumerResult result(Time now) const;
  // The executions metered after the warm-up, and their billed duration (each rounded up to
  // 1 ms, at least the metering's minimum).
  std::uint64_t invocations() const { return invocations_; }
  std::uint64_t billed_ms() const { return billed_ms_; }
  static constexpr std::uint8_t kMeterExecutions = 1, kMeterActivity = 2;

  // The state the fleet, the brokers and the outputs read or set.
  using ConsumerHot::attached;
  using ConsumerHot::busy;
  using ConsumerHot::clock;
  using ConsumerCold::incarnation;
  using ConsumerHot::leaving;
  using ConsumerHot::local;
  using ConsumerCold::replica;
  using ConsumerCold::retired;
  using ConsumerEnd::ack_rng;
  using ConsumerCold::delivery_rng;
  using ConsumerCold::failure_rng;
  using ConsumerCold::timeout_rng;

 private:
  void try_start(World& w, bool woken);
  // A received job that passed the receipt check goes to a free slot or the buffer.
  void take(World& w, std::uint32_t j);
  // consumers[].eta: true when the job's ETA has not come by this client's clock and it holds the job.
  bool hold_for_eta(World& w, std::uint32_t j);
  // Fill free slots from the buffer, oldest first (woken: see stall_end).
  void start_buffered(World& w, bool woken = false);
  // Not stalled: the stall's end is read only while one may be on.
  bool running_free(Time now) const { return !stalled_ || now >= stalled_until; }
  int book() const { return spec_->book(); }  // the ledger's slot book of its slots
  // The buffer's length went from `before` to local.size() now: its time integral hears of it.
  void buffer_changed(Time now, std::size_t before) {
    local_area.change(now, static_cast<std::int64_t>(local.size()) - static_cast<std::int64_t>(before));
  }
  // Executions started, warm-up included.
  std::uint64_t started() const { return batches() ? batch_started_ : ended_ + cut_ + static_cast<std::uint64_t>(busy); }
  void start(World& w, std::uint32_t j);
  // A job's start, without its slot and its timing. `begin` is inline in consumer.cpp, so that the
  // one-job start (the hot path) has it inlined; a batch's start calls `begin_in_batch`.
  void begin(World& w, std::uint32_t j);
  void begin_in_batch(World& w, std::uint32_t j);
  // consumer_batch.cpp: consumers[].batch_handler.
  bool batches() const { return spec_->batch.max_messages > 0; }
  void receive_for_batch(World& w, std::uint32_t j);
  void start_batches(World& w, bool woken);
  void start_batch(World& w);
  Time invocation_limit(World& w, const std::vector<std::uint32_t>& messages);
  void start_batch_in_turn(World& w);
  void next_in_turn(World& w, std::uint32_t run);
  void end_batch_in_turn(World& w, std::uint32_t run, ExecResult why);
  void wake_for_window(World& w);
  std::size_t min_messages() const;  // batch.min_messages, or max_messages when unset
  void reject_locally(World& w, std::uint32_t j);
  Time send_ack(World& w, std::uint32_t j, Job::Ack what);  // returns when it arrives
  // The parts of an execution's end (exec_done): its times and service wait; its outcome; the
  // settlement it sends; a slot freed. Inline in consumer.cpp; a batch run in turn calls the
  // `_in_batch` wrappers.
  void end_execution(World& w, Job& job);
  void decide_execution(World& w, Job& job, ExecResult result);
  void send_settlement(World& w, std::uint32_t j, ExecResult result);
  void slot_freed(World& w);  // the buffer may start the next; a leaving consumer may close
  void free_busy_slot(World& w);  // busy down by one, metered
  void end_execution_in_batch(World& w, Job& job);
  void decide_execution_in_batch(World& w, Job& job, ExecResult result);
  void send_settlement_in_batch(World& w, std::uint32_t j, ExecResult result);
  void slot_freed_in_batch(World& w);
  // Inline in consumer.cpp like `begin` (a start and an execution's end: M/M/10+D 2,416 -> 2,402
  // instructions per job); a batch's start calls `busy_changed_in_batch`.
  void busy_changed(World& w, int delta);
  void busy_changed_in_batch(World& w, int delta);
  // Metering (ConsumerSpec::Metering): an execution of `duration` started at `started` (counted
  // if that is after the warm-up); busy going from
  // `before` to `before + delta` opens or closes an activity period.
  void metered_start(World& w, Time run);
  void meter_execution(const World& w, Time started, Time duration);
  void meter_duration(const World& w, Time started, Time duration);  // its duration only
  void meter_activity(World& w, int before, int delta);
  std::uint64_t metered_period_ms(Time from, Time to) const;
  void ack_early(World& w, std::uint32_t j);
  void settle_acked(World& w, std::uint32_t j);
  std::uint32_t longest_running(World& w) const;  // kNoIndex: nothing executing
  void release_kept(World& w, std::uint32_t j);  // out of kept_, and out of the run

  void retire(World& w);
  void schedule_close(World& w, Time at);
};

}  // namespace brokersim
