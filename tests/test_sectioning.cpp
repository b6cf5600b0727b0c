// Issue 44, item 1: quantiles over replications. The per-run quantile's interval carries the
// histogram's quantization (never "± 0" for a random quantity); the pooled steady-state quantile
// is the merged histogram's, with a sectioning interval. Exact arithmetic on hand-made values.
#include <cmath>
#include <numbers>
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
  CHECK(f.pooled.estimate == doctest::Approx(100e-6).epsilon(1e-12));
  const double spread = std::sqrt((50.0 * 50.0 + 50.5 * 50.5) / 2.0) * 1e-6;  // around the pooled 100
  CHECK(f.pooled.half_width == doctest::Approx(kSectT1 * spread).epsilon(1e-9));
  // The per-run figure adds the mean half-bucket (0 and 0.5 ns) to Student t's.
  CHECK(f.per_run.half_width - f.naive.half_width == doctest::Approx(0.25e-6).epsilon(1e-6));
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
