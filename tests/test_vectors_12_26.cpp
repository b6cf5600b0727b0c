// The RabbitMQ classic-queue test vectors 12-26 of docs/semantics.md part 2 (1-11 are in
// test_vectors.cpp, whose header says how brokersim stands for exchanges, channels and headers):
// dead-letter cycles and limits, max-length, x-expires, a broker outage, delivery timing, the
// consumer timeout, prefetch, round-robin and consumer priority.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::test::run_scenario;

namespace {
// Q1 (TTL 100, dead-letters to Q2); Q2's consumer rejects (requeue=false) back to Q1 via Q2's
// dead-letter target, and so on.
const char* kRejectLoop = R"({
  "stop": {"time_ms": 350},
  "broker": {"queues": {"q1": {"message_ttl_ms": 100, "dead_letter_to": "q2"}, "q2": {"dead_letter_to": "q1"}}},
  "producers": [{"queue": "q1", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 1}],
  "consumers": [{"queue": "q2", "prefetch": 1, "on_expired": "reject"}]
})";
}  // namespace

TEST_CASE("vector 12: x-death counts: three loops give {q1, expired} = 3 and {q2, rejected} = 3") {
  auto run = run_scenario(kRejectLoop);
  // Expired from q1 at 100, 200, 300, each time rejected by q2's consumer at once.
  CHECK(run.queue("q1").dl(DeathReason::Expired) == 3);
  CHECK(run.queue("q1").dl(DeathReason::Rejected) == 0);
  CHECK(run.queue("q2").dl(DeathReason::Rejected) == 3);
  CHECK(run.queue("q2").dl(DeathReason::Expired) == 0);
  CHECK(run.trace[0]["dead_letterings"] == "6");
  // Resting in q1, which no consumer reads: the consumer's last decision stands.
  CHECK(run.trace[0]["outcome"] == "expired_before_start");
  CHECK(run.trace[0].ms("ended_ms") == 300);
}

TEST_CASE("vector 13: a dead-letter cycle without a rejection drops the message") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 10000},
    "broker": {"queues": {"q": {"message_ttl_ms": 100, "dead_letter_to": "q"}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}]
  })");
  CHECK(run.trace[0]["outcome"] == "expired_in_queue");
  CHECK(run.trace[0].ms("ended_ms") == 100);
  CHECK(run.trace[0]["dead_letterings"] == "0");
  CHECK(run.queue("q").ready_at_end == 0);
  CHECK(run.queue("q").published == 1);
}

TEST_CASE("vector 14: a cycle with a rejection in it keeps looping - no automatic drop") {
  auto run = run_scenario(kRejectLoop, {"stop.time_ms=1050"});
  CHECK(run.queue("q1").dl(DeathReason::Expired) == 10);  // 100, 200, ..., 1000
  CHECK(run.queue("q2").dl(DeathReason::Rejected) == 10);
  CHECK(run.trace[0]["dead_letterings"] == "20");
  CHECK(run.outcome(Outcome::Lost) == 0);
  CHECK(run.queue("q1").ready_at_end == 1);  // still looping
  CHECK(run.trace[0].ms("ended_ms") == 1000);
}

// brokersim validates that dead_letter_to names an existing queue, so a missing DLX is modelled
// as dead_letter_to = null (no route: the message goes nowhere). RabbitMQ still counts the drop
// in messages_dead_lettered{..., dead_letter_strategy="disabled"}; brokersim's per-queue
// dead_lettered_by_reason counts only messages republished to a target, so the drop is visible
// only as the expired_in_queue outcome. A target queue that existed but was deleted (x-expires)
// before the dead-lettering is the other way a route can be missing: the message is lost.
TEST_CASE("vector 15: DLX missing: the expired message is silently dropped") {
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {"message_ttl_ms": 100, "dead_letter_to": null}, "other": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}]
  })";
  auto none = run_scenario(text);
  CHECK(none.trace[0]["outcome"] == "expired_in_queue");
  CHECK(none.trace[0].ms("ended_ms") == 100);
  CHECK(none.trace[0]["dead_letterings"] == "0");
  CHECK(none.outcome(Outcome::ExpiredInQueue) == 1);
  CHECK(none.queue("q").ready_at_end == 0);
  CHECK(none.queue("q").dl(DeathReason::Expired) == 0);  // RabbitMQ: counted with strategy "disabled"
  CHECK(none.queue("other").published == 0);

  auto deleted = run_scenario(text, {"broker.queues.q.dead_letter_to=other", "broker.queues.other.expires_ms=50"});
  CHECK(deleted.queue("other").deletions == 1);
  CHECK(deleted.trace[0]["outcome"] == "lost");
  CHECK(deleted.trace[0].ms("ended_ms") == 100);
  CHECK(deleted.queue("q").ready_at_end == 0);
  CHECK(deleted.queue("other").ready_at_end == 0);
}

TEST_CASE("vector 16: max-length drop-head dead-letters the head with reason maxlen") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {"max_length": 2, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1, 2]}, "service_ms": 1}]
  })");
  CHECK(run.trace[0]["outcome"] == "dead_lettered");
  CHECK(run.trace[0].ms("ended_ms") == 2);
  CHECK(run.queue("q").dl(DeathReason::Maxlen) == 1);
  CHECK(run.queue("q").dl(DeathReason::Expired) == 0);
  CHECK(run.queue("dlq").ready_at_end == 1);
  CHECK(run.queue("q").ready_at_end == 2);        // B and C
  CHECK(run.trace[1]["outcome"] == "in_system");  // unread queue, no decision yet
  CHECK(run.trace[2]["outcome"] == "in_system");
}

namespace {
const char* kRejectPublish = R"({
  "stop": {"time_ms": 1000},
  "broker": {"queues": {"q": {"max_length": 2, "overflow": "reject-publish", "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1, 2]}, "service_ms": 1}]
})";
}  // namespace

TEST_CASE("vector 17: reject-publish: the publish of C is refused (basic.nack) and C is not dead-lettered") {
  auto plain = run_scenario(kRejectPublish);
  CHECK(plain.trace[2]["outcome"] == "rejected_at_publish");
  CHECK(plain.trace[2].ms("ended_ms") == 2);
  CHECK(plain.trace[0]["outcome"] == "in_system");
  CHECK(plain.trace[1]["outcome"] == "in_system");
  CHECK(plain.queue("q").ready_at_end == 2);
  CHECK(plain.queue("q").dl(DeathReason::Maxlen) == 0);
  CHECK(plain.queue("dlq").published == 0);
}

TEST_CASE("vector 18: reject-publish-dlx: C is refused and dead-lettered with reason maxlen") {
  auto dlx = run_scenario(kRejectPublish, {"broker.queues.q.overflow=reject-publish-dlx"});
  CHECK(dlx.trace[2]["outcome"] == "rejected_at_publish");
  CHECK(dlx.trace[2].ms("ended_ms") == 2);
  CHECK(dlx.trace[2]["dead_letterings"] == "1");
  CHECK(dlx.queue("q").dl(DeathReason::Maxlen) == 1);
  CHECK(dlx.queue("q").ready_at_end == 2);
  CHECK(dlx.queue("dlq").ready_at_end == 1);
}

TEST_CASE("vector 19: expired messages behind a live head count toward max-length") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000}, "observe": {"every_ms": 50},
    "broker": {"queues": {"q": {"max_length": 2, "overflow": "reject-publish"}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1},
      {"queue": "q", "arrivals": {"at_ms": [1]}, "expiration_ms": 10, "service_ms": 1},
      {"queue": "q", "arrivals": {"at_ms": [100]}, "service_ms": 1}]
  })");
  CHECK(run.series.at(1).at("q.ready") == 2);  // 50 ms: B expired at 11 but still counted
  CHECK(run.trace[2]["outcome"] == "rejected_at_publish");
  CHECK(run.trace[2].ms("ended_ms") == 100);
  CHECK(run.queue("q").ready_at_end == 2);
}

TEST_CASE("vector 20: x-expires: an unused queue is deleted with its messages, which are lost, not dead-lettered") {
  const char* text = R"({
    "stop": {"time_ms": 20000},
    "broker": {"queues": {"q": {"expires_ms": 5000, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [100]}, "service_ms": 1}]
  })";
  auto unused = run_scenario(text);
  CHECK(unused.trace[0]["outcome"] == "lost");
  CHECK(unused.trace[0].ms("ended_ms") == 5000);
  CHECK(unused.queue("q").deletions == 1);
  CHECK(unused.queue("dlq").published == 0);

  // A passive declare at 4000 renews the lease: still there at 8000, deleted at 9000.
  auto declared = run_scenario(text, {"broker.queues.q.declare_at_ms=[4000]"});
  CHECK(declared.trace[0].ms("ended_ms") == 9000);
  CHECK(declared.queue("q").deletions == 1);
  CHECK(declared.queue("dlq").published == 0);
  // Declared every second: never deleted; the message is still in the queue.
  auto kept = run_scenario(text, {"broker.queues.q.declare_every_ms=1000"});
  CHECK(kept.trace[0]["outcome"] == "in_system");
  CHECK(kept.queue("q").deletions == 0);
  // A consumer attached the whole time: never deleted.
  auto consumed = run_scenario(text, {R"(consumers=[{"queue": "q", "prefetch": 1}])"});
  CHECK(consumed.trace[0]["outcome"] == "completed_on_time");
  CHECK(consumed.queue("q").deletions == 0);
}

TEST_CASE("vector 21: broker down: TTL keeps running - the overdue message goes at recovery, never delivered") {
  const char* text = R"({
    "stop": {"time_ms": 200000},
    "broker": {"queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 60000, "persistent": true,
                   "service_ms": 1}],
    "faults": [{"at_ms": 10000, "broker_down_ms": 110000}]
  })";
  auto persistent = run_scenario(text);
  CHECK(persistent.trace[0]["outcome"] == "expired_in_queue");
  CHECK(persistent.trace[0].ms("ended_ms") == 120000);  // at recovery, not at 60000
  CHECK(persistent.trace[0].empty("delivered_ms"));
  CHECK(persistent.queue("q").dl(DeathReason::Expired) == 1);

  // A consumer attaching after the restart finds nothing: the message was never delivered.
  auto consumer = run_scenario(text, {R"(consumers=[{"queue": "q", "prefetch": 1, "start_ms": 130000}])"});
  CHECK(consumer.trace[0]["outcome"] == "expired_in_queue");
  CHECK(consumer.trace[0].ms("ended_ms") == 120000);
  CHECK(consumer.queue("q").delivered == 0);

  auto transient = run_scenario(text, {"producers.0.persistent=false"});
  CHECK(transient.trace[0]["outcome"] == "lost");
  CHECK(transient.trace[0].ms("ended_ms") == 10000);

  // Seed 001: persistent, TTL 8000, broker down 8 s: nothing left after the restart.
  auto seed001 = run_scenario(text, {"producers.0.expiration_ms=8000", "faults.0.at_ms=100", "faults.0.broker_down_ms=8000"});
  CHECK(seed001.trace[0]["outcome"] == "expired_in_queue");
  CHECK(seed001.trace[0].ms("ended_ms") == 8100);
  CHECK(seed001.queue("q").ready_at_end == 0);
}

TEST_CASE("vector 22: delivered at 999 (TTL 1000), received at 1010: the client gets it, unacked - the ack succeeds") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000}, "observe": {"every_ms": 5},
    "broker": {"delivery_latency_ms": 11, "queues": {"q": {"message_ttl_ms": 1000, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 999}]
  })");
  CHECK(run.trace[0].ms("delivered_ms") == 999);
  CHECK(run.trace[0].ms("received_ms") == 1010);
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[0].ms("ended_ms") == 1020);
  CHECK(run.series.at(201).at("q.unacked") == 1);  // 1005 ms: unacked, not expired
  CHECK(run.series.at(201).at("q.ready") == 0);
  CHECK(run.series.at(205).at("q.unacked") == 0);  // 1025 ms: acked
  CHECK(run.queue("q").dl(DeathReason::Expired) == 0);
  CHECK(run.queue("dlq").published == 0);
}

TEST_CASE("vector 23: consumer timeout (<= 4.2): checked on a 60 s tick - the channel is closed and its deliveries requeued") {
  const char* text = R"({
    "stop": {"time_ms": 200000, "follow_ms": 0},
    "broker": {"version": "4.2", "consumer_timeout_ms": 60000, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 150000}],
    "consumers": [{"queue": "q", "prefetch": 2}]
  })";
  auto run = run_scenario(text);
  // Tick at 60000: exactly 60000 old, not yet over. Tick at 120000: over; closed and requeued.
  CHECK(run.result.consumer_timeouts == 1);
  CHECK(run.trace[0]["redeliveries"] == "1");
  CHECK(run.trace[0].ms("started_ms") == 120000);
  CHECK(run.trace[1]["redeliveries"] == "1");
  CHECK(run.trace[0]["outcome"] == "in_system");  // running again, for 150 s from 120000

  auto v43 = run_scenario(text, {"broker.version=4.3"});
  CHECK(v43.result.consumer_timeouts == 0);  // classic queues no longer enforce it
  CHECK(v43.trace[0]["outcome"] == "completed_on_time");
  auto off = run_scenario(text, {"broker.consumer_timeout_ms=null"});
  CHECK(off.result.consumer_timeouts == 0);
}

// brokersim has no channels: the two consumers of basic.qos(10, global=false) on one channel are
// two consumers with prefetch 10 each.
TEST_CASE("vector 24: prefetch is per consumer: two consumers with prefetch 10 hold 20 unacked") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 100000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"periodic": {"every_ms": 0.001}}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 10}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 50000}, {"at_ms": 0, "consumer": 1, "stall_ms": 50000}]
  })", {"stop.jobs=30", "stop.time_ms=100"});
  int delivered_at_once = 0, to_first = 0;
  for (const auto& row : run.trace)
    if (!row.empty("delivered_ms") && row.ms("delivered_ms") < 1) {
      ++delivered_at_once;
      if (row["consumer"] == "0") ++to_first;
    }
  CHECK(delivered_at_once == 20);
  CHECK(to_first == 10);
  CHECK(run.queue("q").ready_at_end == 10);
}

TEST_CASE("vector 25: round-robin: two idle consumers with prefetch 1 get 1, 3 and 2, 4") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 1}]
  })");
  CHECK(run.trace[0]["consumer"] == "0");
  CHECK(run.trace[1]["consumer"] == "1");
  CHECK(run.trace[2]["consumer"] == "0");
  CHECK(run.trace[3]["consumer"] == "1");
  CHECK(run.trace[0].ms("delivered_ms") == 0);
  CHECK(run.trace[1].ms("delivered_ms") == 0);
  CHECK(run.trace[2].ms("delivered_ms") == 100);
  CHECK(run.trace[3].ms("delivered_ms") == 100);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 4);
}

TEST_CASE("vector 26: consumer priority: the broker does not wait for a blocked high-priority consumer") {
  // C_hi (priority 10, prefetch 1) never acks: it is stalled for the whole run. C_lo (priority
  // 0) has credit. C_hi is registered second: priority, not registration order, decides.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1, 2]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 0, "priority": 0}, {"queue": "q", "prefetch": 1, "priority": 10}],
    "faults": [{"at_ms": 0, "consumer": 1, "stall_ms": 100000}]
  })");
  CHECK(run.trace[0]["consumer"] == "1");  // C_hi gets message 1
  CHECK(run.trace[1]["consumer"] == "0");  // C_lo gets 2 and 3, at once
  CHECK(run.trace[1].ms("delivered_ms") == 1);
  CHECK(run.trace[2]["consumer"] == "0");
  CHECK(run.trace[2].ms("delivered_ms") == 2);
  CHECK(run.trace[0]["outcome"] == "in_system");
  CHECK(run.outcome(Outcome::CompletedOnTime) == 2);

  // Both at their limit: the third waits for whichever acks first.
  auto blocked = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1, 2]}, "service_ms": 100000}],
    "consumers": [{"queue": "q", "prefetch": 1, "priority": 0}, {"queue": "q", "prefetch": 1, "priority": 10}]
  })");
  CHECK(blocked.trace[0]["consumer"] == "1");
  CHECK(blocked.trace[1]["consumer"] == "0");
  CHECK(blocked.trace[2].empty("delivered_ms"));
}
