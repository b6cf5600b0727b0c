// Issue 12, the figures labelled for what they count: exact CSV times, expired_before_start split
// by where the budget went, the queue wait of expired jobs, one warm-up rule for every counter,
// stranded work, and the offered load with its unit-mistake warnings. Small deterministic
// scenarios with exact answers.
#include <doctest/doctest.h>

#include <cmath>

#include "experiments/cli/offered_load.hpp"
#include "experiments/cli/text.hpp"
#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::Wait;
using brokersim::test::run_scenario;

TEST_CASE("format_ms writes exact milliseconds without exponent") {
  CHECK(sim::format_ms(0) == "0");
  CHECK(sim::format_ms(5'000'000) == "5");
  CHECK(sim::format_ms(3'599'910'000'123) == "3599910.000123");
  CHECK(sim::format_ms(1'500'000) == "1.5");
  CHECK(sim::format_ms(-500'000) == "-0.5");
  CHECK(sim::format_ms(1) == "0.000001");
}

TEST_CASE("trace and time series keep nanosecond times after 1000 s of simulated time") {
  // One job at 3,599,910.000123 ms with a constant 5 ms transit: 6 significant digits would
  // print both times as 3.59991e+06.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 3600000}, "observe": {"every_ms": 1000000.000001},
    "broker": {"delivery_latency_ms": 5, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [3599910.000123]}, "service_ms": 1}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })");
  REQUIRE(run.trace.size() == 1);
  CHECK(run.trace[0]["created_ms"] == "3599910.000123");
  CHECK(run.trace[0]["received_ms"] == "3599915.000123");
  CHECK(run.trace[0]["ended_ms"] == "3599916.000123");
  REQUIRE(run.series.size() == 4);
  CHECK(run.series[1].at("time_ms") == doctest::Approx(1000000.000001).epsilon(1e-15));
}

TEST_CASE("expired_before_start is split into stale on receipt and stale in the local buffer") {
  // Consumer 0 holds job 0 for 1,000 ms; prefetch 2 means job 1 (deadline 500 ms) waits in its
  // buffer and goes stale there. Job 2 is published at 0 to a queue whose only consumer attaches
  // at 700 ms, after its 600 ms deadline: it was stale when it arrived (no local wait).
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"a": {}, "b": {}}},
    "producers": [
      {"queue": "a", "arrivals": {"at_ms": [0, 1]}, "deadline_ms": 500, "service_ms": 1000},
      {"queue": "b", "arrivals": {"at_ms": [0]}, "deadline_ms": 600, "service_ms": 1}],
    "consumers": [{"queue": "a", "prefetch": 2}, {"queue": "b", "prefetch": 1, "start_ms": 700}]
  })");
  CHECK(run.outcome(Outcome::ExpiredBeforeStart) == 2);
  CHECK(run.result.stale_in_local_buffer == 1);
  CHECK(run.result.stale_on_receipt == 1);
  const auto j = run.json();
  CHECK(j["expired_before_start_by_cause"]["on_receipt"] == 1);
  CHECK(j["expired_before_start_by_cause"]["in_local_buffer"] == 1);
  CHECK(j["expired_before_start_by_cause"]["fraction_on_receipt"].get<double>() == doctest::Approx(1.0 / 3));
}

TEST_CASE("the queue wait of jobs that expired there is reported beside the delivered jobs' wait") {
  // prefetch-boundary: 3 jobs with a 600 ms TTL, a consumer stalled for 1,050 ms, prefetch 1:
  // job 0 is delivered at once; jobs 1 and 2 wait 600 ms in the queue and expire.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000},
    "broker": {"queues": {"work": {"message_ttl_ms": 600}}},
    "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 0, 0]}, "deadline_ms": 600, "service_ms": 10}],
    "consumers": [{"queue": "work", "prefetch": 1}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 1050}]
  })");
  CHECK(run.outcome(Outcome::ExpiredInQueue) == 2);
  CHECK(run.result.wait(Wait::Queue).count() == 1);
  CHECK(run.result.wait(Wait::Queue).mean() == 0);
  CHECK(run.result.wait(Wait::QueueExpired).count() == 2);
  CHECK(run.result.wait(Wait::QueueExpired).mean() == doctest::Approx(600e6));
  CHECK(run.json()["wait_ms"]["queue_expired"]["mean"].get<double>() == doctest::Approx(600.0).epsilon(0.01));
}

TEST_CASE("warm-up: queue counters count only jobs created after it, levels every message over the span") {
  // One job a second into a queue nobody reads (a dead-letter queue stand-in), warm-up 5.5 s:
  // the jobs at 0..5 s are before it. Published 6..10 s = 5 counted jobs. The levels are the
  // state averaged over 5.5..10 s, every message: (0.5*6 + 1*7 + 1*8 + 1*9 + 1*10)/4.5, and
  // the most at once is the 11 of the last instant. (follow_ms 0: nothing in a queue nobody reads
  // would ever leave, so following is left out.)
  auto run = run_scenario(R"({
    "stop": {"time_ms": 10000, "follow_ms": 0}, "warmup_ms": 5500, "observe": {"every_ms": 1000},
    "broker": {"queues": {"w": {}, "dlq": {}}},
    "producers": [{"queue": "dlq", "arrivals": {"periodic": {"every_ms": 1000}}, "service_ms": 1}],
    "consumers": [{"queue": "w"}]
  })");
  const auto& q = run.queue("dlq");
  CHECK(run.result.generated == 5);  // 6, 7, 8, 9, 10 s
  CHECK(q.published == 5);
  CHECK(q.max_ready == 11);
  CHECK(q.mean_ready == doctest::Approx((0.5 * 6 + 7.0 + 8.0 + 9.0 + 10.0) / 4.5));
  CHECK(q.ready_at_end == 11);  // the state: every message
  // The trace marks the warm-up jobs.
  REQUIRE(run.trace.size() == 11);
  CHECK(run.trace[5]["warmup"] == "1");
  CHECK(run.trace[6]["warmup"] == "0");
  CHECK(run.series.back().at("dlq.ready") == 11);
}

TEST_CASE("idle slots while another consumer holds stranded work") {
  // Two consumers with one slot and prefetch 2; four 1,000 ms jobs at 0 go round-robin: jobs 0
  // and 2 to consumer 0, which is stalled until 3,000 ms, jobs 1 and 3 to consumer 1.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 10000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 2}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 3000}]
  })");
  // Slot time: 2 slots x 10 s. Stranded (an idle slot while the OTHER consumer buffers jobs):
  //   0-1 s    consumer 0's slot (stalled) while consumer 1 buffers job 3
  //   2-3 s    consumer 1's slot while consumer 0 (stalled) buffers jobs 0 and 2
  //   3-4 s    consumer 1's slot while consumer 0 runs job 0 and buffers job 2
  // = 3 s; consumer 0's idle slot while only it holds work is not stranding.
  CHECK(run.result.idle_slots_with_stranded_work == doctest::Approx(3.0 / 20.0));
  CHECK(run.json()["idle_slots_with_stranded_work"].get<double>() == doctest::Approx(0.15));
}

TEST_CASE("offered load per queue and the unit-mistake warnings") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}, "lonely": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"rate_schedule": [{"from_ms": 0, "rate_per_s": 10}, {"from_ms": 500, "rate_per_s": 30}]},
       "deadline_ms": 50, "service_ms": {"exp": {"mean": 100}}},
      {"queue": "lonely", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}],
    "consumers": [{"queue": "q", "count": 2, "slots": 2}]
  })");
  const auto loads = brokersim::offered_load(run.scenario);
  REQUIRE(loads.size() == 2);
  const auto& q = loads[1].queue == 1 ? loads[1] : loads[0];  // queues sort by name: lonely, q
  CHECK(q.rate_per_s == doctest::Approx(20.0));
  CHECK(q.peak_rate_per_s == doctest::Approx(30.0));
  CHECK(q.erlangs() == doctest::Approx(2.0));
  CHECK(q.slots == 4);
  CHECK(q.utilization() == doctest::Approx(0.5));
  CHECK(q.peak_utilization() == doctest::Approx(0.75));
  const auto warnings = brokersim::scenario_warnings(run.scenario);
  REQUIRE(warnings.size() == 2);
  CHECK(warnings[0].find("producers.0.deadline_ms (mean 50 ms) is shorter than the mean service time (100 ms)") == 0);
  CHECK(warnings[1] == "broker.queues.lonely: producers publish to it but no consumer reads it");
  CHECK(run.json()["offered_load"]["q"]["utilization"].get<double>() == doctest::Approx(0.5));
}

TEST_CASE("an offered load far above the fleet for the whole run is warned about") {
  auto run = run_scenario(R"({
    "stop": {"time_ms": 1000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 100}}, "service_ms": 100}],
    "consumers": [{"queue": "q", "count": 2}]
  })");
  const auto warnings = brokersim::scenario_warnings(run.scenario);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("broker.queues.q: the offered load is 10.00 erlangs on 2 slots (500% utilisation)") == 0);
}

TEST_CASE("run prints the unit-mistake warnings on stderr and still exits 0") {
  brokersim::test::ScratchDir dir("labels");
  const std::string path = dir.write("s.json", R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 5}}, "deadline_ms": 50, "service_ms": 100}],
    "consumers": [{"queue": "q", "count": 2}]})");
  const auto r = brokersim::test::run_cli({"run", path});
  CHECK(r.status == 0);
  CHECK(r.err.find("brokersim: warning: producers.0.deadline_ms (mean 50 ms) is shorter than the mean service time") !=
        std::string::npos);
  CHECK(r.out.find("Offered load on q: 5.00 jobs/s x 100.0 ms = 0.50 erlangs on 2 slots: 25.0% utilisation") !=
        std::string::npos);
}

TEST_CASE("sweep numbers are exact and never in exponent notation") {
  CHECK(brokersim::format_number(0.1) == "0.1");
  CHECK(brokersim::format_number(1e-05) == "0.00001");
  CHECK(brokersim::format_number(2.5e21) == "2500000000000000000000");
  CHECK(brokersim::format_number(1.0 / 3) == "0.3333333333333333");
  CHECK(std::strtod(brokersim::format_number(4.9e-324).c_str(), nullptr) == 4.9e-324);  // stod refuses denormals
  CHECK(brokersim::format_number(std::nan("")) == "");
}

TEST_CASE("more than 64 queues is an input error naming broker.queues and not an internal error") {
  std::string queues;
  for (int i = 0; i < 65; ++i) queues += std::string(i ? "," : "") + "\"q" + std::to_string(i) + "\": {}";
  brokersim::test::ScratchDir dir("labels");
  const std::string path = dir.write("s.json", R"({"stop": {"time_ms": 10}, "broker": {"queues": {)" + queues +
                                                    R"(}}, "producers": [{"queue": "q0", "arrivals": {"at_ms": [0]}, "service_ms": 1}]})");
  const auto r = brokersim::test::run_cli({"run", path});
  CHECK(r.status == 2);
  CHECK(r.err.find("broker.queues: expected at most 64 queues, got 65 queues") != std::string::npos);
}
