#include "experiments/cli/metrics/billing.hpp"

#include <algorithm>
#include <array>

#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using Plan = FrameworkMapping::Billing::Plan;

constexpr std::array<std::string_view, kBillingFigureCount> kNames{
    "requests", "executions", "gb_seconds", "always_ready_gb_seconds", "baseline_gb_seconds", "instance_hours",
    "vcpu_seconds", "memory_gb_seconds"};

std::uint64_t sum_of(const RunResult& r, std::size_t from, std::size_t to, std::uint64_t ConsumerResult::*field) {
  std::uint64_t n = 0;
  for (std::size_t i = from; i < std::min(to, r.consumers.size()); ++i) n += r.consumers[i].*field;
  return n;
}

const GroupFleetResult& fleet_of(const RunResult& r, int group) {
  static const GroupFleetResult none{};
  return static_cast<std::size_t>(group) < r.groups.size() ? r.groups[static_cast<std::size_t>(group)] : none;
}

// What a plan is billed by, for a refusal: "the GB-seconds and requests of its invocations".
std::string billed_by(const GroupBilling& b) {
  switch (b.billing.plan) {
    case Plan::Lambda: return "requests and GB-seconds of its invocations (billing.requests, billing.gb_seconds)";
    case Plan::FunctionsConsumption:
      return b.billing.memory_mb > 0
                 ? "executions and GB-seconds of its executions (billing.executions, billing.gb_seconds)"
                 : "executions (billing.executions); its GB-seconds need the memory an execution uses: give consumers." +
                       std::to_string(b.group) + ".framework.execution_memory_mb";
    case Plan::FunctionsFlex:
      return "executions and GB-seconds of its instances while they execute, and the always-ready baseline (billing.executions, "
             "billing.gb_seconds, billing.always_ready_gb_seconds, billing.baseline_gb_seconds)";
    case Plan::FunctionsPremium:
      return "the vCPU-seconds and GB-seconds of the instances allocated, at least one at all times, not per execution "
             "(billing.instance_hours, billing.vcpu_seconds, billing.memory_gb_seconds)";
    case Plan::FunctionsDedicated:
      return "the App Service plan's instance-hours, not per execution (billing.instance_hours)";
    case Plan::None: break;
  }
  return "nothing";
}

}  // namespace

std::string_view billing_figure_name(BillingFigure f) { return kNames[static_cast<std::size_t>(f)]; }

bool GroupBilling::has(BillingFigure f) const {
  using F = BillingFigure;
  switch (billing.plan) {
    case Plan::Lambda: return f == F::Requests || f == F::GbSeconds;
    case Plan::FunctionsConsumption: return f == F::Executions || (f == F::GbSeconds && billing.memory_mb > 0);
    case Plan::FunctionsFlex:
      return f == F::Executions || f == F::GbSeconds || f == F::AlwaysReadyGbSeconds || f == F::BaselineGbSeconds;
    case Plan::FunctionsPremium: return f == F::InstanceHours || f == F::VcpuSeconds || f == F::MemoryGbSeconds;
    case Plan::FunctionsDedicated: return f == F::InstanceHours;
    case Plan::None: break;
  }
  return false;
}

// Lambda bills duration "rounded up to the nearest millisecond" (AWS News Blog, "New for AWS Lambda –
// 1ms Billing Granularity", 2020-12-01), Consumption the same with at least 100 ms an execution
// (the metering's minimum, in billed_ms), times the memory: GB-seconds with 1 GB = 1024 MB. Flex
// bills each instance's active periods as metered (active_ms) times its memory, the always-ready
// instances (the group's first members) apart, and their memory over the whole span as the
// baseline. Premium bills the instances allocated, at least one.
double GroupBilling::value(BillingFigure f, const RunResult& r) const {
  const double gb = billing.memory_mb / 1024.0;
  const std::size_t ready_end = std::min(end, first + static_cast<std::size_t>(billing.always_ready));
  switch (f) {
    case BillingFigure::Requests:
    case BillingFigure::Executions: return static_cast<double>(sum_of(r, first, end, &ConsumerResult::invocations));
    case BillingFigure::GbSeconds:
      if (billing.plan == Plan::FunctionsFlex)
        return static_cast<double>(sum_of(r, ready_end, end, &ConsumerResult::active_ms)) / 1000.0 * gb;
      return static_cast<double>(sum_of(r, first, end, &ConsumerResult::billed_ms)) / 1000.0 * gb;
    case BillingFigure::AlwaysReadyGbSeconds:
      return static_cast<double>(sum_of(r, first, ready_end, &ConsumerResult::active_ms)) / 1000.0 * gb;
    case BillingFigure::BaselineGbSeconds: return billing.always_ready * gb * r.measured_s;
    case BillingFigure::InstanceHours:
      return (billing.plan == Plan::FunctionsPremium ? fleet_of(r, group).at_least_one_seconds : fleet_of(r, group).consumer_seconds) /
             3600.0;
    case BillingFigure::VcpuSeconds: return fleet_of(r, group).at_least_one_seconds * billing.vcpus;
    case BillingFigure::MemoryGbSeconds: return fleet_of(r, group).at_least_one_seconds * gb;
  }
  return 0;
}

std::string GroupBilling::describe() const {
  const std::string mb = fmt("%.0f", billing.memory_mb);
  switch (billing.plan) {
    case Plan::Lambda: return "aws-lambda, MemorySize " + mb + " MB";
    case Plan::FunctionsConsumption:
      return "azure-functions, hosting_plan consumption, " +
             (billing.memory_mb > 0 ? mb + " MB an execution" : std::string("execution_memory_mb not given"));
    case Plan::FunctionsFlex:
      return "azure-functions, hosting_plan flex-consumption, " + mb + " MB instances, " + std::to_string(billing.always_ready) +
             " always ready";
    case Plan::FunctionsPremium:
      return "azure-functions, hosting_plan premium, " + billing.sku + ": " + fmt("%.0f", billing.vcpus) +
             (billing.vcpus == 1 ? " vCPU, " : " vCPUs, ") + fmt(billing.memory_mb / 1024.0, 3) + " GB";
    case Plan::FunctionsDedicated:
      return "azure-functions, hosting_plan dedicated" + (billing.sku.empty() ? std::string() : ", " + billing.sku);
    case Plan::None: break;
  }
  return "";
}

// Consumers are numbered group after group, members() each (models/simulation.cpp).
std::vector<GroupBilling> billed_groups(const Scenario& s) {
  std::vector<GroupBilling> out;
  std::size_t first = 0;
  for (std::size_t g = 0; g < s.consumers.size(); ++g) {
    const std::size_t end = first + static_cast<std::size_t>(s.consumers[g].members());
    for (const FrameworkMapping& m : s.frameworks)
      if (m.group == static_cast<int>(g) && m.billing.plan != Plan::None)
        out.push_back(GroupBilling{static_cast<int>(g), m.billing, first, end});
    first = end;
  }
  return out;
}

std::string billing_line(const GroupBilling& b, const RunResult& r) {
  using F = BillingFigure;
  const auto count = [&](F f) { return grouped(static_cast<std::uint64_t>(b.value(f, r))); };
  const auto real = [&](F f) { return fmt("%.3f", b.value(f, r)); };
  std::string line = "Billed over the measured " + fmt("%.0f", r.measured_s) + " s, group " + std::to_string(b.group) + " (";
  switch (b.billing.plan) {
    case Plan::Lambda:
      return line + "MemorySize " + fmt("%.0f", b.billing.memory_mb) + " MB): " + count(F::Requests) + " requests, " +
             real(F::GbSeconds) + " GB-seconds (each invocation's duration rounded up to 1 ms x memory)\n";
    case Plan::FunctionsConsumption:
      line += b.describe() + "): " + count(F::Executions) + " executions";
      if (!b.has(F::GbSeconds)) return line + " (GB-seconds need framework.execution_memory_mb)\n";
      return line + ", " + real(F::GbSeconds) +
             " GB-seconds (each execution's duration rounded up to 1 ms, at least 100 ms, x memory rounded up to 128 MB)\n";
    case Plan::FunctionsFlex:
      return line + b.describe() + "): " + count(F::Executions) + " executions, " + real(F::GbSeconds) + " GB-seconds on demand, " +
             real(F::AlwaysReadyGbSeconds) + " GB-seconds executing on always-ready instances, " + real(F::BaselineGbSeconds) +
             " baseline GB-seconds (each instance's active periods, at least 1 s, rounded up to 100 ms, x instance memory)\n";
    case Plan::FunctionsPremium:
      return line + b.describe() + "): " + fmt("%.3f", b.value(F::InstanceHours, r)) + " instance-hours, " + real(F::VcpuSeconds) +
             " vCPU-seconds, " + real(F::MemoryGbSeconds) + " GB-seconds (the instances allocated, at least one at all times)\n";
    case Plan::FunctionsDedicated:
      return line + b.describe() + "): " + fmt("%.3f", b.value(F::InstanceHours, r)) + " instance-hours of the App Service plan\n";
    case Plan::None: break;
  }
  return "";
}

std::optional<std::string> billing_refusal(const Scenario& s, const std::string& name) {
  if (name.rfind("billing.", 0) != 0) return std::nullopt;
  const std::string rest = name.substr(8);
  // billing.FIGURE, or billing.groups.G.FIGURE
  std::string figure = rest;
  std::optional<int> group;
  if (rest.rfind("groups.", 0) == 0) {
    const std::size_t dot = rest.find('.', 7);
    if (dot == std::string::npos) return std::nullopt;
    const std::string index = rest.substr(7, dot - 7);
    if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    group = std::stoi(index);
    figure = rest.substr(dot + 1);
  }
  const auto it = std::find(kNames.begin(), kNames.end(), figure);
  if (it == kNames.end()) return std::nullopt;
  const auto f = static_cast<BillingFigure>(it - kNames.begin());
  const std::vector<GroupBilling> billed = billed_groups(s);
  std::string why;
  for (const GroupBilling& b : billed) {
    if (group && b.group != *group) continue;
    if (b.has(f)) return std::nullopt;
    why += (why.empty() ? "" : "; ") + std::string("consumer group ") + std::to_string(b.group) + " (framework " + b.describe() +
           ") is billed by " + billed_by(b);
  }
  if (why.empty()) {
    if (group)
      return name + " is not a figure of this scenario: consumer group " + std::to_string(*group) +
             " is billed by no platform (billing figures come with framework aws-lambda, with batches or MemorySize, or "
             "azure-functions)";
    return name + " is not a figure of this scenario: no consumer group is billed by a platform (billing figures come with "
                  "framework aws-lambda, with batches or MemorySize, or azure-functions)";
  }
  return name + " is not a figure of this scenario: " + why;
}

}  // namespace brokersim
