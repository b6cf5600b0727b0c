// What every part of a run shares: the kernel (sim::Simulator: the clock, the pending events and
// the loop), the job pool and the job lifecycle every broker follows, the ledger, the clients and
// the broker. The simulation owns it; producers, consumers and the broker act on it. (ns-3 and
// SimPy give their models a global simulator for the same purpose; here it is passed explicitly,
// so two runs can go on in two threads.)
#pragma once

#include <algorithm>
#include <cassert>
#include <string>
#include <cstdint>
#include <vector>

#include "models/consumer.hpp"
#include "models/events.hpp"
#include "models/job.hpp"
#include "models/ledger.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/simulator.hpp"

namespace brokersim {

class Broker;

struct World : sim::Simulator {
  World(const Scenario& scenario, const RunOptions& options)
      : s(scenario), opt(options), ledger(scenario, options), horizon(follow_horizon(scenario)) {}

  // A timed run measures up to stop.time_ms, then follows the jobs created in its span until
  // they leave (docs/outcomes.md, "Which jobs count"): arrivals, autoscaler syncs and the
  // broker's timers go on so that those jobs meet the load they would have met, for at most as
  // long again as the measured span. The horizon is where that ends (kNever without a stop time).
  static Time follow_horizon(const Scenario& sc) {
    if (!sc.stop_time) return sim::kNever;
    return *sc.stop_time + sc.stop_follow.value_or(*sc.stop_time - std::min(sc.warmup, *sc.stop_time));
  }
  // A periodic timer's next firing at `next` is worth scheduling: before the horizon of a timed
  // run; for a run that stops on its jobs, while something else can still happen.
  bool tick_worth(Time next) const { return s.stop_time ? next <= horizon : !only_ticks_pending(); }

  // Schedules an event of the model's kind, in its priority class (models/events.hpp).
  void at(Time t, Ev kind, std::uint32_t target, std::uint32_t tag = 0, std::uint32_t aux = 0) {
    if (t < now) [[unlikely]] scheduled_in_the_past();
    schedule(t, static_cast<std::uint8_t>(priority_of(kind)), static_cast<std::uint32_t>(kind), target, tag, aux);
  }
  // Job j, just sent (World::sent), reaches its consumer at t. What the receipt needs besides
  // the job's first line is settled here, while the job's lines are in the cache: whether it
  // arrives at its creation's instant (Job::received_at_creation), and its transit wait, which
  // the event carries (kLongTransit: at least 2^32 - 1 ns, read from `delivered` then). A
  // receipt then reads one line of the job (docs/performance.md).
  static constexpr std::uint32_t kLongTransit = 0xffffffffu;
  void receive_at(Time t, std::uint32_t j) {
    Job& job = jobs[j];
    job.received_at_creation = t == job.created;
    const Time transit = t - job.delivered;
    at(t, Ev::Receive, j, job.gen, transit < Time{kLongTransit} ? static_cast<std::uint32_t>(transit) : kLongTransit);
  }
  // Out of line and cold: building the message would otherwise sit in every caller's hot path.
  [[noreturn, gnu::cold, gnu::noinline]] static void scheduled_in_the_past() {
    throw InvariantError("event scheduled in the past");
  }
  static Time sample_ns(const sim::Distribution& d, sim::Rng& rng) { return sim::round_ns(d.sample(rng)); }

  // The last decision about a job; it stays open until the job leaves (a consumer reading a
  // dead-letter queue may decide again), but not once the job rests decided where no consumer
  // reads: then its outcome and its time are kept (Ledger::decided_for_good).
  void decide(Job& job, Outcome o) {
    if (Ledger::decided_for_good(job)) return;
    job.decision = o;
    job.ended = now;
  }
  // The broker is done with the job: its outcome is final and its pool slot is free again.
  void leave(std::uint32_t j) {
    Job& job = jobs[j];
    ledger.count_outcome(job, job.decision);
    ledger.job_left(job);
    jobs.release(j);
  }

  // A broker sends the job from queue q to consumer ci (Ev::Receive follows after the delivery
  // latency): its place and trace times, and the counts every broker keeps alike. `again`: the
  // broker counts it as a redelivery (RabbitMQ's redelivered flag, a Service Bus delivery count).
  void sent(Job& job, int q, int ci, bool again) {
    if (again) {
      ++job.redeliveries;
      ++ledger.r.redeliveries;
    }
    // The stages before this delivery (docs/outcomes.md): the last one lasted until the broker
    // had the message back (Job::back), then it was the broker's again.
    if (job.delivered >= 0) {
      if (job.back < job.delivered || job.back > now)
        throw InvariantError("job " + std::to_string(job.id) + " was delivered again before the broker had it back");
      job.stage_held += job.back - job.delivered;
    }
    job.back = -1;
    // This copy ran in its last delivery and the message came back: why it may run again.
    if (job.ran_here) {
      ledger.may_run_again(job, returned_because(job));
      job.ran_here = false;
    }
    job.ran_settles = sim::kNever;  // the next run's is set when it ends (Consumer::exec_done), not as it starts
    job.keep_first_start();
    job.received = job.started = job.finished = -1;  // this delivery's, when they happen
    job.early = Job::Early::None;
    job.redelivered = true;
    job.where = Where::Transit;
    job.consumer = ci;
    job.queue = q;
    job.delivered = now;
    ledger.update_resting(job);
    ledger.delivered(job, q, now);
  }

  // A broker's settle calls this for an ack (Job::Ack::Ack) before it lets the message leave: an
  // early ack (consumers[].ack before-start) of a job still executing releases the message at the
  // broker (its credit, lock or visibility, unacked count are settled as for any ack) but the
  // job stays with its client, which decides it and makes it leave (true: do not leave it). A job
  // whose execution ended before its early ack arrived leaves now with that decision (false); one
  // whose client lost its connection meanwhile is `lost` (false).
  bool kept_by_client(std::uint32_t j) {
    Job& job = jobs[j];
    if (job.early != Job::Early::OnTheWire) return false;
    job.early = Job::Early::Released;
    if (job.where != Where::Executing) return false;
    job.back = -1;  // the client holds it from its delivery to its end (docs/outcomes.md stages)
    Consumer& c = consumers[static_cast<std::size_t>(job.ran_at)];
    if (c.connection() != job.ran_connection) {
      decide(job, Outcome::Lost);
      return false;
    }
    c.keep(*this, j);
    return true;
  }

  // The broker takes back a message a client still holds (its lock or visibility lapsed): the
  // message is the broker's again at the returned index, which carries the job (its identity,
  // times and decision so far); the client goes on with the stale copy at j, now a ghost that
  // runs and settles but is not a job of its own. Pending events for j stay valid: the client's
  // copy keeps its index and gen, which is why the broker's copy is the one that moves.
  // `why`: the broker's clock that ran out (a lock or visibility lapse, 4.3's consumer timeout),
  // the cause of a duplicate execution if both copies run.
  std::uint32_t take_back(std::uint32_t j, DuplicateCause why = DuplicateCause::Lapse) {
    const std::uint32_t live = jobs.allocate();  // may move the pool: no Job& across this
    const std::uint32_t gen = jobs[live].gen;
    jobs[live] = jobs[j];
    jobs[live].gen = gen;
    jobs[live].ghost = false;
    jobs[live].ran_here = false;  // the client's copy ran (or runs), not the broker's
    jobs[j].ghost = true;
    ledger.copy_made(jobs[live]);
    // If the client's copy already started, the broker's copy running is the duplicate; if not,
    // whichever of the two starts second is (Ledger::starts), and the ghost carries the cause.
    if (jobs[j].ran_here) ledger.may_run_again(jobs[live], why);
    else jobs[j].unsettled = why;
    return live;
  }
  // Why a copy that ran in its last delivery came back: its connection was cut before its
  // settlement arrived (a crash, a shutdown grace's end, a channel the broker closed), or else
  // what its execution's end left (Job::unsettled: a failed job's retry, a lapse).
  DuplicateCause returned_because(const Job& job) const {
    if (job.ran_at >= 0) {
      const Consumer::Cut* cut = consumers[static_cast<std::size_t>(job.ran_at)].cut_of(job.ran_connection);
      if (cut && cut->at < job.ran_settles) return cut->why;
    }
    return job.unsettled;
  }
  // The broker is done with a ghost (its settlement arrived, or its client is gone).
  void drop_ghost(std::uint32_t j) {
    ledger.copy_gone(jobs[j]);
    jobs.release(j);
  }

  const Scenario& s;
  const RunOptions& opt;
  JobPool jobs;
  Ledger ledger;
  std::vector<Producer> producers;
  std::vector<Consumer> consumers;  // numbered across groups
  Broker* broker = nullptr;
  bool broker_hears_starts = false;  // call Broker::execution_started (a broker sets it in start())

  // Periodic ticks (is_tick kinds) keep no run alive by themselves: a run that stops on its jobs
  // goes on only while something else can happen. Scheduled only through schedule_tick and
  // counted down by tick_fired, so the count cannot drift from the pending set.
  void schedule_tick(Time t, Ev kind, std::uint32_t target) {
    assert(is_tick(kind));
    at(t, kind, target);
    ++ticks_pending_;
  }
  // Called by the Observe and Scale handlers only (not on every event's path).
  void tick_fired([[maybe_unused]] Ev kind) {
    assert(is_tick(kind) && ticks_pending_ > 0);
    --ticks_pending_;
  }
  bool only_ticks_pending() const { return events.size() <= ticks_pending_; }
  Time horizon;  // follow_horizon(s)

 private:
  std::size_t ticks_pending_ = 0;
};

}  // namespace brokersim
