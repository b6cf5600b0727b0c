// brokersim plan on small scenarios (the cheapest setting, bisection, no setting meeting the target,
// --conservative) and sweeps across broker kinds (sweep itself: test_sweep.cpp).
#include <algorithm>
#include <doctest/doctest.h>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>
#include <nlohmann/json.hpp>
#include "tests/sweep_test_util.hpp"
#include "tests/test_util.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/statistics.hpp"

namespace fs = std::filesystem;

using namespace sweep_test;

namespace {

// Periodic arrivals every 10 ms, constant 35 ms service, one slot per consumer: 3 consumers are
// overloaded (86 jobs/s), 4 keep up with no queueing at all. Cheapest: count 4, prefetch 1.
constexpr const char* kPlanScenario = R"({"name": "plan-test", "seed": 1, "stop": {"jobs": 600},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300,
                 "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1}]})";

}  // namespace

TEST_CASE("sweep: plan finds the cheapest setting, bisecting the count, running fewer points than the grid") {
  SweepDir d;
  const std::string s = d.write("plan.json", kPlanScenario);
  const auto r = run_cli({"plan", s, "--vary", "consumers.0.prefetch=2,1", "--vary", "consumers.0.count=1:12:1",
                            "--target", "fraction.completed_on_time >= 0.99", "--target", "wait_ms.local.p95 < 50",
                            "--replications", "2", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["met"] == true);
  CHECK(j["bisect"] == "consumers.0.count");
  CHECK(j["best"]["setting"] == nlohmann::json::parse(R"({"consumers.0.prefetch": 1, "consumers.0.count": 4})"));
  CHECK(j["best"]["cost"] == 4);
  CHECK(j["best"]["metrics"]["fraction.completed_on_time"]["mean"] == 1);
  CHECK(j["best"]["metrics"].contains("goodput_per_s"));
  CHECK(j["grid_points"] == 24);
  CHECK(j["points_run"].get<int>() <= 10);
  CHECK(j["tried"].size() == j["points_run"]);

  const auto text = run_cli({"plan", s, "--vary", "consumers.0.count=1:12:1", "--target",
                               "fraction.completed_on_time>=0.99", "--replications", "1"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("Cheapest setting that meets the target:\n  consumers.0.count=4  (cost 4)\n") != std::string::npos);

  // --cost: make consumers expensive and prefetch free: still count 4, but prefetch 2 is as cheap
  // as 1, and the grid order breaks the tie (prefetch 2 listed first).
  const auto c = run_cli({"plan", s, "--vary", "consumers.0.prefetch=2,1", "--vary", "consumers.0.count=1:12:1",
                            "--target", "fraction.completed_on_time>=0.99", "--cost", "10*consumers.0.count",
                            "--replications", "1", "--json"});
  REQUIRE(c.status == 0);
  const auto cj = nlohmann::json::parse(c.out);
  CHECK(cj["best"]["setting"] == nlohmann::json::parse(R"({"consumers.0.prefetch": 2, "consumers.0.count": 4})"));
  CHECK(cj["best"]["cost"] == 40);
}

TEST_CASE("sweep: plan says plainly when no setting meets the target, and rejects bad targets") {
  SweepDir d;
  const std::string s = d.write("plan.json", kPlanScenario);
  const auto r = run_cli({"plan", s, "--vary", "consumers.0.count=1:3:1", "--target",
                            "fraction.completed_on_time>=0.99", "--replications", "1"});
  CHECK(r.status == 5);
  CHECK(r.out.find("no setting in the grid meets the target\n\nClosest setting tried:\n  consumers.0.count=3") !=
        std::string::npos);
  const auto j = run_cli({"plan", s, "--vary", "consumers.0.count=1:3:1", "--target",
                            "fraction.completed_on_time>=0.99", "--replications", "1", "--json"});
  CHECK(nlohmann::json::parse(j.out)["met"] == false);
  CHECK(nlohmann::json::parse(j.out)["closest"]["setting"]["consumers.0.count"] == 3);

  auto bad = run_cli({"plan", s, "--vary", "consumers.0.count=1:3:1", "--target", "fraction.nothing<=1"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "brokersim: error: --target: expected metric names (as in sweep's CSV, without _mean: "
                   "fraction.expired_in_queue, wait_ms.local.p95, throughput_per_s, ...), got \"fraction.nothing\"; "
                   "`brokersim metrics SCENARIO.json` lists them all\n");
  bad = run_cli({"plan", s, "--vary", "consumers.0.count=1:3:1", "--target", "throughput_per_s*2"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "brokersim: error: --target: expected one of <= < >= > at character 19 of \"throughput_per_s*2\", got "
                   "the end\n");
  bad = run_cli({"plan", s, "--vary", "consumers.0.count=1:3:1"});
  CHECK(bad.status == 2);
  CHECK(bad.err == "brokersim: error: plan: expected at least one --target, got nothing\n");
}

TEST_CASE("sweep: plan --conservative judges each target at its 95% confidence bound") {
  SweepDir d;
  const std::vector<std::string> base = {"plan", d.scenario, "--vary", "consumers.0.prefetch=1,2,4", "--vary",
                                         "consumers.0.count=1:6:1", "--target", "fraction.expired_before_start<=0.002",
                                         "--replications", "6", "--json"};
  const auto plain = run_cli(base);
  std::vector<std::string> args = base;
  args.push_back("--conservative");
  const auto careful = run_cli(args);
  REQUIRE_MESSAGE(plain.status == 0, plain.err);
  REQUIRE_MESSAGE(careful.status == 0, careful.err);
  const auto p = nlohmann::json::parse(plain.out), c = nlohmann::json::parse(careful.out);
  CHECK(p["conservative"] == false);
  CHECK(c["conservative"] == true);
  REQUIRE(p["met"] == true);
  REQUIRE(c["met"] == true);
  // With one metric in the target, its margin's interval is the metric's own ci95.
  const auto& pm = p["best"]["metrics"]["fraction.expired_before_start"];
  const auto& cm = c["best"]["metrics"]["fraction.expired_before_start"];
  CHECK(pm["mean"].get<double>() <= 0.002);
  CHECK(cm["mean"].get<double>() + cm["ci95"].get<double>() <= 0.002 + 1e-12);
  // Here the mean alone accepts 2 consumers (0.083% stale, but +-0.22%); the bound asks for 3.
  CHECK(p["best"]["cost"].get<double>() == 4);
  CHECK(c["best"]["cost"].get<double>() == 6);
  // Every setting the conservative plan accepted has its upper bound within the target.
  for (const auto& t : c["tried"]) {
    if (!t["meets"].get<bool>()) continue;
    const auto& m = t["metrics"]["fraction.expired_before_start"];
    CHECK(m["mean"].get<double>() + m["ci95"].get<double>() <= 0.002 + 1e-12);
  }
}

TEST_CASE("sweep: across broker kinds - each kind's dead-letter reasons get columns, empty for the other kinds, and shards agree") {
  SweepDir d;
  // Without TTLs and dead-lettering the scenario has no kind-specific key, so both kinds take it.
  const std::vector<std::string> base = {"sweep", d.scenario, "--set", R"(broker.queues={"work": {}})",
                                         "--set", "producers.0.expiration_ms=null",
                                         "--vary", "broker.kind=rabbitmq-classic,amazon-sqs",
                                         "--vary", "consumers.0.prefetch=1,4", "--replications", "2"};
  auto full = base;
  full.insert(full.end(), {"--out", d.path("full.csv")});
  const auto r = run_cli(full);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto lines = lines_of(read_file(d.path("full.csv")));
  REQUIRE(lines.size() == 5);
  const auto header = split_csv_line(lines[0]);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE_MESSAGE(it != header.end(), name);
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t expired = column("queues.work.dead_lettered_by_reason.expired_mean");
  const std::size_t receives = column("queues.work.dead_lettered_by_reason.max_receive_count_mean");
  const auto classic = split_csv_line(lines[1]), sqs = split_csv_line(lines[3]);
  CHECK(classic[0] == "rabbitmq-classic");
  CHECK(sqs[0] == "amazon-sqs");
  CHECK(classic[expired] == "0");
  CHECK(classic[receives].empty());
  CHECK(sqs[expired].empty());
  CHECK(sqs[receives] == "0");
  // A shard holding only SQS points writes the whole grid's columns: the merge is the full run.
  std::vector<std::string> merge = {"merge"};
  for (int k = 0; k < 2; ++k) {
    auto shard = base;
    const std::string out = d.path("k" + std::to_string(k) + ".csv");
    shard.insert(shard.end(), {"--shard", std::to_string(k) + "/2", "--out", out});
    REQUIRE(run_cli(shard).status == 0);
    merge.push_back(out);
  }
  merge.insert(merge.end(), {"--out", d.path("merged.csv")});
  REQUIRE(run_cli(merge).status == 0);
  CHECK(read_file(d.path("merged.csv")) == read_file(d.path("full.csv")));
  // --precision on a metric only one kind has: the other kind's points have nothing to make
  // precise and stop at the first round.
  auto precise = base;
  precise.insert(precise.end(), {"--precision", "0.5", "--precision-metric",
                                 "queues.work.dead_lettered_by_reason.expired", "--out", d.path("p.csv")});
  const auto p = run_cli(precise);
  REQUIRE_MESSAGE(p.status == 0, p.err);
  const auto plines = lines_of(read_file(d.path("p.csv")));
  const auto pheader = split_csv_line(plines[0]);
  const auto rep = static_cast<std::size_t>(std::find(pheader.begin(), pheader.end(), "replications") - pheader.begin());
  CHECK(split_csv_line(plines[3])[rep] == "3");  // amazon-sqs, prefetch 1
  CHECK(split_csv_line(plines[4])[rep] == "3");
}
