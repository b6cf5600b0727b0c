// The offered load of fleets that change and of runs with a warm-up: an autoscaled group counts
// at autoscale.max (and at the slots the run had on average), the "grows without bound" warning
// judges that ceiling, the load covers the span the throughput covers ([warmup_ms, stop.time_ms]),
// the text summary states the fleet's cost when a group scales or leaves, and plan's slots_total.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/offered_load.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::run_cli;
using brokersim::test::run_scenario;

// 100 jobs/s x 100 ms = 10 erlangs; 3 consumers of 2 slots start, the autoscaler may reach 20 (40
// slots). At the initial count that is 167% (the old warning); at the ceiling 25%.
constexpr const char* kAutoscaled = R"({"name": "autoscaled", "seed": 3, "stop": {"time_ms": 60000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 100}}, "service_ms": 100}],
  "consumers": [{"queue": "q", "count": 3, "slots": 2, "prefetch": 1,
                 "autoscale": {"target_per_replica": 5, "min": 3, "max": 20, "start_latency_ms": 1000}}]})";

// Ten jobs in the warm-up (every 100 ms from 0), five after it (every 200 ms from 1000), 1 ms of
// service each: the measured second [1000, 2000] offers 5 jobs/s and completes 5 jobs/s, where the
// whole run's average would be 7.5.
constexpr const char* kWarmup = R"({"name": "warm", "stop": {"time_ms": 2000}, "warmup_ms": 1000,
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 100, 200, 300, 400, 500, 600, 700, 800, 900,
                                                      1000, 1200, 1400, 1600, 1800]}, "service_ms": 1}],
  "consumers": [{"queue": "q"}]})";

// A group of two that leaves at 30 minutes beside one that stays: 2 x 0.5 h + 1 x 1 h = 2 pod-hours.
constexpr const char* kLeaving = R"({"name": "leaving", "stop": {"time_ms": 3600000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}],
  "consumers": [{"queue": "q", "count": 2, "stop_ms": 1800000}, {"queue": "q"}]})";

constexpr const char* kSchedule = R"({"stop": {"time_ms": 2000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"rate_schedule": [{"from_ms": 0, "rate_per_s": 100},
    {"from_ms": 400, "rate_per_s": 10}, {"from_ms": 1000, "rate_per_s": 40}]}, "service_ms": 100}],
  "consumers": [{"queue": "q", "count": 8}]})";

// kAutoscaled without the autoscale key: a fixed group of 3.
std::string fixed_text() {
  nlohmann::json doc = nlohmann::json::parse(kAutoscaled);
  doc["consumers"][0].erase("autoscale");
  return doc.dump();
}

brokersim::QueueLoad only(const std::vector<brokersim::QueueLoad>& loads) {
  REQUIRE(loads.size() == 1);
  return loads[0];
}

}  // namespace

TEST_CASE("offered load: an autoscaled group counts at autoscale.max, not its initial count") {
  const auto run = run_scenario(kAutoscaled);
  const auto l = only(brokersim::offered_load(run.scenario));
  CHECK(l.erlangs() == doctest::Approx(10.0));
  CHECK(l.slots == 40);
  CHECK(l.autoscaled);
  CHECK(l.utilization() == doctest::Approx(0.25));
  // The same group fixed at its initial count: 6 slots.
  const auto fixed = run_scenario(fixed_text());
  CHECK(only(brokersim::offered_load(fixed.scenario)).slots == 6);
  CHECK_FALSE(only(brokersim::offered_load(fixed.scenario)).autoscaled);
}

TEST_CASE("offered load: no grows-without-bound warning when autoscale.max keeps up, one when even it cannot") {
  const auto run = run_scenario(kAutoscaled);
  CHECK(brokersim::scenario_warnings(run.scenario).empty());
  // Fixed at 3 x 2 slots the same load is 167%: the warning the autoscaled fleet used to get.
  const auto fixed = run_scenario(fixed_text());
  const auto fixed_warnings = brokersim::scenario_warnings(fixed.scenario);
  REQUIRE(fixed_warnings.size() == 1);
  CHECK(fixed_warnings[0].find("the offered load is 10.00 erlangs on 6 slots (167% utilisation)") != std::string::npos);
  // 1,000 jobs/s = 100 erlangs on at most 20 x 2 slots: 250% even at the ceiling.
  const auto swamped = run_scenario(kAutoscaled, {"producers.0.arrivals.poisson.rate_per_s=1000", "stop.time_ms=1000"});
  const auto warnings = brokersim::scenario_warnings(swamped.scenario);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] ==
        "broker.queues.q: the offered load is 100.00 erlangs on 40 slots at autoscale.max (250% utilisation) for the "
        "whole run: the queue grows without bound; check rate_per_s and service_ms");
}

TEST_CASE("offered load: a rate_schedule is averaged over [warmup_ms, stop.time_ms], its peak taken in that span") {
  // 100 jobs/s in [0, 400) lies wholly in the warm-up; 10 in [500, 1000) and 40 in [1000, 2000]
  // are measured: (10 x 500 + 40 x 1000) / 1500 = 30 jobs/s.
  const auto run = run_scenario(kSchedule, {"warmup_ms=500"});
  const auto l = only(brokersim::offered_load(run.scenario));
  CHECK(l.rate_per_s == doctest::Approx(30.0));
  CHECK(l.peak_rate_per_s == doctest::Approx(40.0));
  CHECK(l.peak_from_ms == doctest::Approx(1000.0));
  CHECK(run.json()["offered_load"]["q"]["rate_per_s"].get<double>() == doctest::Approx(30.0));
  // Without a warm-up the whole run counts, as before: (100 x 400 + 10 x 600 + 40 x 1000) / 2000.
  const auto whole = run_scenario(kSchedule);
  CHECK(only(brokersim::offered_load(whole.scenario)).rate_per_s == doctest::Approx(43.0));
  CHECK(only(brokersim::offered_load(whole.scenario)).peak_rate_per_s == doctest::Approx(100.0));
  // A warm-up inside a step: [1500, 2000] at 40 jobs/s.
  CHECK(only(brokersim::offered_load(run_scenario(kSchedule, {"warmup_ms=1500"}).scenario)).rate_per_s ==
        doctest::Approx(40.0));
}

TEST_CASE("offered load: the header's rate and the throughput cover the same measured span") {
  const auto run = run_scenario(kWarmup);
  const auto j = run.json();
  CHECK(j["throughput_per_s"].get<double>() == doctest::Approx(5.0));
  CHECK(j["offered_load"]["q"]["rate_per_s"].get<double>() == doctest::Approx(5.0));
  brokersim::test::ScratchDir dir("offered-load");
  const auto r = run_cli({"run", dir.write("warm.json", kWarmup)});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("Offered load on q: 5.00 jobs/s x 1.0 ms = 0.01 erlangs on 1 slots: 0.5% utilisation\n") !=
        std::string::npos);
  CHECK(r.out.find("Throughput 5.000 jobs/s completed") != std::string::npos);
}

TEST_CASE("offered load: run --json has mean_slots where the fleet changes, and not for a fixed fleet") {
  const auto run = run_scenario(kAutoscaled);
  const auto j = run.json();
  const double mean_replicas = j["fleet"]["groups"]["0"]["mean_replicas"].get<double>();
  CHECK(mean_replicas > 3.0);
  CHECK(mean_replicas < 20.0);
  CHECK(j["offered_load"]["q"]["slots"] == 40);
  CHECK(j["offered_load"]["q"]["mean_slots"].get<double>() == doctest::Approx(2 * mean_replicas));
  CHECK(j["offered_load"]["q"]["mean_slots_utilization"].get<double>() == doctest::Approx(10.0 / (2 * mean_replicas)));
  const auto fixed = run_scenario(fixed_text());
  CHECK_FALSE(fixed.json()["offered_load"]["q"].contains("mean_slots"));
  CHECK_FALSE(fixed.json()["offered_load"]["q"].contains("mean_slots_utilization"));
}

TEST_CASE("summary: the fleet's cost in pod-hours when a group autoscales, and no such line for a fixed fleet") {
  brokersim::test::ScratchDir dir("offered-load");
  const std::string path = dir.write("autoscaled.json", kAutoscaled);
  const auto scaled = run_cli({"run", path});
  REQUIRE(scaled.status == 0);
  const auto j = nlohmann::json::parse(run_cli({"run", path, "--json"}).out);
  const double seconds = j["fleet"]["consumer_seconds"].get<double>();
  const double mean = j["fleet"]["mean_replicas"].get<double>();
  const int peak = j["fleet"]["groups"]["0"]["peak_replicas"].get<int>();
  const std::string fmt2 = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return std::string(b);
  }(seconds / 3600.0);
  char mean_text[32];
  std::snprintf(mean_text, sizeof mean_text, "%.2f", mean);
  CHECK(scaled.out.find("Fleet cost over the measured 60 s: " + fmt2 + " pod-hours, mean " + mean_text +
                        " replicas, peak " + std::to_string(peak) + " at once\n") != std::string::npos);
  CHECK(scaled.out.find("  group 0 (q, autoscaled 3..20): " + fmt2 + " pod-hours, mean " + mean_text + " replicas, peak " +
                        std::to_string(peak) + "\n") != std::string::npos);
  CHECK(scaled.out.find("erlangs on 40 slots at autoscale.max: 25.0% utilisation; on the run's mean ") != std::string::npos);

  const auto fixed = run_cli({"run", dir.write("fixed.json", fixed_text())});
  REQUIRE(fixed.status == 0);
  CHECK(fixed.out.find("pod-hours") == std::string::npos);
  CHECK(fixed.out.find("Fleet cost") == std::string::npos);
  CHECK(fixed.out.find("erlangs on 6 slots: 166.7% utilisation\n") != std::string::npos);
}

TEST_CASE("summary: a group that leaves has its pod-hours, per group and in all") {
  brokersim::test::ScratchDir dir("offered-load");
  const auto r = run_cli({"run", dir.write("leaving.json", kLeaving)});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("Fleet cost over the measured 3600 s: 2.00 pod-hours, mean 2.00 replicas, peak 3 at once\n"
                   "  group 0 (q, 2 for part of the run): 1.00 pod-hours, mean 1.00 replicas, peak 2\n"
                   "  group 1 (q, 1 fixed): 1.00 pod-hours, mean 1.00 replicas, peak 1\n") != std::string::npos);
}

TEST_CASE("summary: a Lambda group's replicas are concurrent invocations in concurrency-hours - not pods") {
  // A worker pool beside a Lambda event source that leaves at 30 minutes: the pool's time is in
  // pod-hours, the function's in concurrency-hours (Lambda bills requests and GB-seconds).
  brokersim::test::ScratchDir dir("offered-load");
  const std::string scenario = R"({"stop": {"time_ms": 3600000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 60000}}},
    "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 100}],
    "consumers": [{"queue": "q", "count": 1, "stop_ms": 1800000},
                  {"queue": "q", "framework": {"name": "aws-lambda", "Timeout": 5, "ScalingConfig": {"MaximumConcurrency": 2}}}]})";
  const auto r = run_cli({"run", dir.write("lambda.json", scenario)});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("Fleet over the measured 3600 s: 0.50 pod-hours of workers, ") != std::string::npos);
  CHECK(r.out.find(" concurrency-hours of functions (billed per request and GB-second, not by the hour), mean ") != std::string::npos);
  CHECK(r.out.find("  group 0 (q, 1 for part of the run): 0.50 pod-hours, mean 0.50 replicas, peak 1\n") != std::string::npos);
  CHECK(r.out.find("  group 1 (q, autoscaled ") != std::string::npos);
  CHECK(r.out.find(" concurrent invocations, peak ") != std::string::npos);
}

TEST_CASE("plan: slots_total counts an autoscaled group at autoscale.max and each setting shows its range") {
  brokersim::test::ScratchDir dir("offered-load");
  const std::string path = dir.write("autoscaled.json", kAutoscaled);
  const auto r = run_cli({"plan", path, "--set", "stop.time_ms=5000", "--vary", "consumers.0.autoscale.max=4,8",
                          "--target", "throughput_per_s>=0", "--replications", "1", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["best"]["setting"]["consumers.0.autoscale.max"] == 4);
  CHECK(j["best"]["slots_total"] == 8);
  CHECK(j["best"]["slots_min"] == 6);
  CHECK(j["best"]["slots_max"] == 8);
  CHECK(j["best"]["cost"] == 8);
  const auto text = run_cli({"plan", path, "--set", "stop.time_ms=5000", "--vary", "consumers.0.autoscale.max=4,8",
                             "--target", "throughput_per_s>=0", "--replications", "1"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("  consumers.0.autoscale.max=4  (cost 8, slots 6..8 autoscaled)\n") != std::string::npos);
  // A fixed fleet's settings are as they were: no range, no slots_min / slots_max.
  const auto fixed = run_cli({"plan", dir.write("fixed.json", fixed_text()), "--set", "stop.time_ms=5000",
                              "--vary", "consumers.0.count=3,4", "--target", "throughput_per_s>=0", "--replications", "1",
                              "--json"});
  REQUIRE(fixed.status == 0);
  const auto fj = nlohmann::json::parse(fixed.out);
  CHECK(fj["best"]["slots_total"] == 6);
  CHECK_FALSE(fj["best"].contains("slots_min"));
}

namespace {

// 100 jobs at given times on one consumer of 2 slots, 1 s each, over 300 s: a burst of 90 (every
// 100 ms from 100 s), then one every 10 s from 200 s to 290 s. The run's mean is 100 / 300 s =
// 0.33 jobs/s (16.7% of the slots); its busiest minute, [100 s, 160 s), holds the 90: 1.5 jobs/s,
// 75%.
std::vector<double> burst_times_ms() {
  std::vector<double> at;
  for (int i = 0; i < 90; ++i) at.push_back(100'000 + 100 * i);
  for (int i = 0; i < 10; ++i) at.push_back(200'000 + 10'000 * i);
  return at;
}

nlohmann::json burst_scenario(const nlohmann::json& arrivals) {
  return {{"stop", {{"time_ms", 300'000}}},
          {"broker", {{"queues", {{"q", nlohmann::json::object()}}}}},
          {"producers", {{{"queue", "q"}, {"arrivals", arrivals}, {"service_ms", 1000}}}},
          {"consumers", {{{"queue", "q"}, {"slots", 2}}}}};
}

}  // namespace

TEST_CASE("offered load: fixed times peak in their busiest minute, which the header states beside the mean") {
  const auto run = run_scenario(burst_scenario({{"at_ms", burst_times_ms()}}).dump());
  const auto l = only(brokersim::offered_load(run.scenario));
  CHECK(l.rate_per_s == doctest::Approx(100.0 / 300));
  CHECK(l.peak_rate_per_s == doctest::Approx(1.5));
  CHECK(l.peak_from_ms == 100'000);
  CHECK(l.peak_window_ms == brokersim::kPeakWindowMs);
  CHECK(run.json()["offered_load"]["q"]["peak_utilization"].get<double>() == doctest::Approx(0.75));
  brokersim::test::ScratchDir dir("offered-load-burst");
  const auto r = run_cli({"run", dir.write("burst.json", burst_scenario({{"at_ms", burst_times_ms()}}).dump())});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("Offered load on q: 0.33 jobs/s x 1000.0 ms = 0.33 erlangs on 2 slots: 16.7% utilisation; "
                   "peak 1.50 jobs/s in the busiest 60 s, from 100000 ms: 75.0%\n") != std::string::npos);
  // After a warm-up of 150 s only the spaced jobs are measured: six in a minute from 200 s.
  const auto warm = only(brokersim::offered_load(run_scenario(burst_scenario({{"at_ms", burst_times_ms()}}).dump(), {"warmup_ms=150000"}).scenario));
  CHECK(warm.peak_rate_per_s == doctest::Approx(0.1));
  CHECK(warm.peak_from_ms == 200'000);
  // A busiest window at the span's end is stated where it lies wholly inside it.
  const auto late = only(brokersim::offered_load(run_scenario(burst_scenario({{"at_ms", {295'000, 296'000, 299'000}}}).dump()).scenario));
  CHECK(late.peak_rate_per_s == doctest::Approx(0.05));
  CHECK(late.peak_from_ms == 240'000);
  // A span no longer than the window: the window is the span, the peak the mean, and the header
  // says nothing more.
  const auto short_run = run_scenario(burst_scenario({{"at_ms", {0, 10, 20}}}).dump(), {"stop.time_ms=1000"});
  const auto s = only(brokersim::offered_load(short_run.scenario));
  CHECK(s.peak_rate_per_s == doctest::Approx(3.0));
  CHECK(s.peak_window_ms == 0);
}

TEST_CASE("offered load: a trace peaks as the same times given inline, and days_csv in its busiest day's minute") {
  brokersim::test::ScratchDir dir("offered-load-trace");
  std::string trace = "publish_ms\n";
  for (double t : burst_times_ms()) trace += std::to_string(static_cast<long long>(t)) + "\n";
  const auto traced = only(brokersim::offered_load(
      run_scenario(burst_scenario({{"trace_csv", dir.write("burst.csv", trace)}}).dump()).scenario));
  CHECK(traced.peak_rate_per_s == doctest::Approx(1.5));
  CHECK(traced.peak_from_ms == 100'000);
  // Day 0 is the burst above; day 1 has 120 jobs every 100 ms from 20 s of its day: 2 jobs/s in its
  // busiest minute, the busier of the two. The mean is the days' (220 over two days).
  std::string days = trace;
  for (int i = 0; i < 120; ++i) days += std::to_string(86'400'000 + 20'000 + 100 * i) + "\n";
  const auto run = run_scenario(burst_scenario({{"days_csv", dir.write("days.csv", days)}}).dump());
  const auto l = only(brokersim::offered_load(run.scenario));
  CHECK(l.rate_per_s == doctest::Approx(220.0 / (2 * 86'400)));
  CHECK(l.peak_rate_per_s == doctest::Approx(2.0));
  CHECK(l.peak_from_ms == 20'000);
  CHECK(l.peak_day == 1);
  std::ostringstream summary;
  brokersim::print_summary(summary, run.scenario, run.result);
  CHECK(summary.str().find("; peak 2.00 jobs/s in the busiest 60 s of any day, from 20000 ms of day 1: 100.0%\n") !=
        std::string::npos);
}
