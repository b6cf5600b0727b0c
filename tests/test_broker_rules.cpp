// One case per broker or client rule: tiny deterministic scenarios with exact outcomes and times.
// The RabbitMQ test vectors of docs/semantics.md part 2 are in tests/test_vectors.cpp and test_vectors_12_26.cpp, one case each.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::Wait;
using brokersim::test::run_scenario;

namespace {

// The seed 000 experiment: three jobs, TTL 600 ms, the consumer held 1050 ms before it can start.
const char* kPrefetchBoundary = R"({
  "name": "prefetch-boundary", "seed": 7, "stop": {"time_ms": 5000},
  "broker": {"queues": {"work": {"message_ttl_ms": 600, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 0, 0]}, "deadline_ms": 600, "service_ms": 100}],
  "consumers": [{"queue": "work", "prefetch": 1, "admission": "check-before-start", "on_expired": "ack"}],
  "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 1050}]
})";

}  // namespace

TEST_CASE("seed 000, prefetch 1: one job expires before start, two expire in the queue") {
  auto run = run_scenario(kPrefetchBoundary);
  CHECK(run.result.generated == 3);
  CHECK(run.outcome(Outcome::ExpiredBeforeStart) == 1);
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 2);
  REQUIRE(run.trace.size() == 3);
  // Job 0 was delivered at once and rejected by the admission check when the stall ended.
  CHECK(run.trace[0]["outcome"] == "expired_before_start");
  CHECK(run.trace[0].ms("delivered_ms") == 0);
  CHECK(run.trace[0].ms("ended_ms") == 1050);
  CHECK(run.trace[0].empty("started_ms"));
  // Jobs 1 and 2 never left the broker: dead-lettered with reason expired at exactly 600 ms.
  for (int i : {1, 2}) {
    CHECK(run.trace[i]["outcome"] == "expired_in_queue");
    CHECK(run.trace[i].empty("delivered_ms"));
    CHECK(run.trace[i].ms("ended_ms") == 600);
  }
  CHECK(run.queue("work").dl(DeathReason::Expired) == 2);
  CHECK(run.queue("dlq").published == 2);
  CHECK(run.queue("dlq").ready_at_end == 2);
  // The dead letters rest in a queue nobody reads: they keep their decision, they are not in_system.
  CHECK(run.outcome(Outcome::InSystem) == 0);
}

TEST_CASE("seed 000, prefetch 3: all three delivered before expiry, all rejected after the wait") {
  auto run = run_scenario(kPrefetchBoundary, {"consumers.0.prefetch=3"});
  CHECK(run.outcome(Outcome::ExpiredBeforeStart) == 3);
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 0);
  for (const auto& row : run.trace) {
    CHECK(row.ms("delivered_ms") == 0);
    CHECK(row.ms("ended_ms") == 1050);
  }
  CHECK(run.queue("work").dl(DeathReason::Expired) == 0);
  CHECK(run.result.wait(Wait::Local).count() == 3);
  CHECK(run.result.wait(Wait::Local).max() == brokersim::Time{1050} * 1'000'000);
}

TEST_CASE("queue TTL 0 without a dead-letter target discards at once even behind other messages") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {"message_ttl_ms": 0}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 5]}, "service_ms": 1}]
  })");
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 2);
  CHECK(run.trace[1].ms("ended_ms") == 5);
  CHECK(run.queue("q").max_ready == 0);
}

TEST_CASE("max-length without a dead-letter target: drop-head loses the head") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {"max_length": 1}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1]}, "service_ms": 1}]
  })");
  CHECK(run.trace[0]["outcome"] == "lost");
  CHECK(run.queue("q").dl(DeathReason::Maxlen) == 0);
}

TEST_CASE("prefetch 0 is unlimited") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 100},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 0}]
  })");
  for (const auto& row : run.trace) CHECK(row.ms("delivered_ms") == 0);
  CHECK(run.outcome(Outcome::InSystem) == 10);
}

TEST_CASE("delivery latency: a job delivered in time can arrive stale (expired_in_transit)") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"delivery_latency_ms": 150, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 100, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })");
  CHECK(run.trace[0]["outcome"] == "expired_in_transit");
  CHECK(run.trace[0].ms("received_ms") == 150);
  CHECK(run.trace[0].ms("ended_ms") == 150);
  CHECK(run.result.wait(Wait::Transit).max() == 150'000'000);
}

TEST_CASE("ack latency holds the credit: prefetch 1 idles the slot for a round trip") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 10000},
    "broker": {"delivery_latency_ms": 5, "ack_latency_ms": 5, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })");
  // Job 1 is delivered only when job 0's ack reaches the broker (100 + 5 + 5 = 110).
  CHECK(run.trace[1].ms("delivered_ms") == 110);
  CHECK(run.trace[1].ms("started_ms") == 115);
  auto prefetched = run_scenario(R"({
    "stop": {"time_ms": 10000},
    "broker": {"delivery_latency_ms": 5, "ack_latency_ms": 5, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2}]
  })");
  CHECK(prefetched.trace[1].ms("started_ms") == 105);
}

TEST_CASE("admission: the seed 000 worked example (clock 10000, deadline 10080, margin 0 vs 100)") {
  const char* text = R"({
    "stop": {"time_ms": 20000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 10080, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 10000, "uncertainty_ms": 0}]
  })";
  auto no_margin = run_scenario(text);
  CHECK(no_margin.trace[0]["outcome"] == "completed_on_time");
  CHECK(no_margin.trace[0].ms("started_ms") == 10000);
  auto margin = run_scenario(text, {"consumers.0.uncertainty_ms=100"});
  CHECK(margin.trace[0]["outcome"] == "expired_before_start");
  CHECK(margin.result.rejected_but_valid == 1);  // on true time 80 ms were left
  auto window = run_scenario(text, {"consumers.0.min_window_ms=81"});
  CHECK(window.trace[0]["outcome"] == "expired_before_start");
  auto window_fits = run_scenario(text, {"consumers.0.min_window_ms=80"});
  CHECK(window_fits.trace[0]["outcome"] == "completed_on_time");
  auto no_check = run_scenario(text, {"consumers.0.admission=none", "consumers.0.uncertainty_ms=100"});
  CHECK(no_check.trace[0]["outcome"] == "completed_on_time");
}

TEST_CASE("clock skew: a slow worker clock admits expired work, a fast one rejects valid work") {
  const char* text = R"({
    "stop": {"time_ms": 20000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 1000, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 1050, "clock_offset_ms": -100}]
  })";
  auto slow = run_scenario(text);
  CHECK(slow.trace[0]["outcome"] == "completed_late");
  CHECK(slow.result.admitted_but_expired == 1);
  auto fast = run_scenario(text, {"consumers.0.start_ms=950", "consumers.0.clock_offset_ms=100"});
  CHECK(fast.trace[0]["outcome"] == "expired_before_start");
  CHECK(fast.result.rejected_but_valid == 1);
  // The producer's clock matters as much: expires_at is written in it.
  auto producer_ahead = run_scenario(text, {"consumers.0.start_ms=950", "consumers.0.clock_offset_ms=0",
                                            "producers.0.clock_offset_ms=-100"});
  CHECK(producer_ahead.trace[0]["outcome"] == "expired_before_start");
  CHECK(producer_ahead.trace[0].ms("expires_at_ms") == 900);
}

TEST_CASE("check-at-receive-and-start rejects at receipt, before the job takes buffer space") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "deadline_ms": 150, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2, "uncertainty_ms": 60, "admission": "check-at-receive-and-start"}]
  })");
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[1]["outcome"] == "expired_before_start");  // 150-100-60 < 0 at its start
  CHECK(run.trace[1].ms("ended_ms") == 100);
  auto at_receipt = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"delivery_latency_ms": 100, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 150, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2, "uncertainty_ms": 60, "admission": "check-at-receive-and-start"}]
  })");
  CHECK(at_receipt.trace[0]["outcome"] == "expired_before_start");
  CHECK(at_receipt.trace[0].ms("ended_ms") == 100);
  CHECK(at_receipt.trace[0].ms("received_ms") == 100);
}

TEST_CASE("exec_timeout: from the remaining budget, or fixed") {
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 500, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 1, "exec_timeout": "remaining-budget"}]
  })";
  auto budget = run_scenario(text);
  CHECK(budget.trace[0]["outcome"] == "timed_out");
  CHECK(budget.trace[0].ms("finished_ms") == 500);
  auto fixed = run_scenario(text, {"consumers.0.exec_timeout=200"});
  CHECK(fixed.trace[0]["outcome"] == "timed_out");
  CHECK(fixed.trace[0].ms("finished_ms") == 200);
  auto none = run_scenario(text, {"consumers.0.exec_timeout=null"});
  CHECK(none.trace[0]["outcome"] == "completed_late");
  CHECK(none.trace[0].ms("finished_ms") == 1000);
}

TEST_CASE("failure_probability 1 fails every started job") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1, 2]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "failure_probability": 1}]
  })");
  CHECK(run.outcome(Outcome::Failed) == 3);
  CHECK(run.trace[2].ms("finished_ms") == 30);
}

TEST_CASE("producers: work already past its deadline is rejected at publish - remaining-budget TTL") {
  const char* text = R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 100, "publish_delay_ms": 200,
                   "expiration_ms": "remaining-budget", "service_ms": 10}]
  })";
  auto late = run_scenario(text);
  CHECK(late.trace[0]["outcome"] == "rejected_at_publish");
  CHECK(late.trace[0].ms("ended_ms") == 200);
  CHECK(late.queue("q").published == 0);
  // Deadline 1000, published at 300: the broker TTL is what is left (700), so it expires at 1000.
  auto budget = run_scenario(text, {"producers.0.deadline_ms=1000", "producers.0.publish_delay_ms=300"});
  CHECK(budget.trace[0]["outcome"] == "expired_in_queue");
  CHECK(budget.trace[0].ms("ended_ms") == 1000);
}

TEST_CASE("a stalled consumer still receives up to its prefetch but starts nothing") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000}, "observe": {"every_ms": 100},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 2}],
    "faults": [{"at_ms": 50, "consumer": 0, "stall_ms": 250}]
  })", {"producers.0.arrivals.at_ms=[60, 60, 60]"});
  CHECK(run.series.at(2).at("consumer.0.local") == 2);  // at 200 ms: two buffered
  CHECK(run.series.at(2).at("q.ready") == 1);
  CHECK(run.trace[0].ms("started_ms") == 300);
  CHECK(run.trace[1].ms("started_ms") == 310);
  CHECK(run.trace[2].ms("started_ms") == 320);
}

TEST_CASE("consumer crash: unacked jobs are requeued at their positions and redelivered after restart") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 2}],
    "faults": [{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 1000}]
  })");
  // Job 0 was executing, job 1 buffered: both back in the queue, ahead of job 2.
  CHECK(run.trace[0].ms("started_ms") == 1050);
  CHECK(run.trace[0]["redeliveries"] == "1");
  CHECK(run.trace[1]["redeliveries"] == "1");
  CHECK(run.trace[2]["redeliveries"] == "0");
  CHECK(run.trace[2].ms("delivered_ms") == 1150);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 3);
  CHECK(run.result.duplicate_executions == 1);  // job 0 started twice
}

TEST_CASE("clock step on a consumer moves its admission decisions") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [100]}, "deadline_ms": 500, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1}],
    "faults": [{"at_ms": 0, "consumer": 0, "clock_step_ms": 600}]
  })");
  CHECK(run.trace[0]["outcome"] == "expired_before_start");
  CHECK(run.result.rejected_but_valid == 1);
}

TEST_CASE("at the end, a job waiting in a read queue or at a consumer is in_system whatever was decided") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"delay": {"message_ttl_ms": 100, "dead_letter_to": "work"}, "work": {}}},
    "producers": [{"queue": "delay", "arrivals": {"at_ms": [0, 950]}, "service_ms": 5000}],
    "consumers": [{"queue": "work", "prefetch": 1}]
  })");
  // Job 0: delayed 100 ms through the TTL + dead-letter queue, now executing: in the system.
  CHECK(run.trace[0]["outcome"] == "in_system");
  CHECK(run.trace[0].ms("started_ms") == 100);
  // Job 1: still in the delay queue (no consumer reads it, no decision yet): in the system too.
  CHECK(run.trace[1]["outcome"] == "in_system");
  CHECK(run.trace[1].empty("ended_ms"));
}

TEST_CASE("stop.jobs ends the run once that many jobs were generated and all are settled") {
  auto run = run_scenario(R"({
    "stop": {"jobs": 50},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 100}}, "service_ms": {"exp": {"mean": 5}}}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })");
  CHECK(run.result.generated == 50);
  CHECK(run.outcome(Outcome::InSystem) == 0);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 50);
  CHECK(run.result.stop_reason == brokersim::StopReason::Jobs);
}

TEST_CASE("limits.max_events stops a run after that many events, at the boundary and at the largest value") {
  const std::string scenario = R"({
    "stop": {"jobs": 50},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 100}}, "service_ms": {"exp": {"mean": 5}}}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })";
  const auto full = run_scenario(scenario);
  REQUIRE(full.result.stop_reason == brokersim::StopReason::Jobs);
  const std::uint64_t needed = full.result.events;
  // Exactly enough events: the run ends on its jobs, as without the limit.
  auto just = run_scenario(scenario, {"limits.max_events=" + std::to_string(needed)});
  CHECK(just.result.stop_reason == brokersim::StopReason::Jobs);
  CHECK(just.result.events == needed);
  // One fewer: stopped by the limit; the event that crossed it is counted, not handled.
  auto short_by_one = run_scenario(scenario, {"limits.max_events=" + std::to_string(needed - 1)});
  CHECK(short_by_one.result.stop_reason == brokersim::StopReason::MaxEvents);
  CHECK(short_by_one.result.events == needed);
  // The largest value cannot wrap the per-instant limit into stopping early.
  auto largest = run_scenario(scenario, {"limits.max_events=18446744073709551615"});
  CHECK(largest.result.stop_reason == brokersim::StopReason::Jobs);
  CHECK(largest.result.events == needed);
}

TEST_CASE("warm-up: only jobs created after it are counted") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000}, "warmup_ms": 500,
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"periodic": {"every_ms": 100}}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })");
  CHECK(run.result.generated == 6);  // 500, 600, ..., 1000
  CHECK(run.trace.size() == 11);     // the trace still lists every job
  CHECK(run.result.measured_s == doctest::Approx(0.5));
  CHECK(run.json()["throughput_per_s"].get<double>() == doctest::Approx(10.0));  // 5 done in 0.5 s
}

TEST_CASE("arrival kinds: periodic, rate_schedule") {
  auto periodic = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"periodic": {"every_ms": 250}}, "service_ms": 1}],
    "consumers": [{"queue": "q"}]
  })");
  CHECK(periodic.result.generated == 5);
  CHECK(periodic.trace[3].ms("created_ms") == 750);
  auto schedule = run_scenario(R"({
    "stop": {"time_ms": 20000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"rate_schedule": [{"from_ms": 0, "rate_per_s": 0},
                   {"from_ms": 10000, "rate_per_s": 500}]}, "service_ms": 0}],
    "consumers": [{"queue": "q", "prefetch": 0}]
  })");
  for (const auto& row : schedule.trace) CHECK(row.ms("created_ms") >= 10000);
  // 500/s for 10 s: Poisson count 5000, sd ~71; 5 sd either side.
  CHECK(schedule.result.generated > 5000 - 355);
  CHECK(schedule.result.generated < 5000 + 355);
}

TEST_CASE("same seed, same JSON, byte for byte - another seed, other numbers") {
  const char* text = R"({
    "seed": 11, "stop": {"time_ms": 20000},
    "broker": {"delivery_latency_ms": {"exp": {"mean": 1}}, "ack_latency_ms": {"uniform": {"min": 0.5, "max": 1.5}},
               "queues": {"q": {"message_ttl_ms": 300, "dead_letter_to": "d"}, "d": {}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 40}}, "deadline_ms": 400,
                   "service_ms": {"lognormal": {"mean": 45, "cv": 1.5}}}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 3, "clock_offset_ms": {"normal": {"mean": 0, "sd": 30}},
                   "uncertainty_ms": 20}]
  })";
  const std::string a = run_scenario(text).json().dump();
  const std::string b = run_scenario(text).json().dump();
  CHECK(a == b);
  const std::string c = run_scenario(text, {"seed=12"}).json().dump();
  CHECK(a != c);
}

TEST_CASE("common random numbers: adding a consumer does not change the arrivals or service demands") {
  const char* text = R"({
    "stop": {"jobs": 300},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 50}}, "service_ms": {"exp": {"mean": 30}}}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 1}]
  })";
  auto two = run_scenario(text);
  auto three = run_scenario(text, {"consumers.0.count=3"});
  REQUIRE(two.trace.size() == three.trace.size());
  for (std::size_t i = 0; i < two.trace.size(); ++i) CHECK(two.trace[i]["created_ms"] == three.trace[i]["created_ms"]);
  // The same service demands, summed in another completion order: equal up to rounding.
  CHECK(two.result.wait(Wait::Service).mean() == doctest::Approx(three.result.wait(Wait::Service).mean()).epsilon(1e-12));
  CHECK(two.result.wait(Wait::Service).count() == three.result.wait(Wait::Service).count());
}

TEST_CASE("a job whose requeue is on its way back to the broker when the run stops is in_system") {
  // The consumer finds the job stale (deadline 50 ms, stalled until 100 ms) and requeues it; each
  // nack takes 10 ms, so the job is redelivered every 10 ms. Wherever the stop falls, in the queue,
  // in a consumer, or with its nack on the wire, the job is in the system.
  const char* text = R"({
    "stop": {"time_ms": 2000},
    "broker": {"ack_latency_ms": 10, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 1}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "requeue"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
  })";
  for (const char* stop : {"stop.time_ms=105", "stop.time_ms=110", "stop.time_ms=115", "stop.time_ms=2000"}) {
    CAPTURE(stop);
    auto run = run_scenario(text, {stop});
    CHECK(run.trace.at(0)["outcome"] == "in_system");
  }
  // A reject (to no dead-letter target) on the wire keeps its decision.
  auto reject = run_scenario(text, {"consumers.0.on_expired=reject", "stop.time_ms=105"});
  CHECK(reject.trace.at(0)["outcome"] == "expired_before_start");
}
