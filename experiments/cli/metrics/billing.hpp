// A platform's own cost units for a consumer group it bills per execution (Lambda: requests and
// GB-seconds), from FrameworkMapping::billed_memory_mb and the group's consumers' counts in the
// measured span (ConsumerResult::invocations, billed_ms). The registry makes them run figures
// (`billing` in run --json, sweep columns, plan --cost names); the text summary prints them.
#pragma once

#include <cstdint>
#include <vector>

#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

struct GroupBilling {
  int group = 0;
  double memory_mb = 0;
  std::size_t first = 0, end = 0;  // the group's consumers, [first, end) in RunResult::consumers
  std::uint64_t requests(const RunResult& r) const;
  // Each invocation's duration rounded up to 1 ms (Consumer::billed_ms) x memory in GB.
  double gb_seconds(const RunResult& r) const;
};

// The billed groups of a scenario, in group order (none for most scenarios).
std::vector<GroupBilling> billed_groups(const Scenario& s);

}  // namespace brokersim
