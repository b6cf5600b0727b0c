// An azure-functions group's bill in Microsoft's units (experiments/cli/metrics/billing.cpp,
// docs/framework-azure-functions.md "Billing"): executions and GB-seconds on the Consumption and
// Flex Consumption plans, the instances allocated on Premium and Dedicated, exact on small
// deterministic cases; and the refusal of a cost that does not apply, naming framework and plan.
#include <doctest/doctest.h>

#include <string>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

namespace functions_billing_test {

using brokersim::test::load_error;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;
using brokersim::test::ScratchDir;

// A Service Bus queue, no latencies, 10 s measured; `producers` and one consumer group `consumer`.
std::string sb_billed(const std::string& producers, const std::string& consumer) {
  return R"({"seed": 3, "stop": {"time_ms": 10000},
  "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
  "producers": [)" + producers + R"(], "consumers": [)" + consumer + "]}";
}

std::string at(const std::string& times, const std::string& service) {
  return R"({"queue": "q", "arrivals": {"at_ms": [)" + times + R"(]}, "service_ms": )" + service + "}";
}

std::string functions(const std::string& settings, const std::string& group = "") {
  return R"({"queue": "q")" + group + R"(, "framework": {"name": "azure-functions")" + settings + "}}";
}

double billed(const brokersim::test::Run& run, const std::string& figure) {
  return run.json()["billing"]["groups"]["0"][figure].get<double>();
}

TEST_CASE("functions billing: Consumption bills each execution at least 100 ms, memory rounded up to 128 MB") {
  // Three executions of 50.4 ms, one of 150.2 ms, at 200 MB an execution: billed 100, 100, 100
  // and 151 ms at 256 MB: 0.451 s x 0.25 GB.
  const auto run = run_scenario(sb_billed(at("0, 1000, 2000", "50.4") + ", " + at("3000", "150.2"),
                                          functions(R"(, "execution_memory_mb": 200)")));
  const auto json = run.json();
  CHECK(json["billing"]["executions"] == 4);
  CHECK(json["billing"]["gb_seconds"].get<double>() == doctest::Approx(0.451 * 0.25).epsilon(1e-12));
  CHECK(json["billing"]["groups"]["0"]["executions"] == 4);
  CHECK(!json["billing"].contains("instance_hours"));
  // A batched function: one invocation for the three messages at 0 (3 x 50.4 ms, in turn), billed
  // 152 ms.
  const auto batched = run_scenario(sb_billed(at("0, 0, 0", "50.4"),
                                              functions(R"(, "isBatched": true, "execution_memory_mb": 128)")));
  CHECK(billed(batched, "executions") == 1);
  CHECK(billed(batched, "gb_seconds") == doctest::Approx(0.152 * 0.125).epsilon(1e-12));
  // Without the memory an execution uses, executions only.
  const auto bare = run_scenario(sb_billed(at("0", "50"), functions("")));
  CHECK(bare.json()["billing"].dump() == R"({"executions":1,"groups":{"0":{"executions":1}}})");
}

TEST_CASE("functions billing: Flex bills each instance's active periods, at least 1 s then per 100 ms, and the always-ready baseline") {
  // One 2048 MB instance. Active 0-100 (1000 ms billed), 500-600 (1000), 1000-2200.3 (1300), and
  // 3000-3150 with two executions overlapping (one period, 1000): 4.3 s x 2 GB.
  const std::string producers = at("0, 500", "100") + ", " + at("1000", "1200.3") + ", " + at("3000, 3050", "100");
  const auto demand = run_scenario(sb_billed(producers, functions(R"(, "hosting_plan": "flex-consumption")")));
  CHECK(billed(demand, "executions") == 5);
  CHECK(billed(demand, "gb_seconds") == doctest::Approx(8.6).epsilon(1e-12));
  CHECK(billed(demand, "always_ready_gb_seconds") == 0);
  CHECK(billed(demand, "baseline_gb_seconds") == 0);
  // The same instance always ready, 4096 MB: its executions apart, and its memory over the 10 s.
  const auto ready = run_scenario(sb_billed(
      producers, functions(R"(, "hosting_plan": "flex-consumption", "instanceMemoryMB": 4096, "always_ready_instances": 1)")));
  CHECK(billed(ready, "gb_seconds") == 0);
  CHECK(billed(ready, "always_ready_gb_seconds") == doctest::Approx(4.3 * 4).epsilon(1e-12));
  CHECK(billed(ready, "baseline_gb_seconds") == doctest::Approx(10 * 4).epsilon(1e-12));
}

TEST_CASE("functions billing: Premium bills the instances allocated, at least one, and Dedicated its instance-hours") {
  // Two EP2 instances (2 cores, 7 GB) over 10 s.
  const auto two = run_scenario(sb_billed(at("0", "100"), functions(R"(, "hosting_plan": "premium", "plan_sku": "EP2")", R"(, "count": 2)")));
  CHECK(billed(two, "instance_hours") == doctest::Approx(20.0 / 3600).epsilon(1e-12));
  CHECK(billed(two, "vcpu_seconds") == doctest::Approx(40).epsilon(1e-12));
  CHECK(billed(two, "memory_gb_seconds") == doctest::Approx(140).epsilon(1e-12));
  CHECK(!two.json()["billing"].contains("gb_seconds"));
  // One EP1 instance that starts at 4 s: a Premium plan bills one instance from 0 all the same.
  const auto late = run_scenario(sb_billed(at("5000", "100"), functions(R"(, "hosting_plan": "premium")", R"(, "start_ms": 4000)")));
  CHECK(billed(late, "vcpu_seconds") == doctest::Approx(10).epsilon(1e-12));
  CHECK(billed(late, "memory_gb_seconds") == doctest::Approx(35).epsilon(1e-12));
  // Dedicated: the App Service plan's instances while they exist, 6 s of one.
  const auto dedicated =
      run_scenario(sb_billed(at("5000", "100"), functions(R"(, "hosting_plan": "dedicated", "plan_sku": "P1v3")", R"(, "start_ms": 4000)")));
  CHECK(dedicated.json()["billing"].dump() ==
        R"({"instance_hours":0.0016666666666666668,"groups":{"0":{"instance_hours":0.0016666666666666668}}})");
}

TEST_CASE("functions billing: a plan's settings are refused on another plan, and out of range") {
  CHECK(load_error(sb_billed(at("0", "100"), functions(R"(, "hosting_plan": "premium", "execution_memory_mb": 256)"))) ==
        "consumers.0.framework.execution_memory_mb: a setting of hosting_plan consumption only (this group's hosting_plan is "
        "premium): give it there, or leave it out");
  CHECK(load_error(sb_billed(at("0", "100"), functions(R"(, "hosting_plan": "flex-consumption", "instanceMemoryMB": 1024)"))) ==
        "consumers.0.framework.instanceMemoryMB: expected one of 512, 2048, 4096 (MB), got 1024");
  CHECK(load_error(sb_billed(at("0", "100"), functions(R"(, "hosting_plan": "premium", "plan_sku": "EP4")"))) ==
        "consumers.0.framework.plan_sku: expected one of \"EP1\", \"EP2\", \"EP3\", got \"EP4\"");
  CHECK(load_error(sb_billed(at("0", "100"), functions(R"(, "execution_memory_mb": 2048)"))) ==
        "consumers.0.framework.execution_memory_mb: expected an integer between 1 and 1536, got 2048");
}

TEST_CASE("functions billing: plan --cost takes a plan's figures and refuses one that does not apply, naming framework and plan") {
  ScratchDir dir("functions-billing-plan");
  const auto plan = [&](const std::string& consumer, const std::string& cost) {
    const std::string file = dir.write("s.json", sb_billed(at("0, 1000, 2000", "100"), consumer));
    return run_cli({"plan", file, "--vary", "consumers.0.count=1,2", "--target", "fraction.completed_on_time>=0.5", "--cost", cost,
                    "--replications", "2"});
  };
  const auto premium = plan(functions(R"(, "hosting_plan": "premium")"), "billing.gb_seconds");
  CHECK(premium.status == 2);
  CHECK(premium.err ==
        "brokersim: error: --cost: billing.gb_seconds is not a figure of this scenario: consumer group 0 (framework "
        "azure-functions, hosting_plan premium, EP1: 1 vCPU, 3.5 GB) is billed by the vCPU-seconds and GB-seconds of the "
        "instances allocated, at least one at all times, not per execution (billing.instance_hours, billing.vcpu_seconds, "
        "billing.memory_gb_seconds)\n");
  // A target names it the same way.
  const std::string premium_file = dir.write("p.json", sb_billed(at("0", "100"), functions(R"(, "hosting_plan": "premium")")));
  const auto target = run_cli({"plan", premium_file, "--vary", "consumers.0.count=1,2", "--target", "billing.gb_seconds<=1"});
  CHECK(target.status == 2);
  CHECK(target.err.find("brokersim: error: --target: billing.gb_seconds is not a figure of this scenario: consumer group 0 "
                        "(framework azure-functions, hosting_plan premium") == 0);
  // The text summary's line, in the plan's units.
  const auto text = run_cli({"run", premium_file});
  CHECK(text.out.find("Billed over the measured 10 s, group 0 (azure-functions, hosting_plan premium, EP1: 1 vCPU, 3.5 GB): "
                      "0.003 instance-hours, 10.000 vCPU-seconds, 35.000 GB-seconds (the instances allocated, at least one at "
                      "all times)\n") != std::string::npos);
  const auto consumption = plan(functions(""), "billing.groups.0.gb_seconds");
  CHECK(consumption.status == 2);
  CHECK(consumption.err ==
        "brokersim: error: --cost: billing.groups.0.gb_seconds is not a figure of this scenario: consumer group 0 (framework "
        "azure-functions, hosting_plan consumption, execution_memory_mb not given) is billed by executions "
        "(billing.executions); its GB-seconds need the memory an execution uses: give consumers.0.framework.execution_memory_mb\n");
  const auto plain = plan(R"({"queue": "q"})", "billing.gb_seconds");
  CHECK(plain.status == 2);
  CHECK(plain.err ==
        "brokersim: error: --cost: billing.gb_seconds is not a figure of this scenario: no consumer group is billed by a "
        "platform (billing figures come with framework aws-lambda, with batches or MemorySize, or azure-functions)\n");
  // With the memory given, the cost is the plan's GB-seconds: one instance is enough.
  const auto costed = plan(functions(R"(, "execution_memory_mb": 256)"), "billing.gb_seconds");
  INFO(costed.out << costed.err);
  CHECK(costed.status == 0);
  CHECK(costed.out.find("consumers.0.count=1") != std::string::npos);
}

}  // namespace functions_billing_test
