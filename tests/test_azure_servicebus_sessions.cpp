// Azure Service Bus (broker.kind "azure-servicebus"), continued from test_azure_servicebus.cpp:
// lazy expiry, prefetch 0, an outage, random scenarios aimed at the lock keeping every invariant, a
// settled message's lock end, sessions and their locks with exact times, and the example scenario.
#include <doctest/doctest.h>

#include "sim/rng.hpp"
#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::test::run_scenario;

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
