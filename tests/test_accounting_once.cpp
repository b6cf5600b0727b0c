// Issue 43, items 1-3: every number counted once and labelled for what it is. A job's outcome is
// decided once (its first terminal event); what its message does afterwards in a dead-letter
// queue nobody reads is the queue's figure, never the job's. The wait table says what each row
// counts; "on time" only where a deadline exists.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::Wait;
using brokersim::test::run_scenario;

namespace {

std::string once_summary(const brokersim::test::Run& run) {
  std::ostringstream out;
  brokersim::print_summary(out, run.scenario, run.result);
  return out.str();
}

// The line of `text` that starts with `prefix` (after leading spaces), or "".
std::string once_line(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos && line.compare(first, prefix.size(), prefix) == 0) return line;
  }
  return "";
}

// The issue's emails case, scaled down: three jobs at 0 into `emails` (TTL 600 ms, dead-lettered
// to `emails_dlq`, whose own TTL is 3,600 ms and which no consumer reads). The one consumer takes
// job 0 at once and is stalled until 1,050 ms; jobs 1 and 2 expire in `emails` at 600 ms, are
// dead-lettered, and expire again in `emails_dlq` at 4,200 ms (dropped: it has no target).
constexpr const char* kTwiceExpired = R"({
  "stop": {"time_ms": 10000},
  "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {
    "emails": {"message_ttl_ms": 600, "dead_letter_to": "emails_dlq"},
    "emails_dlq": {"message_ttl_ms": 3600}}},
  "producers": [{"queue": "emails", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 10}],
  "consumers": [{"queue": "emails", "prefetch": 1}],
  "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 1050}]
})";

}  // namespace

TEST_CASE("accounting once - a job that expires in its queue and again in the dead-letter queue is one expired job, decided at its first expiry") {
  const auto run = run_scenario(kTwiceExpired);
  // Jobs: two expired in the queue (once each), one completed.
  CHECK(run.result.generated == 3);
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 2);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 1);
  // The queue wait of the expired jobs: one sample per job, to the expiry that decided it (600
  // ms), not 4 samples averaging 600 and 3,600 ms.
  CHECK(run.result.wait(Wait::QueueExpired).count() == 2);
  CHECK(run.result.wait(Wait::QueueExpired).mean() == doctest::Approx(600e6));
  CHECK(run.result.wait(Wait::QueueExpired).max() == 600'000'000);
  // Sojourn ends at the outcome: 600 ms for the expired jobs, 1,060 ms for job 0 (stalled to
  // 1,050, then 10 ms of service); never the 4,200 ms the messages spent before their second expiry.
  CHECK(run.result.wait(Wait::Sojourn).count() == 3);
  CHECK(run.result.wait(Wait::Sojourn).max() == 1'060'000'000);
  // The trace says the same: ended at 600 ms, its stages add up to that, one dead-lettering.
  REQUIRE(run.trace.size() == 3);
  for (int i : {1, 2}) {
    CAPTURE(i);
    const auto& row = run.trace[static_cast<std::size_t>(i)];
    CHECK(row["outcome"] == "expired_in_queue");
    CHECK(row.ms("ended_ms") == 600);
    CHECK(row.ms("stage_queue_ms") == 600);
    CHECK(row["dead_letterings"] == "1");
  }
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[0].ms("ended_ms") == 1060);
  // What the messages did afterwards is the queues': each queue expired both messages once.
  CHECK(run.queue("emails").expired == 2);
  CHECK(run.queue("emails").dl(brokersim::DeathReason::Expired) == 2);
  CHECK(run.queue("emails").delivered == 1);
  CHECK(run.queue("emails_dlq").published == 2);
  CHECK(run.queue("emails_dlq").expired == 2);
  CHECK(run.queue("emails_dlq").dl(brokersim::DeathReason::Expired) == 0);  // no target: dropped
  CHECK(run.queue("emails_dlq").ready_at_end == 0);
  // --json: the same figures under their documented keys.
  const auto j = run.json();
  CHECK(j["outcomes"]["expired_in_queue"] == 2);
  CHECK(j["wait_ms"]["queue_expired"]["count"] == 2);
  CHECK(j["wait_ms"]["queue_expired"]["mean"].get<double>() == doctest::Approx(600.0));
  CHECK(j["wait_ms"]["sojourn"]["max"].get<double>() == doctest::Approx(1060.0));
  CHECK(j["queues"]["emails"]["expired"] == 2);
  CHECK(j["queues"]["emails_dlq"]["expired"] == 2);
  // The summary: the jobs, once, and their wait to the first expiry.
  const std::string text = once_summary(run);
  CHECK(text.find("the 2 jobs that expired there waited 600.0 ms") != std::string::npos);
  CHECK(once_line(text, "queue    (enqueue -> expiry)").find(" 2 jobs ") != std::string::npos);
  const std::string dlq_row = once_line(text, "emails_dlq");
  REQUIRE(!dlq_row.empty());
  CHECK(dlq_row.rfind("  emails_dlq                2          0          2", 0) == 0);
}

TEST_CASE("accounting once - an expiry that moves a job on to a queue its consumers read decides nothing: the consumer's decision is the outcome") {
  // A delay queue: `delay` (TTL 100 ms, no consumer) dead-letters into `work`, read by a consumer.
  // The job expires in `delay` at 100 ms, is completed from `work` at 110 ms: completed, and no
  // queue_expired sample (its outcome is not an expiry); `delay` counts the expired message.
  const auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {
      "delay": {"message_ttl_ms": 100, "dead_letter_to": "work"}, "work": {}}},
    "producers": [{"queue": "delay", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
    "consumers": [{"queue": "work"}]
  })");
  CHECK(run.outcome(Outcome::CompletedOnTime) == 1);
  CHECK(run.result.wait(Wait::QueueExpired).count() == 0);
  CHECK(run.result.wait(Wait::Sojourn).max() == 110'000'000);
  CHECK(run.queue("delay").expired == 1);
  CHECK(run.queue("work").expired == 0);
  REQUIRE(run.trace.size() == 1);
  CHECK(run.trace[0].ms("ended_ms") == 110);
}

TEST_CASE("accounting once - a rejected job resting in a dead-letter queue keeps its outcome when the queue expires it") {
  // One job with a 100 ms deadline and 1 s of service behind another: the second is stale at its
  // admission check (1,000 ms), rejected to `dlq` (TTL 500 ms, unread), which expires it at
  // 1,500 ms. It stays expired_before_start, ended at 1,000 ms; no queue_expired sample.
  const auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {
      "work": {"dead_letter_to": "dlq"}, "dlq": {"message_ttl_ms": 500}}},
    "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 0]}, "deadline_ms": 100, "service_ms": 1000}],
    "consumers": [{"queue": "work", "prefetch": 2, "on_expired": "reject"}]
  })");
  CHECK(run.outcome(Outcome::ExpiredBeforeStart) == 1);
  CHECK(run.outcome(Outcome::CompletedLate) == 1);
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 0);
  CHECK(run.result.wait(Wait::QueueExpired).count() == 0);
  REQUIRE(run.trace.size() == 2);
  CHECK(run.trace[1]["outcome"] == "expired_before_start");
  CHECK(run.trace[1].ms("ended_ms") == 1000);
  CHECK(run.queue("dlq").published == 1);
  CHECK(run.queue("dlq").expired == 1);
}

TEST_CASE("accounting once - the wait table says what each row counts: a redelivered job is two deliveries") {
  // Three jobs at 0, 100 ms each, prefetch 2, one slot; the consumer crashes at 50 ms holding
  // jobs 0 and 1, which come back (tests/test_ack_modes.cpp): 3 jobs, 5 deliveries.
  const auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2}],
    "faults": [{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 1000}]
  })");
  CHECK(run.result.generated == 3);
  CHECK(run.result.redeliveries == 2);
  CHECK(run.result.wait(Wait::Queue).count() == 5);
  CHECK(run.result.wait(Wait::Sojourn).count() == 3);
  CHECK(run.queue("q").delivered == 5);
  const std::string text = once_summary(run);
  CHECK(text.find("Where the waiting happened (ms)        count of ") != std::string::npos);
  CHECK(once_line(text, "queue    (enqueue -> delivery)").find(" 5 deliveries ") != std::string::npos);
  CHECK(once_line(text, "transit  (delivery -> receipt)").find(" receipts ") != std::string::npos);
  CHECK(once_line(text, "service  (start -> finish)").find(" executions ") != std::string::npos);
  CHECK(once_line(text, "sojourn  (creation -> outcome)").find(" 3 jobs ") != std::string::npos);
  CHECK(text.find("ms in the broker queue (per delivery)") != std::string::npos);
  CHECK(run.json()["wait_ms"]["queue"]["count"] == 5);
}

TEST_CASE("accounting once - 'on time' only for jobs that have a deadline") {
  constexpr const char* kTwo = R"({
    "stop": {"time_ms": 5000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q"}]
  })";
  // No deadline: completed, never "on time"; the JSON key stays completed_on_time.
  const auto none = run_scenario(kTwo);
  CHECK(none.outcome(Outcome::CompletedOnTime) == 2);
  CHECK(none.result.completed_without_deadline == 2);
  const std::string plain = once_summary(none);
  CHECK(plain.find("In short: 100.00% of jobs completed (no deadline), 0.00% started") != std::string::npos);
  CHECK(plain.find("on time") == std::string::npos);
  CHECK(plain.find("goodput 0.400 jobs/s (no deadline: every completion counts)") != std::string::npos);
  CHECK(none.json()["outcomes"]["completed_on_time"] == 2);
  // A deadline both meet: on time.
  const auto met = run_scenario(kTwo, {"producers.0.deadline_ms=1000"});
  CHECK(met.result.completed_without_deadline == 0);
  const std::string timed = once_summary(met);
  CHECK(timed.find("In short: 100.00% of jobs completed on time, 0.00% started") != std::string::npos);
  CHECK(timed.find("goodput 0.400 jobs/s on time") != std::string::npos);
  // Two producers, one with a deadline and one without: each said as what it is.
  const auto mixed = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100, "deadline_ms": 1000},
                  {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100}],
    "consumers": [{"queue": "q"}]
  })");
  CHECK(mixed.result.completed_on_time == 2);
  CHECK(mixed.result.completed_without_deadline == 1);
  CHECK(once_summary(mixed).find("In short: 50.00% of jobs completed on time, 50.00% completed without a deadline, ") !=
        std::string::npos);
}
