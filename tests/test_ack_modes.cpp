// consumers[].ack: after-finish (the default), before-start (acked as a slot takes the job) and
// on-receipt (no-ack / auto-ack; Service Bus ReceiveAndDelete). Exact small runs per mode and
// broker kind, and the loader's errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

// Two jobs at 0, 100 ms each, prefetch 1, one slot; acks take 10 ms to reach the broker.
constexpr const char* kTwoJobs = R"({
  "stop": {"time_ms": 5000},
  "broker": {"ack_latency_ms": 10, "queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 100}],
  "consumers": [{"queue": "q", "prefetch": 1}]
})";

// Three jobs at 0, 100 ms each, prefetch 2, one slot; consumer 0 crashes at 50 ms and is back at
// 1050 ms.
constexpr const char* kCrash = R"({
  "stop": {"time_ms": 5000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
  "consumers": [{"queue": "q", "prefetch": 2}],
  "faults": [{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 1000}]
})";

}  // namespace

TEST_CASE("ack before-start frees prefetch credit as the job starts: with prefetch 1 the next job is delivered while the first executes") {
  for (const char* kind : {"rabbitmq-classic", "rabbitmq-quorum"}) {
    INFO(kind);
    const std::string k = std::string("broker.kind=") + kind;
    // after-finish: job 1 is delivered when job 0's ack arrives (100 + 10 ms).
    auto late = run_scenario(kTwoJobs, {k});
    REQUIRE(late.trace.size() == 2);
    CHECK(late.trace[1].ms("delivered_ms") == 110);
    CHECK(late.trace[1].ms("started_ms") == 110);
    CHECK(late.trace[1].ms("ended_ms") == 210);
    // before-start: job 0's ack leaves at 0 and arrives at 10; job 1 waits in the buffer for the
    // slot (100 ms) and ends at 200.
    auto early = run_scenario(kTwoJobs, {k, "consumers.0.ack=before-start"});
    REQUIRE(early.trace.size() == 2);
    CHECK(early.trace[0].ms("ended_ms") == 100);
    CHECK(early.trace[1].ms("delivered_ms") == 10);
    CHECK(early.trace[1].ms("started_ms") == 100);
    CHECK(early.trace[1].ms("ended_ms") == 200);
    CHECK(early.outcome(Outcome::CompletedOnTime) == 2);
    // on-receipt: no credit limit at all, both delivered at 0.
    auto none = run_scenario(kTwoJobs, {k, "consumers.0.ack=on-receipt"});
    REQUIRE(none.trace.size() == 2);
    CHECK(none.trace[1].ms("delivered_ms") == 0);
    CHECK(none.trace[1].ms("started_ms") == 100);
    CHECK(none.trace[1].ms("ended_ms") == 200);
    CHECK(none.outcome(Outcome::CompletedOnTime) == 2);
    // The default is after-finish.
    auto explicit_late = run_scenario(kTwoJobs, {k, "consumers.0.ack=after-finish"});
    CHECK(explicit_late.trace[1].ms("ended_ms") == 210);
  }
}

TEST_CASE("ack before-start: a crash loses the executing job, the buffered ones are redelivered") {
  for (const char* kind : {"rabbitmq-classic", "rabbitmq-quorum"}) {
    INFO(kind);
    auto run = run_scenario(kCrash, {std::string("broker.kind=") + kind, "consumers.0.ack=before-start"});
    REQUIRE(run.trace.size() == 3);
    // Job 0 was acked at its start (0 ms): the broker had nothing left to requeue.
    CHECK(run.trace[0]["outcome"] == "lost");
    CHECK(run.trace[0].ms("ended_ms") == 50);
    CHECK(run.trace[0]["redeliveries"] == "0");
    // Its ack freed a credit at once: jobs 1 and 2 were both buffered, unacked, and come back.
    for (int i : {1, 2}) {
      CHECK(run.trace[i]["outcome"] == "completed_on_time");
      CHECK(run.trace[i].ms("delivered_ms") == 1050);
      CHECK(run.trace[i]["redeliveries"] == "1");
    }
    CHECK(run.trace[1].ms("started_ms") == 1050);
    CHECK(run.trace[2].ms("started_ms") == 1150);
    CHECK(run.outcome(Outcome::Lost) == 1);
    CHECK(run.result.duplicate_executions == 0);
  }
  // after-finish (the default): nothing is lost, job 0 runs twice.
  auto late = run_scenario(kCrash);
  CHECK(late.outcome(Outcome::Lost) == 0);
  CHECK(late.outcome(Outcome::CompletedOnTime) == 3);
  CHECK(late.result.duplicate_executions == 1);
}

TEST_CASE("ack on-receipt: a crash loses everything received, executing or buffered, and nothing comes back") {
  for (const char* kind : {"rabbitmq-classic", "rabbitmq-quorum"}) {
    INFO(kind);
    auto run = run_scenario(kCrash, {std::string("broker.kind=") + kind, "consumers.0.ack=on-receipt"});
    REQUIRE(run.trace.size() == 3);
    for (int i : {0, 1, 2}) {
      CHECK(run.trace[i]["outcome"] == "lost");
      CHECK(run.trace[i].ms("delivered_ms") == 0);  // prefetch 2 does not limit a no-ack consumer
      CHECK(run.trace[i].ms("ended_ms") == 50);
      CHECK(run.trace[i]["redeliveries"] == "0");
    }
    CHECK(run.outcome(Outcome::Lost) == 3);
    CHECK(run.result.redeliveries == 0);
  }
}

TEST_CASE("ack before-start: a failed job keeps its outcome and is not retried - a job stale at its start is checked before any ack") {
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "rabbitmq-quorum", "ack_latency_ms": 10, "queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "deadline_ms": 150, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2, "ack": "before-start", "failure_probability": 1, "on_expired": "reject"}]
  })";
  auto run = run_scenario(text);
  REQUIRE(run.trace.size() == 2);
  CHECK(run.trace[0]["outcome"] == "failed");
  CHECK(run.trace[0].ms("ended_ms") == 100);
  CHECK(run.trace[0]["redeliveries"] == "0");
  // Job 1 reaches the slot at 100 with 50 ms left of its deadline: admitted, acked, failed.
  CHECK(run.trace[1]["outcome"] == "failed");
  CHECK(run.trace[1].ms("ended_ms") == 200);
  CHECK(run.queue("dlq").published == 0);
  // With a deadline of 80 ms job 1 is rejected before start: the check comes before the ack, so
  // on_expired reject still dead-letters it.
  auto stale = run_scenario(text, {"producers.0.deadline_ms=80"});
  CHECK(stale.trace[1]["outcome"] == "expired_before_start");
  CHECK(stale.queue("dlq").published == 1);
}

TEST_CASE("ack before-start: quorum 4.3's consumer timeout no longer applies once the ack has arrived") {
  const char* text = R"({
    "stop": {"time_ms": 200000},
    "broker": {"kind": "rabbitmq-quorum", "version": "4.3", "consumer_timeout_ms": 60000, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100000}],
    "consumers": [{"queue": "q", "prefetch": 1, "count": 2}]
  })";
  auto late = run_scenario(text);
  CHECK(late.result.consumer_timeouts >= 1);
  CHECK(late.result.duplicate_executions >= 1);
  auto early = run_scenario(text, {"consumers.0.ack=before-start"});
  CHECK(early.result.consumer_timeouts == 0);
  CHECK(early.result.duplicate_executions == 0);
  CHECK(early.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(early.trace.at(0).ms("ended_ms") == 100000);
}

TEST_CASE("ack on-receipt on azure-servicebus is receive_mode receive-and-delete") {
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2}],
    "faults": [{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 1000}]
  })";
  auto by_ack = run_scenario(text, {"consumers.0.ack=on-receipt"});
  auto by_mode = run_scenario(text, {"consumers.0.receive_mode=receive-and-delete"});
  CHECK(by_ack.outcome(Outcome::Lost) == by_mode.outcome(Outcome::Lost));
  CHECK(by_ack.outcome(Outcome::Lost) >= 1);
  REQUIRE(by_ack.trace.size() == by_mode.trace.size());
  for (std::size_t i = 0; i < by_ack.trace.size(); ++i) {
    CHECK(by_ack.trace[i]["outcome"] == by_mode.trace[i]["outcome"]);
    CHECK(by_ack.trace[i]["ended_ms"] == by_mode.trace[i]["ended_ms"]);
  }
  auto both = run_scenario(text, {"consumers.0.ack=on-receipt", "consumers.0.receive_mode=receive-and-delete"});
  CHECK(both.outcome(Outcome::Lost) == by_mode.outcome(Outcome::Lost));
  CHECK(load_error(text, {"consumers.0.ack=on-receipt", "consumers.0.receive_mode=peek-lock"}) ==
        "consumers.0.ack: ack \"on-receipt\" contradicts receive_mode \"peek-lock\" (on-receipt is receive-and-delete; give "
        "one of the two keys)");
  CHECK(load_error(text, {"consumers.0.ack=after-finish", "consumers.0.receive_mode=receive-and-delete"}) ==
        "consumers.0.ack: ack \"after-finish\" contradicts receive_mode \"receive-and-delete\" (on-receipt is "
        "receive-and-delete; give one of the two keys)");
}

TEST_CASE("ack validation: unknown values, on-receipt with on_expired reject or requeue, kinds that do not model a mode") {
  CHECK(load_error(kTwoJobs, {"consumers.0.ack=late"}) ==
        "consumers.0.ack: expected one of \"after-finish\", \"before-start\", \"on-receipt\", got \"late\"");
  CHECK(load_error(kTwoJobs, {"consumers.0.ack=1"}).find("consumers.0.ack: expected one of") == 0);
  CHECK(load_error(kTwoJobs, {"consumers.0.ack=on-receipt", "consumers.0.on_expired=requeue"}) ==
        "consumers.0.on_expired: expected \"ack\" with ack \"on-receipt\" (the broker settled the message when it sent it), "
        "got \"requeue\"");
  CHECK(load_error(kTwoJobs, {"consumers.0.ack=on-receipt", "consumers.0.on_expired=reject"}).find("consumers.0.on_expired: ") == 0);
  CHECK(load_error(kTwoJobs, {"consumers.0.ack=on-receipt", "consumers.0.on_expired=ack"}) == "(no error)");
  CHECK(load_error(kTwoJobs, {"consumers.0.ack=before-start", "consumers.0.on_expired=requeue"}) == "(no error)");
  CHECK(load_error(kTwoJobs, {"broker.kind=amazon-sqs", "consumers.0.prefetch=0", "consumers.0.ack=before-start"}) == "(no error)");
  CHECK(load_error(kTwoJobs, {"broker.kind=amazon-sqs", "consumers.0.prefetch=0", "consumers.0.ack=on-receipt"}) ==
        "consumers.0.ack: expected \"after-finish\" or \"before-start\" (SQS has no no-ack receive: a received message "
        "is in flight until deleted; a client that deletes at once is \"before-start\"), got \"on-receipt\"");
  CHECK(load_error(kTwoJobs, {"broker.kind=azure-servicebus", "consumers.0.ack=before-start"}) ==
        "consumers.0.ack: expected \"after-finish\" or \"on-receipt\" (an early Complete() is not modelled on broker kind "
        "\"azure-servicebus\"), got \"before-start\"");
}
