// brokersim fit on logs a worker writes a row per attempt: clock skew that must not make a worker
// run two jobs at once, an id column counting each message once, failed attempts left out of the
// service times and fitted on their own, and --into, which fits a log into the user's scenario.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

// A named namespace: the test files are compiled several to a unit.
namespace fit_attempts_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

const std::string kAttemptsSource = BROKERSIM_SOURCE_DIR;

bool attempts_has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

nlohmann::json attempts_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

// One message retried twice: m1's three rows are one arrival, at its first enqueue.
const std::string kRetriedRows =
    "m1,0.000,0.000,0.100\n"
    "m2,1.000,1.000,1.050\n"
    "m1,2.000,2.000,2.200\n"
    "m3,3.000,3.010,3.100\n"
    "m1,4.000,4.000,4.300\n";

// Four executions that finished normally (100, 200, 300 and 400 ms), one that failed 20 ms in, and
// one that failed without a finish time, in the words of several frameworks.
const std::string kOutcomeLog =
    "enqueued_at,started_at,finished_at,status\n"
    "0,0,0.100,success\n"
    "1,1,1.200,ok\n"
    "2,2,2.300,SUCCESS\n"
    "3,3,3.020,error\n"
    "4,4,,retry\n"
    "5,5,5.400,completed\n";

}  // namespace fit_attempts_test

using namespace fit_attempts_test;

TEST_SUITE("fit") {
  TEST_CASE("fit attempts: a worker whose clock is a few ms behind runs one job at a time, slots 1") {
    ScratchDir dir("fit-skew-slots");
    // Back to back on worker w; the first two start 10 and 5 ms "before" their enqueue.
    const std::string log = dir.write("jobs.csv",
                                      "enqueued_at,started_at,finished_at,worker\n"
                                      "100.010,100.000,101.000,w\n"
                                      "101.005,101.000,102.000,w\n"
                                      "102.000,102.000,103.000,w\n");
    const auto r = run_cli({"fit", log, "--columns", "worker=worker", "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(attempts_has(r.out, "  Fleet: 1 distinct workers ran jobs (at most 1 in one interval), each running up to 1 at once: "
                              "consumers count 1, slots 1\n"));
    const auto fitted = attempts_json(dir.path("fitted.json"));
    CHECK(fitted["consumers"][0]["count"] == 1);
    CHECK(fitted["consumers"][0]["slots"] == 1);
    // The busy series is the worker's own: one execution in progress, never two.
    const auto plot = attempts_json(dir.path("fitted.plot.json"));
    for (const auto& busy : plot["queues"][0]["fleet"]["busy"]) CHECK(busy.get<double>() <= 1.0 + 1e-9);
    // Without a worker column: one one-slot consumer, not two.
    const auto plain = run_cli({"fit", log});
    REQUIRE(plain.status == 0);
    CHECK(attempts_has(plain.out, "  Fleet: no worker column: 1 one-slot consumers, the most executions in progress at once"));
  }

  TEST_CASE("fit attempts: the skewed rows' waits are 0, the service times the worker's own") {
    ScratchDir dir("fit-skew-waits");
    const std::string log = dir.write("jobs.csv",
                                      "enqueued_at,started_at,finished_at,worker\n"
                                      "100.010,100.000,101.000,w\n"
                                      "101.005,101.000,102.000,w\n"
                                      "102.000,102.000,103.000,w\n");
    // The same log run through a scenario of one consumer: the log's waits are all 0 (the mean,
    // p50, p95 and p99 columns of --check show the log's figure first).
    const std::string scenario = dir.write("one.json", R"({"stop": {"time_ms": 10000}, "broker": {"queues": {"work": {}}},
      "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": {"exp": {"mean": 1000}}}],
      "consumers": [{"queue": "work", "count": 1, "prefetch": 1}]})");
    const auto r = run_cli({"fit", log, "--columns", "worker=worker", "--check", scenario, "--replications", "2"});
    INFO(r.out << r.err);
    for (const std::string row : {"    mean          0.0 ", "    p50           0.0 ", "    p95           0.0 ", "    p99           0.0 "}) CHECK(attempts_has(r.out, row));
    CHECK(attempts_has(r.out, "Service times (finished - started): 3 jobs, mean 1000 ms, cv 0\n"));
  }

  TEST_CASE("fit attempts: a row per attempt counts each message once, by its id column") {
    ScratchDir dir("fit-ids");
    const std::string log = dir.write("jobs.csv", "task_id,enqueued_at,started_at,finished_at\n" + kRetriedRows);
    const auto r = run_cli({"fit", log, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    // Arrivals at each message's first enqueue: 0, 1 and 3 s, not 5 rows.
    CHECK(read_file(dir.path("fitted.arrivals.csv")) == "publish_ms\n0\n1000\n3000\n");
    const std::string said =
        "attempts: 5 rows are 3 messages (by the column task_id, found by its name): 1.667 attempts per message on average, "
        "1 messages (33.3%) tried more than once, at most 3 times; arrivals count each message once, at its first enqueue";
    CHECK(attempts_has(r.out, "  A" + said.substr(1) + "\n"));
    CHECK(attempts_has(r.out, "  Arrivals: 3 jobs, 0.75 /s on average"));
    const auto fitted = attempts_json(dir.path("fitted.json"));
    CHECK(fitted["producers"][0]["fitted"]["arrivals"] == 3);
    CHECK(fitted["producers"][0]["arrivals"]["rate_schedule"][0]["rate_per_s"] == 0.75);
    CHECK(fitted["notes"] == nlohmann::json::array({said}));
    const auto plot = attempts_json(dir.path("fitted.plot.json"));
    CHECK(plot["queues"][0]["attempts"] == nlohmann::json::parse(
                                               R"({"by_id": true, "rows": 5, "messages": 3, "attempts_per_message": 1.66667,
                                                   "retried": 1, "most": 3})"));
  }

  TEST_CASE("fit attempts: the id column by its names, by --columns id=, or none") {
    ScratchDir dir("fit-id-names");
    const auto arrivals = [&](const std::string& header, std::vector<std::string> columns) {
      const std::string log = dir.write("jobs.csv", header + kRetriedRows);
      std::vector<std::string> args{"fit", log, "--out", dir.path("fitted.json")};
      args.insert(args.end(), columns.begin(), columns.end());
      const auto r = run_cli(args);
      INFO(r.out << r.err);
      REQUIRE(r.status == 0);
      return read_file(dir.path("fitted.arrivals.csv"));
    };
    const std::string per_message = "publish_ms\n0\n1000\n3000\n", per_row = "publish_ms\n0\n1000\n2000\n3000\n4000\n";
    CHECK(arrivals("message_id,enqueued_at,started_at,finished_at\n", {}) == per_message);
    CHECK(arrivals("id,enqueued_at,started_at,finished_at\n", {}) == per_message);
    CHECK(arrivals("job,enqueued_at,started_at,finished_at\n", {"--columns", "id=job"}) == per_message);
    CHECK(arrivals("job,enqueued_at,started_at,finished_at\n", {}) == per_row);
    CHECK(arrivals("id,enqueued_at,started_at,finished_at\n", {"--columns", "id=-"}) == per_row);
    // message_id before id: the row id of a table is not the message's.
    const std::string both = dir.write("both.csv", "id,message_id,enqueued_at,started_at,finished_at\n"
                                                   "1,a,0,0,1\n2,a,2,2,3\n3,b,4,4,5\n");
    const auto r = run_cli({"fit", both});
    CHECK(attempts_has(r.out, "3 rows are 2 messages (by the column message_id, found by its name)"));
    // An empty id is refused, naming the line and the column.
    const std::string empty = dir.write("empty.csv", "task_id,enqueued_at,started_at,finished_at\na,0,0,1\n,1,1,2\n");
    const auto bad = run_cli({"fit", empty});
    CHECK(bad.status == 2);
    CHECK(bad.err == "brokersim: error: " + empty + " line 3, column task_id: expected a message id (the column names each "
                     "row's message), got an empty cell\n");
    const auto dash = run_cli({"fit", empty, "--columns", "worker=-"});
    CHECK(dash.status == 2);
    CHECK(attempts_has(dash.err, "--columns: expected a column name after \"worker=\" (\"-\", no column, only for state and id"));
    // Without an id column the report says how arrivals were counted.
    CHECK(attempts_has(run_cli({"fit", dir.write("rows.csv", "enqueued_at,started_at,finished_at\n0,0,1\n")}).out,
                       "  arrivals: one per row (no message id column: one named message_id, task_id or id, or --columns id=NAME"));
  }

  TEST_CASE("fit attempts: failed attempts are left out of the service times and fitted on their own") {
    ScratchDir dir("fit-failed");
    const std::string log = dir.write("jobs.csv", kOutcomeLog);
    const auto r = run_cli({"fit", log, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(attempts_has(r.out, "  Service times (finished - started): 4 jobs, mean 250 ms, cv 0.5164\n"));
    CHECK(attempts_has(r.out, "outcomes (from the column status, found by its name): 4 succeeded, 2 failed (1 with a finish time: "
                              "in the fleet, they held a worker, but not in the service times"));
    CHECK(attempts_has(r.out, "  Failed attempts: 2 of 6 attempts that ended (33.3%); 1 with a finish time, left out of the service "
                              "times and fitted on their own: mean 20 ms, cv 0, 0.08 of the service times' mean; {\"exp\":{\"mean\":20.0}}"));
    const auto plot = attempts_json(dir.path("fitted.plot.json"));
    CHECK(plot["queues"][0]["service"]["n"] == 4);
    const auto& failures = plot["queues"][0]["failures"];
    CHECK(failures["ended"] == 6);
    CHECK(failures["failed"] == 2);
    CHECK(failures["with_finish_time"] == 1);
    CHECK(failures["durations"]["mean_ms"] == 20.0);
    CHECK(failures["durations"]["fraction_of_service"] == 0.08);
    CHECK(failures["durations"]["syntax"] == nlohmann::json::parse(R"({"exp": {"mean": 20.0}})"));
    // The scenario's RabbitMQ client acks a failed job: the chance is that a message ends failed.
    const auto fitted = attempts_json(dir.path("fitted.json"));
    CHECK(fitted["consumers"][0]["failure_probability"] == 0.333333);
    CHECK(failures["scenario_key"] == "consumers.0.failure_probability");
    CHECK(failures["tried_again"] == false);
    CHECK(attempts_has(r.out, "  In the written scenario, consumers.0.failure_probability 0.333333: the chance that a message ends "
                              "failed (in the scenario a failed execution is final); brokersim runs a failed execution for a whole "
                              "service time: no scenario key says when in its execution a job fails (the log's failed attempts ran "
                              "0.08 of the service times' mean)\n"));
    // state=- reads no outcome: every finished execution is a service time again.
    const auto none = run_cli({"fit", log, "--columns", "state=-"});
    CHECK(attempts_has(none.out, "  Service times (finished - started): 5 jobs,"));
    // An unknown word names the column and that it was found by its name.
    const auto bad = run_cli({"fit", dir.write("bad.csv", "enqueued_at,started_at,finished_at,status\n0,0,1,200\n")});
    CHECK(bad.status == 2);
    CHECK(attempts_has(bad.err, "line 2, column status: expected a state: SUCCESS, SUCCEEDED, OK, COMPLETED, DONE (succeeded); "));
    CHECK(attempts_has(bad.err, "(the column status was read as the state by its name: --columns state=- reads none), got \"200\"\n"));
  }

  TEST_CASE("fit attempts: messages retried until they succeed end failed in none, and failure_probability is per message") {
    ScratchDir dir("fit-failed-retried");
    const std::string log = dir.write("jobs.csv",
                                      "task_id,enqueued_at,started_at,finished_at,status\n"
                                      "a,0,0,0.010,retry\n"
                                      "a,0.010,0.010,0.110,success\n"
                                      "b,1,1,1.200,success\n"
                                      "c,2,2,2.005,failure\n"
                                      "c,3,3,3.300,failure\n");
    const auto r = run_cli({"fit", log, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(attempts_has(r.out, "  Failed attempts: 3 of 5 attempts that ended (60%); 3 with a finish time"));
    CHECK(attempts_has(r.out, "; per message, 1 of 3 (33.3%) ended failed (no attempt of theirs succeeded)\n"));
    const auto fitted = attempts_json(dir.path("fitted.json"));
    CHECK(fitted["consumers"][0]["failure_probability"] == 0.333333);
    CHECK(attempts_json(dir.path("fitted.plot.json"))["queues"][0]["service"]["n"] == 2);
  }
}
