// A job: one unit of business work, from its creation by a producer to its outcome.
//
// Jobs live in a pool addressed by index; a slot is reused once the broker has settled the job
// (acked, dropped or refused), so memory follows the number of jobs in the system, not the run
// length. A slot's `gen` only ever grows: every event about a job carries the gen it was
// scheduled under, and an event whose gen no longer matches (the job was requeued after a crash,
// or its slot was reused) is ignored. That is the whole cancellation mechanism.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace brokersim {

using sim::Time;

// Every job ends in exactly one of these (docs/scenario.md). `None` means no decision yet.
enum class Outcome : std::uint8_t {
  None,
  RejectedAtPublish,
  ExpiredInQueue,
  ExpiredInTransit,
  ExpiredBeforeStart,
  CompletedOnTime,
  CompletedLate,
  TimedOut,
  Failed,
  Lost,
  DeadLettered,
  InSystem,
};
inline constexpr std::size_t kOutcomeCount = 12;
std::string_view outcome_name(Outcome o);  // the docs/scenario.md key, e.g. "expired_in_queue"
using OutcomeCounts = std::array<std::uint64_t, kOutcomeCount>;

// Why a job ran again (a duplicate execution, docs/outcomes.md `duplicate_executions_by_cause`):
// what made an execution not the last, or let two copies run. `None`: no cause known (a run
// that reports one fails its end-of-run check). Names and order: kDuplicateCauses (metrics.hpp).
enum class DuplicateCause : std::uint8_t {
  None,
  Lapse,            // a Service Bus lock or an SQS visibility timeout lapsed before a settlement took effect
  ShutdownGrace,    // a leaving consumer's connection closed at the end of its shutdown grace
  Crash,            // the consumer crashed
  ConsumerTimeout,  // RabbitMQ's consumer timeout (a closed channel, or 4.3's per-delivery return)
  BrokerRestart,    // the broker went down and closed every connection (RabbitMQ)
  FailedRetry,      // the execution failed and the broker offered it again (Service Bus abandon, SQS no delete)
  WorkerLost,       // the process running it was killed and the client requeued it (faults[].kill_process)
};
inline constexpr std::size_t kDuplicateCauseCount = 8;

// The reasons a job may run again, most recent last: each cut or lapse adds one, each duplicate
// execution takes the most recent. Packed 4 bits each; beyond 8 the oldest is forgotten (it
// would only matter to a job started more than 8 times again after that).
struct PendingCauses {
  std::uint32_t bits = 0;
  std::uint8_t n = 0;
  void push(DuplicateCause c) {
    bits = (bits << 4) | static_cast<std::uint32_t>(c);
    if (n < 8) ++n;
  }
  DuplicateCause pop() {
    if (n == 0) return DuplicateCause::None;
    const auto c = static_cast<DuplicateCause>(bits & 0xf);
    bits >>= 4;
    --n;
    return c;
  }
};

// Where a job is now; a job is in exactly one place.
enum class Where : std::uint8_t {
  Created,    // created, not yet published (publish delay)
  Ready,      // in a broker queue, ready for delivery
  Transit,    // sent by the broker, not yet received
  Local,      // received by a consumer, waiting for a slot
  Executing,  // running in a slot
  Settling,   // decided by the consumer; its ack/nack is on its way to the broker
  DeadLettering,  // on its way to a dead-letter target queue (`queue` names the target)
  Deferred,   // set aside by its consumer (Azure Service Bus Defer): in its queue, receivable only
              // by sequence number (its client asks for it if receive_deferred_after_ms is set)
};

inline constexpr std::uint32_t kNoIndex = 0xffffffffu;

// Laid out by when the fields are touched, so that a job costs few cache lines in a large
// fleet. Between its delivery and its start a job waits in a prefetch buffer, and between
// its start and its execution's end it runs: with thousands of consumers the record has left
// the cache by each of those two moments, and each line a moment reads is a miss. The first line
// holds all a start reads and writes (docs/performance.md): the event's gen check,
// where it is, the admission inputs, the service time and the start's own fields. An execution's
// end reads it and the second line (its finish, its outcome, when its settlement arrives); a
// receipt, the two. The lines after them are touched only while the job is at the broker and on
// its way to a consumer (creation, publish and delivery follow one another closely) and at its
// settlement, which follows the execution's end by an ack latency. Aligned so that each group is
// one line (cachegrind, the capacity baseline at 4,000 consumers: docs/performance.md).
struct alignas(64) Job {
  // --- line 0: read at every event about the job, and all a start reads and writes
  std::uint32_t gen = 0;         // see the file comment
  std::int32_t consumer = -1;    // the consumer it was last delivered to
  // Duplicate causes (docs/outcomes.md): this copy started in its current delivery; what to
  // blame if the message comes back with no cut (set when the execution ends: a lapse, or a
  // failed job's retry); its last start, on which consumer's which connection (-1: none), and
  // when that run's settlement reaches the broker (ran_settles, line 1: a cut before then
  // returns the run).
  std::int32_t ran_at = -1;
  std::uint32_t ran_connection = 0;
  Where where = Where::Created;
  bool ran_here = false;
  DuplicateCause unsettled = DuplicateCause::None;
  bool counted = false;          // created after warm-up: enters the statistics
  std::uint8_t executions = 0;   // how often it started (beyond 1: duplicate executions)
  // An ack ahead of the outcome (consumers[].ack before-start / on-receipt), this delivery's:
  // OnTheWire, sent as the job started and not yet at the broker; Released, the broker is done
  // with the message while the client still has the job (it leaves when the client decides, or
  // is `lost` with the client); Failed, the broker refused it (an SQS delete during an outage,
  // or one whose receipt handle was no longer the latest): the client sends nothing more, so the
  // message comes back when its visibility lapses. World::sent clears it.
  enum class Early : std::uint8_t { None, OnTheWire, Released, Failed } early = Early::None;
  // A stale copy a client still holds after the broker took the message back (World::take_back):
  // it runs and settles like a delivery, but has no outcome and no trace row of its own.
  bool ghost = false;
  // Received at the instant it was created (World::receive_at sets it for each delivery): a
  // first start then at the receipt's instant is one at once (started_at_once), read without
  // `created`'s line.
  bool received_at_creation = false;
  Time deadline = sim::kNever;   // absolute, true clock (what "on time" is judged on)
  Time expires_at = sim::kNever; // absolute, producer's clock: what the job carries
  Time service = 0;              // work it needs, drawn at creation
  // Lifecycle times for the trace, -1 = did not happen. received, started and finished belong
  // to the last delivery (World::sent clears them), so they never precede `delivered`.
  Time received = -1, started = -1;

  // --- line 1: its execution's end, its receipt and its delivery
  std::int32_t queue = -1;       // the queue it is in, or was last delivered from
  std::uint32_t unacked_pos = kNoIndex;  // position in its consumer's unacked list
  Outcome decision = Outcome::None;
  enum class Ack : std::uint8_t { Ack, Reject, Requeue, Defer } ack = Ack::Ack;  // what the consumer sent
  bool settled_resting = false;  // resting, decided, in a queue no consumer reads
  bool stale_on_receipt = false; // expired_before_start with no local wait
  bool persistent = false;               // survives a broker restart
  bool redelivered = false;      // RabbitMQ's flag: it was delivered before
  std::uint16_t deaths = 0;
  Time created = 0;
  Time delivered = -1;           // its last delivery
  Time finished = -1, ended = -1;
  Time ran_settles = sim::kNever;  // World::sent resets it: a start need not touch this line
  // Its first start, by any copy it descends from, once a later delivery cleared `started`
  // (World::sent saves it then; -1: `started` is the first, or it never started): read it as
  // first_started(). A first start writes nothing here.
  Time first_started_saved = -1;
  Time first_started() const { return first_started_saved >= 0 ? first_started_saved : started; }
  // A start or a copy of `started` that is not the delivery's first keeps the first start
  // (World::sent does the same as it clears `started`).
  void keep_first_start() {
    if (first_started_saved < 0 && started >= 0) first_started_saved = started;
  }

  // --- lines 2 and 3: at the broker, on its way, and at its settlement
  std::uint64_t id = 0;          // creation order, from 0
  std::int32_t producer = -1;
  std::uint32_t bytes = 0;       // message body size
  // Deferred (Azure Service Bus) by a client that will receive it back by its sequence number
  // (receive_deferred_after_ms): not resting, it comes back.
  bool deferred_back = false;
  PendingCauses again;           // why it may start again (while it has no ghost: JobCopies then)
  std::uint32_t redeliveries = 0;
  Time message_ttl = -1;         // per-message TTL, -1 = none (stripped when dead-lettered)

  // Broker-side state in its current queue.
  std::uint64_t seq = 0;         // position: requeue puts it back here
  Time queue_expiry = sim::kNever;
  Time ready_since = 0;          // entered (or re-entered) the ready list

  Time published = -1;
  // The queue wait to the expiry that decided it, while that expiry can still be its outcome
  // (Ledger::expired_in_queue; -1: none): counted if the outcome stays expired_in_queue. Read
  // by the outcome's count at the settlement, which reads this line anyway (`back`).
  Time queue_expiry_wait = -1;
  // Its time in earlier deliveries (docs/outcomes.md, the trace's stage_* columns): from each
  // delivery before the last to the broker having the message back (`back`, stamped by the
  // ledger when it leaves the unacked count). The rest of publish -> last delivery was at the
  // broker.
  Time stage_held = 0;
  Time back = -1;
  // Its ETA (producers[].countdown_ms), absolute, in the producer's clock: a consumer whose `eta`
  // holds keeps it until its own clock reaches this. Read only by such a consumer's receipt.
  Time eta = sim::kNever;
};
static_assert(sizeof(Job) == 256, "a job is four cache lines; see the layout comment");
static_assert(offsetof(Job, started) + sizeof(Time) == 64 && offsetof(Job, queue) == 64 &&
                  offsetof(Job, first_started_saved) + sizeof(Time) == 128 && offsetof(Job, id) == 128,
              "a start touches the job's first line only, an execution's end its first two");

class JobPool {
 public:
  std::uint32_t allocate() {
    if (!free_.empty()) {
      std::uint32_t i = free_.back();
      free_.pop_back();
      const std::uint32_t gen = jobs_[i].gen + 1;
      jobs_[i] = Job{};
      jobs_[i].gen = gen;
      ++live_;
      return i;
    }
    jobs_.emplace_back();
    ++live_;
    return static_cast<std::uint32_t>(jobs_.size() - 1);
  }
  void release(std::uint32_t i) {
    ++jobs_[i].gen;
    jobs_[i].where = Where::Created;
    jobs_[i].decision = Outcome::None;
    free_.push_back(i);
    --live_;
  }
  Job& operator[](std::uint32_t i) { return jobs_[i]; }
  const Job& operator[](std::uint32_t i) const { return jobs_[i]; }
  std::size_t live() const { return live_; }
  std::size_t capacity() const { return jobs_.size(); }
  // Visit every live job (end of run). Free slots are recognised by membership in free_.
  template <class F> void for_each_live(F&& f) {
    std::vector<bool> is_free(jobs_.size(), false);
    for (auto i : free_) is_free[i] = true;
    for (std::uint32_t i = 0; i < jobs_.size(); ++i)
      if (!is_free[i]) f(i, jobs_[i]);
  }

 private:
  std::vector<Job> jobs_;
  std::vector<std::uint32_t> free_;
  std::size_t live_ = 0;
};

}  // namespace brokersim
