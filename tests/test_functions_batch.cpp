// The Azure Functions Service Bus trigger's batches (isBatched true) on consumers[].batch_handler
// (models/consumer_batch.cpp, models/brokers/azure_servicebus.cpp; docs/framework-azure-functions.md
// "Batched triggers"): small deterministic cases, exact, and the host's refusals.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

namespace functions_batch_test {

using brokersim::test::load_error;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;
using brokersim::test::ScratchDir;

// One Service Bus queue (lock `lock` ms, dead-lettered after `deliveries` deliveries), no latencies,
// jobs of `service` ms published at `at` with `extra` producer keys, one consumer group `consumer`.
std::string sb_batch_scenario(const std::string& at, const std::string& consumer, int deliveries = 2, int lock = 10000,
                              const std::string& extra = "", int service = 100) {
  return R"({"seed": 5, "stop": {"time_ms": 20000},
  "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 0, "ack_latency_ms": 0,
             "queues": {"q": {"lock_duration_ms": )" + std::to_string(lock) + R"(, "max_delivery_count": )" +
         std::to_string(deliveries) + R"(, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [)" + at + R"(]}, "service_ms": )" + std::to_string(service) + extra + R"(}],
  "consumers": [)" + consumer + "]}";
}

// The framework entry of one instance with these host.json settings besides isBatched.
std::string batched_function(const std::string& settings, const std::string& group = "") {
  return R"({"queue": "q")" + group + R"(, "framework": {"name": "azure-functions", "isBatched": true)" + settings + "}}";
}

TEST_CASE("functions batches: a batch that fails whole is abandoned whole") {
  const auto run = run_scenario(
      sb_batch_scenario("0, 0, 0", batched_function(R"(, "maxMessageBatchSize": 3)", R"(, "failure_probability": 1)")));
  REQUIRE(run.trace.size() == 3);
  std::set<double> firsts, starts, finishes;
  for (const auto& row : run.trace) {
    // Run in turn 0-300 as one invocation, failed: every message abandoned (delivery count 1)
    // when the invocation ends, received again at once and run in turn 300-600 with the others;
    // failed again at its second delivery, each is dead-lettered (max_delivery_count 2) at 600.
    CHECK(row["outcome"] == "dead_lettered");
    CHECK(row["executions"] == "2");
    CHECK(row["redeliveries"] == "1");
    CHECK(row.ms("started_ms") - row.ms("first_started_ms") == 300);
    CHECK(row.ms("finished_ms") - row.ms("started_ms") == 100);
    CHECK(row.ms("ended_ms") == 600);
    firsts.insert(row.ms("first_started_ms"));
    starts.insert(row.ms("started_ms"));
    finishes.insert(row.ms("finished_ms"));
  }
  CHECK(firsts == std::set<double>{0, 100, 200});
  CHECK(starts == std::set<double>{300, 400, 500});
  CHECK(finishes == std::set<double>{400, 500, 600});
}

TEST_CASE("functions batches: a batch that succeeds completes each message") {
  const auto run = run_scenario(sb_batch_scenario("0, 0, 0, 0", batched_function(R"(, "maxMessageBatchSize": 3)")));
  REQUIRE(run.trace.size() == 4);
  int first = 0;
  for (const auto& row : run.trace) {
    CHECK(row["outcome"] == "completed_on_time");
    CHECK(row["executions"] == "1");
    CHECK(row["redeliveries"] == "0");
    // Three in the first invocation (0-300), in turn; the fourth waited available in the queue
    // while it ran (a running instance receives nothing) and ran alone from 300.
    if (row.ms("received_ms") == 0) {
      ++first;
      CHECK(row.ms("finished_ms") == row.ms("started_ms") + 100);
      CHECK(row.ms("stage_local_ms") == row.ms("started_ms"));
    } else {
      CHECK(row.ms("received_ms") == 300);
      CHECK(row.ms("started_ms") == 300);
      CHECK(row.ms("finished_ms") == 400);
    }
    CHECK(row.ms("ended_ms") == row.ms("finished_ms"));
  }
  CHECK(first == 3);
}

TEST_CASE("functions batches: no lock renewal so a batch longer than the lock runs twice") {
  // Two messages of 600 ms in one invocation (0-1200) under a 1 s lock: the trigger renews no
  // lock, so both lapse at 1000 (delivery count 1); their copies run on, their Complete fails.
  // Received again at 1200 they lapse again at 2200, at their second delivery: dead-lettered.
  const auto lapsed = run_scenario(sb_batch_scenario("0, 0", batched_function(R"(, "maxMessageBatchSize": 2)"), 2, 1000, "", 600));
  REQUIRE(lapsed.trace.size() == 2);
  for (const auto& row : lapsed.trace) {
    CHECK(row["outcome"] == "dead_lettered");
    CHECK(row["executions"] == "2");
    CHECK(row.ms("ended_ms") == 2200);
  }
  // The same batch with each message's lock renewed from the batch's start (by hand: renewal 5 s).
  const auto renewed = run_scenario(sb_batch_scenario(
      "0, 0", R"({"queue": "q", "prefetch": 2, "max_auto_lock_renewal_ms": 5000, "batch_handler": {"max_messages": 2}})", 2,
      1000, "", 600));
  REQUIRE(renewed.trace.size() == 2);
  for (const auto& row : renewed.trace) {
    CHECK(row["outcome"] == "completed_on_time");
    CHECK(row["executions"] == "1");
    CHECK(row.ms("ended_ms") == 1200);
  }
}

TEST_CASE("functions batches: a message goes stale while its batch waits for minMessageBatchSize") {
  const std::string wait = R"(, "maxMessageBatchSize": 10, "minMessageBatchSize": 5, "maxBatchWaitTime": "00:00:05")";
  // Alone, it waits for four more until maxBatchWaitTime (5 s) and is past its 3 s deadline then.
  const auto lone = run_scenario(sb_batch_scenario("0", batched_function(wait), 2, 10000, R"(, "deadline_ms": 3000)"));
  REQUIRE(lone.trace.size() == 1);
  CHECK(lone.trace[0]["outcome"] == "expired_before_start");
  CHECK(lone.trace[0].ms("ended_ms") == 5000);
  CHECK(lone.trace[0].ms("stage_local_ms") == 5000);
  // Five at once are enough: the batch starts at 0 (5 x 100 ms, in turn), every message in time.
  const auto five = run_scenario(sb_batch_scenario("0, 0, 0, 0, 0", batched_function(wait), 2, 10000, R"(, "deadline_ms": 3000)"));
  REQUIRE(five.trace.size() == 5);
  std::set<double> starts;
  for (const auto& row : five.trace) {
    CHECK(row["outcome"] == "completed_on_time");
    CHECK(row.ms("finished_ms") == row.ms("started_ms") + 100);
    starts.insert(row.ms("started_ms"));
  }
  CHECK(starts == std::set<double>{0, 100, 200, 300, 400});
  // Two early messages and three at 1 s: the batch starts at 1 s, when the fifth is in.
  const auto later = run_scenario(sb_batch_scenario("0, 0, 1000, 1000, 1000", batched_function(wait)));
  REQUIRE(later.trace.size() == 5);
  starts.clear();
  for (const auto& row : later.trace) starts.insert(row.ms("started_ms"));
  CHECK(starts == std::set<double>{1000, 1100, 1200, 1300, 1400});
}

TEST_CASE("functions batches: the mapping is the batch handler it names") {
  const std::string text = sb_batch_scenario("0, 0, 0, 0, 0, 0, 0", batched_function(R"(, "maxMessageBatchSize": 3)"));
  const std::string by_hand = sb_batch_scenario(
      "0, 0, 0, 0, 0, 0, 0", R"({"queue": "q", "slots": 1, "prefetch": 3, "max_auto_lock_renewal_ms": 0, "ack": "after-finish",
      "receive_mode": "peek-lock", "exec_timeout": 300000, "batch_handler": {"max_messages": 3, "window_ms": 0,
      "execution": "sequential"}})");
  const auto a = run_scenario(text);
  const auto b = run_scenario(by_hand);
  REQUIRE(a.trace.size() == b.trace.size());
  for (std::size_t i = 0; i < a.trace.size(); ++i) CHECK(a.trace[i].cells == b.trace[i].cells);
  // batch_execution "concurrent" is the batch handler's "concurrent".
  std::string concurrent = by_hand;
  concurrent.replace(concurrent.find("sequential"), 10, "concurrent");
  const auto c = run_scenario(sb_batch_scenario(
      "0, 0, 0, 0, 0, 0, 0", batched_function(R"(, "maxMessageBatchSize": 3, "batch_execution": "concurrent")")));
  const auto d = run_scenario(concurrent);
  REQUIRE(c.trace.size() == d.trace.size());
  for (std::size_t i = 0; i < c.trace.size(); ++i) CHECK(c.trace[i].cells == d.trace[i].cells);
}

TEST_CASE("functions batches: the host's refusals name the setting") {
  const std::string q = "0";
  CHECK(load_error(sb_batch_scenario(q, batched_function(R"(, "maxMessageBatchSize": 10, "minMessageBatchSize": 20)"))) ==
        "consumers.0.framework.minMessageBatchSize: expected at most maxMessageBatchSize (10): the Functions host refuses it "
        "(\"The minimum message batch size must be less than the maximum message batch size\", "
        "ServiceBusHostBuilderExtensions), got 20");
  CHECK(load_error(sb_batch_scenario(q, batched_function(R"(, "maxBatchWaitTime": "00:03:00")"))) ==
        "consumers.0.framework.maxBatchWaitTime: expected at most 00:02:30: the Functions host refuses a longer wait (\"no "
        "longer then 50% of the entity message lock duration, meaning the maximum allowed value is 2 minutes and 30 "
        "seconds\", ServiceBusHostBuilderExtensions), got 00:03:00");
  CHECK(load_error(sb_batch_scenario(q, batched_function(R"(, "maxMessageBatchSize": 0)"))) ==
        "consumers.0.framework.maxMessageBatchSize: expected an integer from 1 to 65535, got 0");
  // host.json is the app's: the host checks it for a function that is not batched too.
  CHECK(load_error(sb_batch_scenario(
            q, R"({"queue": "q", "framework": {"name": "azure-functions", "maxMessageBatchSize": 5, "minMessageBatchSize": 6}})")) ==
        "consumers.0.framework.minMessageBatchSize: expected at most maxMessageBatchSize (5): the Functions host refuses it "
        "(\"The minimum message batch size must be less than the maximum message batch size\", "
        "ServiceBusHostBuilderExtensions), got 6");
  CHECK(load_error(sb_batch_scenario(
            q, R"({"queue": "q", "framework": {"name": "azure-functions", "maxMessageBatchSize": 5, "isBatched": false}})")) ==
        "(no error)");
  CHECK(load_error(sb_batch_scenario(q, batched_function(R"(, "isSessionsEnabled": true)"))) ==
        "consumers.0.framework.isSessionsEnabled: true with isBatched true (a batched session trigger) is not modelled: give "
        "false (azure-functions: not modelled by brokersim)");
  // maxConcurrentCalls is read (and checked) but does not apply to a batched function.
  CHECK(load_error(sb_batch_scenario(q, batched_function(R"(, "maxConcurrentCalls": 32)"))) == "(no error)");
  // The consumer key itself.
  CHECK(load_error(sb_batch_scenario(q, R"({"queue": "q", "prefetch": 2, "batch_handler": {"max_messages": 3}})")) ==
        "consumers.0.prefetch: expected at least batch_handler.max_messages (3: the client holds its batch until it is "
        "settled), got 2");
  CHECK(load_error(sb_batch_scenario(
            q, R"({"queue": "q", "prefetch": 3, "batch_handler": {"max_messages": 3, "min_messages": 4}})")) ==
        "consumers.0.batch_handler.min_messages: expected an integer between 1 and 3, got 4");
}

TEST_CASE("functions batches: functionTimeout 00:00:00 exits 2 naming the setting and the host") {
  ScratchDir dir("brokersim-functions-batch");
  const auto zero = run_cli({"run", dir.write("s.json", sb_batch_scenario("0", batched_function(R"(, "functionTimeout": "00:00:00")"))),
                             "--json"});
  CHECK(zero.status == 2);
  CHECK(zero.err ==
        "brokersim: error: consumers.0.framework.functionTimeout: expected at least 00:00:01 (the Functions host refuses a "
        "shorter functionTimeout), got 00:00:00\n");
  const auto unbounded = run_cli({"run", dir.write("u.json", sb_batch_scenario("0", batched_function(R"(, "functionTimeout": -1)"))),
                                  "--json"});
  CHECK(unbounded.status == 2);
  CHECK(unbounded.err ==
        "brokersim: error: consumers.0.framework.functionTimeout: expected at most 00:10:00 on the Consumption plan, got -1 (no "
        "limit)\n");
}

}  // namespace functions_batch_test
