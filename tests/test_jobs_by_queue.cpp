// Jobs by the queue they were published to (jobs_by_queue.NAME) for a split fleet: one group per
// queue, the alternative to one group reading both. The figures are in run --json, the text
// summary, the sweep's columns and plan's targets, and each queue's counts add up to the run's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/sweep_test_util.hpp"
#include "tests/test_util.hpp"

namespace {

// emails: ten jobs at 0 with a 250 ms deadline and 100 ms of service, read by consumers.0 (prefetch
// 1, one slot a consumer); reports: five jobs at 0 of 1 s without a deadline, read by consumers.1.
// One emails consumer runs jobs 1-2 on time, job 3 late (200-300 ms) and finds the other seven
// stale; four run them all by 200 ms (three rounds of 100 ms), so none goes stale.
constexpr const char* kSplitFleet = R"({"name": "split-fleet", "stop": {"time_ms": 10000},
  "broker": {"queues": {"emails": {}, "reports": {}}},
  "producers": [
    {"queue": "emails", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "deadline_ms": 250, "service_ms": 100},
    {"queue": "reports", "arrivals": {"at_ms": [0, 0, 0, 0, 0]}, "service_ms": 1000}],
  "consumers": [{"queue": "emails", "prefetch": 1}, {"queue": "reports", "prefetch": 1}]})";

struct SplitFleetDir : brokersim::test::ScratchDir {
  std::string scenario;
  SplitFleetDir() : ScratchDir("brokersim-split-fleet"), scenario(write("split.json", kSplitFleet)) {}
};

}  // namespace

TEST_CASE("jobs by queue - a split fleet reports each queue's jobs and they add up to the run exactly") {
  const auto run = brokersim::test::run_scenario(kSplitFleet);
  const auto j = run.json();
  REQUIRE(j.contains("jobs_by_queue"));
  const auto& emails = j["jobs_by_queue"]["emails"];
  const auto& reports = j["jobs_by_queue"]["reports"];
  CHECK(emails["outcomes"]["generated"] == 10);
  CHECK(emails["outcomes"]["completed_on_time"] == 2);
  CHECK(emails["outcomes"]["completed_late"] == 1);
  CHECK(emails["outcomes"]["expired_before_start"] == 7);
  CHECK(emails["fraction"]["expired_before_start"] == doctest::Approx(0.7));
  CHECK(reports["outcomes"]["generated"] == 5);
  CHECK(reports["fraction"]["expired_before_start"] == 0.0);
  // Every outcome and every wait's count: the two queues' figures sum to the run's.
  for (const auto& item : j["outcomes"].items()) {
    // A copy, not a structured binding: clang 14 cannot capture a binding in INFO's lambda.
    const std::string name = item.key();
    const auto& total = item.value();
    INFO(name);
    CHECK(emails["outcomes"][name].get<std::uint64_t>() + reports["outcomes"][name].get<std::uint64_t>() ==
          total.get<std::uint64_t>());
  }
  for (const auto& item : j["wait_ms"].items()) {
    const std::string stage = item.key();
    const auto& wait = item.value();
    INFO(stage);
    CHECK(emails["wait_ms"][stage]["count"].get<std::uint64_t>() + reports["wait_ms"][stage]["count"].get<std::uint64_t>() ==
          wait["count"].get<std::uint64_t>());
  }
  // The summary's per-queue lines.
  std::ostringstream summary;
  brokersim::print_summary(summary, run.scenario, run.result);
  CHECK(summary.str().find("By the queue a job was published to (jobs_by_queue):\n"
                           "  emails: 10 jobs, 20.00% completed on time, 70.00% expired before they started;") !=
        std::string::npos);
  CHECK(summary.str().find("  reports: 5 jobs, 100.00% completed (no deadline), 0.00% expired before they started;") !=
        std::string::npos);
  // One queue published to: nothing to split.
  CHECK_FALSE(brokersim::test::run_scenario(kSplitFleet, {"producers.1.queue=\"emails\""}).json().contains("jobs_by_queue"));
}

TEST_CASE("jobs by queue - a split fleet's per-queue figures are sweep columns that add up to the run's") {
  SplitFleetDir d;
  const auto r = brokersim::test::run_cli({"sweep", d.scenario, "--vary", "consumers.0.count=1,4", "--replications", "2"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto lines = brokersim::test::lines_of(r.out);
  REQUIRE(lines.size() == 3);
  const std::size_t stale = sweep_test::column(lines[0], "jobs_by_queue.emails.fraction.expired_before_start_mean");
  const std::size_t generated = sweep_test::column(lines[0], "outcomes.generated_mean");
  const std::size_t emails = sweep_test::column(lines[0], "jobs_by_queue.emails.outcomes.generated_mean");
  const std::size_t reports = sweep_test::column(lines[0], "jobs_by_queue.reports.outcomes.generated_mean");
  const auto one = brokersim::test::split_csv_line(lines[1]), four = brokersim::test::split_csv_line(lines[2]);
  CHECK(std::stod(one[stale]) == doctest::Approx(0.7));
  CHECK(std::stod(four[stale]) == 0.0);
  for (const auto& row : {one, four}) CHECK(std::stod(row[emails]) + std::stod(row[reports]) == std::stod(row[generated]));
}

TEST_CASE("jobs by queue - plan takes a split fleet's per-queue target") {
  SplitFleetDir d;
  const auto r = brokersim::test::run_cli({"plan", d.scenario, "--vary", "consumers.0.count=1:5:1", "--replications", "2",
                                           "--target", "jobs_by_queue.emails.fraction.expired_before_start<=0.001", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["met"] == true);
  CHECK(j["best"]["setting"]["consumers.0.count"] == 4);
}
