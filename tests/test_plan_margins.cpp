// Issue 43, items 4 to 7: plan's margins each under its own label (the metric's to its threshold,
// absolute where the threshold is 0; a target over runs also its runs and their bound), no number
// in --json divided by a zero threshold, window percentiles that say how many jobs they rest on and
// are left out below a minimum, the closest setting by the smallest miss, and sweep columns for
// windows.K.*. Every scenario is deterministic (periodic or listed arrivals, constant service).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/ledger/windows.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::run_cli;
using brokersim::test::split_csv_line;

// Periodic arrivals, constant service: every replication is the same run. Four consumers keep up
// (100 jobs/s, 35 ms each: 3.5 erlangs), three do not.
constexpr const char* kMarginSteady = R"({"name": "margins", "seed": 1, "stop": {"jobs": 600},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300,
                 "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 4, "prefetch": 1, "slots": 1}]})";

// Window 0 (0-1 s): 120 jobs 8 ms apart, each served at once by one of 8 consumers (50 ms);
// window 1 (1-2 s): 10 jobs at 1000 ms, two of which wait for a consumer. Window 1 has 10
// sojourn samples: a p50 (2 needed), no p95 (20) and no p99 (100).
std::string margin_windows_scenario() {
  std::string at;
  for (int i = 0; i < 120; ++i) at += std::to_string(8 * i) + ",";
  for (int i = 0; i < 10; ++i) at += std::string("1000") + (i < 9 ? "," : "");
  return R"({"name": "thin-windows", "stop": {"time_ms": 2000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"at_ms": [)" +
         at + R"(]}, "service_ms": 50}],
  "consumers": [{"queue": "work", "count": 8, "prefetch": 1, "slots": 1}],
  "observe": {"window_ms": 1000}})";
}


struct MarginDir : brokersim::test::ScratchDir {
  std::string steady, windows, burst;
  MarginDir()
      : ScratchDir("brokersim-margins"), steady(write("steady.json", kMarginSteady)),
        windows(write("windows.json", margin_windows_scenario())), burst(write("burst.json", brokersim::test::kWindowBurst)) {}
};

// Every number of a JSON document, with its JSON pointer.
void each_margin_number(const nlohmann::json& j, const std::string& at,
                        const std::function<void(const std::string&, double)>& f) {
  if (j.is_number()) f(at, j.get<double>());
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) each_margin_number(it.value(), at + "/" + it.key(), f);
  if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) each_margin_number(j[i], at + "/" + std::to_string(i), f);
}


}  // namespace

TEST_CASE("plan margins: a target over runs shows its metric's margin to the threshold, its runs and their bound, each labelled") {
  MarginDir d;
  const std::vector<std::string> args{"plan", d.steady, "--vary", "consumers.0.count=4:5:1", "--target",
                                      "wait_ms.sojourn.p99<=50 in 95% of runs", "--replications", "59"};
  auto json_args = args;
  json_args.push_back("--json");
  const auto r = run_cli(json_args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j["best"]["target_checks"][0];
  // Every run is the same: the sojourn p99 is 35 ms of service, 15 ms inside the 50 ms threshold.
  CHECK(c["lhs"].get<double>() == 35.0);
  CHECK(c["margin"].get<double>() == 15.0);
  CHECK(c["margin_relative"].get<double>() == 0.3);
  CHECK(c["margin_at_bound"].is_null());  // judged by its runs, not a mean's interval
  CHECK(c["margin_at_run_quantile"].get<double>() == 15.0);
  CHECK(c["runs_met"] == 59);
  CHECK(c["fraction"].get<double>() == 1.0);
  CHECK(c["fraction_lower_bound"].get<double>() == doctest::Approx(std::pow(0.05, 1.0 / 59)));
  CHECK(c["fraction_lower_bound_over_asked"].get<double>() == doctest::Approx(std::pow(0.05, 1.0 / 59) - 0.95));
  CHECK_FALSE(c.contains("safety"));  // the old mixed figure is gone
  const auto t = run_cli(args);
  REQUIRE_MESSAGE(t.status == 0, t.err);
  CHECK(t.out.find("  target 1 (wait_ms.sojourn.p99<=50 in 95% of runs): margin to the threshold 50: 15 on the mean "
                   "(30% of the threshold)\n") != std::string::npos);
  CHECK(t.out.find("    runs meeting it: 59 of 59 (100%); the run at the 95% quantile: margin 15 (30% of the threshold)\n") !=
        std::string::npos);
  CHECK(t.out.find("    fraction of runs meeting it, Clopper-Pearson lower bound at 95% confidence: 95.05%, asked 95%\n") !=
        std::string::npos);
}

TEST_CASE("plan margins: costs tied on a target over runs name the least safe target and what its number is") {
  MarginDir d;
  const auto t = run_cli({"plan", d.steady, "--vary", "consumers.0.count=4:6:1", "--target",
                          "wait_ms.sojourn.p99<=50 in 95% of runs", "--cost", "throughput_per_s", "--replications", "59"});
  REQUIRE_MESSAGE(t.status == 0, t.err);
  CHECK(t.out.find("worst margin at bound") == std::string::npos);
  CHECK(t.out.find(", least safe target 1: Clopper-Pearson lower bound 95.05% of runs meeting it, asked 95% (bound over "
                   "asked 0.05183% of it); its margin to the threshold 15 on the mean (30% of the threshold)") !=
        std::string::npos);
}

TEST_CASE("plan margins: a threshold of 0 gives absolute margins, and no --json number is divided by it") {
  MarginDir d;
  const auto r = run_cli({"plan", d.steady, "--vary", "consumers.0.count=4:6:1", "--target",
                          "outcomes.expired_before_start<=0", "--cost", "throughput_per_s", "--replications", "3",
                          "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j["best"]["target_checks"][0];
  CHECK(c["lhs"].get<double>() == 0.0);
  CHECK(c["margin"].get<double>() == 0.0);
  CHECK(c["margin_relative"].is_null());
  CHECK(c["margin_at_bound"].get<double>() == 0.0);  // three equal runs: a half-width of 0
  CHECK(c["margin_at_bound_relative"].is_null());
  REQUIRE(j["tied"].size() == 3);
  for (const auto& tie : j["tied"]) {
    CHECK(tie["worst_safety"].get<double>() == 0.0);  // absolute: was -0 / 1e-12
    CHECK(tie["worst_target"] == 1);
  }
  each_margin_number(j, "", [](const std::string& at, double v) { CHECK_MESSAGE(std::fabs(v) < 1e9, at); });
  const auto t = run_cli({"plan", d.steady, "--vary", "consumers.0.count=4:6:1", "--target",
                          "outcomes.expired_before_start<=0", "--cost", "throughput_per_s", "--replications", "3"});
  REQUIRE_MESSAGE(t.status == 0, t.err);
  CHECK(t.out.find("  target 1 (outcomes.expired_before_start<=0): margin to the threshold 0: 0 on the mean (absolute: "
                   "the threshold is 0); at its 95% bound 0 (absolute: the threshold is 0)\n") != std::string::npos);
  CHECK(t.out.find("least safe target 1: margin to the threshold 0 at its 95% bound (absolute: the threshold is 0)") !=
        std::string::npos);
}

TEST_CASE("plan margins: the closest setting is the one that misses by least, not the cheapest of equal run counts") {
  MarginDir d;
  // No fleet serves in 1 ms: 0 of 59 runs everywhere (a bound of 0). One to three consumers fall
  // behind (p99 far past 35 ms); four and five serve each job in 35 ms: four is the closest.
  const auto r = run_cli({"plan", d.steady, "--vary", "consumers.0.count=1:5:1", "--target",
                          "wait_ms.sojourn.p99<=1 in 95% of runs", "--cost", "throughput_per_s", "--replications", "59"});
  CHECK(r.status == 5);
  CHECK(r.err.find("the closest tried, consumers.0.count=4, misses target 1 (wait_ms.sojourn.p99<=1 in 95% of runs: held "
                   "in 0 of 59 runs, lower bound 0% of runs; the run at the 95% quantile: margin to the threshold -34, "
                   "-3400% of the threshold)") != std::string::npos);
}

TEST_CASE("windows: windows.K.jobs, and a window's percentile below its minimum samples is null and left out of window_max") {
  using brokersim::window_min_samples;
  CHECK(window_min_samples(0.50) == 2);
  CHECK(window_min_samples(0.95) == 20);
  CHECK(window_min_samples(0.99) == 100);
  MarginDir d;
  const auto r = run_cli({"run", d.windows, "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& w = j["windows"];
  REQUIRE(w.size() == 2);
  CHECK(w[0]["jobs"] == 120);
  CHECK(w[1]["jobs"] == 10);
  const auto& s0 = w[0]["wait_ms"]["sojourn"];
  const auto& s1 = w[1]["wait_ms"]["sojourn"];
  CHECK(s0["count"] == 120);
  CHECK(s0["p99"].get<double>() == 50.0);
  CHECK(s1["count"] == 10);
  CHECK(s1["p50"].get<double>() == doctest::Approx(50.07).epsilon(1e-3));  // the histogram's interpolation
  CHECK(s1["p95"].is_null());
  CHECK(s1["p99"].is_null());
  CHECK(s1["max"].get<double>() == 100.0);  // two of the ten waited a whole service for a consumer
  // The aggregates: window 1 has the worst sojourn but too few samples for a p95 or p99.
  CHECK(j["window_max"]["wait_ms"]["sojourn"]["p99"].get<double>() == 50.0);
  CHECK(j["window_max"]["wait_ms"]["sojourn"]["p95"].get<double>() == 50.0);
  CHECK(j["window_max"]["wait_ms"]["sojourn"]["max"].get<double>() == 100.0);
  // No window with 100 samples: no window_max p99 at all (not 0, which any target would meet).
  const auto thin = run_cli({"run", d.burst, "--json"});
  REQUIRE_MESSAGE(thin.status == 0, thin.err);
  const auto tj = nlohmann::json::parse(thin.out);
  CHECK(tj["window_max"]["wait_ms"]["sojourn"]["p99"].is_null());
  CHECK(tj["windows"][1]["jobs"] == 5);
}

TEST_CASE("plan margins: a target on a window percentile states the minimum - a window without one is refused, naming it") {
  MarginDir d;
  const auto r = run_cli({"plan", d.windows, "--vary", "consumers.0.count=8:9:1", "--target",
                          "window_max.wait_ms.sojourn.p99<=60", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["window_percentiles"]["min_samples"]["p99"] == 100);
  CHECK(j["window_percentiles"]["min_samples"]["p95"] == 20);
  CHECK(j["window_percentiles"]["min_samples"]["p50"] == 2);
  const auto t = run_cli({"plan", d.windows, "--vary", "consumers.0.count=8:9:1", "--target",
                          "window_max.wait_ms.sojourn.p99<=60"});
  REQUIRE_MESSAGE(t.status == 0, t.err);
  CHECK(t.out.find("window percentiles: a window's p50, p95 and p99 rest on at least 2, 20 and 100 samples") !=
        std::string::npos);
  const auto bad = run_cli({"plan", d.windows, "--vary", "consumers.0.count=8:9:1", "--target",
                            "windows.1.wait_ms.sojourn.p99<=60"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("--target: the left-hand side of target 1 (windows.1.wait_ms.sojourn.p99<=60) is not a number") !=
        std::string::npos);
  CHECK(bad.err.find("rest on at least 2, 20 and 100 samples") != std::string::npos);
}

TEST_CASE("sweep --window-columns: windows.K.* columns for every window, refused without windows or past 100") {
  MarginDir d;
  const auto r = run_cli({"sweep", d.burst, "--vary", "consumers.0.count=1:2:1", "--window-columns"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto lines = brokersim::test::lines_of(r.out);
  REQUIRE(lines.size() == 3);
  const auto header = split_csv_line(lines[0]);
  const auto row = split_csv_line(lines[1]);
  REQUIRE(header.size() == row.size());
  const auto column = [&](const std::string& name) -> std::string {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return row[i];
    FAIL_CHECK("no column " << name);
    return "";
  };
  CHECK(column("windows.0.jobs_mean") == "3");
  CHECK(column("windows.1.jobs_mean") == "5");
  CHECK(column("windows.2.jobs_mean") == "0");
  CHECK(column("windows.1.outcomes.expired_before_start_mean") == "2");
  CHECK(column("windows.1.wait_ms.sojourn.p99_mean").empty());  // 5 samples: no p99
  CHECK(std::find(header.begin(), header.end(), "windows.3.jobs_mean") == header.end());
  // Without the option, no window column (sweeps as they were).
  const auto plain = run_cli({"sweep", d.burst, "--vary", "consumers.0.count=1:2:1"});
  CHECK(plain.out.find("windows.0.") == std::string::npos);
  const auto none = run_cli({"sweep", d.steady, "--vary", "consumers.0.count=4:5:1", "--window-columns"});
  CHECK(none.status == 2);
  CHECK(none.err.find("--window-columns: expected a scenario with observe.window_ms, got none") != std::string::npos);
  const auto many = run_cli({"sweep", d.burst, "--vary", "consumers.0.count=1:2:1", "--set", "observe.window_ms=10", "--window-columns"});
  CHECK(many.status == 2);
  CHECK(many.err.find("--window-columns: expected at most 100 windows a point") != std::string::npos);
  CHECK(many.err.find("got 300 windows of observe.window_ms 10 from warmup_ms to stop.time_ms") != std::string::npos);
}

TEST_CASE("sweep --window-columns: shards merge to the bytes of one run, the metadata naming the windows") {
  MarginDir d;
  const std::string whole = d.path("whole.csv"), s0 = d.path("s0.csv"), s1 = d.path("s1.csv"), merged = d.path("m.csv");
  const std::vector<std::string> base{"sweep", d.burst, "--vary", "consumers.0.count=1:3:1", "--window-columns"};
  auto with = [&](std::vector<std::string> extra) {
    auto a = base;
    a.insert(a.end(), extra.begin(), extra.end());
    return run_cli(a);
  };
  REQUIRE(with({"--out", whole}).status == 0);
  REQUIRE(with({"--out", s0, "--shard", "0/2"}).status == 0);
  REQUIRE(with({"--out", s1, "--shard", "1/2"}).status == 0);
  const auto m = run_cli({"merge", s0, s1, "--out", merged});
  REQUIRE_MESSAGE(m.status == 0, m.err);
  CHECK(brokersim::test::read_file(merged) == brokersim::test::read_file(whole));
  const auto meta = nlohmann::json::parse(brokersim::test::read_file(whole + ".meta.json"));
  CHECK(meta["window_columns"] == 3);
}
