// consumers[].batch_handler and the aws-lambda framework's batches (models/consumer_batch.cpp):
// small deterministic cases, exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

namespace batch_handler_test {

using brokersim::test::load_error;
using brokersim::test::run_scenario;

// One SQS queue (visibility `visibility` ms) redriving after `receives` receives, no latencies,
// jobs of 100 ms published at `at`, one consumer group `consumer`.
std::string one_queue(const std::string& at, const std::string& consumer, int receives = 1, const std::string& extra = "",
                      int visibility = 10000) {
  return R"({"seed": 3, "stop": {"time_ms": 20000},
  "broker": {"kind": "amazon-sqs", "delivery_latency_ms": 0, "ack_latency_ms": 0,
             "queues": {"q": {"visibility_timeout_ms": )" + std::to_string(visibility) + R"(, "dead_letter_to": "dlq", "max_receive_count": )" +
         std::to_string(receives) + R"(}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [)" + at + R"(]}, "service_ms": 100)" + extra + R"(}],
  "consumers": [)" + consumer + "]}";
}

constexpr const char* kThree = "0, 0, 0";

TEST_CASE("batch handler: a failed batch returns whole after its visibility timeout") {
  const auto run = run_scenario(one_queue(kThree, R"({"queue": "q", "prefetch": 3, "batch_size": 3, "failure_probability": 1,
      "batch_handler": {"max_messages": 3, "window_ms": 0}})", 1, "", 1000));
  REQUIRE(run.trace.size() == 3);
  for (const auto& row : run.trace) {
    // One execution of 3 x 100 ms from 0, failed, not deleted: back at 1000, redriven there.
    CHECK(row.ms("started_ms") == 0);
    CHECK(row.ms("finished_ms") == 300);
    CHECK(row["outcome"] == "dead_lettered");
    CHECK(row["executions"] == "1");
    CHECK(row.ms("ended_ms") == 1000);
  }
}

TEST_CASE("batch handler: with item failures only the failed messages come back") {
  const std::string ten = "0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000";
  const std::string whole = R"({"queue": "q", "prefetch": 10, "batch_size": 10, "failure_probability": 0.5,
      "batch_handler": {"max_messages": 10, "item_failures": false}})";
  std::string items = whole;
  items.replace(items.find("false"), 5, "true");
  const auto retried = [](const brokersim::test::Run& run) {
    return std::count_if(run.trace.begin(), run.trace.end(), [](const auto& row) { return row["outcome"] == "dead_lettered"; });
  };
  const auto w = run_scenario(one_queue(ten, whole));
  const auto i = run_scenario(one_queue(ten, items));
  REQUIRE(w.trace.size() == 20);
  REQUIRE(i.trace.size() == 20);
  // A failed invocation returns its ten messages; reported items return one by one.
  CHECK(retried(w) % 10 == 0);
  CHECK(retried(i) > 0);
  CHECK(retried(i) % 10 != 0);
  CHECK(i.outcome(brokersim::Outcome::CompletedOnTime) == static_cast<std::uint64_t>(20 - retried(i)));
}

TEST_CASE("batch handler: a message goes stale while its batch window waits to fill") {
  const std::string consumer = R"({"queue": "q", "prefetch": 10, "batch_size": 10,
      "batch_handler": {"max_messages": 10, "window_ms": 1000}})";
  const auto lone = run_scenario(one_queue("0", consumer, 1, R"(, "deadline_ms": 500)"));
  REQUIRE(lone.trace.size() == 1);
  // Received at 0, the window ends at 1000: past its deadline, rejected before its start.
  CHECK(lone.trace[0]["outcome"] == "expired_before_start");
  CHECK(lone.trace[0].ms("ended_ms") == 1000);
  const auto full = run_scenario(one_queue("0, 0, 0, 0, 0, 0, 0, 0, 0, 0", consumer, 1, R"(, "deadline_ms": 5000)"));
  REQUIRE(full.trace.size() == 10);
  // A full batch does not wait for the window: 10 x 100 ms from 0.
  for (const auto& row : full.trace) {
    CHECK(row.ms("started_ms") == 0);
    CHECK(row.ms("finished_ms") == 1000);
  }
}

TEST_CASE("framework aws-lambda batches: MaximumConcurrency caps the invocations at once and a running one receives nothing") {
  std::string at = "0";
  for (int k = 1; k < 40; ++k) at += ", 0";
  const auto run = run_scenario(one_queue(at, R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 10,
      "Timeout": 2, "ScalingConfig": {"MaximumConcurrency": 2}}})", 3));
  REQUIRE(run.trace.size() == 40);
  // Two invocations of ten messages (1 s each) at a time: batches start at 0 and 1000 only.
  // The batches started at 1000 ms were received then, when the first two invocations had ended:
  // they waited visible in the queue, never in a busy invocation's buffer. In a batch, each
  // record waits for the ones before it (the handler loops over them, the framework's default):
  // its local stage is its turn, 0 to 900 ms.
  std::set<double> batches, turns;
  for (const auto& row : run.trace) {
    batches.insert(row.ms("received_ms"));
    turns.insert(row.ms("stage_local_ms"));
    CHECK(row["outcome"] == "completed_on_time");
    CHECK(row.ms("stage_local_ms") == row.ms("started_ms") - row.ms("received_ms"));
    CHECK(row.ms("finished_ms") - row.ms("started_ms") == 100);
  }
  CHECK(batches == std::set<double>{0, 1000});
  CHECK(turns == std::set<double>{0, 100, 200, 300, 400, 500, 600, 700, 800, 900});
}

TEST_CASE("framework aws-lambda batches: the platform's refusals name the setting") {
  const std::string q = "0";
  CHECK(load_error(one_queue(q, R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 100}})")) ==
        "consumers.0.framework.MaximumBatchingWindowInSeconds: below 1 with BatchSize 100 (Lambda requires a batching window "
        "of at least 1 s when BatchSize is above 10, CreateEventSourceMapping API reference) (aws-lambda: not modelled by "
        "brokersim)");
  CHECK(load_error(one_queue(q, R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 100,
      "MaximumBatchingWindowInSeconds": 1}})")) == "(no error)");
  CHECK(load_error(one_queue(q, R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 10001,
      "MaximumBatchingWindowInSeconds": 1}})")) ==
        "consumers.0.framework.BatchSize: expected an integer between 1 and 10000, got 10001");
  // The queue's visibility is 1 s: a 2 s function timeout is refused.
  CHECK(load_error(one_queue(q, R"({"queue": "q", "framework": {"name": "aws-lambda", "Timeout": 1}})", 1, "", 1000)) ==
        "(no error)");
  CHECK(load_error(one_queue(q, R"({"queue": "q", "framework": {"name": "aws-lambda", "Timeout": 3}})", 1, "", 1000)) ==
        "consumers.0.framework.Timeout: expected at most the visibility timeout of broker.queues.q (visibility_timeout_ms "
        "1000): Lambda refuses an event source mapping whose function timeout exceeds the queue's visibility timeout "
        "(services-sqs-configure), got 3 s");
  CHECK(load_error(one_queue(q, R"({"queue": "q", "prefetch": 5, "batch_handler": {"max_messages": 10}})")) ==
        "consumers.0.prefetch: expected at least batch_handler.max_messages (10: the client holds its batch until it is "
        "deleted), got 5");
}

TEST_CASE("framework aws-lambda: a group's own visibility_timeout_ms or on_failure is refused naming the framework") {
  // The queue's visibility is 1 s and Timeout 1 s passes Lambda's check; a group visibility of
  // 100 ms would have every invocation's batch come back while it runs.
  const std::string lambda = R"({"queue": "q", "framework": {"name": "aws-lambda", "Timeout": 1}, )";
  CHECK(load_error(one_queue("0", lambda + R"("visibility_timeout_ms": 100})", 1, "", 1000)) ==
        "consumers.0.visibility_timeout_ms: expected none with framework \"aws-lambda\" (the event source mapping receives "
        "with the queue's own visibility timeout, which Lambda checks the function's Timeout against "
        "(services-sqs-configure): give the queue's visibility_timeout_ms; leave it out, or leave out framework), got 100");
  CHECK(load_error(one_queue("0", lambda + R"("on_failure": "delete"})", 1, "", 1000)) ==
        "consumers.0.on_failure: expected none with framework \"aws-lambda\" (Lambda returns a failed batch to the queue, its "
        "messages visible again when their visibility timeout lapses (services-sqs-errorhandling): nothing deletes them; "
        "leave it out, or leave out framework), got \"delete\"");
  // Refused whatever the value: the key is Lambda's to decide, not the group's.
  CHECK(load_error(one_queue("0", lambda + R"("on_failure": "keep"})", 1, "", 1000)).find("consumers.0.on_failure: expected none") == 0);
  // The same keys without a framework are an SQS client's own.
  CHECK(load_error(one_queue("0", R"({"queue": "q", "visibility_timeout_ms": 100, "on_failure": "delete"})", 1, "", 1000)) ==
        "(no error)");
  brokersim::test::ScratchDir d("lambda-keys");
  const auto r = brokersim::test::run_cli(
      {"run", d.write("s.json", one_queue("0", lambda + R"("on_failure": "delete"})", 1, "", 1000))});
  CHECK(r.status == 2);
  CHECK(r.err.find("framework \"aws-lambda\"") != std::string::npos);
}

TEST_CASE("framework aws-lambda billing: requests and GB-seconds of a known case") {
  // Three lone messages (at 0, 1 s and 2 s) of 100.4 ms: three invocations, each billed 101 ms,
  // at 2048 MB: 0.303 s x 2 GB.
  std::string text = one_queue("0, 1000, 2000", R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 3,
      "Timeout": 1, "MemorySize": 2048, "ScalingConfig": {"MaximumConcurrency": 2}}})");
  text.replace(text.find("\"service_ms\": 100"), 17, "\"service_ms\": 100.4");
  const auto run = run_scenario(text);
  const auto json = run.json();
  CHECK(json["billing"]["requests"] == 3);
  CHECK(json["billing"]["gb_seconds"].get<double>() == 0.606);
  CHECK(json["billing"]["groups"]["0"]["requests"] == 3);
  // A Lambda group of batches of one with no MemorySize keeps the outputs it had: no billing.
  const auto plain = run_scenario(one_queue("0", R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 1,
      "Timeout": 1, "ScalingConfig": {"MaximumConcurrency": 2}}})"));
  CHECK_FALSE(plain.json().contains("billing"));
  CHECK(load_error(one_queue("0", R"({"queue": "q", "framework": {"name": "aws-lambda", "MemorySize": 64}})")) ==
        "consumers.0.framework.MemorySize: expected an integer from 128 to 10240, got 64");
}

}  // namespace batch_handler_test
