// The client settings planners set (issue 21): SQS's per-receive VisibilityTimeout and the
// handler's ChangeMessageVisibility heartbeat, Service Bus's MaxAutoLockRenewalDuration, the SQS
// receive sizes in the outputs, and a linear ramp in rate_schedule. One small deterministic case
// per rule, exact times from the trace; zero latencies.
#include <doctest/doctest.h>

#include <cmath>

#include "models/workload.hpp"
#include "sim/rng.hpp"
#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

// One 90 s job on a queue with a 30 s visibility; consumer 1 (attached at 1 s) is there to
// receive it again if its visibility lapses.
// follow_ms 0: the state at the stop (a job never deleted would be followed on).
constexpr const char* kLongJob = R"({
  "stop": {"time_ms": 400000, "follow_ms": 0},
  "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 30000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 90000}],
  "consumers": [{"queue": "q", "prefetch": 1}, {"queue": "q", "prefetch": 1, "start_ms": 1000}]
})";

}  // namespace

TEST_CASE("amazon-sqs heartbeat - a 90 s job with 30 s visibility and a heartbeat every 20 s extending by 30 s runs once") {
  auto run = run_scenario(kLongJob, {R"(consumers.0.visibility_heartbeat={"every_ms": 20000, "extend_ms": 30000})"});
  REQUIRE(run.trace.size() == 1);
  CHECK(run.trace.at(0)["consumer"] == "0");
  CHECK(run.trace.at(0).ms("ended_ms") == 90000);
  CHECK(run.trace.at(0)["redeliveries"] == "0");
  CHECK(run.result.duplicate_executions == 0);
  CHECK(run.result.redeliveries == 0);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 1);
}

TEST_CASE("amazon-sqs without a heartbeat the 90 s job is received again at 30 s - and never deleted") {
  // Consumer 1 receives it when its visibility lapses at 30 s and runs it to 120 s; that receive
  // lapses at 60 s while both consumers are busy, and consumer 0, free at 90 s, receives it a
  // third time: its own delete at 90 s carried a stale receipt handle and deleted nothing. So it
  // goes on: every 90 s execution outlives its receive, each consumer receives it again when it
  // is free (at 120, 180, 210, 270, 300, 360, 390 s), and by 400 s it has run 10 times and is
  // still in the queue - the issue's "run about 10 times, then redriven".
  auto run = run_scenario(kLongJob);
  REQUIRE(run.trace.size() == 1);
  CHECK(run.result.duplicate_executions == 9);
  CHECK(run.trace.at(0)["redeliveries"] == "9");
  CHECK(run.trace.at(0).ms("delivered_ms") == 390000);
  CHECK(run.trace.at(0)["outcome"] == "in_system");
  auto early = run_scenario(kLongJob, {"stop.time_ms=100000"});
  CHECK(early.result.duplicate_executions == 2);
  CHECK(early.trace.at(0).ms("delivered_ms") == 90000);
  CHECK(early.trace.at(0)["consumer"] == "0");
}

TEST_CASE("amazon-sqs heartbeat - it extends from the call, not from the old end, and one that comes too late changes nothing") {
  // Every 40 s extending by 30 s: the first call (40 s) comes after the 30 s visibility ended, so
  // the message was received again at 30 s; the stale copy's heartbeat extends nothing.
  auto late = run_scenario(kLongJob, {"stop.time_ms=31000", R"(consumers.0.visibility_heartbeat={"every_ms": 40000, "extend_ms": 30000})"});
  CHECK(late.result.duplicate_executions == 1);
  CHECK(late.trace.at(0)["consumer"] == "1");
  CHECK(late.trace.at(0).ms("delivered_ms") == 30000);
  // Every 20 s extending by 25 s: ends at 45, 65, 85, 105 s - each call lands before the end it
  // moves, so no lapse before the job ends at 90 s.
  auto enough = run_scenario(kLongJob, {R"(consumers.0.visibility_heartbeat={"every_ms": 20000, "extend_ms": 25000})"});
  CHECK(enough.result.duplicate_executions == 0);
  // Every 20 s extending by 15 s: the call at 20 s sets the end to 35 s (from the call, not 30 +
  // 15 = 45 s), and the next call at 40 s comes too late: consumer 1 receives it at 35 s.
  auto tooshort = run_scenario(kLongJob, {"stop.time_ms=36000", R"(consumers.0.visibility_heartbeat={"every_ms": 20000, "extend_ms": 15000})"});
  CHECK(tooshort.result.duplicate_executions == 1);
  CHECK(tooshort.trace.at(0)["consumer"] == "1");
  CHECK(tooshort.trace.at(0).ms("delivered_ms") == 35000);
}

TEST_CASE("amazon-sqs heartbeat - the total visibility of one receive stops at 12 hours from the receive") {
  // A 13 h job, heartbeat every 1 h extending by 2 h: the call at 11 h sets 13 h, past 12 h from
  // the receive: rejected, and the client stops calling. The call at 10 h had set 12 h: the
  // message is received again at exactly 12 h.
  const char* text = R"({
    "stop": {"time_ms": 43201000, "follow_ms": 0},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 3600000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 46800000}],
    "consumers": [{"queue": "q", "prefetch": 1, "visibility_heartbeat": {"every_ms": 3600000, "extend_ms": 7200000}},
                  {"queue": "q", "prefetch": 1, "start_ms": 1000}]
  })";
  auto run = run_scenario(text);
  CHECK(run.result.duplicate_executions == 1);
  CHECK(run.trace.at(0).ms("delivered_ms") == 43200000);
}

TEST_CASE("amazon-sqs a consumer's visibility_timeout_ms is the receive's own VisibilityTimeout - instead of the queue's") {
  // The queue says 30 s; consumer 0 receives with 120 s: its 90 s job is not received again.
  auto longer = run_scenario(kLongJob, {"consumers.0.visibility_timeout_ms=120000"});
  CHECK(longer.result.duplicate_executions == 0);
  CHECK(longer.trace.at(0).ms("ended_ms") == 90000);
  // 10 s instead: consumer 1 receives it again at 10 s (its own receives use the queue's 30 s).
  auto shorter = run_scenario(kLongJob, {"stop.time_ms=11000", "consumers.0.visibility_timeout_ms=10000"});
  CHECK(shorter.result.duplicate_executions == 1);
  CHECK(shorter.trace.at(0)["consumer"] == "1");
  CHECK(shorter.trace.at(0).ms("delivered_ms") == 10000);
}

TEST_CASE("amazon-sqs client keys are validated - visibility_timeout_ms, visibility_heartbeat, on other kinds refused") {
  CHECK(load_error(kLongJob, {"consumers.0.visibility_timeout_ms=43200001"}) ==
        "consumers.0.visibility_timeout_ms: expected a duration from 0 to 43200000 ms (12 h), got 43200001");
  CHECK(load_error(kLongJob, {R"(consumers.0.visibility_heartbeat={"every_ms": 0, "extend_ms": 30000})"}).find(
            "consumers.0.visibility_heartbeat.every_ms: expected") == 0);
  CHECK(load_error(kLongJob, {R"(consumers.0.visibility_heartbeat={"every_ms": 1000, "extend_ms": 50000000})"}) ==
        "consumers.0.visibility_heartbeat.extend_ms: expected a duration from 0 to 43200000 ms (12 h), got 50000000");
  CHECK(load_error(kLongJob, {R"(consumers.0.visibility_heartbeat={"every_ms": 1000})"}).find(
            "consumers.0.visibility_heartbeat.extend_ms: expected") == 0);
  CHECK(load_error(kLongJob, {R"(consumers.0.visibility_heartbeat={"every_ms": 1000, "extend_ms": 1, "extnd_ms": 2})"}).find(
            "consumers.0.visibility_heartbeat") == 0);
  CHECK(load_error(kLongJob, {"consumers.0.visibility_heartbeat=5"}).find("consumers.0.visibility_heartbeat: expected an object") == 0);
  const std::string rabbit = load_error(kLongJob, {"broker.kind=rabbitmq-classic", "broker.queues.q={}", "consumers.0.visibility_timeout_ms=1"});
  CHECK(rabbit.find("amazon-sqs") != std::string::npos);
  // Without the keys, nothing changes: the run is the one without heartbeat.
  CHECK(run_scenario(kLongJob, {"consumers.0.visibility_heartbeat=null"}).json().dump() == run_scenario(kLongJob).json().dump());
}

namespace {

// One 7 min job on a Service Bus queue with a 60 s lock; consumer 1 (attached at 1 s) takes it
// when its lock lapses.
constexpr const char* kSevenMinutes = R"({
  "stop": {"time_ms": 2000000},
  "broker": {"kind": "azure-servicebus", "queues": {"q": {"lock_duration_ms": 60000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 420000}],
  "consumers": [{"queue": "q", "prefetch": 1}, {"queue": "q", "prefetch": 1, "start_ms": 1000}]
})";

}  // namespace

TEST_CASE("azure-servicebus MaxAutoLockRenewalDuration 5 min - a 7 min job loses its lock at 5 min + 60 s and is redelivered") {
  auto run = run_scenario(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=300000"});
  REQUIRE(run.trace.size() == 1);
  CHECK(run.trace.at(0)["consumer"] == "1");
  CHECK(run.trace.at(0).ms("delivered_ms") == 360000);
  CHECK(run.trace.at(0).ms("ended_ms") == 780000);
  CHECK(run.trace.at(0)["redeliveries"] == "1");
  CHECK(run.result.duplicate_executions == 1);  // consumer 0's copy ran on; its Complete failed
  // Without the limit (brokersim's default) the renewal never gives up: one execution.
  auto unlimited = run_scenario(kSevenMinutes);
  CHECK(unlimited.result.duplicate_executions == 0);
  CHECK(unlimited.trace.at(0)["consumer"] == "0");
  CHECK(unlimited.trace.at(0).ms("ended_ms") == 420000);
  // 10 min covers the 7 min job.
  CHECK(run_scenario(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=600000"}).result.duplicate_executions == 0);
}

TEST_CASE("azure-servicebus MaxAutoLockRenewalDuration 0 - no renewal, the lock ends one lock duration after the delivery") {
  auto run = run_scenario(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=0"});
  CHECK(run.trace.at(0).ms("delivered_ms") == 60000);
  CHECK(run.trace.at(0)["consumer"] == "1");
  CHECK(run.result.duplicate_executions >= 1);
}

TEST_CASE("azure-servicebus MaxAutoLockRenewalDuration - a crash ends the renewal - the lock lapses at the earlier of crash + lock and the cap's end") {
  // Renewal limited to 5 min (lock end 6 min); consumer 0 crashes at 5 min 30 s: the lock would
  // last to 6 min 30 s after the crash, but the renewal had stopped at 5 min: it lapses at 6 min.
  auto run = run_scenario(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=300000",
                                          R"(faults=[{"at_ms": 330000, "consumer": 0, "crash": true}])"});
  CHECK(run.trace.at(0).ms("delivered_ms") == 360000);
  // Unlimited: the lapse is one lock duration after the crash.
  auto unlimited = run_scenario(kSevenMinutes, {R"(faults=[{"at_ms": 330000, "consumer": 0, "crash": true}])"});
  CHECK(unlimited.trace.at(0).ms("delivered_ms") == 390000);
}

TEST_CASE("azure-servicebus session_idle_timeout_ms - a session with nothing left is kept that long - its next message goes to it") {
  // One session at a time (slots 1), 1 s jobs. Session 1 has a message at 0 (and one at 5 s),
  // session 2 one at 0. Without an idle timeout the client closes session 1 at 1 s and takes
  // session 2 then; with 10 s it keeps session 1 idle until 11 s.
  const char* text = R"({
    "stop": {"time_ms": 60000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {"requires_session": true}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000, "session": 1},
                  {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000, "session": 2}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })";
  auto at_once = run_scenario(text);
  CHECK(at_once.trace.at(1).ms("delivered_ms") == 1000);
  auto idle = run_scenario(text, {"consumers.0.session_idle_timeout_ms=10000"});
  CHECK(idle.trace.at(0).ms("delivered_ms") == 0);
  CHECK(idle.trace.at(1).ms("delivered_ms") == 11000);
  // A message of session 1 at 5 s comes within the timeout: delivered at once to the holder;
  // the session is then idle from 6 s, so session 2 waits until 16 s.
  auto again = run_scenario(text, {"consumers.0.session_idle_timeout_ms=10000", "producers.0.arrivals.at_ms=[0, 5000]"});
  CHECK(again.trace.at(2).ms("delivered_ms") == 5000);  // rows in creation order: session 1's second
  CHECK(again.trace.at(1).ms("delivered_ms") == 16000);
  CHECK(again.trace.at(1)["consumer"] == "0");
  // Validated: a duration >= 0, and only on a session queue.
  CHECK(load_error(text, {"consumers.0.session_idle_timeout_ms=-5"}).find("consumers.0.session_idle_timeout_ms: expected") == 0);
  CHECK(load_error(kSevenMinutes, {"consumers.0.session_idle_timeout_ms=1000"}) ==
        "consumers.0.session_idle_timeout_ms: a session idle timeout needs a queue with requires_session "
        "(broker.queues.q.requires_session is false)");
  CHECK(run_scenario(text, {"consumers.0.session_idle_timeout_ms=null"}).json().dump() == at_once.json().dump());
}

TEST_CASE("azure-servicebus max_auto_lock_renewal_ms is validated - not negative, not with receive-and-delete, not on other kinds") {
  CHECK(load_error(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=-1"}).find("consumers.0.max_auto_lock_renewal_ms: expected") == 0);
  CHECK(load_error(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=1000", "consumers.0.receive_mode=receive-and-delete"})
            .find("consumers.0.max_auto_lock_renewal_ms") == 0);
  const std::string sqs = load_error(kSevenMinutes, {"broker.kind=amazon-sqs", "broker.queues.q={}", "consumers.0.max_auto_lock_renewal_ms=1"});
  CHECK(sqs.find("azure-servicebus") != std::string::npos);
  CHECK(run_scenario(kSevenMinutes, {"consumers.0.max_auto_lock_renewal_ms=null"}).json().dump() ==
        run_scenario(kSevenMinutes).json().dump());
}

TEST_CASE("amazon-sqs receives - each response's size is counted - as many as visible, up to batch_size") {
  // Seven messages at 0: consumer 0 (batch 4, attached at 0.1 s) gets 4 in one response, consumer
  // 1 (attached at 0.5 s) the other 3 in one; the messages at 10 s and 11 s come alone: responses
  // of 1. (A client already polling when messages come one by one gets them one by one.)
  const char* text = R"({
    "stop": {"time_ms": 60000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 10000, 11000]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 4, "batch_size": 4, "start_ms": 100},
                  {"queue": "q", "prefetch": 4, "batch_size": 4, "start_ms": 500}]
  })";
  auto run = run_scenario(text);
  const auto j = run.json();
  CHECK(j["receives"]["responses"] == 4);
  CHECK(j["receives"]["messages"] == 9);
  CHECK(j["receives"]["mean_per_response"] == 2.25);
  CHECK(j["receives"]["by_size"]["1"] == 2);
  CHECK(j["receives"]["by_size"]["3"] == 1);
  CHECK(j["receives"]["by_size"]["4"] == 1);
  CHECK(j["receives"]["by_size"]["10"] == 0);
  std::ostringstream summary;
  brokersim::print_summary(summary, run.scenario, run.result);
  CHECK(summary.str().find("Receives 4 responses carried 9 messages, 2.25 per response (by size 1: 2, 3: 1, 4: 1)") !=
        std::string::npos);
  // After a warm-up of 5 s only the two single responses count.
  CHECK(run_scenario(text, {"warmup_ms=5000"}).json()["receives"]["responses"] == 2);
  // Other kinds have no such output.
  CHECK(!run_scenario(kLongJob, {"broker.kind=rabbitmq-classic", "broker.queues.q={}"}).json().contains("receives"));
}

TEST_CASE("amazon-sqs autoscale metric ready+unacked is KEDA's aws-sqs-queue with scaleOnInFlight - ready is without") {
  // Ten messages at 0, all received at once by the one replica (prefetch 10): none visible, ten in
  // flight. The sync at 0 sees 10 with in-flight messages counted (scale-up policy: +4 pods, so 5
  // replicas), 0 without (the replica count stays 1).
  const char* text = R"({
    "stop": {"time_ms": 10000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 100000}],
    "consumers": [{"queue": "q", "prefetch": 10, "slots": 10, "autoscale": {"target_per_replica": 1, "max": 10}}]
  })";
  CHECK(run_scenario(text).json()["fleet"]["groups"]["0"]["peak_replicas"] == 5);
  CHECK(run_scenario(text, {"consumers.0.autoscale.metric=ready"}).json()["fleet"]["groups"]["0"]["peak_replicas"] == 1);
}

namespace {

brokersim::Scenario ramp_scenario(const std::string& schedule) {
  return brokersim::test::run_scenario(R"({"stop": {"time_ms": 1}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"rate_schedule": )" + schedule + R"(}, "service_ms": 1}]})")
      .scenario;
}

}  // namespace

TEST_CASE("rate_schedule linear ramp - arrival times are the inverse of the integrated rate, exactly") {
  // From 0 to 100/s over 600 s: Lambda(t) = 100 t^2 / 1200, so the k-th arrival is at
  // sqrt(12 S_k) s, S_k the sum of k unit exponential draws of the producer's arrival stream.
  const auto s = ramp_scenario(R"([{"from_ms": 0, "rate_per_s": 0, "linear": true}, {"from_ms": 600000, "rate_per_s": 100}])");
  brokersim::Producer p(s.producers[0], 0, s.seed, 0);
  sim::Rng draws(s.seed, 0, "producers.0.arrivals");
  double sum = 0;
  for (int k = 0; k < 1000; ++k) {
    sum += draws.exponential(1.0);
    const double expected_ns = std::sqrt(12.0 * sum) * 1e9;
    const double got = static_cast<double>(p.next_arrival());
    CAPTURE(k);
    CHECK(std::abs(got - expected_ns) <= 2.0 + 1e-10 * expected_ns);  // whole ns, and double rounding
  }
}

TEST_CASE("rate_schedule linear ramp - 10 to 50 per s over 600 s gives 18,000 arrivals - within 4.4 sd of Poisson") {
  const auto s = ramp_scenario(R"([{"from_ms": 0, "rate_per_s": 10, "linear": true}, {"from_ms": 600000, "rate_per_s": 50},
                                  {"from_ms": 700000, "rate_per_s": 0}])");
  brokersim::Producer p(s.producers[0], 0, s.seed, 0);
  std::uint64_t ramp = 0, flat = 0;
  for (;;) {
    const auto t = p.next_arrival();
    if (t == sim::kNever) break;
    (t < sim::Time{600'000} * sim::kNsPerMs ? ramp : flat) += 1;
  }
  // Poisson counts: mean 18,000 (sd 134.2) on the ramp, 5,000 (sd 70.7) at 50/s for 100 s;
  // 4.4 sd is a two-sided 99.999% band, so a correct generator fails it once in 100,000 seeds.
  CHECK(std::abs(static_cast<double>(ramp) - 18000.0) <= 4.4 * std::sqrt(18000.0));
  CHECK(std::abs(static_cast<double>(flat) - 5000.0) <= 4.4 * std::sqrt(5000.0));
  // A falling ramp to 0: its integral over the segment is (50 + 0) / 2 x 100 s = 2,500.
  const auto down = ramp_scenario(R"([{"from_ms": 0, "rate_per_s": 50, "linear": true}, {"from_ms": 100000, "rate_per_s": 0}])");
  brokersim::Producer q(down.producers[0], 0, down.seed, 0);
  std::uint64_t n = 0;
  while (q.next_arrival() != sim::kNever) ++n;
  CHECK(std::abs(static_cast<double>(n) - 2500.0) <= 4.4 * std::sqrt(2500.0));
}

TEST_CASE("rate_schedule linear - a ramp between equal rates is the step - and the key is validated") {
  const auto ramp = ramp_scenario(R"([{"from_ms": 0, "rate_per_s": 7, "linear": true}, {"from_ms": 1000000, "rate_per_s": 7}])");
  const auto step = ramp_scenario(R"([{"from_ms": 0, "rate_per_s": 7}, {"from_ms": 1000000, "rate_per_s": 7}])");
  brokersim::Producer a(ramp.producers[0], 0, 1, 0), b(step.producers[0], 0, 1, 0);
  for (int k = 0; k < 200; ++k) CHECK(std::llabs(a.next_arrival() - b.next_arrival()) <= 1);
  const std::string base = R"({"stop": {"time_ms": 1}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"rate_schedule": [{"from_ms": 0, "rate_per_s": 1}]}, "service_ms": 1}]})";
  CHECK(load_error(base, {"producers.0.arrivals.rate_schedule.0.linear=1"}) ==
        "producers.0.arrivals.rate_schedule.0.linear: expected true or false, got 1");
  CHECK(load_error(base, {"producers.0.arrivals.rate_schedule.0.linear=true"}).find(
            "producers.0.arrivals.rate_schedule.0.linear: a linear ramp goes to the next step") == 0);
  CHECK(load_error(base, {"producers.0.arrivals.rate_schedule.0.lineer=true"}).find("did you mean") != std::string::npos);
}
