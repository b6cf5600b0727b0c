// Azure Service Bus (broker.kind "azure-servicebus"): the test vectors 33-40 of docs/semantics.md part 2,
// one case each, then one small case per rule of section 5 with exact times (zero latencies
// unless a case needs them). The trace's redeliveries column is the DeliveryCount - 1 of the
// copy the broker kept; a stale copy a client still runs after its lock lapsed (a ghost) has no
// row of its own and shows in duplicate_executions.
#include <doctest/doctest.h>

#include "sim/rng.hpp"
#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::test::run_scenario;

namespace {

std::string load_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    run_scenario(text, sets);
  } catch (const brokersim::ScenarioError& e) {
    return e.what();
  }
  return "";
}

// One message with a 30 s TTL; lock 60 s; the consumer attaches at 20 s.
constexpr const char* kLockedTtl = R"({
  "stop": {"time_ms": 400000},
  "broker": {"kind": "azure-servicebus",
             "queues": {"q": {"lock_duration_ms": 60000, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 30000, "service_ms": 30000}],
  "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 20000}]
})";

// Lock 60 s, PrefetchCount 10, MaxConcurrentCalls 1, 20 s per message, 12 messages at 0.
constexpr const char* kPrefetchLapse = R"({
  "stop": {"time_ms": 3000000},
  "broker": {"kind": "azure-servicebus",
             "queues": {"q": {"lock_duration_ms": 60000, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 20000}],
  "consumers": [{"queue": "q", "prefetch": 10, "slots": 1}]
})";

// One message whose every execution fails (10 ms each): the processor abandons it every time.
constexpr const char* kAlwaysFails = R"({
  "stop": {"time_ms": 10000},
  "broker": {"kind": "azure-servicebus", "queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
  "consumers": [{"queue": "q", "prefetch": 1, "failure_probability": 1}]
})";

}  // namespace

TEST_CASE("vector 33: a peek-lock protects from TTL - received at 20 s with a 30 s TTL and completed at 50 s") {
  auto run = run_scenario(kLockedTtl);
  const auto& m = run.trace.at(0);
  CHECK(m.ms("delivered_ms") == 20000);
  CHECK(m["outcome"] == "completed_on_time");
  CHECK(m.ms("ended_ms") == 50000);
  CHECK(run.queue("q").dl(DeathReason::TTLExpiredException) == 0);
  CHECK(run.queue("dlq").published == 0);
}

TEST_CASE("vector 34: a lock lapsing after the TTL - dead-lettered TTLExpiredException at the lapse with dead_letter_on_expiration or else dropped") {
  // The client holds the message in its buffer (stalled from 20 s to 200 s): nothing renews the
  // lock, which lapses at 80 s; the message expired at 30 s, so expiry takes effect then.
  const std::vector<std::string> held = {R"(faults=[{"at_ms": 20000, "consumer": 0, "stall_ms": 180000}])"};
  auto sets = held;
  sets.push_back("broker.queues.q.dead_letter_on_expiration=true");
  auto on = run_scenario(kLockedTtl, sets);
  CHECK(on.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(on.trace.at(0).ms("ended_ms") == 80000);
  CHECK(on.trace.at(0)["redeliveries"] == "0");  // never redelivered
  CHECK(on.queue("q").dl(DeathReason::TTLExpiredException) == 1);
  CHECK(on.queue("dlq").published == 1);
  CHECK(on.json()["queues"]["q"]["dead_lettered_by_reason"]["TTLExpiredException"] == 1);
  auto off = run_scenario(kLockedTtl, held);
  CHECK(off.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(off.trace.at(0).ms("ended_ms") == 80000);
  CHECK(off.queue("q").delivered == 1);
  CHECK(off.queue("q").dl(DeathReason::TTLExpiredException) == 0);
  CHECK(off.queue("dlq").published == 0);
  // The stale copy still runs when the stall ends (its Complete fails): one execution, no duplicate.
  CHECK(off.result.duplicate_executions == 0);
  CHECK(off.result.consumers.at(0).started == 1);
}

TEST_CASE("vector 35: the entity's default_ttl_ms caps a longer message TTL - 1 h becomes 10 min") {
  const char* text = R"({
    "stop": {"time_ms": 4000000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"default_ttl_ms": 600000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 3600000, "service_ms": 1}],
    "consumers": [{"queue": "q", "start_ms": 600000}]
  })";
  auto at_cap = run_scenario(text);
  CHECK(at_cap.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(at_cap.trace.at(0).ms("ended_ms") == 600000);
  auto before = run_scenario(text, {"consumers.0.start_ms=599999"});
  CHECK(before.trace.at(0)["outcome"] == "completed_on_time");
  // Without the cap the hour applies; a message with no TTL of its own gets the default.
  CHECK(run_scenario(text, {"broker.queues.q.default_ttl_ms=null"}).trace.at(0)["outcome"] == "completed_on_time");
  CHECK(run_scenario(text, {"producers.0.expiration_ms=null"}).trace.at(0)["outcome"] == "expired_in_queue");
  // A shorter message TTL is kept.
  auto shorter = run_scenario(text, {"producers.0.expiration_ms=1000", "consumers.0.start_ms=1000"});
  CHECK(shorter.trace.at(0)["outcome"] == "expired_in_queue");
}

TEST_CASE("vector 36: a scheduled message is enqueued at activation and its TTL starts then - receivable in 5 to 6 min") {
  const char* text = R"({
    "stop": {"time_ms": 1000000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "scheduled_delay_ms": 300000,
                   "expiration_ms": 60000, "service_ms": 1}],
    "consumers": [{"queue": "q"}]
  })";
  auto waiting = run_scenario(text);
  CHECK(waiting.trace.at(0).ms("published_ms") == 0);
  CHECK(waiting.trace.at(0).ms("delivered_ms") == 300000);
  CHECK(waiting.trace.at(0)["outcome"] == "completed_on_time");
  auto late = run_scenario(text, {"consumers.0.start_ms=359999"});
  CHECK(late.trace.at(0).ms("delivered_ms") == 359999);
  auto expired = run_scenario(text, {"consumers.0.start_ms=360000"});
  CHECK(expired.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(expired.trace.at(0).ms("ended_ms") == 360000);
  // Not before activation: at 4 min the queue is empty.
  auto series = run_scenario(text, {"consumers=[]", "observe.every_ms=60000"});
  CHECK(series.series.at(4).at("q.ready") == 0);
  CHECK(series.series.at(5).at("q.ready") == 1);
}

TEST_CASE("vector 37: prefetch lock expiry - messages 1-3 complete and the rest cycle through lapsed locks to MaxDeliveryCountExceeded") {
  auto run = run_scenario(kPrefetchLapse);
  // Locks taken at 0 hold until 60 s: the first three run at 0, 20 and 40 s (renewed meanwhile).
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(run.trace.at(i)["outcome"] == "completed_on_time");
    CHECK(run.trace.at(i).ms("ended_ms") == 20000.0 * (i + 1));
  }
  // Message 4's lock lapses at 60 s in the buffer: abandoned (DeliveryCount 2) and redelivered at
  // once into the buffer's tail, behind six stale copies the handler still runs (each 20 s, each
  // Complete failing): it is never reached within its lock, every 60 s, until the 10th lapse.
  const auto& m4 = run.trace.at(3);
  CHECK(m4["outcome"] == "dead_lettered");
  CHECK(m4["redeliveries"] == "9");  // 10 deliveries
  CHECK(m4.ms("delivered_ms") == 540000);
  CHECK(m4.ms("ended_ms") == 600000);
  CHECK(run.outcome(Outcome::DeadLettered) == 9);
  CHECK(run.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 9);
  CHECK(run.queue("dlq").published == 9);
  // Every delivery of the nine was executed once, stale: 10 executions each, 9 of them duplicates.
  CHECK(run.result.duplicate_executions == 81);
  CHECK(run.json()["duplicate_executions"] == 81);
  // The longest buffer wait is that of the last message of the first prefetch: (prefetch - 1)
  // handler times. Prefetch 3: 40 s, all complete; prefetch 4: exactly 60 s, and the lock lapses
  // at the instant the slot frees (a lapse at t comes before a completion at t).
  auto fits = run_scenario(kPrefetchLapse, {"consumers.0.prefetch=3"});
  CHECK(fits.outcome(Outcome::CompletedOnTime) == 12);
  CHECK(fits.result.duplicate_executions == 0);
  auto edge = run_scenario(kPrefetchLapse, {"consumers.0.prefetch=4"});
  CHECK(edge.trace.at(2).ms("ended_ms") == 60000);
  CHECK(edge.trace.at(3)["redeliveries"] != "0");
  CHECK(edge.result.duplicate_executions > 0);
}

TEST_CASE("vector 38: max delivery count - the 10th abandon dead-letters with MaxDeliveryCountExceeded after 10 deliveries") {
  // Off-by-one (docs/semantics.md vector 38 leaves it open): brokersim delivers at most
  // max_delivery_count times and dead-letters on the abandon that reaches it.
  auto run = run_scenario(kAlwaysFails);
  const auto& m = run.trace.at(0);
  CHECK(m["outcome"] == "dead_lettered");
  CHECK(m["redeliveries"] == "9");
  CHECK(m.ms("delivered_ms") == 90);
  CHECK(m.ms("ended_ms") == 100);
  CHECK(run.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 1);
  CHECK(run.queue("dlq").published == 1);
  CHECK(run.result.duplicate_executions == 9);  // a redelivered message executed again
  auto three = run_scenario(kAlwaysFails, {"broker.queues.q.max_delivery_count=3"});
  CHECK(three.trace.at(0)["redeliveries"] == "2");
  CHECK(three.trace.at(0).ms("ended_ms") == 30);
  // Without dead_letter_to the message rests in the entity's own dead-letter sub-queue.
  auto own = run_scenario(kAlwaysFails, {"broker.queues.q.dead_letter_to=null"});
  CHECK(own.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(own.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 1);
}

TEST_CASE("vector 39: a deferred message that passes its TTL is not dead-lettered - even with dead_letter_on_expiration") {
  // TTL 1 s, deadline 500 ms; the consumer is stalled until 800 ms, finds the job stale and
  // defers it (Defer()); the TTL passes at 1000 ms with dead-lettering on expiration enabled.
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "azure-servicebus",
               "queues": {"q": {"dead_letter_on_expiration": true, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 500, "expiration_ms": 1000, "service_ms": 1}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "defer"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 800}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace.at(0)["outcome"] == "expired_before_start");
  CHECK(run.trace.at(0).ms("ended_ms") == 800);
  CHECK(run.queue("q").dl(DeathReason::TTLExpiredException) == 0);
  CHECK(run.queue("dlq").published == 0);
  CHECK(run.queue("q").ready_at_end == 0);  // deferred, not active
  CHECK(run.result.redeliveries == 0);
  // The same job abandoned instead (on_expired requeue) comes straight back to the same stale
  // check, ten deliveries at 800 ms, and is dead-lettered: only a deferred message rests.
  auto abandoned = run_scenario(text, {"consumers.0.on_expired=requeue"});
  CHECK(abandoned.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 1);
  CHECK(abandoned.queue("dlq").published == 1);
  // Defer() is Service Bus's: another kind names it.
  CHECK(load_error(kAlwaysFails, {"broker.kind=rabbitmq-classic", "broker.queues={\"q\": {}}", "consumers.0.on_expired=defer"}) ==
        "consumers.0.on_expired: expected one of \"ack\", \"reject\", \"requeue\" (\"defer\" belongs to broker kind "
        "\"azure-servicebus\"), got \"defer\"");
}

namespace {

// Deadline 500 ms, TTL 2 s; the consumer is stalled until 800 ms, finds the job stale and defers
// it; receive_deferred_after_ms brings it back by sequence number. Zero latencies.
constexpr const char* kDeferred = R"({
  "stop": {"time_ms": 10000},
  "broker": {"kind": "azure-servicebus",
             "queues": {"q": {"dead_letter_on_expiration": true, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 500, "expiration_ms": 2000, "service_ms": 1}],
  "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "defer"}],
  "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 800}]
})";

}  // namespace

TEST_CASE("azure-servicebus receive_deferred_after_ms - a deferred message received back after its TTL is expired by that receive") {
  // Deferred at 800 ms, asked for at 2300 ms: its TTL passed at 2000 ms, so the receive finds it
  // expired and, with dead-lettering on expiration, moves it to the dead-letter queue
  // (message-deferral.md); nothing is delivered.
  auto run = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=1500"});
  const auto& m = run.trace.at(0);
  CHECK(m["outcome"] == "expired_in_queue");
  CHECK(m.ms("ended_ms") == 2300);
  CHECK(m["redeliveries"] == "0");
  CHECK(run.queue("q").dl(DeathReason::TTLExpiredException) == 1);
  CHECK(run.queue("dlq").published == 1);
  // Its first delivery held it until the Defer() reached the broker; deferred, it was the queue's.
  CHECK(m.ms("stage_held_ms") == 800);
  CHECK(m.ms("stage_queue_ms") == 1500);
  // Without the key it rests, deferred, with its consumer's decision (vector 39).
  auto rests = run_scenario(kDeferred);
  CHECK(rests.trace.at(0)["outcome"] == "expired_before_start");
  CHECK(rests.queue("dlq").published == 0);
  CHECK(run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=null"}).json().dump() == rests.json().dump());
}

TEST_CASE("azure-servicebus receive_deferred_after_ms - a message received back is delivered again - a stale one is deferred again until its TTL") {
  // Asked for every 500 ms: delivered again at 1300 (delivery count 2) and 1800 ms (3), stale each
  // time and deferred again; the receive at 2300 ms finds the TTL (2000 ms) passed.
  auto run = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=500"});
  const auto& m = run.trace.at(0);
  CHECK(m.ms("delivered_ms") == 1800);
  CHECK(m["redeliveries"] == "2");
  CHECK(m["outcome"] == "expired_in_queue");
  CHECK(m.ms("ended_ms") == 2300);
  CHECK(run.queue("q").delivered == 3);
  CHECK(run.result.duplicate_executions == 0);  // never started
}

TEST_CASE("azure-servicebus receive_deferred_after_ms - each receive back is a delivery - max_delivery_count ends a client that keeps deferring") {
  // No TTL: the stale message is received back and deferred again; with max_delivery_count 3 the
  // receive after its 3rd delivery dead-letters it (Azure/azure-service-bus#375).
  auto three = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=500", "producers.0.expiration_ms=null",
                                        "broker.queues.q.max_delivery_count=3"});
  CHECK(three.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(three.trace.at(0).ms("ended_ms") == 2300);
  CHECK(three.trace.at(0)["redeliveries"] == "2");
  CHECK(three.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 1);
  // Asked for at once (0 ms) with zero latencies: the loop is bounded by the delivery count, 10
  // deliveries at 800 ms, not endless.
  auto at_once = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=0", "producers.0.expiration_ms=null"});
  CHECK(at_once.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(at_once.trace.at(0).ms("ended_ms") == 800);
  CHECK(at_once.trace.at(0)["redeliveries"] == "9");
}

TEST_CASE("azure-servicebus receive_deferred_after_ms - a message received back that passes the check is executed - its outcome is its completion") {
  // The consumer's clock steps back 1 s at 1000 ms: at the receive back (1300 ms) the job looks
  // fresh to it and runs, 1 ms: completed (late on true time).
  auto run = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=500",
                                      R"(faults=[{"at_ms": 0, "consumer": 0, "stall_ms": 800},
                                                 {"at_ms": 1000, "consumer": 0, "clock_step_ms": -1000}])"});
  const auto& m = run.trace.at(0);
  CHECK(m["outcome"] == "completed_late");
  CHECK(m.ms("delivered_ms") == 1300);
  CHECK(m.ms("ended_ms") == 1301);
  CHECK(m["redeliveries"] == "1");
  CHECK(m.ms("stage_held_ms") == 800);
  CHECK(m.ms("stage_queue_ms") == 500);
  CHECK(m.ms("stage_service_ms") == 1);
  CHECK(run.outcome(Outcome::ExpiredBeforeStart) == 0);
}

TEST_CASE("azure-servicebus receive_deferred_after_ms - a client gone never asks - the message rests") {
  auto run = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=500",
                                      R"(faults=[{"at_ms": 0, "consumer": 0, "stall_ms": 800},
                                                 {"at_ms": 1000, "consumer": 0, "crash": true}])"});
  CHECK(run.trace.at(0)["outcome"] == "expired_before_start");
  CHECK(run.trace.at(0).ms("ended_ms") == 800);
  CHECK(run.queue("q").delivered == 1);
}

TEST_CASE("azure-servicebus receive_deferred_after_ms - the receive fails while the namespace is down - it is made again when it is back") {
  // Asked for at 1300 ms, but the namespace is down from 1200 to 1700 ms: received back at 1700,
  // stale, deferred again, and found expired (TTL 2000 ms) by the receive at 2200 ms.
  auto run = run_scenario(kDeferred, {"consumers.0.receive_deferred_after_ms=500",
                                      R"(faults=[{"at_ms": 0, "consumer": 0, "stall_ms": 800},
                                                 {"at_ms": 1200, "broker_down_ms": 500}])"});
  CHECK(run.trace.at(0).ms("delivered_ms") == 1700);
  CHECK(run.trace.at(0)["redeliveries"] == "1");
  CHECK(run.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(run.trace.at(0).ms("ended_ms") == 2200);
}

TEST_CASE("azure-servicebus receive_deferred_after_ms is validated - a duration, with on_expired defer and peek-lock, no sessions, Service Bus only") {
  CHECK(load_error(kDeferred, {"consumers.0.receive_deferred_after_ms=-1"}) ==
        "consumers.0.receive_deferred_after_ms: expected a number >= 0, got -1");
  CHECK(load_error(kDeferred, {"consumers.0.receive_deferred_after_ms=100", "consumers.0.on_expired=requeue"}) ==
        "consumers.0.receive_deferred_after_ms: only a consumer that defers has deferred messages to receive back; give it "
        "with on_expired \"defer\"");
  CHECK(load_error(kDeferred, {"consumers.0.receive_deferred_after_ms=100", "consumers.0.receive_mode=receive-and-delete"})
            .find("consumers.0.receive_deferred_after_ms: receive_mode \"receive-and-delete\"") == 0);
  CHECK(load_error(kDeferred, {"consumers.0.receive_deferred_after_ms=100", "broker.queues.q.requires_session=true",
                               "producers.0.session=1"}) ==
        "consumers.0.receive_deferred_after_ms: receiving deferred messages back is not modelled on a queue with "
        "requires_session (broker.queues.q.requires_session is true)");
  CHECK(load_error(kDeferred, {"broker.kind=amazon-sqs", "broker.queues={\"q\": {}}", "consumers.0.on_expired=ack",
                               "producers.0.expiration_ms=null", "consumers.0.receive_deferred_after_ms=100"}) ==
        "consumers.0.receive_deferred_after_ms: this key belongs to broker kind \"azure-servicebus\"; broker kind "
        "\"amazon-sqs\" has no such key");
}

TEST_CASE("vector 40: auto-delete-on-idle - under 5 min is refused and a queue idle for 5 min is deleted with its messages") {
  CHECK(load_error(kAlwaysFails, {"broker.queues.q.auto_delete_on_idle_ms=299999"}) ==
        "broker.queues.q.auto_delete_on_idle_ms: expected a number >= 300000 (5 minutes, Service Bus's minimum) or null, "
        "got 299999");
  // Sends at 0 and 100 s into a queue nobody reads; a third send at 500 s.
  const char* text = R"({
    "stop": {"time_ms": 1000000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"auto_delete_on_idle_ms": 300000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 100000, 500000]}, "service_ms": 1}],
    "consumers": [{"queue": "q", "start_ms": 600000}]
  })";
  auto idle = run_scenario(text);
  CHECK(idle.trace.at(0)["outcome"] == "lost");
  CHECK(idle.trace.at(0).ms("ended_ms") == 400000);  // 5 min after the last send
  CHECK(idle.trace.at(1).ms("ended_ms") == 400000);
  CHECK(idle.trace.at(2)["outcome"] == "rejected_at_publish");  // the entity is gone
  CHECK(idle.json()["queues"]["q"]["deletions"] == 1);
  // A listening client keeps it: everything is received.
  auto read = run_scenario(text, {"consumers.0.start_ms=0"});
  CHECK(read.outcome(Outcome::CompletedOnTime) == 3);
  CHECK(read.json()["queues"]["q"]["deletions"] == 0);
  // The client leaving starts the idle clock: crashed at 200 s, deleted at 500 s, before the send.
  auto left = run_scenario(text, {"consumers.0.start_ms=0", R"(faults=[{"at_ms": 200000, "consumer": 0, "crash": true}])"});
  CHECK(left.trace.at(2)["outcome"] == "rejected_at_publish");
  CHECK(left.json()["queues"]["q"]["deletions"] == 1);
}

TEST_CASE("azure-servicebus lazy expiry: an expired message stays counted until a receive reaches it - and is never delivered") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 3000}, "observe": {"every_ms": 500},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 100, "service_ms": 1},
      {"queue": "q", "arrivals": {"at_ms": [1]}, "service_ms": 1}],
    "consumers": [{"queue": "q", "start_ms": 2000}]
  })");
  CHECK(run.series.at(3).at("q.ready") == 2);  // 1500 ms: expired at 100, still counted
  CHECK(run.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(run.trace.at(0).ms("ended_ms") == 2000);
  CHECK(run.trace.at(0).empty("delivered_ms"));
  CHECK(run.trace.at(1).ms("delivered_ms") == 2000);
  CHECK(run.series.at(4).at("q.ready") == 0);
  CHECK(run.queue("q").delivered == 1);
}

TEST_CASE("azure-servicebus prefetch 0 is one receive per free slot - a positive prefetch caps what the client holds") {
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 0, "slots": 2}]
  })";
  auto none = run_scenario(text);
  CHECK(none.trace.at(1).ms("delivered_ms") == 0);
  CHECK(none.trace.at(2).ms("delivered_ms") == 10);
  CHECK(none.trace.at(3).ms("ended_ms") == 20);
  // PrefetchCount 1 with two concurrent calls: one message in memory, one slot idle.
  auto one = run_scenario(text, {"consumers.0.prefetch=1"});
  CHECK(one.trace.at(1).ms("delivered_ms") == 10);
  CHECK(one.trace.at(3).ms("ended_ms") == 40);
  // PrefetchCount 4: all four are sent at once and wait locked in the buffer.
  auto four = run_scenario(text, {"consumers.0.prefetch=4"});
  CHECK(four.trace.at(3).ms("delivered_ms") == 0);
  CHECK(four.trace.at(3).ms("started_ms") == 10);
}

TEST_CASE("azure-servicebus settlement: a failed job and a requeue are abandons - a reject dead-letters with reason rejected") {
  // A 50 ms deadline and a consumer stalled until 100: the admission check finds it expired.
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "reject"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
  })";
  auto reject = run_scenario(text);
  CHECK(reject.trace.at(0)["outcome"] == "expired_before_start");
  CHECK(reject.queue("q").dl(DeathReason::Rejected) == 1);
  CHECK(reject.queue("dlq").published == 1);
  CHECK(reject.json()["queues"]["q"]["dead_lettered_by_reason"]["rejected"] == 1);
  // Abandon at once, redelivered at once, rejected again: 10 deliveries at 100 ms, then the
  // dead-letter sub-queue.
  auto requeue = run_scenario(text, {"consumers.0.on_expired=requeue"});
  CHECK(requeue.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(requeue.trace.at(0)["redeliveries"] == "9");
  CHECK(requeue.trace.at(0).ms("ended_ms") == 100);
  CHECK(requeue.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 1);
  // A completed job is removed; a failed one comes back (kAlwaysFails: vector 38). A timed-out
  // one too: the processor abandons on the handler's exception.
  auto timeout = run_scenario(kAlwaysFails, {"consumers.0.failure_probability=0", "consumers.0.exec_timeout=5"});
  CHECK(timeout.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(timeout.trace.at(0).ms("ended_ms") == 50);
  auto done = run_scenario(kAlwaysFails, {"consumers.0.failure_probability=0"});
  CHECK(done.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(done.trace.at(0)["redeliveries"] == "0");
}

TEST_CASE("azure-servicebus crash: peek-locked messages stay locked until their locks lapse - receive-and-delete loses the buffer") {
  // Lock 1 s; three messages at 0, 100 ms each, one slot; the client crashes at 50 ms and is
  // back at 200 ms. The buffered two lapse at 1000; the executing one was being renewed, so its
  // lock ends a lock duration after the crash, 1050.
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"lock_duration_ms": 1000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 3}],
    "faults": [{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 150}]
  })";
  auto lock = run_scenario(text);
  CHECK(lock.trace.at(1).ms("delivered_ms") == 1000);
  CHECK(lock.trace.at(2).ms("delivered_ms") == 1000);
  CHECK(lock.trace.at(0).ms("delivered_ms") == 1050);
  CHECK(lock.trace.at(0).ms("ended_ms") == 1300);
  CHECK(lock.trace.at(0)["redeliveries"] == "1");
  CHECK(lock.outcome(Outcome::CompletedOnTime) == 3);
  CHECK(lock.result.duplicate_executions == 1);  // message 0 ran again from the start
  auto rad = run_scenario(text, {"consumers.0.receive_mode=receive-and-delete"});
  CHECK(rad.outcome(Outcome::Lost) == 3);
  CHECK(rad.trace.at(0).ms("ended_ms") == 50);
  CHECK(rad.queue("q").mean_unacked == 0);  // settled when sent: never unacked at the broker
  // Receive-and-delete: a failed execution is not redelivered.
  auto failed = run_scenario(kAlwaysFails, {"consumers.0.receive_mode=receive-and-delete"});
  CHECK(failed.trace.at(0)["outcome"] == "failed");
  CHECK(failed.trace.at(0)["redeliveries"] == "0");
}

TEST_CASE("azure-servicebus outage: sends fail and a settlement that cannot arrive leaves the message locked until its lock lapses") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"lock_duration_ms": 1000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 50]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1}],
    "faults": [{"at_ms": 5, "broker_down_ms": 100}]
  })");
  CHECK(run.trace.at(1)["outcome"] == "rejected_at_publish");
  const auto& m = run.trace.at(0);
  CHECK(m.ms("delivered_ms") == 1010);  // Complete at 10 lost; lock lapses at 1010
  CHECK(m.ms("ended_ms") == 1020);
  CHECK(m["redeliveries"] == "1");
  CHECK(run.result.duplicate_executions == 1);
}

TEST_CASE("azure-servicebus keys: each validated with its path - RabbitMQ and SQS keys refused naming their kind") {
  const std::string base = kAlwaysFails;
  CHECK(load_error(base, {"broker.queues.q.message_ttl_ms=100"}) ==
        "broker.queues.q.message_ttl_ms: this key belongs to broker kinds \"rabbitmq-classic\", \"rabbitmq-quorum\"; "
        "broker kind \"azure-servicebus\" has no such key");
  CHECK(load_error(base, {"broker.version=4.2"}).starts_with("broker.version: this key belongs to broker kinds"));
  CHECK(load_error(base, {"broker.queues.q.visibility_timeout_ms=1"}) ==
        "broker.queues.q.visibility_timeout_ms: this key belongs to broker kind \"amazon-sqs\"; broker kind "
        "\"azure-servicebus\" has no such key");
  CHECK(load_error(base, {"broker.queues.q.lock_duration_ms=300001"}) ==
        "broker.queues.q.lock_duration_ms: expected a number > 0 and <= 300000 (5 minutes, Service Bus's longest lock), "
        "got 300001");
  CHECK(load_error(base, {"broker.queues.q.lock_duration_ms=0"}).starts_with("broker.queues.q.lock_duration_ms: expected"));
  CHECK(load_error(base, {"broker.queues.q.max_delivery_count=0"}) ==
        "broker.queues.q.max_delivery_count: expected an integer >= 1, got 0");
  CHECK(load_error(base, {"broker.queues.q.default_ttl_ms=-1"}).starts_with("broker.queues.q.default_ttl_ms: expected"));
  CHECK(load_error(base, {"broker.queues.q.dead_letter_on_expiration=1"}) ==
        "broker.queues.q.dead_letter_on_expiration: expected true or false, got 1");
  CHECK(load_error(base, {"broker.queues.q.requires_session=1"}) ==
        "broker.queues.q.requires_session: expected true or false, got 1");
  CHECK(load_error(base, {"broker.queues.q.requires_session=false"}).empty());
  // A session queue needs session ids, and a session id a session queue.
  CHECK(load_error(base, {"broker.queues.q.requires_session=true"}) ==
        "producers.0: a producer to a queue with requires_session needs a session (broker.queues.q.requires_session is true)");
  CHECK(load_error(base, {"broker.queues.q.requires_session=true", "producers.0.session=7"}).empty());
  CHECK(load_error(base, {"producers.0.session=1"}) ==
        "producers.0.session: a session id needs a queue with requires_session (broker.queues.q.requires_session is false)");
  CHECK(load_error(base, {"broker.queues.q.requires_session=true", "producers.0.session=\"a\""}).starts_with(
      "producers.0.session: expected a distribution"));
  CHECK(load_error(base, {"producers.0.scheduled_delay_ms=-5"}).starts_with("producers.0.scheduled_delay_ms: expected"));
  CHECK(load_error(base, {"consumers.0.receive_mode=peek"}) ==
        "consumers.0.receive_mode: expected one of \"peek-lock\", \"receive-and-delete\", got \"peek\"");
  CHECK(load_error(base, {"consumers.0.priority=1"}).starts_with("consumers.0.priority: Service Bus receivers have no priority"));
  // The CLI: exit status 2, nothing on stdout.
  brokersim::test::ScratchDir dir("asb-keys");
  const std::string file = dir.write("s.json", base);
  const auto cli = brokersim::test::run_cli({"run", file, "--set", "broker.queues.q.max_delivery_count=0"});
  CHECK(cli.status == 2);
  CHECK(cli.out.empty());
}

// tests/test_properties.cpp: the invariants every run keeps (outcomes add up, times never go
// backwards, counts never negative).
void check_invariants(const nlohmann::json& doc);

namespace {

std::string queue_name(int i) {
  std::string name = "q";
  name += std::to_string(i);
  return name;
}

// Random Service Bus scenarios aimed at the lock: short locks against long service and large
// prefetch (lapses, ghosts, duplicates), few deliveries allowed, TTLs, schedules, sessions,
// crashes and outages.
nlohmann::json random_servicebus_scenario(sim::Rng& rng) {
  using nlohmann::json;
  auto pick = [&](std::uint64_t n) { return static_cast<int>(rng.below(n)); };
  json s;
  s["seed"] = rng.below(1000);
  s["stop"] = pick(3) == 0 ? json{{"jobs", 1 + pick(300)}, {"time_ms", 20000}} : json{{"time_ms", 1000 + pick(10000)}};
  const int nq = 1 + pick(3);
  json queues = json::object();
  for (int q = 0; q < nq; ++q) {
    json spec = json::object();
    if (pick(2)) spec["lock_duration_ms"] = 1 + pick(2000);
    if (pick(2)) spec["max_delivery_count"] = 1 + pick(5);
    if (pick(3) == 0) spec["default_ttl_ms"] = pick(2000);
    if (pick(2)) spec["dead_letter_on_expiration"] = true;
    if (pick(2)) spec["dead_letter_to"] = queue_name(pick(nq));
    if (pick(3) == 0) spec["requires_session"] = true;
    queues[queue_name(q)] = spec;
  }
  s["broker"] = {{"kind", "azure-servicebus"}, {"queues", queues},
                 {"delivery_latency_ms", pick(2) ? json(pick(20)) : json{{"exp", {{"mean", 1 + pick(20)}}}}},
                 {"ack_latency_ms", pick(20)}};
  s["producers"] = json::array();
  for (int p = 0, n = 1 + pick(2); p < n; ++p) {
    json prod = {{"queue", queue_name(pick(nq))}, {"service_ms", {{"exp", {{"mean", 1 + pick(400)}}}}}};
    prod["arrivals"] = pick(2) ? json{{"poisson", {{"rate_per_s", 1 + rng.uniform() * 60}}}}
                               : json{{"at_ms", {0, 0, pick(100), pick(1000), pick(1000)}}};
    if (pick(3)) prod["deadline_ms"] = pick(800);
    if (pick(2)) prod["expiration_ms"] = pick(2) ? json("remaining-budget") : json(pick(1000));
    if (pick(3) == 0) prod["scheduled_delay_ms"] = {{"uniform", {{"min", 0}, {"max", pick(1000)}}}};
    if (pick(4) == 0) prod["publish_delay_ms"] = pick(50);
    if (queues[prod["queue"].get<std::string>()].value("requires_session", false))
      prod["session"] = pick(2) ? json(pick(3)) : json{{"empirical", {1, 2, 3, 4}}};
    s["producers"].push_back(prod);
  }
  s["consumers"] = json::array();
  int consumers = 0;
  for (int g = 0, n = pick(3); g < n; ++g) {
    json c = {{"queue", queue_name(pick(nq))}, {"count", 1 + pick(3)}, {"prefetch", pick(6)}, {"slots", 1 + pick(3)}};
    consumers += c["count"].get<int>();
    if (pick(3) == 0) c["start_ms"] = pick(500);
    if (pick(3) == 0) c["receive_mode"] = "receive-and-delete";
    c["admission"] = json::array({"none", "check-before-start", "check-at-receive-and-start"})[pick(3)];
    c["on_expired"] = json::array({"ack", "reject", "requeue"})[pick(3)];
    // Deferral, sometimes received back (not on session queues, not with receive-and-delete).
    const bool session = queues[c["queue"].get<std::string>()].value("requires_session", false);
    // A limited lock renewal (on session queues: the session lock's).
    if (!c.contains("receive_mode") && pick(4) == 0) c["max_auto_lock_renewal_ms"] = pick(1500);
    if (!c.contains("receive_mode") && pick(4) == 0) {
      c["on_expired"] = "defer";
      if (!session && pick(2)) c["receive_deferred_after_ms"] = pick(500);
    }
    if (pick(3) == 0) c["exec_timeout"] = pick(2) ? json("remaining-budget") : json(50 + pick(300));
    if (pick(3) == 0) c["failure_probability"] = rng.uniform();
    s["consumers"].push_back(c);
  }
  s["faults"] = json::array();
  for (int f = 0, n = pick(3); f < n; ++f) {
    const int kind = consumers > 0 ? pick(3) : 2;
    json fault = {{"at_ms", pick(2000)}};
    if (kind == 0) fault.update({{"consumer", pick(consumers)}, {"stall_ms", 1 + pick(2000)}});
    if (kind == 1) {
      fault.update({{"consumer", pick(consumers)}, {"crash", true}});
      if (pick(2)) fault["restart_after_ms"] = 1 + pick(500);
    }
    if (kind == 2) fault["broker_down_ms"] = 1 + pick(1000);
    s["faults"].push_back(fault);
  }
  s["observe"] = {{"every_ms", 50 + pick(200)}};
  return s;
}

}  // namespace

TEST_CASE("random valid azure-servicebus scenarios keep every invariant") {
  sim::Rng rng(20261204, 0, "property-test-servicebus");
  std::uint64_t duplicates = 0, lapsed_dead_letters = 0, sessions = 0, session_locks = 0, received_back = 0;
  for (int i = 0; i < 200; ++i) {
    const auto doc = random_servicebus_scenario(rng);
    for (const auto& [name, q] : doc["broker"]["queues"].items()) sessions += q.value("requires_session", false);
    for (const auto& c : doc["consumers"]) {
      const bool session_queue = doc["broker"]["queues"][c["queue"].get<std::string>()].value("requires_session", false);
      session_locks += session_queue && c.contains("max_auto_lock_renewal_ms");
      received_back += c.contains("receive_deferred_after_ms");
    }
    check_invariants(doc);
    const auto run = run_scenario(doc.dump());
    duplicates += run.result.duplicate_executions;
    for (const auto& q : run.result.queues) lapsed_dead_letters += q.dl(DeathReason::MaxDeliveryCountExceeded);
  }
  // The generator reaches the paths it is for.
  CHECK(sessions > 0);
  CHECK(session_locks > 0);
  CHECK(received_back > 0);
  CHECK(duplicates > 0);
  CHECK(lapsed_dead_letters > 0);
}

// Found by the property test: a settled message's lock end must be void. A message rejected at
// 100 ms into dlq (nobody reads it until 2 s) kept its first lock's end (1000 ms) armed, which
// then "lapsed" while it sat in dlq, leaving two copies there.
TEST_CASE("azure-servicebus a settled message's lock end is void - a dead letter waiting past it is delivered once") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000}, "observe": {"every_ms": 500},
    "broker": {"kind": "azure-servicebus",
               "queues": {"q": {"lock_duration_ms": 1000, "dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "reject"},
                  {"queue": "dlq", "admission": "none", "start_ms": 2000}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
  })");
  CHECK(run.queue("dlq").delivered == 1);
  CHECK(run.trace.at(0).ms("delivered_ms") == 2000);
  CHECK(run.trace.at(0)["outcome"] == "completed_late");
  CHECK(run.result.duplicate_executions == 0);
  CHECK(run.series.at(3).at("q.unacked") == 0);  // 1500 ms
  CHECK(run.series.at(3).at("dlq.ready") == 1);
}

TEST_CASE("azure-servicebus sessions: one consumer holds a session and gets its messages in order - one at a time") {
  // Session 1: four messages at 0; session 2: two at 1 ms; 10 ms each; PrefetchCount 4.
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"requires_session": true}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "session": 1, "service_ms": 10},
                  {"queue": "q", "arrivals": {"at_ms": [1, 1]}, "session": 2, "service_ms": 10}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 4}]
  })";
  auto two = run_scenario(text);
  for (int i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(two.trace.at(i)["consumer"] == "0");
    CHECK(two.trace.at(i).ms("delivered_ms") == 10.0 * i);  // the next only after the previous settles
  }
  CHECK(two.trace.at(4)["consumer"] == "1");
  CHECK(two.trace.at(5)["consumer"] == "1");
  CHECK(two.trace.at(5).ms("delivered_ms") == 11);
  // One consumer with one slot (MaxConcurrentSessions 1): session 2 waits until session 1 is done.
  auto one = run_scenario(text, {"consumers.0.count=1"});
  CHECK(one.trace.at(4).ms("delivered_ms") == 40);
  // Two slots: two sessions at once on one consumer.
  auto slots = run_scenario(text, {"consumers.0.count=1", "consumers.0.slots=2"});
  CHECK(slots.trace.at(4).ms("delivered_ms") == 1);
  CHECK(slots.trace.at(3).ms("delivered_ms") == 30);
  // Without sessions the same fleet shares session 1's messages.
  auto plain = run_scenario(text, {"broker.queues.q.requires_session=false", "producers.0.session=null",
                                   "producers.1.session=null"});
  CHECK(plain.trace.at(1)["consumer"] == "1");
}

TEST_CASE("azure-servicebus sessions: a crashed holder's session goes to another consumer when its lock lapses") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"requires_session": true, "lock_duration_ms": 1000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "session": 1, "service_ms": 100}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 2}],
    "faults": [{"at_ms": 50, "consumer": 0, "crash": true}]
  })");
  // Message 0 was executing on consumer 0 (lock renewed): it lapses at 1050; consumer 1 then
  // accepts the session and gets all three in order.
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(run.trace.at(i)["consumer"] == "1");
    CHECK(run.trace.at(i).ms("delivered_ms") == 1050.0 + 100 * i);
  }
  CHECK(run.trace.at(0)["redeliveries"] == "1");
  CHECK(run.result.duplicate_executions == 1);
}

TEST_CASE("azure-servicebus sessions: one expired message expires every waiting message of its session (seed 004 - unverified)") {
  // Session 1: A (TTL 100 ms) then B and C (no TTL); session 2: D (no TTL). A receiver from 1 s.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"kind": "azure-servicebus",
               "queues": {"q": {"requires_session": true, "dead_letter_on_expiration": true}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "session": 1, "expiration_ms": 100, "service_ms": 10},
                  {"queue": "q", "arrivals": {"at_ms": [1, 2]}, "session": 1, "service_ms": 10},
                  {"queue": "q", "arrivals": {"at_ms": [3]}, "session": 2, "service_ms": 10}],
    "consumers": [{"queue": "q", "start_ms": 1000}]
  })");
  for (int i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(run.trace.at(i)["outcome"] == "expired_in_queue");
    CHECK(run.trace.at(i).ms("ended_ms") == 1000);
  }
  CHECK(run.queue("q").dl(DeathReason::TTLExpiredException) == 3);
  CHECK(run.trace.at(3)["outcome"] == "completed_on_time");
  CHECK(run.trace.at(3).ms("delivered_ms") == 1000);
}

namespace {

// Session 1 has two 3 s messages at 0; lock 1 s. Consumer 0 (prefetch 1) is a session processor
// whose renewal the tests limit; consumer 1 (attached at 100 ms, renewal unlimited) takes the
// session if consumer 0 loses it. Zero latencies.
constexpr const char* kSessionLock = R"({
  "stop": {"time_ms": 30000},
  "broker": {"kind": "azure-servicebus",
             "queues": {"q": {"requires_session": true, "lock_duration_ms": 1000, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "session": 1, "service_ms": 3000}],
  "consumers": [{"queue": "q", "prefetch": 1}, {"queue": "q", "prefetch": 1, "start_ms": 100}]
})";

}  // namespace

TEST_CASE("azure-servicebus session lock - renewed from the acceptance for max_auto_lock_renewal_ms - it lapses a lock duration later and another client takes the session") {
  // Accepted at 0, renewed until 1 s, lapses at 2 s while A executes: consumer 0 loses the
  // session, A is available again (delivery count 2) and consumer 1 accepts the session at 2 s;
  // consumer 0's copy runs on to 3 s and its Complete fails.
  auto run = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=1000"});
  CHECK(run.trace.at(0)["consumer"] == "1");
  CHECK(run.trace.at(0).ms("delivered_ms") == 2000);
  CHECK(run.trace.at(0).ms("ended_ms") == 5000);
  CHECK(run.trace.at(0)["redeliveries"] == "1");
  CHECK(run.trace.at(1)["consumer"] == "1");
  CHECK(run.trace.at(1).ms("delivered_ms") == 5000);
  CHECK(run.trace.at(1).ms("ended_ms") == 8000);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 2);
  CHECK(run.result.duplicate_executions == 1);
  CHECK(run.json()["duplicate_executions_by_cause"]["lapse"] == 1);
  // Without the limit the session lock never lapses: consumer 0 handles both, once each (the
  // runs before the session lock existed).
  auto unlimited = run_scenario(kSessionLock);
  CHECK(unlimited.trace.at(0)["consumer"] == "0");
  CHECK(unlimited.trace.at(1)["consumer"] == "0");
  CHECK(unlimited.trace.at(1).ms("ended_ms") == 6000);
  CHECK(unlimited.result.duplicate_executions == 0);
  CHECK(run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=null"}).json().dump() == unlimited.json().dump());
  // Renewed long enough (until 10 s): both on consumer 0.
  auto long_enough = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=10000"});
  CHECK(long_enough.trace.at(1)["consumer"] == "0");
  CHECK(long_enough.result.duplicate_executions == 0);
}

TEST_CASE("azure-servicebus session lock - the renewal window starts at the acceptance - not at each message's start") {
  // 3.5 s of renewal: the lock lapses at 4.5 s, during B (started at 3 s), though 3.5 s from B's
  // start would have covered it (a message lock renewed from the handler's start would end at 7.5 s).
  auto run = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=3500"});
  CHECK(run.trace.at(0)["consumer"] == "0");
  CHECK(run.trace.at(0).ms("ended_ms") == 3000);
  CHECK(run.trace.at(1)["consumer"] == "1");
  CHECK(run.trace.at(1).ms("delivered_ms") == 4500);
  CHECK(run.trace.at(1)["redeliveries"] == "1");
  CHECK(run.result.duplicate_executions == 1);
  // 0: no renewal at all, the session lock ends one lock duration after the acceptance.
  auto none = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=0"});
  CHECK(none.trace.at(0)["consumer"] == "1");
  CHECK(none.trace.at(0).ms("delivered_ms") == 1000);
}

TEST_CASE("azure-servicebus session lock - a lapse counts as a delivery - max_delivery_count 1 dead-letters the message at the lapse") {
  // message-sessions.md, "Impact of delivery count": a session lock timeout increments it.
  auto run = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=1000", "broker.queues.q.max_delivery_count=1"});
  CHECK(run.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(run.trace.at(0).ms("ended_ms") == 2000);
  CHECK(run.queue("q").dl(DeathReason::MaxDeliveryCountExceeded) == 1);
  // The session goes on with B, accepted by consumer 1 at 2 s.
  CHECK(run.trace.at(1)["consumer"] == "1");
  CHECK(run.trace.at(1).ms("delivered_ms") == 2000);
  CHECK(run.trace.at(1)["outcome"] == "completed_on_time");
}

TEST_CASE("azure-servicebus session lock - a session held idle is lost when its lock lapses - the client's slot is free for another session") {
  // One slot, SessionIdleTimeout 10 s: session 1's only message is done at 500 ms and the client
  // keeps the session idle; session 2's message (100 ms) waits for the slot. With renewal until
  // 1 s the session lock lapses at 2 s and the client takes session 2 then; without a limit it
  // waits for the idle timeout (10.5 s).
  const char* text = R"({
    "stop": {"time_ms": 30000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"requires_session": true, "lock_duration_ms": 1000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "session": 1, "service_ms": 500},
                  {"queue": "q", "arrivals": {"at_ms": [100]}, "session": 2, "service_ms": 500}],
    "consumers": [{"queue": "q", "prefetch": 1, "session_idle_timeout_ms": 10000}]
  })";
  auto lapsed = run_scenario(text, {"consumers.0.max_auto_lock_renewal_ms=1000"});
  CHECK(lapsed.trace.at(1).ms("delivered_ms") == 2000);
  CHECK(lapsed.result.duplicate_executions == 0);  // nothing of the session was out
  auto idle = run_scenario(text);
  CHECK(idle.trace.at(1).ms("delivered_ms") == 10500);
}

TEST_CASE("azure-servicebus session lock - a crashed holder's session lock ends a lock duration after the crash - or at its own end if earlier") {
  // Renewal until 10 s (lock end 11 s); consumer 0 crashes at 500 ms while A executes: the lock
  // is no longer renewed and ends at 1.5 s; consumer 1 then accepts the session.
  auto run = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=10000",
                                         R"(faults=[{"at_ms": 500, "consumer": 0, "crash": true}])"});
  CHECK(run.trace.at(0)["consumer"] == "1");
  CHECK(run.trace.at(0).ms("delivered_ms") == 1500);
  CHECK(run.trace.at(0)["redeliveries"] == "1");
  // Renewal until 200 ms (lock end 1.2 s): the crash cannot make it last longer.
  auto capped = run_scenario(kSessionLock, {"consumers.0.max_auto_lock_renewal_ms=200",
                                            R"(faults=[{"at_ms": 500, "consumer": 0, "crash": true}])"});
  CHECK(capped.trace.at(0).ms("delivered_ms") == 1200);
}

// The example scenario: a 2-minute spike at 125% of the fleet. PrefetchCount 32 keeps every
// buffered message within its 30 s lock; 64 lets locks lapse in the buffers, and the stale copies
// the handlers still run crowd out the redelivered ones (docs/semantics.md section 7).
TEST_CASE("azure-servicebus example: a larger PrefetchCount turns a spike into lapsed locks and duplicate executions") {
  const std::string text = brokersim::test::read_file(std::string(BROKERSIM_SOURCE_DIR) +
                                                      "/experiments/scenarios/servicebus-prefetch-lock.json");
  auto fits = run_scenario(text, {"consumers.0.prefetch=32"});
  CHECK(fits.result.duplicate_executions == 0);
  CHECK(fits.result.redeliveries == 0);
  auto lapses = run_scenario(text, {"consumers.0.prefetch=64"});
  CHECK(lapses.result.duplicate_executions > 1000);
  CHECK(lapses.result.redeliveries > lapses.result.duplicate_executions);
  CHECK(lapses.outcome(Outcome::ExpiredBeforeStart) > 0);
  CHECK(lapses.json()["goodput_per_s"].get<double>() < 0.9 * fits.json()["goodput_per_s"].get<double>());
}
