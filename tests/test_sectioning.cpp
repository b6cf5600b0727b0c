// Issue 44, item 1: quantiles over replications. The per-run quantile's interval carries the
// histogram's quantization (never "± 0" for a random quantity); the pooled steady-state quantile
// is the merged histogram's, with a sectioning interval. Exact arithmetic on hand-made values.
#include <cmath>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "sim/stats.hpp"
#include "test_util.hpp"

namespace {

// t_{1, 0.975} (Student t with one degree of freedom, two-sided 95%): tan(0.475 pi).
const double kSectT1 = std::tan(0.475 * std::numbers::pi);

}  // namespace

TEST_CASE("sectioning: half a bucket is exact below 128 ns and 1/128 of a power of two above") {
  CHECK(sim::Histogram::half_bucket(100) == 0.0);   // buckets of width 1
  CHECK(sim::Histogram::half_bucket(150) == 0.5);   // [150, 151]
  CHECK(sim::Histogram::half_bucket(1e6) == 4095.5);  // 2^19 <= 1e6 < 2^20: buckets of 2^13
  // Per-run quantiles of 1 ms and 3 ms: (4095.5 + 16383.5) / 2 ns.
  CHECK(brokersim::quantization_half_width({1.0, 3.0}) == doctest::Approx(10239.5e-6).epsilon(1e-12));
}

TEST_CASE("sectioning: the per-run quantile column is widened by its quantization and never pooled") {
  const std::vector<std::string> names{"wait_ms.queue.count", "wait_ms.queue.mean", "wait_ms.queue.p95"};
  const auto ratios = brokersim::ratio_columns(names);
  bool marked = false;
  for (const auto& c : ratios) marked = marked || (c.quantile && c.column == 2);
  CHECK(marked);
  const std::vector<double> a{100, 5, 1.0}, b{300, 5, 3.0};
  const brokersim::Summary s = brokersim::summarize({&a, &b}, ratios);
  // The mean of the runs' quantiles, not weighted by their counts as the mean wait is.
  CHECK(s.mean[2] == 2.0);
  CHECK(s.ci95[2] == doctest::Approx(kSectT1 + 10239.5e-6).epsilon(1e-9));
  // Identical replications measured nothing random: their exact ± 0 stays.
  const brokersim::Summary same = brokersim::summarize({&a, &a}, ratios);
  CHECK(same.ci95[2] == 0.0);
}

TEST_CASE("sectioning: the pooled quantile is the merged histograms' with the sections' spread around it") {
  sim::Histogram low, high;
  for (int v = 1; v <= 100; ++v) low.add(v);
  for (int v = 101; v <= 200; ++v) high.add(v);
  const brokersim::QuantileFigures f = brokersim::quantile_figures({&low, &high}, 0.5, 0.95);
  // Sections: 50 ns and bucket [150, 151]'s midpoint 150.5 ns; pooled rank 100 of 200: 100 ns.
  CHECK(f.naive.estimate == doctest::Approx(100.25e-6).epsilon(1e-12));
  CHECK(f.sectioning.estimate == doctest::Approx(100e-6).epsilon(1e-12));
  CHECK(f.pooled.estimate == f.sectioning.estimate);
  const double spread = std::sqrt((50.0 * 50.0 + 50.5 * 50.5) / 2.0) * 1e-6;  // around the pooled 100
  CHECK(f.sectioning.half_width == doctest::Approx(kSectT1 * spread).epsilon(1e-9));
  // The per-run figure adds the mean half-bucket (0 and 0.5 ns) to Student t's.
  CHECK(f.per_run.half_width - f.naive.half_width == doctest::Approx(0.25e-6).epsilon(1e-6));
}

namespace {

// Runs of 100 values each, 1..100 shifted by `shift[r]` (below 128 ns every bucket holds one
// value, so ranks are exact), and their figures at q.
brokersim::QuantileFigures shifted_runs(const std::vector<int>& shift, double q) {
  std::vector<sim::Histogram> runs(shift.size());
  for (std::size_t r = 0; r < shift.size(); ++r)
    for (int v = 1; v <= 100; ++v) runs[r].add(v + shift[r]);
  std::vector<const sim::Histogram*> p;
  for (const auto& h : runs) p.push_back(&h);
  return brokersim::quantile_figures(p, q, 0.95);
}

}  // namespace

TEST_CASE("CDF batching: the runs' fractions at the pooled median inverted through the pooled CDF") {
  // t_{3, 0.975}.
  const double t3 = 3.182446305284263;
  // Shifts 0, 2, 4, 6: the pooled median (rank 200 of 400) is 53 ns; the runs hold 53, 51, 49 and
  // 47 of their 100 values at most 53, so F = 0.5 +- t3 sd / 2 with sd = sqrt(0.002 / 3), no skew.
  // Ranks ceil(400 (0.5 -+ 0.041085)) = 184 and 217 are the values 49 and 58: the farther end is 5 ns.
  {
    const double half_f = t3 * std::sqrt(0.002 / 3) / 2;
    REQUIRE(half_f == doctest::Approx(0.0410852).epsilon(1e-6));
    const auto f = shifted_runs({0, 2, 4, 6}, 0.5);
    CHECK(f.pooled.estimate == doctest::Approx(53e-6).epsilon(1e-12));
    CHECK(f.pooled.half_width == doctest::Approx(5e-6).epsilon(1e-9));
  }
  // Shifts 0, 10, 20, 30: median 65 ns, F = 0.65, 0.55, 0.45, 0.35 (half-width 0.2054): ranks 118
  // and 283, the values 45 and 86: 21 ns above.
  {
    const auto f = shifted_runs({0, 10, 20, 30}, 0.5);
    CHECK(f.pooled.estimate == doctest::Approx(65e-6).epsilon(1e-12));
    CHECK(f.pooled.half_width == doctest::Approx(21e-6).epsilon(1e-9));
  }
  // Identical runs: every F is the same, so only the pooled estimate's bucket is left (0 here,
  // where buckets are exact), as a deterministic quantity should have.
  CHECK(shifted_runs({7, 7, 7}, 0.5).pooled.half_width == 0.0);
  // One run has no interval.
  CHECK(std::isnan(shifted_runs({0}, 0.5).pooled.half_width));
}

TEST_CASE("CDF batching: a run's compact counts give its CDF at any bucket exactly") {
  sim::Histogram h;
  for (int v : {3, 3, 70, 200, 201, 5000, 5000, 5001}) h.add(v);
  const brokersim::RunCounts c(h);
  CHECK(c.count() == 8);
  CHECK(c.nonempty() == 4);  // 3, 70, [200, 201] and [4992, 5055] (5000 and 5001 share it)
  CHECK(c.at_most(0) == 0);
  CHECK(c.at_most(sim::Histogram::index(3)) == 2);
  CHECK(c.at_most(sim::Histogram::index(69)) == 2);
  CHECK(c.at_most(sim::Histogram::index(70)) == 3);
  CHECK(c.at_most(sim::Histogram::index(201)) == 5);
  CHECK(c.at_most(sim::Histogram::index(4999)) == 8);
  CHECK(c.at_most(sim::Histogram::kBuckets - 1) == 8);
  // The pooled estimate's bucket is the one its quantile is reported from.
  CHECK(h.quantile_bucket(0.375) == sim::Histogram::index(70));
  CHECK(h.quantile_bucket(0.5) == sim::Histogram::index(200));
  CHECK(sim::Histogram().quantile_bucket(0.5) == sim::Histogram::kBuckets);
}

TEST_CASE("sectioning: one section has no interval") {
  const brokersim::QuantileInterval i = brokersim::sectioning_interval(5.0, {5.0}, 0.95, 1e6);
  CHECK(i.estimate == 5.0);
  CHECK(std::isnan(i.half_width));
}

TEST_CASE("sectioning: run --precision prints the pooled steady-state quantiles beside the per-run ones") {
  const std::string scenario = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/capacity-baseline.json";
  const std::vector<std::string> args{"run", scenario, "--set", "stop.time_ms=20000", "--set", "warmup_ms=2000",
                                      "--precision", "0.5", "--max-replications", "3", "--json"};
  const auto r = brokersim::test::run_cli(args);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["replications"] == 3);
  const auto& sq = j["steady_state_quantiles"];
  REQUIRE(sq.contains("wait_ms.sojourn.p99_pooled"));
  const double p50 = sq["wait_ms.sojourn.p50_pooled"]["estimate"], p95 = sq["wait_ms.sojourn.p95_pooled"]["estimate"],
               p99 = sq["wait_ms.sojourn.p99_pooled"]["estimate"];
  // Quantiles of one pooled histogram are ordered; three sections give a positive half-width.
  CHECK(0 < p50);
  CHECK(p50 <= p95);
  CHECK(p95 <= p99);
  CHECK(sq["wait_ms.sojourn.p99_pooled"]["ci95"].get<double>() > 0);
  // The per-run figure's half-width is never below its quantization.
  CHECK(j["metrics"]["wait_ms.sojourn.p99"]["ci95"].get<double>() > 0);
  // Same seed, same bytes.
  CHECK(brokersim::test::run_cli(args).out == r.out);
}

TEST_CASE("correlation times: the runs' own variance over the variance of their mean waits") {
  // Runs 1..100 shifted by 0, 2, 4, 6 (exact buckets below 128 ns): each run's variance is
  // 100 x 101 / 12 = 841.67, the means 50.5 .. 56.5 have variance 20 / 3: 126.25.
  brokersim::PooledWaits kept;
  for (int r = 0; r < 4; ++r) {
    sim::Histogram h;
    for (int v = 1; v <= 100; ++v) h.add(v + 2 * r);
    kept.add(static_cast<std::uint64_t>(r), std::span<const sim::Histogram>(&h, 1));
  }
  CHECK(brokersim::correlation_times(kept, 0) == doctest::Approx(126.25).epsilon(1e-12));
  // The merged histogram is merge's: 400 values, the range of all four.
  const sim::Histogram all = kept.merged(0);
  CHECK(all.count() == 400);
  CHECK(all.min() == 1);
  CHECK(all.max() == 106);
  CHECK(all.quantile(0.5) == 53.0);
  // One run, or runs whose means agree: no finite figure.
  brokersim::PooledWaits one;
  sim::Histogram h;
  for (int v = 1; v <= 10; ++v) h.add(v);
  one.add(0, std::span<const sim::Histogram>(&h, 1));
  CHECK(std::isnan(brokersim::correlation_times(one, 0)));
  one.add(1, std::span<const sim::Histogram>(&h, 1));
  CHECK(std::isinf(brokersim::correlation_times(one, 0)));
}

namespace {

// An M/M/c queue: Poisson arrivals, exponential service, c consumers of prefetch 1.
std::string mmc_scenario(const char* name, int seed, double stop_ms, double warmup_ms, double rate_per_s, double mean_ms, int c) {
  const nlohmann::json s = {
      {"name", name},
      {"seed", seed},
      {"stop", {{"time_ms", stop_ms}}},
      {"warmup_ms", warmup_ms},
      {"broker", {{"queues", {{"work", nlohmann::json::object()}}}}},
      {"producers", {{{"queue", "work"}, {"arrivals", {{"poisson", {{"rate_per_s", rate_per_s}}}}}, {"service_ms", {{"exp", {{"mean", mean_ms}}}}}}}},
      {"consumers", {{{"queue", "work"}, {"count", c}, {"prefetch", 1}, {"slots", 1}, {"admission", "none"}}}},
  };
  return s.dump();
}

}  // namespace

TEST_CASE("correlation times: sweep and run warn of a steady-state p99 from runs short beside a heavy queue's relaxation") {
  brokersim::test::ScratchDir d("brokersim-corr");
  // M/M/1 at rho 0.95 (relaxation time about 156 s) in runs of 200 s after a 2,000 s warm-up.
  const std::string heavy = d.write("heavy.json", mmc_scenario("mm1", 3, 2200000, 2000000, 9.5, 100, 1));
  const auto s = brokersim::test::run_cli({"sweep", heavy, "--vary", "consumers.0.count=1", "--replications", "10"});
  REQUIRE_MESSAGE(s.status == 0, s.err);
  CHECK(s.err.find("consumers.0.count=1: steady-state p99 from runs that hold few correlation times of the wait "
                   "(wait_ms.queue.p99_pooled ") != std::string::npos);
  CHECK(s.err.find("may be too narrow; make the runs longer") != std::string::npos);
  const auto r = brokersim::test::run_cli({"run", heavy, "--precision", "0.5", "--max-replications", "10", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const double k = j["steady_state_quantiles"]["wait_ms.queue.p99_pooled"]["correlation_times"];
  CHECK(k < brokersim::kTailCorrelationTimes);
  CHECK(r.err.find("few correlation times of the wait (wait_ms.queue.p99_pooled ") != std::string::npos);
  // Two fast servers at rho 0.8 in runs of 2.7 s (about 70 relaxation times): no warning.
  const std::string light = d.write("light.json", mmc_scenario("mm2", 7, 3000, 300, 1600, 1, 2));
  const auto l = brokersim::test::run_cli({"sweep", light, "--vary", "consumers.0.count=2", "--replications", "10"});
  REQUIRE_MESSAGE(l.status == 0, l.err);
  CHECK(l.err.find("correlation times") == std::string::npos);
}

TEST_CASE("correlation times: runs that are days of a days_csv are not told to be made longer") {
  brokersim::test::ScratchDir d("corr-days");
  // Day 0: 100 jobs a second apart, none waits; day 1: the same 100 at once, a queue 10 s deep. One
  // consumer of 100 ms jobs, one-day runs: the runs' mean waits differ by their day, far beyond
  // the spread of the waits within one, and a run cannot outlast its day.
  std::string days = "publish_ms\n";
  for (int i = 0; i < 100; ++i) days += std::to_string(1000 * i) + "\n";
  for (int i = 0; i < 100; ++i) days += "86400000\n";
  d.write("days.csv", days);
  const std::string scenario = d.write("days.json", R"({"name": "days", "stop": {"time_ms": 86400000},
    "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"days_csv": "days.csv"}, "service_ms": 100}],
    "consumers": [{"queue": "work", "prefetch": 1}]})");
  const auto s = brokersim::test::run_cli({"sweep", scenario, "--vary", "consumers.0.count=1", "--replications", "10"});
  REQUIRE_MESSAGE(s.status == 0, s.err);
  CHECK(s.err.find("consumers.0.count=1: steady-state p99 from runs that hold few correlation times of the wait "
                   "(wait_ms.queue.p99_pooled ") != std::string::npos);
  CHECK(s.err.find("the runs are days (producers.0 days_csv), which differ by more than chance and cannot be made longer, "
                   "so these are no steady state's p99s but the p99s of the days' jobs together, their intervals from the "
                   "spread of the days drawn (more runs narrow it); for what a day must meet, plan a target 'in P% of runs' "
                   "(docs/fit.md)\n") != std::string::npos);
  CHECK(s.err.find("make the runs longer") == std::string::npos);
  // run --precision says the same.
  const auto r = brokersim::test::run_cli({"run", scenario, "--precision", "0.5", "--max-replications", "10"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.err.find("the runs are days (producers.0 days_csv)") != std::string::npos);
  CHECK(r.err.find("make the runs longer") == std::string::npos);
  // Days of a drawn volume are days too; a fixed volume is not.
  const std::string per_run = R"({"stop": {"time_ms": 10}, "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1,
                   "volume": {"per_run": {"lognormal": {"mean": 1, "cv": 0.2}}}}], "consumers": [{"queue": "work"}]})";
  CHECK(brokersim::runs_are_days(brokersim::test::run_scenario(per_run).scenario) == "producers.0 volume.per_run");
  CHECK(brokersim::runs_are_days(brokersim::test::run_scenario(per_run, {"producers.0.volume={\"multiplier\": 2}"}).scenario).empty());
}
