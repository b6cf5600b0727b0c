// Queue expiry, broker restarts, message sizes, at-most-once dead-lettering and expiry slack:
// exact outcomes and times. The RabbitMQ test vectors (docs/semantics.md part 2) are in
// tests/test_vectors.cpp and test_vectors_12_26.cpp.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::test::run_scenario;

TEST_CASE("x-expires: an attached consumer keeps the queue - after it goes, the lease runs again") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 20000},
    "broker": {"queues": {"q": {"expires_ms": 3000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 6000]}, "service_ms": 1}],
    "consumers": [{"queue": "q", "prefetch": 1}],
    "faults": [{"at_ms": 5000, "consumer": 0, "crash": true}]
  })");
  CHECK(run.trace[0]["outcome"] == "completed_on_time");  // consumed while the consumer was there
  CHECK(run.trace[1]["outcome"] == "lost");               // the queue went at 8000 with it
  CHECK(run.trace[1].ms("ended_ms") == 8000);
  CHECK(run.queue("q").deletions == 1);
}

TEST_CASE("publishing to a deleted queue loses the message - a consumer that attaches re-declares it") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 20000},
    "broker": {"queues": {"q": {"expires_ms": 1000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [2000, 6000]}, "service_ms": 1}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 5000}]
  })");
  CHECK(run.trace[0]["outcome"] == "lost");
  CHECK(run.trace[0].ms("ended_ms") == 2000);
  CHECK(run.trace[1]["outcome"] == "completed_on_time");
}

TEST_CASE("broker down: publishes fail, consumers reconnect at restart and get the surviving messages") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 10000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 1500]}, "persistent": true, "service_ms": 2000}],
    "consumers": [{"queue": "q", "prefetch": 1}],
    "faults": [{"at_ms": 1000, "broker_down_ms": 1000}]
  })");
  // Job 0 was executing when the connection dropped: redelivered after the restart.
  CHECK(run.trace[0]["redeliveries"] == "1");
  CHECK(run.trace[0].ms("started_ms") == 2000);
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[1].ms("started_ms") == 4000);
  CHECK(run.trace[2]["outcome"] == "rejected_at_publish");
  CHECK(run.trace[2].ms("ended_ms") == 1500);
  CHECK(run.result.duplicate_executions == 1);
}

TEST_CASE("message sizes: 50,000 x 1 KB waiting 60 s hold 48.8 MiB (seed 003)") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 70000},
    "broker": {"queues": {"big": {"message_ttl_ms": 60000}}},
    "producers": [{"queue": "big", "arrivals": {"periodic": {"every_ms": 0.01}}, "message_bytes": 1024, "service_ms": 1}]
  })", {"stop={\"jobs\": 50000, \"time_ms\": 70000}"});
  const auto& q = run.queue("big");
  CHECK(q.max_bytes == 50000u * 1024u);
  CHECK(static_cast<double>(q.max_bytes) / (1024.0 * 1024.0) == doctest::Approx(48.83).epsilon(1e-3));
  // Each message is held for its 60 s TTL, plus up to 1 ms: the head timer's delay is rounded
  // up to whole milliseconds (ensure_ttl_timer), and these were enqueued 10 us apart.
  CHECK(q.byte_seconds >= 50000.0 * 1024.0 * 60.0);
  CHECK(q.byte_seconds <= 50000.0 * 1024.0 * 60.001);
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 50000);
}

TEST_CASE("max_length_bytes counts ready message bodies") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {"max_length_bytes": 2500, "overflow": "reject-publish"}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1, 2]}, "message_bytes": 1000, "service_ms": 1}]
  })");
  CHECK(run.trace[1]["outcome"] == "in_system");
  CHECK(run.trace[2]["outcome"] == "rejected_at_publish");
  CHECK(run.queue("q").max_bytes == 2000);
}

TEST_CASE("a refusing dead-letter target loses the message (at-most-once dead-lettering)") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {"message_ttl_ms": 10, "dead_letter_to": "dlq"},
                          "dlq": {"max_length": 1, "overflow": "reject-publish"}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 1}]
  })");
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 1);
  CHECK(run.outcome(Outcome::Lost) == 2);
  CHECK(run.queue("q").dl(DeathReason::Expired) == 3);
  CHECK(run.queue("dlq").ready_at_end == 1);
}

TEST_CASE("expiry slack delays the head timer, as measured on real brokers (seed 003: +2 ms)") {
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"expiry_slack_ms": 2, "queues": {"delay": {"message_ttl_ms": 1000, "dead_letter_to": "work"}, "work": {}}},
    "producers": [{"queue": "delay", "arrivals": {"at_ms": [0, 304, 612]}, "service_ms": 1}],
    "consumers": [{"queue": "work", "prefetch": 1}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace[0].ms("started_ms") == 1002);
  CHECK(run.trace[1].ms("started_ms") == 1306);
  CHECK(run.trace[2].ms("started_ms") == 1614);
  auto exact = run_scenario(text, {"broker.expiry_slack_ms=0"});
  CHECK(exact.trace[1].ms("started_ms") == 1304);
}
