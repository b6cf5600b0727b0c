// The RabbitMQ classic-queue test vectors 1-11 of docs/semantics.md part 2 (12-26 are in
// test_vectors_12_26.cpp), one case each, named after the vector: tiny deterministic scenarios
// with exact outcomes and times (zero latencies and no expiry slack unless a vector needs them, so
// "at about t" is exactly t here).
//
// brokersim has no exchanges, channels, policies or message headers. Where a vector speaks of
// them, the comment on the case says what stands for it: a queue's dead_letter_to for its DLX,
// one consumer per channel, the scenario's message_ttl_ms for the effective queue TTL, per-queue
// dead_lettered_by_reason counters and the trace's dead_letterings / redeliveries columns for
// x-death and redelivered.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::test::run_scenario;

TEST_CASE("vector 01: HOL blocking: a short TTL behind a long one is dead-lettered with it") {
  const char* text = R"({
    "stop": {"time_ms": 10000}, "observe": {"every_ms": 100},
    "broker": {"queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 3000, "service_ms": 1},
      {"queue": "q", "arrivals": {"at_ms": [1]}, "expiration_ms": 300, "service_ms": 1}]
  })";
  auto run = run_scenario(text);
  REQUIRE(run.trace.size() == 2);
  CHECK(run.trace[0].ms("ended_ms") == 3000);
  CHECK(run.trace[1].ms("ended_ms") == 3000);  // overdue since 301 ms, dropped in the same pass
  CHECK(run.queue("q").dl(DeathReason::Expired) == 2);
  // B is not dead-lettered at 300; the depth stays 2 until the long head expires.
  CHECK(run.series.at(4).at("q.ready") == 2);  // 400 ms
  CHECK(run.series.at(4).at("dlq.ready") == 0);
  CHECK(run.series.at(10).at("q.ready") == 2);
  CHECK(run.series.at(29).at("q.ready") == 2);
  CHECK(run.series.at(30).at("q.ready") == 0);
  CHECK(run.series.at(30).at("dlq.ready") == 2);

  // A first, then B: a reader of the dead-letter queue (prefetch 1, 10 ms each) gets them in that order.
  auto order = run_scenario(text, {R"(consumers=[{"queue": "dlq", "prefetch": 1}])", "producers.0.service_ms=10",
                                   "producers.1.service_ms=10"});
  CHECK(order.trace[0].ms("delivered_ms") == 3000);
  CHECK(order.trace[1].ms("delivered_ms") == 3010);

  // Short first, long second: each on time.
  auto ordered = run_scenario(text, {"producers.0.expiration_ms=300", "producers.1.expiration_ms=3000"});
  CHECK(ordered.trace[0].ms("ended_ms") == 300);
  CHECK(ordered.trace[1].ms("ended_ms") == 3001);
}

TEST_CASE("vector 02: per-delay-tier queues: each message expires at its own queue's TTL") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 10000}, "observe": {"every_ms": 100},
    "broker": {"queues": {"q3000": {"message_ttl_ms": 3000, "dead_letter_to": "dlq"},
                          "q300": {"message_ttl_ms": 300, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [
      {"queue": "q3000", "arrivals": {"at_ms": [0]}, "service_ms": 1},
      {"queue": "q300", "arrivals": {"at_ms": [1]}, "service_ms": 1}]
  })");
  CHECK(run.trace[0]["outcome"] == "expired_in_queue");
  CHECK(run.trace[0].ms("ended_ms") == 3000);
  CHECK(run.trace[1]["outcome"] == "expired_in_queue");
  CHECK(run.trace[1].ms("ended_ms") == 301);
  CHECK(run.queue("q300").dl(DeathReason::Expired) == 1);
  CHECK(run.queue("q3000").dl(DeathReason::Expired) == 1);
  CHECK(run.series.at(4).at("dlq.ready") == 1);  // 400 ms: B is there, A is not
  CHECK(run.series.at(4).at("q3000.ready") == 1);
  CHECK(run.series.at(30).at("dlq.ready") == 2);
}

TEST_CASE("vector 03: a non-expiring head hides an expired message - it is dropped right after the head is fetched") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000}, "observe": {"every_ms": 100},
    "broker": {"queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [1]}, "expiration_ms": 100, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 1000}]
  })");
  // Just before 1000 ms the depth is still 2 and B is not dead-lettered.
  CHECK(run.series.at(9).at("q.ready") == 2);
  CHECK(run.series.at(9).at("dlq.ready") == 0);
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[0].ms("delivered_ms") == 1000);
  CHECK(run.trace[1]["outcome"] == "expired_in_queue");
  CHECK(run.trace[1].ms("ended_ms") == 1000);
  CHECK(run.trace[1].empty("delivered_ms"));  // the consumer never sees it
  CHECK(run.queue("q").delivered == 1);
  CHECK(run.queue("q").dl(DeathReason::Expired) == 1);
  CHECK(run.series.at(10).at("dlq.ready") == 1);
}

// brokersim has no policies: a scenario's message_ttl_ms stands for the queue's effective TTL,
// the minimum of the policy's message-ttl and the x-message-ttl argument (res_min), so the
// policy 2000 + argument 5000 case is message_ttl_ms = 2000. What is tested here is the
// min(queue TTL, message TTL) rule, with the clock starting at enqueue.
TEST_CASE("vector 04: expiry is enqueue time + min(queue TTL, message TTL)") {
  const char* base = R"({
    "stop": {"time_ms": 10000},
    "broker": {"queues": {"q": {"message_ttl_ms": 5000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 1000, "service_ms": 1,
                   "publish_delay_ms": 200}]
  })";
  auto short_message = run_scenario(base);
  CHECK(short_message.trace[0]["outcome"] == "expired_in_queue");
  CHECK(short_message.trace[0].ms("ended_ms") == 1200);  // the clock starts at enqueue (200)
  auto short_queue = run_scenario(base, {"broker.queues.q.message_ttl_ms=1000", "producers.0.expiration_ms=5000"});
  CHECK(short_queue.trace[0].ms("ended_ms") == 1200);
  auto queue_only = run_scenario(base, {"producers.0.expiration_ms=null"});
  CHECK(queue_only.trace[0].ms("ended_ms") == 5200);
  // Policy message-ttl 2000 + argument 5000: the effective queue TTL is 2000.
  auto policy_min = run_scenario(base, {"broker.queues.q.message_ttl_ms=2000", "producers.0.expiration_ms=null"});
  CHECK(policy_min.trace[0].ms("ended_ms") == 2200);
}

namespace {
const char* kExpirationZero = R"({
  "stop": {"time_ms": 1000},
  "broker": {"queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [10]}, "expiration_ms": 0, "service_ms": 50}],
  "consumers": [{"queue": "q", "prefetch": 1}]
})";
}  // namespace

TEST_CASE("vector 05: expiration 0 with an idle consumer with credit: delivered, not redelivered") {
  auto run = run_scenario(kExpirationZero);
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[0].ms("delivered_ms") == 10);
  CHECK(run.trace[0]["redeliveries"] == "0");
  CHECK(run.queue("q").dl(DeathReason::Expired) == 0);
}

TEST_CASE("vector 06: expiration 0 without a consumer: never delivered - dead-lettered at once, or discarded") {
  // The consumer attaches only at 500 ms: it never gets the message.
  auto dlx = run_scenario(kExpirationZero, {"consumers.0.start_ms=500"});
  CHECK(dlx.trace[0]["outcome"] == "expired_in_queue");
  CHECK(dlx.trace[0].ms("ended_ms") == 10);
  CHECK(dlx.trace[0].empty("delivered_ms"));
  CHECK(dlx.queue("q").dl(DeathReason::Expired) == 1);
  CHECK(dlx.queue("dlq").ready_at_end == 1);
  CHECK(dlx.queue("q").delivered == 0);
  // No basic.return: the publisher is not told (not rejected_at_publish).
  CHECK(dlx.outcome(Outcome::RejectedAtPublish) == 0);

  auto discard = run_scenario(kExpirationZero, {"consumers.0.start_ms=500", "broker.queues.q.dead_letter_to=null"});
  CHECK(discard.trace[0]["outcome"] == "expired_in_queue");
  CHECK(discard.trace[0].ms("ended_ms") == 10);
  CHECK(discard.queue("dlq").published == 0);
  CHECK(discard.queue("q").ready_at_end == 0);
  CHECK(discard.queue("q").delivered == 0);
  CHECK(discard.outcome(Outcome::RejectedAtPublish) == 0);
}

TEST_CASE("vector 07: expiration 0, consumer at its prefetch limit: dropped at once, never delivered after the ack") {
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}, "dlq": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100},
      {"queue": "q", "arrivals": {"at_ms": [10]}, "expiration_ms": 0, "service_ms": 50}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })";
  auto busy = run_scenario(text);
  CHECK(busy.trace[0]["outcome"] == "completed_on_time");
  CHECK(busy.trace[1]["outcome"] == "expired_in_queue");
  CHECK(busy.trace[1].ms("ended_ms") == 10);
  CHECK(busy.trace[1].empty("delivered_ms"));
  CHECK(busy.queue("q").delivered == 1);
  auto dlx = run_scenario(text, {"broker.queues.q.dead_letter_to=dlq"});
  CHECK(dlx.trace[1].ms("ended_ms") == 10);
  CHECK(dlx.queue("q").dl(DeathReason::Expired) == 1);
  CHECK(dlx.queue("dlq").ready_at_end == 1);
}

TEST_CASE("vector 08: requeue keeps the original expiry and the position at the head") {
  // As the vector: queue TTL 10 000; A, B, C at 0; the consumer (prefetch 1) gets A at 100 and
  // nacks it with requeue=true at 9000 (it is stalled until then and finds A's 5000 ms deadline
  // passed; it requeues whatever it finds expired; the nack takes 10 ms to reach the broker).
  // A is back at the head, before B and C, and redelivered at once: B and C are never delivered.
  // It keeps coming back every 10 ms until its expiry, 10 000 from its first enqueue, not from a
  // requeue (19 000).
  auto run = run_scenario(R"({
    "stop": {"time_ms": 30000},
    "broker": {"ack_latency_ms": 10, "queues": {"q": {"message_ttl_ms": 10000, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 5000, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 100, "on_expired": "requeue"}],
    "faults": [{"at_ms": 100, "consumer": 0, "stall_ms": 8900}]
  })");
  const auto& a = run.trace[0];
  CHECK(a["outcome"] == "expired_in_queue");
  CHECK(a.ms("ended_ms") == 10000);
  CHECK(a.ms("delivered_ms") == 9990);          // the last redelivery
  CHECK(std::stoi(a["redeliveries"]) == 99);    // 9010, 9020, ..., 9990
  for (int i : {1, 2}) {
    CHECK(run.trace[i].empty("delivered_ms"));
    CHECK(run.trace[i].ms("ended_ms") == 10000);
  }
  CHECK(run.queue("q").dl(DeathReason::Expired) == 3);

  // The same with a 1000 ms queue TTL and a 50 ms deadline: A is redelivered at the head until
  // its requeue at 1000 (its expiry) drops it; B is delivered the moment it is gone, C expires
  // (1002) while B holds the only credit.
  auto small = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"ack_latency_ms": 10,
               "queues": {"q": {"message_ttl_ms": 1000, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [1, 2]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "requeue"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
  })");
  CHECK(small.trace[0]["outcome"] == "expired_in_queue");
  CHECK(small.trace[0].ms("ended_ms") == 1000);
  CHECK(std::stoi(small.trace[0]["redeliveries"]) == 89);  // 110 ... 990
  CHECK(small.trace[1].ms("delivered_ms") == 1000);
  CHECK(small.trace[1]["outcome"] == "completed_on_time");
  CHECK(small.trace[2]["outcome"] == "expired_in_queue");
  CHECK(small.trace[2].ms("ended_ms") == 1002);
  CHECK(small.queue("q").dl(DeathReason::Expired) == 2);
}

TEST_CASE("vector 09: an unacked message does not expire - requeued after its TTL it is dead-lettered at once, not redelivered") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000}, "observe": {"every_ms": 100},
    "broker": {"queues": {"q": {"message_ttl_ms": 1000, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 500, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "requeue"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 2000}]
  })");
  // 1000-2000 ms: unacked, not expired.
  CHECK(run.series.at(15).at("q.unacked") == 1);
  CHECK(run.series.at(15).at("dlq.ready") == 0);
  CHECK(run.trace[0]["outcome"] == "expired_in_queue");
  CHECK(run.trace[0].ms("ended_ms") == 2000);
  CHECK(run.trace[0]["redeliveries"] == "0");
  CHECK(run.queue("q").delivered == 1);
  CHECK(run.queue("q").dl(DeathReason::Expired) == 1);
  CHECK(run.queue("dlq").ready_at_end == 1);
  CHECK(run.series.at(20).at("dlq.ready") == 1);
}

// x-death is not modelled as a header: reason counts per source queue stand for {queue, reason},
// the trace's dead_letterings column for the count.
TEST_CASE("vector 10: reject requeue=false dead-letters with reason rejected, count 1, at the reject time") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000}, "observe": {"every_ms": 100},
    "broker": {"queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "deadline_ms": 100, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 3, "on_expired": "reject"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 200}]
  })");
  CHECK(run.queue("q").dl(DeathReason::Rejected) == 3);
  CHECK(run.queue("q").dl(DeathReason::Expired) == 0);
  CHECK(run.queue("q").dl(DeathReason::Maxlen) == 0);
  CHECK(run.queue("dlq").published == 3);
  CHECK(run.queue("dlq").ready_at_end == 3);
  CHECK(run.series.at(1).at("dlq.ready") == 0);
  CHECK(run.series.at(2).at("dlq.ready") == 3);  // rejected at 200
  for (const auto& row : run.trace) {
    CHECK(row["dead_letterings"] == "1");
    CHECK(row["outcome"] == "expired_before_start");  // the consumer's decision stands
    CHECK(row.ms("ended_ms") == 200);
  }
}

TEST_CASE("vector 11: dead-lettering strips the message TTL - the target's own queue TTL still applies") {
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"queues": {"q1": {"message_ttl_ms": 100, "dead_letter_to": "q2"}, "q2": {}}},
    "producers": [{"queue": "q1", "arrivals": {"at_ms": [0]}, "expiration_ms": 60000, "service_ms": 1}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace[0]["outcome"] == "expired_in_queue");
  CHECK(run.trace[0].ms("ended_ms") == 100);
  CHECK(run.queue("q2").ready_at_end == 1);  // would have expired at 60100 had the TTL been kept

  auto with_target_ttl = run_scenario(text, {"broker.queues.q2.message_ttl_ms=500"});
  // q2's TTL expires the message at 600 ms: a message figure of q2 (issue 43); the job was decided
  // at its first expiry, at 100 ms.
  CHECK(with_target_ttl.trace[0].ms("ended_ms") == 100);
  CHECK(with_target_ttl.queue("q2").expired == 1);
  CHECK(with_target_ttl.queue("q2").ready_at_end == 0);
  CHECK(with_target_ttl.queue("q2").dl(DeathReason::Expired) == 0);  // q2 has no target: dropped, not dead-lettered
}
