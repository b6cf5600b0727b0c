// What every part of a run shares: the clock and pending events, the job pool, the ledger, the
// clients and the broker. The simulation owns it; producers, consumers and the broker act on it.
// (ns-3 and SimPy give their models a global simulator for the same purpose; here it is passed
// explicitly, so two runs can go on in two threads.)
#pragma once

#include <cstdint>
#include <vector>

#include "models/consumer.hpp"
#include "models/events.hpp"
#include "models/job.hpp"
#include "models/ledger.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"
#include "models/workload.hpp"
#include "sim/event_queue.hpp"

namespace brokersim {

class Broker;

struct World {
  World(const Scenario& scenario, const RunOptions& options) : s(scenario), opt(options), ledger(scenario, options) {}

  void at(Time t, Ev kind, std::uint32_t target, std::uint32_t tag = 0, std::uint32_t aux = 0) {
    if (t < now) throw InvariantError("event scheduled in the past");
    events.push(t, static_cast<std::uint8_t>(kind), static_cast<std::uint32_t>(kind), target, tag, aux);
  }
  static Time sample_ns(const sim::Distribution& d, sim::Rng& rng) { return sim::round_ns(d.sample(rng)); }

  // The last decision about a job; it stays open until the job leaves (a consumer reading a
  // dead-letter queue may decide again).
  void decide(Job& job, Outcome o) {
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

  const Scenario& s;
  const RunOptions& opt;
  sim::EventQueue events;
  Time now = 0;
  JobPool jobs;
  Ledger ledger;
  std::vector<Producer> producers;
  std::vector<Consumer> consumers;  // numbered across groups
  Broker* broker = nullptr;
};

}  // namespace brokersim
