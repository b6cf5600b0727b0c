// A platform's own cost units for a consumer group it bills (FrameworkMapping::billing): AWS
// Lambda's requests and GB-seconds; Azure Functions' executions and GB-seconds (Consumption, Flex
// Consumption, with Flex's always-ready baseline) or the instances allocated (Premium: instance-
// hours, vCPU-seconds and GB-seconds; Dedicated: instance-hours). They come from the group's
// consumers' counts in the measured span (ConsumerResult: invocations, billed_ms, active_ms) and its
// replica time (GroupFleetResult). The registry makes them run figures (`billing` in run --json,
// sweep columns, plan --cost names); the text summary prints them; a name that does not apply to
// the scenario's plans is refused saying why (billing_refusal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// The figures a bill can have, in the order run --json lists them.
enum class BillingFigure : std::uint8_t {
  Requests,              // Lambda: invocations (a batch is one)
  Executions,            // Functions Consumption and Flex: executions (a batch is one)
  GbSeconds,             // Lambda, Consumption: executions' duration x memory; Flex: on-demand instances' active time x memory
  AlwaysReadyGbSeconds,  // Flex: the always-ready instances' active time x memory
  BaselineGbSeconds,     // Flex: the always-ready instances' memory over the whole span
  InstanceHours,         // Premium (at least one instance), Dedicated
  VcpuSeconds,           // Premium: instances allocated x the SKU's cores
  MemoryGbSeconds,       // Premium: instances allocated x the SKU's memory
};
inline constexpr std::size_t kBillingFigureCount = 8;
std::string_view billing_figure_name(BillingFigure f);  // "gb_seconds", ...

struct GroupBilling {
  int group = 0;
  FrameworkMapping::Billing billing;
  std::size_t first = 0, end = 0;  // the group's consumers, [first, end) in RunResult::consumers
  bool has(BillingFigure f) const;
  // The figure for one run (has(f) must hold).
  double value(BillingFigure f, const RunResult& r) const;
  // "azure-functions, Premium plan EP1: 1 vCPU, 3.5 GB" (the summary's and the refusals' words).
  std::string describe() const;
};

// The billed groups of a scenario, in group order (none for most scenarios).
std::vector<GroupBilling> billed_groups(const Scenario& s);

// The text summary's line for one billed group.
std::string billing_line(const GroupBilling& b, const RunResult& r);

// Why a `billing.` metric name is not one of this scenario's, naming each group's framework and
// plan and what it is billed by; nullopt when the name is not a billing figure at all (a typo:
// the caller's did-you-mean applies) or when it is one of the scenario's.
std::optional<std::string> billing_refusal(const Scenario& s, const std::string& name);

}  // namespace brokersim
