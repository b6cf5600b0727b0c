// `fit LOG.csv --into SCENARIO.json`: the user's scenario (imported with `brokersim import`, or
// written by hand) with only what the log tells replaced: each log queue's producer (its arrivals
// and service law), the fleet of the group reading it where the log names workers, and the
// failures' chance. The broker, its queues, the other producers and groups, the framework
// settings, faults and the rest are the scenario's own.
#pragma once

#include <string>
#include <vector>

#include "experiments/cli/fit/fitted_scenario.hpp"

namespace brokersim::fit {

struct IntoOptions {
  std::string path;    // --into
  std::string queue;   // --into-queue: the scenario's queue a log without (or with one) queue maps onto; "" to find it
  std::string out_dir; // where the result is written: the folder its relative files are read from
};

// Before the log is read: the scenario loads, and --into-queue names one of its queues (a
// ScenarioError otherwise, as fit_into would give after the fits).
void validate_into(const IntoOptions& into);

// The scenario with the log's fit in it, loaded by brokersim's loader before it is returned. Sets
// each queue's producer, group and failure mapping (q.producer, q.group, q.failure_*), and appends
// to `said` one sentence per thing replaced, kept or added. A ScenarioError (exit status 2) when
// the scenario does not load, when the log's queues cannot be told apart in it (several queues
// with producers and no --into-queue, a log queue the scenario lacks, several producers or, with
// a worker column, several groups on one queue), or when the result does not load.
ojson fit_into(std::vector<QueueFit>& queues, const JobLog& log, const WriteOptions& write, const IntoOptions& into,
               std::vector<std::string>& said);

}  // namespace brokersim::fit
