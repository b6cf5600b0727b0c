// The loader's sections, one file each, called in document order by load_scenario
// (experiments/cli/loader/scenario_load.cpp): the common keys, the broker (through the registry of broker
// kinds, broker_kinds.hpp), the workload and the consumers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiments/cli/loader/checks.hpp"

namespace brokersim::loader {

struct BrokerKind;

// What later sections need from earlier ones.
struct Context {
  std::string base_dir;                  // resolves relative trace_csv paths
  std::vector<std::string> queue_names;  // sorted, as stored in BrokerSpec::queues
  const BrokerKind* broker = nullptr;    // the kind broker.kind names, once the broker is loaded
};

// Bounds that keep consumer numbering in an int and the simulated population sane.
inline constexpr std::int64_t kMaxConsumers = 1'000'000;

// common_keys.cpp: name, seed, stop, warmup_ms; then, after the consumers, faults, observe,
// limits and the sweep block.
void load_run_keys(const json& doc, Scenario& scenario);
void load_closing_keys(const json& doc, Scenario& scenario, std::int64_t consumer_count);

// broker_kinds.cpp: broker.kind picks the kind's loader, which fills context.queue_names.
BrokerSpec load_broker(const json& v, Context& context);

// The index of the queue named by `v` (a string naming one of context.queue_names).
int queue_index(const json& v, const std::string& path, const Context& context);

// workload.cpp
ProducerSpec load_producer(const json& v, const std::string& path, const Context& context);

// arrival_trace.cpp: the rows and the contents' hash of the trace file arrivals.trace_path, named
// at `path` (producers.N.arrivals.trace_csv) in errors.
void read_trace(ArrivalSpec& arrivals, const std::string& path);

// consumers.cpp: one group; `total` counts the consumers of all groups so far.
ConsumerSpec load_consumer(const json& v, const std::string& path, const Context& context, std::int64_t& total);
// A group's queues checked against the broker's once loaded: global QoS (prefetch_scope channel)
// on a quorum queue, and a group reading several queues (their types, autoscale).
void check_consumer_queues(const Scenario& s, std::size_t group, const std::string& path);
// consumers[].eta's rules that need the group's queue type and the broker kind.
void check_consumer_eta(const Scenario& s, std::size_t group, const std::string& path);

}  // namespace brokersim::loader
