// Per-window answers (observe.window_ms): windows, window_max / window_min, what sweeps make of
// them, and the time series' per-interval outcomes and replicas.
#include <algorithm>
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace {

using brokersim::Outcome;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;
using brokersim::test::split_csv_line;

}  // namespace

TEST_CASE("windows: a job belongs to the window it was created in - window_max shows the burst the whole run dilutes") {
  const auto run = run_scenario(brokersim::test::kWindowBurst);
  const auto j = run.json();
  REQUIRE(j["windows"].size() == 3);
  const auto& w = j["windows"];
  CHECK(w[0]["from_ms"] == 0.0);
  CHECK(w[0]["to_ms"] == 1000.0);
  CHECK(w[2]["from_ms"] == 2000.0);
  CHECK(w[2]["to_ms"] == 3000.0);
  CHECK(w[0]["outcomes"]["generated"] == 3);
  CHECK(w[0]["outcomes"]["completed_on_time"] == 3);
  CHECK(w[1]["outcomes"]["generated"] == 5);
  CHECK(w[1]["outcomes"]["completed_on_time"] == 2);
  CHECK(w[1]["outcomes"]["completed_late"] == 1);
  // Decided in the second window, but counted where they were created.
  CHECK(w[1]["outcomes"]["expired_before_start"] == 2);
  CHECK(w[2]["outcomes"]["generated"] == 0);
  CHECK(w[1]["fraction"]["expired_before_start"] == doctest::Approx(0.4));
  CHECK(j["fraction"]["expired_before_start"] == doctest::Approx(0.25));
  CHECK(j["window_max"]["fraction"]["expired_before_start"] == doctest::Approx(0.4));
  // The empty third window takes no part: the lowest is the first window's 0, not a made-up one.
  CHECK(j["window_min"]["fraction"]["completed_on_time"] == doctest::Approx(0.4));
  CHECK(j["window_max"]["fraction"]["completed_on_time"] == doctest::Approx(1.0));
  // Waits by creation window: the burst's last start waited 150 ms in the queue (prefetch 1).
  CHECK(w[0]["wait_ms"]["queue"]["count"] == 3);
  CHECK(w[1]["wait_ms"]["queue"]["max"] == doctest::Approx(150.0));
  CHECK(j["window_max"]["wait_ms"]["queue"]["max"] == doctest::Approx(150.0));
  CHECK(j["window_min"]["wait_ms"]["queue"]["max"] == doctest::Approx(0.0));
  CHECK(w[0]["throughput_per_s"] == doctest::Approx(3.0));
  CHECK(j["window_max"]["throughput_per_s"] == doctest::Approx(3.0));
  CHECK(j["window_min"]["goodput_per_s"] == doctest::Approx(0.0));
  // The windows add up to the run.
  std::uint64_t generated = 0, waits = 0;
  for (const auto& win : w) {
    generated += win["outcomes"]["generated"].get<std::uint64_t>();
    waits += win["wait_ms"]["sojourn"]["count"].get<std::uint64_t>();
  }
  CHECK(generated == j["outcomes"]["generated"].get<std::uint64_t>());
  CHECK(waits == j["wait_ms"]["sojourn"]["count"].get<std::uint64_t>());
}

TEST_CASE("windows: they start at the warm-up's end and the last one ends with the run") {
  const auto run = run_scenario(brokersim::test::kWindowBurst, {"warmup_ms=500", "stop.time_ms=2600"});
  const auto j = run.json();
  const auto& w = j["windows"];
  REQUIRE(w.size() == 3);
  CHECK(w[0]["from_ms"] == 500.0);
  CHECK(w[1]["from_ms"] == 1500.0);
  CHECK(w[2]["to_ms"] == 2600.0);
  CHECK(w[0]["outcomes"]["generated"] == 5);  // the burst; the first three jobs are warm-up
}

TEST_CASE("windows: a run without observe.window_ms reports neither windows nor fleet costs") {
  const auto j = run_scenario(brokersim::test::kWindowBurst, {"observe={\"every_ms\": 1000}"}).json();
  CHECK(!j.contains("windows"));
  CHECK(!j.contains("window_max"));
  CHECK(!j.contains("fleet"));
}

TEST_CASE("windows: a sweep gets window_max and window_min columns and fleet costs - never one column per window") {
  brokersim::test::ScratchDir d("brokersim-windows");
  const std::string scenario = d.write("s.json", brokersim::test::kWindowBurst);
  const auto r = run_cli({"sweep", scenario, "--vary", "consumers.0.count=1,2", "--out", d.path("out.csv")});
  REQUIRE(r.status == 0);
  const auto header = split_csv_line(brokersim::test::lines_of(read_file(d.path("out.csv")))[0]);
  auto has = [&](const std::string& c) { return std::find(header.begin(), header.end(), c) != header.end(); };
  CHECK(has("window_max.fraction.expired_before_start_mean"));
  CHECK(has("window_min.wait_ms.local.p95_mean"));
  CHECK(has("fleet.slot_seconds_mean"));
  CHECK(has("fleet.groups.0.peak_replicas_mean"));
  for (const auto& c : header) CHECK_MESSAGE(c.rfind("windows", 0) != 0, c);
  // plan takes a per-window target.
  const auto plan = run_cli({"plan", scenario, "--vary", "consumers.0.count=1:3:1", "--target",
                             "window_max.fraction.expired_before_start<=0.01"});
  CHECK(plan.status == 0);
  CHECK(plan.out.find("consumers.0.count=2  (cost 2)") != std::string::npos);
  // ... and a cost measured by the run: slot time over the 3 s run.
  const auto measured = run_cli({"plan", scenario, "--vary", "consumers.0.count=1:3:1", "--target",
                                 "window_max.fraction.expired_before_start<=0.01", "--cost", "fleet.slot_seconds"});
  CHECK(measured.status == 0);
  // The measured cost comes with its interval: 0 here, every replication of this run alike.
  CHECK(measured.out.find("consumers.0.count=2  (cost 6 ± 0, slots_total 2)") != std::string::npos);
}

TEST_CASE("windows: observe.window_ms is validated at the edge") {
  brokersim::test::ScratchDir d("brokersim-windows");
  const std::string scenario = d.write("s.json", brokersim::test::kWindowBurst);
  auto error = [&](const std::string& set) {
    const auto r = run_cli({"run", scenario, "--set", set});
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(error("observe.window_ms=0") == "brokersim: error: observe.window_ms: expected a number > 0, got 0\n");
  CHECK(error("observe.window_ms=0.01") ==
        "brokersim: error: observe.window_ms: expected at most 100000 windows in the measured span (3000 ms), got 0.01\n");
  CHECK(error("observe={}") == "brokersim: error: observe: expected at least one of every_ms, window_ms, got {}\n");
}

TEST_CASE("time series: outcomes decided per interval and the replicas of each group") {
  const auto run = run_scenario(brokersim::test::kWindowBurst, {"observe.every_ms=500"});
  REQUIRE(run.series.size() == 7);  // 0, 500, ..., 3000
  double on_time = 0, stale = 0, late = 0;
  for (const auto& row : run.series) {
    on_time += row.at("outcomes.completed_on_time");
    stale += row.at("outcomes.expired_before_start");
    late += row.at("outcomes.completed_late");
    CHECK(row.at("group.0.replicas") == 1);
  }
  CHECK(on_time == 5);
  CHECK(stale == 2);
  CHECK(late == 1);
  // The burst is decided in (1000, 1500]; the first three jobs by 500.
  CHECK(run.series[1].at("outcomes.completed_on_time") == 3);
  CHECK(run.series[3].at("outcomes.completed_on_time") == 2);
  CHECK(run.series[3].at("outcomes.expired_before_start") == 2);
}

TEST_CASE("windows: a sweep varying autoscale between null and a setting has one set of metrics - varying the windows away leaves their cells empty") {
  brokersim::test::ScratchDir d("brokersim-windows");
  nlohmann::json doc = nlohmann::json::parse(brokersim::test::kWindowBurst);
  doc.erase("observe");
  const std::string scenario = d.write("s.json", doc.dump());
  const auto ok = run_cli({"sweep", scenario, "--vary", R"(consumers.0.autoscale=[null, {"target_per_replica": 2}])", "--out",
                           d.path("a.csv")});
  CHECK(ok.status == 0);
  CHECK(read_file(d.path("a.csv")).find("fleet.consumer_seconds_mean") != std::string::npos);
  // The columns are the whole grid's: the point without windows has empty window_max cells.
  const auto mixed = run_cli({"sweep", scenario, "--vary", R"(observe=[{"every_ms": 1000}, {"window_ms": 1000}])", "--out",
                              d.path("b.csv")});
  REQUIRE_MESSAGE(mixed.status == 0, mixed.err);
  const auto lines = brokersim::test::lines_of(read_file(d.path("b.csv")));
  REQUIRE(lines.size() == 3);
  const auto header = brokersim::test::split_csv_line(lines[0]);
  const auto it = std::find(header.begin(), header.end(), "window_max.fraction.expired_before_start_mean");
  REQUIRE(it != header.end());
  const auto k = static_cast<std::size_t>(it - header.begin());
  CHECK(brokersim::test::split_csv_line(lines[1])[k].empty());
  CHECK(!brokersim::test::split_csv_line(lines[2])[k].empty());
}
