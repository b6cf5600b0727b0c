// Issue 22, the command-line findings: inputs that pass every earlier check but crash, give a
// wrong answer or are silently ignored. Each is now refused (exit 2, naming the option) or works.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/test_util.hpp"
#include "experiments/cli/analytic/validation.hpp"

namespace {

using brokersim::test::run_cli;

// Periodic arrivals every 10 ms, constant 35 ms service: 4 consumers keep up (as in test_plan).
constexpr const char* kScenario = R"({"name": "hostile-cli", "seed": 1, "stop": {"jobs": 200},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300,
                 "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1}]})";

struct Dir : brokersim::test::ScratchDir {
  std::string scenario;
  Dir() : ScratchDir("brokersim-hostile-cli"), scenario(write("s.json", kScenario)) {}
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// Item 4: 40,000 nested parentheses overflowed the parser's stack (SIGSEGV).
TEST_CASE("hostile cli: deeply nested or very long target and cost expressions are refused") {
  Dir d;
  const std::string deep = std::string(40000, '(') + "1" + std::string(40000, ')') + "<=1";
  auto r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", deep});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--target: expected at most 4096 characters"), r.err);

  const std::string nested = std::string(101, '(') + "1" + std::string(101, ')') + "<=1";
  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", nested});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--target: more than 100 nested parentheses and unary minus signs at character 101"), r.err);

  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", "throughput_per_s>0",
               "--cost", std::string(200, '-') + "slots_total"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--cost: more than 100 nested"), r.err);

  // 100 levels are still accepted (the target never holds: 1 > 2 is false; exit 5).
  const std::string ok = std::string(100, '(') + "1" + std::string(100, ')') + ">2";
  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", ok, "--replications", "1"});
  CHECK_MESSAGE(r.status == 5, r.err);
}

// Item 10: a cost NaN at some points (0/0) was picked as the cheapest; a target that divides by
// zero gave inf and was accepted; 0/0 in a target printed "the left-hand side is -".
TEST_CASE("hostile cli: a NaN or infinite cost or target side is an error naming the setting") {
  Dir d;
  const std::vector<std::string> base{"plan", d.scenario, "--vary", "consumers.0.count=1,2,4", "--replications", "1"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  auto r = with({"--target", "fraction.completed_on_time>=0.99", "--cost", "(consumers.0.count-1)/(consumers.0.count-1)"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--cost: the cost is not a number (0/0, or a metric without a value) at consumers.0.count=1"), r.err);

  r = with({"--target", "fraction.completed_on_time>=0.99", "--cost", "1/(consumers.0.count-2)"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--cost: the cost is infinite (a division by zero, or a value past the largest number, 1.8e308) at consumers.0.count=2"), r.err);

  // A cost over metrics is known after the run: checked there.
  r = with({"--target", "fraction.completed_on_time>=0.99", "--cost", "slots_total*0/0+throughput_per_s"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--cost: the cost is not a number"), r.err);

  r = with({"--target", "throughput_per_s>=1/0"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--target: the right-hand side of target 1 (throughput_per_s>=1/0) is infinite (a division by zero, or a value past the largest number, 1.8e308) at consumers.0.count="), r.err);

  r = with({"--target", "0/0<=1"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--target: the left-hand side of target 1 (0/0<=1) is not a number"), r.err);
  CHECK_FALSE(has(r.err, "the left-hand side is -"));
}

// Item 11: --seed replaced a varied seed, and each row was labelled with a seed it never used.
TEST_CASE("hostile cli: --seed with a varied seed is refused, naming both") {
  Dir d;
  auto r = run_cli({"sweep", d.scenario, "--vary", "seed=1,2", "--seed", "7", "--replications", "2"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--seed 7 and a varied seed (--vary seed=... or the sweep block) cannot be combined"), r.err);
  r = run_cli({"plan", d.scenario, "--vary", "seed=1,2", "--seed", "7", "--target", "throughput_per_s>0"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "cannot be combined"), r.err);
  r = run_cli({"sweep", d.scenario, "--set", R"(sweep={"seed": [1, 2]})", "--seed", "7", "--replications", "2"});
  CHECK(r.status == 2);
  // Each alone still works.
  r = run_cli({"sweep", d.scenario, "--vary", "seed=1,2", "--replications", "2"});
  CHECK_MESSAGE(r.status == 0, r.err);
}

// Item 17: --set 'sweep={...}' was ignored when the file had no sweep block.
TEST_CASE("hostile cli: --set sweep={...} gives the sweep block") {
  Dir d;
  const auto given = run_cli({"sweep", d.scenario, "--set", R"(sweep={"consumers.0.count": [1, 2]})", "--replications", "2"});
  REQUIRE_MESSAGE(given.status == 0, given.err);
  const auto varied = run_cli({"sweep", d.scenario, "--vary", "consumers.0.count=1,2", "--replications", "2"});
  REQUIRE_MESSAGE(varied.status == 0, varied.err);
  CHECK(given.out == varied.out);
  CHECK(has(given.out, "consumers.0.count,"));
}

// Item 6 (part): --replications had no upper bound, and grid points x replications no cap; the
// tasks alone ran out of memory (std::bad_alloc).
TEST_CASE("hostile cli: --replications and grid points x replications are bounded") {
  Dir d;
  auto r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.count=1,2", "--replications", "1000001"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--replications: expected an integer >= 1 and <= 1000000, got \"1000001\""), r.err);
  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", "throughput_per_s>0",
               "--replications", "1000001"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--replications: expected an integer >= 1 and <= 1000000"), r.err);
  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1:100000:1", "--target", "throughput_per_s>0",
               "--replications", "101"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--replications 101 over 100000 grid points: expected at most 10000000 runs in all"), r.err);
}

// Item 19 (part): --precision 0x10 was read as 16 (strtod reads hexadecimal); so was 0x10 in a target.
TEST_CASE("hostile cli: hexadecimal numbers are refused in numeric options and expressions") {
  Dir d;
  auto r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.count=1,2", "--precision", "0x10"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--precision: expected"), r.err);
  CHECK(has(r.err, "got \"0x10\""));
  r = run_cli({"run", d.scenario, "--precision", "0.05", "--precision-abs", "0x1p-3"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--precision-abs: expected"), r.err);
  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", "throughput_per_s>0x10"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--target: expected an operator, ')' or a comparison after the number at character 19"), r.err);
  r = run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", "throughput_per_s>1e999"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--target: expected a finite decimal number at character 18"), r.err);
}

// Item 18: analytic --validate --jobs 1e20 failed naming stop.time_ms, a key the user never set;
// analytic SCEN --validate ignored SCEN.
TEST_CASE("hostile cli: analytic --validate bounds --jobs and refuses a scenario beside it") {
  Dir d;
  auto r = run_cli({"analytic", "--validate", "--jobs", "1e20"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "--jobs: expected a number >= 1000 and <= 1e+08, got 1e+20"), r.err);
  CHECK_FALSE(has(r.err, "stop.time_ms"));
  r = run_cli({"analytic", d.scenario, "--validate"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "analytic --validate: expected no scenario file"), r.err);
  r = run_cli({"analytic", "--validate", "--set", "seed=2"});
  CHECK(r.status == 2);
  CHECK_MESSAGE(has(r.err, "expected no --set"), r.err);
  // The largest --jobs gives scenarios that validate (not run here: minutes per point).
  for (const auto& pt : brokersim::validation_design(1e8, 2))
    CHECK_NOTHROW(brokersim::load_scenario(pt.scenario, ""));
}

TEST_CASE("hostile cli: --shard with --shard-count is refused, naming both") {
  Dir d;
  const auto r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.count=1,2", "--shard", "0/2", "--shard-count", "2"});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: --shard: expected either --shard K/N or --shard-count N (with JOB_COMPLETION_INDEX), "
                 "not both, got --shard 0/2 and --shard-count 2\n");
  CHECK(r.out.empty());
}

TEST_CASE("hostile cli: sweep refuses grid points x replications beyond the cap before running anything") {
  Dir d;
  // 4,000 points x 10,000 replications = 4e7 runs > 1e7.
  const auto r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.count=1:4000:1", "--replications", "10000"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--replications 10000 over 4000 grid points: expected at most 10000000 runs in all") != std::string::npos);
  CHECK(r.out.empty());
}
