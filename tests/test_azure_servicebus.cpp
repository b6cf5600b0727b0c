// Azure Service Bus (broker.kind "azure-servicebus"): the test vectors 33-40 of docs/semantics.md part 2,
// one case each, then one small case per rule of section 5 with exact times (zero latencies
// unless a case needs them); lazy expiry, prefetch 0, outages, random scenarios, sessions and the
// example are in test_azure_servicebus_sessions.cpp. The trace's redeliveries column is the DeliveryCount - 1 of the
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
