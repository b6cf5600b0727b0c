// Fleets that change: groups that leave (stop_ms, shutdown_grace_ms), the autoscaler's exact
// replica trajectories (HPA + KEDA rules), and what a fleet costs.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/autoscaler.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::AutoscaleSpec;
using brokersim::Autoscaler;
using brokersim::Outcome;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;

constexpr brokersim::Time kS = 1'000'000'000;  // one second in ns

// Ten jobs of 1 s at 0. Group 0 (prefetch 5, one slot) takes five and leaves at 500 ms while
// executing the first; group 1 attaches at 600 ms.
constexpr const char* kLeaving = R"({"name": "leaving", "stop": {"time_ms": 60000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 1000}],
  "consumers": [{"queue": "work", "prefetch": 5, "stop_ms": 500},
                {"queue": "work", "start_ms": 600}]})";

// 1,000 ready messages that never finish: the metric stays at 1,000.
constexpr const char* kBacklog = R"({"name": "backlog", "stop": {"time_ms": 120000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"at_ms": [0]}, "service_ms": 100000000}],
  "consumers": [{"queue": "work", "prefetch": 1,
                 "autoscale": {"target_per_replica": 100, "min": 1, "max": 20, "start_latency_ms": 5000}}],
  "observe": {"every_ms": 15000}})";

std::string backlog() {
  nlohmann::json doc = nlohmann::json::parse(kBacklog);
  doc["producers"][0]["arrivals"]["at_ms"] = std::vector<int>(1000, 0);
  return doc.dump();
}

}  // namespace

TEST_CASE("fleet: a leaving group loses nothing - it finishes its execution and hands back what it had not started") {
  const auto run = run_scenario(kLeaving);
  CHECK(run.outcome(Outcome::Lost) == 0);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 10);
  CHECK(run.result.duplicate_executions == 0);
  // Job 0 ran to its end on consumer 0; the four it held unstarted went back and were redelivered.
  CHECK(run.trace[0]["consumer"] == "0");
  CHECK(run.trace[0].ms("finished_ms") == 1000.0);
  int redelivered = 0;
  for (const auto& row : run.trace) {
    if (row["job"] == "0") continue;
    CHECK(row["consumer"] == "1");
    redelivered += row["redeliveries"] == "1";
  }
  CHECK(redelivered == 4);
  // Its replica counted from 0 to the close at 1000 ms.
  const auto j = run.json();
  CHECK(j["fleet"]["groups"]["0"]["consumer_seconds"] == doctest::Approx(1.0));
  CHECK(j["fleet"]["groups"]["1"]["consumer_seconds"] == doctest::Approx(59.4));
  CHECK(j["fleet"]["groups"]["0"]["peak_replicas"] == 1);
}

TEST_CASE("fleet: an execution longer than shutdown_grace_ms is cut and runs again elsewhere - still nothing lost") {
  const auto run = run_scenario(kLeaving, {"consumers.0.shutdown_grace_ms=200"});
  CHECK(run.outcome(Outcome::Lost) == 0);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 10);
  CHECK(run.result.duplicate_executions == 1);
  CHECK(run.trace[0]["consumer"] == "1");
  CHECK(run.json()["fleet"]["groups"]["0"]["consumer_seconds"] == doctest::Approx(0.7));
}

TEST_CASE("fleet: a leaving consumer takes no new deliveries after it cancelled") {
  // Group 0 alone until 600 ms with unlimited prefetch: it would take the lot; after its stop
  // at 0 it takes nothing, and group 1 does all the work.
  const auto run = run_scenario(kLeaving, {"consumers.0.prefetch=0", "consumers.0.stop_ms=0", "consumers.0.start_ms=0"});
  CHECK(run.outcome(Outcome::CompletedOnTime) == 10);
  for (const auto& row : run.trace) CHECK(row["consumer"] == "1");
}

TEST_CASE("fleet: on Service Bus and SQS a stopping client receives nothing new - and nothing is lost") {
  for (const char* kind : {"broker.kind=azure-servicebus", "broker.kind=amazon-sqs"}) {
    CAPTURE(kind);
    const auto run = run_scenario(kLeaving, {kind, "consumers.0.prefetch=0", "consumers.0.stop_ms=0", "consumers.0.start_ms=0"});
    CHECK(run.outcome(Outcome::CompletedOnTime) == 10);
    for (const auto& row : run.trace) CHECK(row["consumer"] == "1");
    // Leaving with work in hand: what it held goes back by the broker's rules (its lock or
    // visibility lapses: 60 s, 30 s), nothing is lost, and all of it is done in the end.
    const auto held = run_scenario(kLeaving, {kind, "stop.time_ms=200000"});
    CHECK(held.outcome(Outcome::Lost) == 0);
    CHECK(held.outcome(Outcome::CompletedOnTime) + held.outcome(Outcome::CompletedLate) == 10);
  }
}

TEST_CASE("autoscaler: 1000 ready messages at 100 per replica in 1..20 replicas go 1 -> 5 -> 10 and stay at 10") {
  AutoscaleSpec spec;
  spec.target_per_replica = 100;
  spec.min = 1;
  spec.max = 20;
  Autoscaler hpa(spec);
  int replicas = 1;
  std::vector<int> trajectory;
  for (int k = 0; k < 12; ++k) {
    replicas = hpa.sync(k * 15 * kS, 1000, replicas);
    trajectory.push_back(replicas);
  }
  CHECK(trajectory == std::vector<int>{5, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10});
}

TEST_CASE("autoscaler: scale-down waits for the 300 s stabilization window and then drops at once") {
  AutoscaleSpec spec;
  spec.target_per_replica = 100;
  spec.max = 20;
  Autoscaler hpa(spec);
  int replicas = hpa.sync(0, 1000, 1);
  replicas = hpa.sync(15 * kS, 1000, replicas);
  REQUIRE(replicas == 10);
  // The backlog is gone from 30 s on: the recommendation of 15 s holds the count until it leaves
  // the window (after 315 s), then scale-down policy 100% per 15 s allows the whole drop.
  for (int t = 30; t <= 300; t += 15) {
    replicas = hpa.sync(t * kS, 0, replicas);
    CHECK_MESSAGE(replicas == 10, "at " << t << " s");
  }
  CHECK(hpa.sync(315 * kS, 0, replicas) == 1);
}

TEST_CASE("autoscaler: tolerance - the scale-up policies - max - KEDA activation from zero and cooldown to zero") {
  AutoscaleSpec spec;
  spec.target_per_replica = 10;
  spec.max = 30;
  {
    Autoscaler hpa(spec);
    CHECK(hpa.sync(0, 105, 10) == 10);  // within 10%
    CHECK(hpa.sync(15 * kS, 120, 10) == 12);
  }
  {
    Autoscaler hpa(spec);
    CHECK(hpa.sync(0, 1000, 10) == 20);  // +100% beats +4 pods
    CHECK(hpa.sync(15 * kS, 1000, 20) == 30);  // capped by max
  }
  {
    spec.up.percent = -1;  // pods only: +4 per period
    Autoscaler hpa(spec);
    CHECK(hpa.sync(0, 1000, 10) == 14);
    CHECK(hpa.sync(5 * kS, 1000, 14) == 14);  // the period's allowance is spent
    CHECK(hpa.sync(15 * kS, 1000, 14) == 18);
    spec.up.percent = 100;
  }
  {
    spec.min = 0;
    spec.activation = 5;
    spec.cooldown = 60 * kS;
    Autoscaler hpa(spec);
    CHECK(hpa.sync(0, 50, 1) == 5);
    CHECK(hpa.sync(15 * kS, 3, 5) == 5);  // not active, cooldown not over; held by stabilization
    CHECK(hpa.sync(75 * kS, 3, 5) == 0);  // 60 s at or below the activation value
    CHECK(hpa.sync(90 * kS, 5, 0) == 0);  // at it, not above
    CHECK(hpa.sync(105 * kS, 6, 0) == 1);
  }
}

TEST_CASE("autoscale in a run: replicas 1 -> 5 -> 10 at the first two syncs and 10 from then on - attached after the start latency") {
  const auto run = run_scenario(backlog());
  std::vector<double> replicas;
  for (const auto& row : run.series) replicas.push_back(row.at("group.0.replicas"));
  // Sampled after the sync at the same instant: 5 at 0 (from the initial 1), 10 at 15 s.
  CHECK(replicas == std::vector<double>{5, 10, 10, 10, 10, 10, 10, 10, 10});
  // Each replica executes one message (prefetch 1): by 15 s the first four new ones are busy.
  double executing = 0;
  for (int c = 0; c < 20; ++c) executing += run.series[1].at("consumer." + std::to_string(c) + ".executing");
  CHECK(executing == 5);
  double later = 0;
  for (int c = 0; c < 20; ++c) later += run.series[2].at("consumer." + std::to_string(c) + ".executing");
  CHECK(later == 10);
  const auto j = run.json();
  CHECK(j["fleet"]["groups"]["0"]["peak_replicas"] == 10);
  // 5 replicas for 15 s, then 10 for 105 s.
  CHECK(j["fleet"]["groups"]["0"]["consumer_seconds"] == doctest::Approx(5 * 15 + 10 * 105));
  CHECK(j["fleet"]["groups"]["0"]["mean_replicas"] == doctest::Approx((5 * 15 + 10 * 105) / 120.0));
}

TEST_CASE("autoscale in a run: the backlog drains and the fleet shrinks only after the stabilization window - nothing lost") {
  // 1,000 jobs of 1 s, 10 per replica: up to 20 replicas, which drain it; then back to 1.
  nlohmann::json doc = nlohmann::json::parse(kBacklog);
  doc["producers"][0]["arrivals"]["at_ms"] = std::vector<int>(1000, 0);
  doc["producers"][0]["service_ms"] = 1000;
  doc["consumers"][0]["autoscale"] = {{"target_per_replica", 10}, {"max", 20}};
  doc["stop"]["time_ms"] = 600000;
  const auto run = run_scenario(doc.dump());
  CHECK(run.outcome(Outcome::CompletedOnTime) == 1000);
  CHECK(run.outcome(Outcome::Lost) == 0);
  // Samples and syncs share their instants (every 15 s from 0), a sample showing the metric the
  // sync read. The last sync that wanted 20 or more holds the 20 for 300 s (Kubernetes keeps recommendations
  // strictly newer than now - window).
  double drained_at = -1, shrunk_at = -1, peak = 0, last_high = -1;
  for (const auto& row : run.series) {
    const double metric = row.at("work.ready") + row.at("work.unacked");
    if (metric > 190) last_high = row.at("time_ms");
    if (drained_at < 0 && metric == 0) drained_at = row.at("time_ms");
    peak = std::max(peak, row.at("group.0.replicas"));
    if (shrunk_at < 0 && peak == 20 && row.at("group.0.replicas") < 20) shrunk_at = row.at("time_ms");
  }
  CHECK(peak == 20);
  REQUIRE(drained_at > 0);
  REQUIRE(shrunk_at > 0);
  CHECK(last_high < drained_at);
  CHECK(shrunk_at == last_high + 300000);  // a recommendation exactly 300 s old is out of the window
  CHECK(run.series.back().at("group.0.replicas") == 1);
}

TEST_CASE("fleet: stop_ms and autoscale are validated at the edge") {
  brokersim::test::ScratchDir d("brokersim-fleet");
  const std::string scenario = d.write("s.json", kBacklog);
  auto error = [&](const std::string& set) {
    const auto r = run_cli({"run", scenario, "--set", set});
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(error("consumers.0.autoscale={}") ==
        "brokersim: error: consumers.0.autoscale.target_per_replica: expected a number > 0, got nothing\n");
  CHECK(error("consumers.0.autoscale.min=30") == "brokersim: error: consumers.0.autoscale.min: expected at most max (20), got 30\n");
  CHECK(error("consumers.0.count=21") ==
        "brokersim: error: consumers.0.autoscale.max: expected at least the group's count (21, the initial replicas), got 20\n");
  CHECK(error("consumers.0.autoscale.metric=\"depth\"") ==
        "brokersim: error: consumers.0.autoscale.metric: expected one of \"ready\", \"ready+unacked\", \"publish_rate\", got \"depth\"\n");
  CHECK(error("consumers.0.autoscale.scale_up={\"percent\": null, \"pods\": null}") ==
        "brokersim: error: consumers.0.autoscale.scale_up: expected at least one policy (percent or pods) that is not null, "
        "got {\"percent\":null,\"pods\":null}\n");
  CHECK(error("consumers.0.autoscale.sync=1").find("consumers.0.autoscale.sync: unknown key") != std::string::npos);
  const std::string leaving = d.write("l.json", kLeaving);
  const auto r = run_cli({"run", leaving, "--set", "consumers.1.stop_ms=100"});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: consumers.1.stop_ms: expected a time >= start_ms (600), got 100\n");
}

TEST_CASE("autoscale: syncs keep no run alive - a run stopping on its jobs ends when nothing else can happen") {
  // Two autoscaled groups and a time series: their periodic events would keep each other going.
  nlohmann::json doc = nlohmann::json::parse(kBacklog);
  doc["stop"] = {{"jobs", 50}};  // only one job ever comes
  doc["producers"][0]["service_ms"] = 10;
  doc["consumers"][1] = doc["consumers"][0];
  const auto run = run_scenario(doc.dump());
  CHECK(run.result.stop_reason == brokersim::StopReason::Drained);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 1);
  CHECK(run.result.end_time <= 60 * kS);  // the consumer-timeout channel tick is the last event
}

TEST_CASE("autoscale example: the charts script draws both charts from the checked-in sweeps and series") {
  // Debian's python3 with matplotlib and pandas, as the chart tests of notebooks/ use.
  if (std::system("/usr/bin/python3 -c 'import matplotlib, pandas' >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: /usr/bin/python3 with matplotlib and pandas is not installed");
    return;
  }
  brokersim::test::ScratchDir d("brokersim-spike-charts");
  const std::string cmd = "/usr/bin/python3 " + std::string(BROKERSIM_SOURCE_DIR) +
                          "/experiments/sweeps/spike_charts.py --out " + d.dir.string() + " >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(std::filesystem::file_size(d.dir / "spike_over_time.png") > 10000);
  CHECK(std::filesystem::file_size(d.dir / "spike_cost.png") > 10000);
}

namespace {

// 200 Poisson jobs of 50 ms at 20/s (about 10 s), a run that stops on its jobs, sampled every
// 500 ms; `group` is the second consumer group (a leaving one, or an autoscaled one).
std::string jobs_stopped_run(const nlohmann::json& group) {
  nlohmann::json doc = {
      {"name", "ticks"}, {"seed", 3}, {"stop", {{"jobs", 200}}},
      {"broker", {{"queues", {{"work", nlohmann::json::object()}}}}},
      {"producers", {{{"queue", "work"}, {"arrivals", {{"poisson", {{"rate_per_s", 20}}}}}, {"service_ms", 50}}}},
      {"consumers", {{{"queue", "work"}, {"prefetch", 1}}, group}},
      {"observe", {{"every_ms", 500}}}};
  return doc.dump();
}

// The last sample of a run that stops on its jobs is the last multiple of every_ms before its end:
// periodic ticks went on for as long as the run did.
void check_sampled_to_the_end(const brokersim::test::Run& run) {
  REQUIRE(!run.series.empty());
  const double end_ms = static_cast<double>(run.result.end_time) / 1e6;
  CHECK(run.result.stop_reason == brokersim::StopReason::Jobs);
  CHECK(end_ms > 9000);  // 200 jobs at 20/s
  CHECK(run.series.back().at("time_ms") > end_ms - 500);
  CHECK(run.series.back().at("time_ms") <= end_ms);
}

}  // namespace

TEST_CASE("ticks: a run stopping on its jobs is sampled to its end with a group that leaves early") {
  // The group's Leave event used to count down the pending ticks it never counted up: the count
  // wrapped and sampling stopped at the group's stop_ms (2,000 ms).
  const auto run = run_scenario(jobs_stopped_run({{"queue", "work"}, {"prefetch", 1}, {"stop_ms", 2000}}));
  check_sampled_to_the_end(run);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 200);
}

TEST_CASE("ticks: a run stopping on its jobs is sampled to its end with an autoscaled group") {
  // Every replica that came up (ReplicaUp) used to count a tick down.
  const auto run = run_scenario(jobs_stopped_run(
      {{"queue", "work"}, {"prefetch", 1},
       {"autoscale", {{"target_per_replica", 1}, {"min", 1}, {"max", 4}, {"sync_ms", 1000}, {"start_latency_ms", 100}}}}));
  check_sampled_to_the_end(run);
  double peak = 0;
  for (const auto& row : run.series) peak = std::max(peak, row.at("group.1.replicas"));
  CHECK(peak >= 2);  // replicas came up, so ReplicaUp events fired during the run
}

TEST_CASE("ticks: an autoscaled spike-then-quiet run that stops on its jobs scales back down to its minimum") {
  // 60 s at 40 jobs/s of 200 ms, then 1 job/s for 15 minutes; 1..12 replicas of one slot, 2 per
  // replica. The spike scales up; once quiet, the 300 s stabilization window passes and the
  // fleet returns to its minimum while the run is still going.
  nlohmann::json doc = {
      {"name", "spike-then-quiet"}, {"seed", 11}, {"stop", {{"jobs", 2400 + 900}}},
      {"broker", {{"queues", {{"work", nlohmann::json::object()}}}}},
      {"producers", {{{"queue", "work"},
                      {"arrivals", {{"rate_schedule", {{{"from_ms", 0}, {"rate_per_s", 40}}, {{"from_ms", 60000}, {"rate_per_s", 1}}}}}},
                      {"service_ms", 200}}}},
      {"consumers", {{{"queue", "work"}, {"prefetch", 1},
                      {"autoscale", {{"target_per_replica", 2}, {"min", 1}, {"max", 12}, {"start_latency_ms", 1000}}}}}},
      {"observe", {{"every_ms", 15000}}}};
  const auto run = run_scenario(doc.dump());
  REQUIRE(!run.series.empty());
  const double end_ms = static_cast<double>(run.result.end_time) / 1e6;
  CHECK(end_ms > 600000);
  double peak = 0;
  for (const auto& row : run.series) peak = std::max(peak, row.at("group.0.replicas"));
  CHECK(peak >= 6);
  CHECK(run.series.back().at("time_ms") > end_ms - 15000);
  CHECK(run.series.back().at("group.0.replicas") == 1);
  // Mean replicas over the run: back at 1 for most of the quiet part, so far below the peak.
  CHECK(run.result.groups[0].mean_replicas < 0.5 * peak);
}
