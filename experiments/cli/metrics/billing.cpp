#include "experiments/cli/metrics/billing.hpp"

#include <algorithm>

namespace brokersim {

std::uint64_t GroupBilling::requests(const RunResult& r) const {
  std::uint64_t n = 0;
  for (std::size_t i = first; i < std::min(end, r.consumers.size()); ++i) n += r.consumers[i].invocations;
  return n;
}

// AWS bills duration "rounded up to the nearest millisecond" (AWS News Blog, "New for AWS Lambda –
// 1ms Billing Granularity", 2020-12-01) times the configured memory: GB-seconds with 1 GB = 1024 MB.
double GroupBilling::gb_seconds(const RunResult& r) const {
  std::uint64_t ms = 0;
  for (std::size_t i = first; i < std::min(end, r.consumers.size()); ++i) ms += r.consumers[i].billed_ms;
  return static_cast<double>(ms) / 1000.0 * memory_mb / 1024.0;
}

// Consumers are numbered group after group, members() each (models/simulation.cpp).
std::vector<GroupBilling> billed_groups(const Scenario& s) {
  std::vector<GroupBilling> out;
  std::size_t first = 0;
  for (std::size_t g = 0; g < s.consumers.size(); ++g) {
    const std::size_t end = first + static_cast<std::size_t>(s.consumers[g].members());
    for (const FrameworkMapping& m : s.frameworks)
      if (m.group == static_cast<int>(g) && m.billed_memory_mb > 0)
        out.push_back(GroupBilling{static_cast<int>(g), m.billed_memory_mb, first, end});
    first = end;
  }
  return out;
}

}  // namespace brokersim
