// The analytic command's messages (tests of the closed forms are in test_analytic.cpp): every
// failing assumption listed with its key path, and the transient warning of --compare-analytic.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace {

// M/M/2+D, rho 1.1, a constant 50 ms TTL, a 5 s warm-up.
constexpr const char* kMmcdCli = R"({"name": "mmcd", "seed": 3, "stop": {"time_ms": 20000}, "warmup_ms": 5000,
  "broker": {"queues": {"work": {"message_ttl_ms": 50}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 22}}, "service_ms": {"exp": {"mean": 100}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 1, "admission": "none"}]})";

}  // namespace

TEST_CASE("analytic: every failing assumption is listed with its key path - one per line") {
  brokersim::test::ScratchDir d("brokersim-analytic");
  const std::string file = d.write("mmcd.json", kMmcdCli);
  const std::vector<std::string> args = {"analytic", file, "--set", "consumers.0.clock_offset_ms=5", "--set",
                                         "consumers.0.slots=2", "--set", "broker.delivery_latency_ms=1", "--set",
                                         "producers.0.service_ms={\"const\": 100}", "--set", "consumers.0.prefetch=4"};
  const auto r = brokersim::test::run_cli(args);
  CHECK(r.status == 4);
  CHECK(r.out ==
        "no closed-form model: 5 assumptions fail:\n"
        "  - producers.0.service_ms is not exponential ({\"exp\": {\"mean\": m}})\n"
        "  - broker.delivery_latency_ms is not 0\n"
        "  - consumers.0.slots is not 1\n"
        "  - consumers.0.clock_offset_ms is not 0\n"
        "  - consumers.0.prefetch is 4 with expiry: the prefetch chain needs an exponential producers.0.deadline_ms, "
        "producers.0.expiration_ms \"remaining-budget\" (expiry in the queue at the deadline) and an admission check "
        "(expiry in the prefetch buffer at the deadline)\n");
  auto json_args = args;
  json_args.push_back("--json");
  const auto j = brokersim::test::run_cli(json_args);
  CHECK(j.status == 4);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["model"].is_null());
  REQUIRE(doc["failures"].size() == 5);
  CHECK(doc["failures"][3] == "consumers.0.clock_offset_ms is not 0");
  CHECK(doc["reason"].get<std::string>().rfind("no closed-form model: producers.0.service_ms is not exponential", 0) == 0);
  // One failure keeps its one line; the fitted scenario still fits.
  const auto one = brokersim::test::run_cli({"analytic", file, "--set", "consumers.0.slots=2"});
  CHECK(one.status == 4);
  CHECK(one.out == "no closed-form model: consumers.0.slots is not 1\n");
  CHECK(brokersim::test::run_cli({"analytic", file}).status == 0);
  // run --compare-analytic lists them the same way.
  const auto cmp = brokersim::test::run_cli({"run", file, "--compare-analytic", "--set", "consumers.0.slots=2", "--set",
                                             "broker.ack_latency_ms=1"});
  CHECK(cmp.status == 0);
  CHECK(cmp.out.find("Analytic comparison: no closed-form model: 2 assumptions fail:\n  - broker.ack_latency_ms is not "
                     "0\n  - consumers.0.slots is not 1\n") != std::string::npos);
}

TEST_CASE("analytic: run --compare-analytic warns when rho >= 1 or warmup_ms is 0 (a transient against a steady state)") {
  brokersim::test::ScratchDir d("brokersim-analytic");
  const std::string file = d.write("mmcd.json", kMmcdCli);
  const auto warnings = [&](std::vector<std::string> sets) {
    std::vector<std::string> args = {"run", file, "--json", "--compare-analytic"};
    args.insert(args.end(), sets.begin(), sets.end());
    const auto r = brokersim::test::run_cli(args);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    return nlohmann::json::parse(r.out)["analytic"]["warnings"];
  };
  const auto overloaded = warnings({});
  REQUIRE(overloaded.size() == 1);
  CHECK(overloaded[0].get<std::string>().find("lambda / (c mu) = 1.1 >= 1") != std::string::npos);
  CHECK(warnings({"--set", "warmup_ms=0"}).size() == 2);
  const auto cold = warnings({"--set", "warmup_ms=0", "--set", "producers.0.arrivals.poisson.rate_per_s=15"});
  REQUIRE(cold.size() == 1);
  CHECK(cold[0].get<std::string>().rfind("warmup_ms is 0", 0) == 0);
  CHECK(warnings({"--set", "producers.0.arrivals.poisson.rate_per_s=15"}).empty());

  const auto text = brokersim::test::run_cli({"run", file, "--compare-analytic", "--set", "warmup_ms=0"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("\n  warning: offered load lambda / (c mu) = 1.1 >= 1") != std::string::npos);
  CHECK(text.out.find("\n  warning: warmup_ms is 0") != std::string::npos);
  const auto calm = brokersim::test::run_cli({"run", file, "--compare-analytic", "--set", "producers.0.arrivals.poisson.rate_per_s=15"});
  CHECK(calm.out.find("warning") == std::string::npos);
}
