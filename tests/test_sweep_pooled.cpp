// Issue 44: the steady-state (pooled) quantile in sweep. Each point's replications' wait
// histograms are merged; wait_ms.STAGE.pNN_pooled_mean is the merged histogram's quantile and
// _ci95 its sectioning half-width, the same figures run --precision prints for the same runs.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace {

// M/M/2 at rho 0.8 (1 ms services): Erlang C 0.7111, P(Wq > t) = C e^{-(c mu - lambda) t}, so the
// exact steady-state p99 of the queue wait is ln(C / 0.01) / 0.4 = 10.66 ms.
constexpr const char* kPooledMM2 = R"({"name": "mm2", "seed": 7, "stop": {"time_ms": 3000}, "warmup_ms": 300,
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1600}}, "service_ms": {"exp": {"mean": 1}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 1, "admission": "none"}]})";

// Header name -> cell of the CSV's row `row` (1: the first point).
std::map<std::string, std::string> pooled_test_row(const std::string& csv, std::size_t row) {
  const auto lines = brokersim::test::lines_of(csv);
  REQUIRE(lines.size() > row);
  const auto header = brokersim::test::split_csv_line(lines[0]), cells = brokersim::test::split_csv_line(lines[row]);
  REQUIRE(header.size() == cells.size());
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i < header.size(); ++i) m[header[i]] = cells[i];
  return m;
}

}  // namespace

TEST_CASE("sweep pooled quantiles: the columns are run --precision's steady-state quantiles of the same runs") {
  brokersim::test::ScratchDir d("brokersim-pooled");
  const std::string f = d.write("s.json", kPooledMM2);
  const auto run = brokersim::test::run_cli({"run", f, "--precision", "0.5", "--max-replications", "4", "--json"});
  REQUIRE_MESSAGE(run.status == 0, run.err);
  const auto j = nlohmann::json::parse(run.out);
  REQUIRE(j["replications"] == 4);
  const auto& sq = j["steady_state_quantiles"];
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"--spread"},
                                                std::vector<std::string>{"--precision", "0.5", "--max-replications", "4"}}) {
    std::vector<std::string> args{"sweep", f, "--vary", "consumers.0.count=2", "--threads", "2"};
    if (extra.empty() || extra[0] == "--spread") args.insert(args.end(), {"--replications", "4"});
    args.insert(args.end(), extra.begin(), extra.end());
    const auto s = brokersim::test::run_cli(args);
    REQUIRE_MESSAGE(s.status == 0, s.err);
    const auto row = pooled_test_row(s.out, 1);
    CHECK(row.at("replications") == "4");
    std::size_t seen = 0;
    for (const auto& item : sq.items()) {
      // Named, not a structured binding: clang 14 does not let INFO's lambda capture one.
      const std::string name = item.key();
      const auto& v = item.value();
      INFO(name);
      REQUIRE(row.count(name + "_mean"));
      CHECK(std::stod(row.at(name + "_mean")) == v["estimate"].get<double>());
      CHECK(std::stod(row.at(name + "_ci95")) == v["ci95"].get<double>());
      CHECK(!row.count(name + "_p05"));  // one pooled figure: no spread across replications
      ++seen;
    }
    CHECK(seen >= 9);  // queue, transit, local, service, sojourn: p50, p95, p99 of those with jobs
    // A wait no job had (no job expired in the queue): empty cells, as in any sweep column.
    CHECK(row.at("wait_ms.queue_expired.p99_pooled_mean").empty());
  }
  // The exact M/M/2 p99 of the queue wait, inside the pooled interval.
  const double exact = std::log(0.71111 / 0.01) / 0.4;
  const double est = sq["wait_ms.queue.p99_pooled"]["estimate"], hw = sq["wait_ms.queue.p99_pooled"]["ci95"];
  CHECK(std::fabs(est - exact) <= hw);
  CHECK(hw > 0);
}

TEST_CASE("sweep pooled quantiles: the same bytes for any thread count and when shards are merged") {
  brokersim::test::ScratchDir d("brokersim-pooled");
  const std::string f = d.write("s.json", kPooledMM2);
  const std::vector<std::string> base{"sweep", f, "--vary", "consumers.0.count=2,3,4", "--replications", "3", "--spread",
                                      "--set", "stop.time_ms=1500"};
  auto one = base, three = base;
  one.insert(one.end(), {"--threads", "1", "--out", d.path("one.csv")});
  three.insert(three.end(), {"--threads", "3"});
  const auto a = brokersim::test::run_cli(one), b = brokersim::test::run_cli(three);
  REQUIRE_MESSAGE(a.status == 0, a.err);
  REQUIRE_MESSAGE(b.status == 0, b.err);
  const std::string local = brokersim::test::read_file(d.path("one.csv"));
  CHECK(local == b.out);
  CHECK(local.find("wait_ms.queue.p99_pooled_mean,wait_ms.queue.p99_pooled_ci95") != std::string::npos);
  std::vector<std::string> shards;
  for (int k = 0; k < 2; ++k) {
    auto args = base;
    const std::string out = d.path("pooled-shard" + std::to_string(k) + ".csv");
    args.insert(args.end(), {"--threads", "2", "--shard", std::to_string(k) + "/2", "--out", out});
    const auto r = brokersim::test::run_cli(args);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    shards.push_back(out);
  }
  const auto merged = brokersim::test::run_cli({"merge", shards[0], shards[1], "--out", d.path("all.csv")});
  REQUIRE_MESSAGE(merged.status == 0, merged.err);
  CHECK(brokersim::test::read_file(d.path("all.csv")) == local);
}

TEST_CASE("sweep pooled quantiles: --precision-metric on a steady-state quantile stops on its interval") {
  brokersim::test::ScratchDir d("brokersim-pooled");
  const std::string f = d.write("s.json", kPooledMM2);
  const auto r = brokersim::test::run_cli({"run", f, "--precision", "0.2", "--precision-metric", "wait_ms.queue.p99_pooled",
                                           "--max-replications", "200", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["precision"]["metrics"] == nlohmann::json::array({"wait_ms.queue.p99_pooled"}));
  const int used = j["replications"];
  CHECK(used > 10);  // the first stage's interval asked for more
  CHECK(used < 200);
  const auto& q = j["steady_state_quantiles"]["wait_ms.queue.p99_pooled"];
  const double est = q["estimate"], hw = q["ci95"];
  CHECK(hw <= 0.2 * est * 1.25);  // re-estimated spread: about as asked
  // sweep --precision on the same metric: the same runs, the same figure.
  const auto s = brokersim::test::run_cli({"sweep", f, "--vary", "consumers.0.count=2", "--precision", "0.2",
                                           "--precision-metric", "wait_ms.queue.p99_pooled", "--max-replications", "200"});
  REQUIRE_MESSAGE(s.status == 0, s.err);
  const auto row = pooled_test_row(s.out, 1);
  CHECK(row.at("replications") == std::to_string(used));
  CHECK(std::stod(row.at("wait_ms.queue.p99_pooled_mean")) == est);
  CHECK(std::stod(row.at("wait_ms.queue.p99_pooled_ci95")) == hw);
  // A name that is neither a metric nor a steady-state quantile is still refused.
  const auto bad = brokersim::test::run_cli({"run", f, "--precision", "0.03", "--precision-metric", "wait_ms.queue.p98_pooled"});
  CHECK(bad.status == 2);
}

TEST_CASE("sweep pooled quantiles: a plan target on one is refused naming the per-run quantile") {
  brokersim::test::ScratchDir d("brokersim-pooled");
  const std::string f = d.write("s.json", kPooledMM2);
  const auto r = brokersim::test::run_cli({"plan", f, "--vary", "consumers.0.count=2,3", "--target",
                                           "wait_ms.queue.p99_pooled<=20", "--replications", "2"});
  CHECK(r.status == 2);
  CHECK(r.err.find("plan does not judge the steady-state quantiles yet; wait_ms.queue.p99 is the expected per-run quantile") !=
        std::string::npos);
}
