// plan states its risk (issue 20): targets over runs judged by the exact Clopper-Pearson bound,
// Bonferroni over several targets, a measured cost with its interval and ties broken by the
// stricter bound, per-window targets windows.K.METRIC; and sweep --spread's quantile columns.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/plan/run_fraction.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/text.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::split_csv_line;

// Periodic arrivals, constant service: every replication is the same run (test_plan.cpp's).
constexpr const char* kSteady = R"({"name": "plan-test", "seed": 1, "stop": {"jobs": 600},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300,
                 "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1}]})";

// Poisson arrivals, exponential service: replications differ.
constexpr const char* kNoisy = R"({"name": "sweep-test", "seed": 11, "stop": {"jobs": 400},
  "broker": {"delivery_latency_ms": 1, "queues": {"work": {"message_ttl_ms": 400, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 40}}, "deadline_ms": 400,
                 "expiration_ms": "remaining-budget", "service_ms": {"exp": {"mean": 80}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 2, "uncertainty_ms": 20}]})";


struct RiskDir : brokersim::test::ScratchDir {
  std::string steady, noisy, burst;
  RiskDir()
      : ScratchDir("brokersim-risk"), steady(write("steady.json", kSteady)), noisy(write("noisy.json", kNoisy)),
        burst(write("burst.json", brokersim::test::kWindowBurst)) {}
};

// P(X >= k) for X ~ Binomial(n, p), summed term by term.
double upper_tail(std::uint64_t k, std::uint64_t n, double p) {
  double sum = 0;
  for (std::uint64_t i = k; i <= n; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * std::log(p) +
                    (n - i) * std::log1p(-p));
  return sum;
}

// The metric's value in each of the first n replications, as `run --replication r --json` prints it.
std::vector<double> per_replication(const std::string& scenario, const std::vector<std::string>& sets, std::uint64_t n,
                                    const std::string& pointer) {
  std::vector<double> out;
  for (std::uint64_t r = 0; r < n; ++r) {
    std::vector<std::string> args{"run", scenario, "--json", "--replication", std::to_string(r)};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    const auto run = run_cli(args);
    REQUIRE_MESSAGE(run.status == 0, run.err);
    out.push_back(nlohmann::json::parse(run.out)[nlohmann::json::json_pointer(pointer)].get<double>());
  }
  return out;
}

}  // namespace

TEST_CASE("Clopper-Pearson: 59 of 59 runs show 95% at 95% confidence, 58 of 58 do not - the bound is the binomial tail's root") {
  using namespace brokersim;
  CHECK(clopper_pearson_lower(59, 59, 0.95) == doctest::Approx(0.95049).epsilon(1e-5));
  CHECK(clopper_pearson_lower(58, 58, 0.95) < 0.95);
  CHECK(runs_needed(0.95, 0.95) == 59);
  CHECK(runs_needed(0.99, 0.95) == 299);
  CHECK(runs_needed(0.95, 0.975) == 72);  // Bonferroni over 2 targets
  CHECK(clopper_pearson_lower(0, 20, 0.95) == 0);
  CHECK(clopper_pearson_upper(20, 20, 0.95) == 1);
  // 18 of 20: the lower bound L solves P(X >= 18 | n = 20, p = L) = 0.05 (0.7174), the upper U
  // P(X <= 18 | U) = 0.05 (0.9819).
  const double lo = clopper_pearson_lower(18, 20, 0.95), hi = clopper_pearson_upper(18, 20, 0.95);
  CHECK(lo == doctest::Approx(0.7174).epsilon(1e-3));
  CHECK(upper_tail(18, 20, lo) == doctest::Approx(0.05).epsilon(1e-9));
  CHECK(1 - upper_tail(19, 20, hi) == doctest::Approx(0.05).epsilon(1e-9));
  CHECK(bonferroni(0.95, 1) == 0.95);
  CHECK(bonferroni(0.95, 2) == doctest::Approx(0.975));
}

TEST_CASE("plan: a target 'in 95% of runs' met in every replication is accepted with 59 replications, refused below") {
  RiskDir d;
  const std::vector<std::string> base{"plan", d.steady, "--vary", "consumers.0.count=1:6:1", "--target",
                                      "fraction.completed_on_time>=0.99 in 95% of runs"};
  auto args = base;
  args.insert(args.end(), {"--replications", "59", "--json"});
  const auto r = run_cli(args);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["runs_needed"] == 59);
  CHECK(j["best"]["setting"]["consumers.0.count"] == 4);
  const auto& check = j["best"]["target_checks"][0];
  CHECK(check["runs_met"] == 59);
  CHECK(check["fraction"] == 1.0);
  CHECK(check["in_runs"] == 0.95);
  CHECK(check["fraction_lower_bound"].get<double>() == doctest::Approx(0.95049).epsilon(1e-5));
  CHECK(j["risk"]["runs"] == 59);
  CHECK(j["risk"]["runs_missed"] == 0);
  CHECK(j["risk"]["statement"].get<std::string>().find("target 1 held in 59 of 59 runs") != std::string::npos);
  // 3 consumers serve a quarter on time in every run: 0 of 59.
  for (const auto& t : j["tried"])
    if (t["setting"]["consumers.0.count"] == 3) CHECK(t["target_checks"][0]["runs_met"] == 0);
  // 58 replications can never show it: refused before anything runs, naming what is needed.
  auto few = base;
  few.insert(few.end(), {"--replications", "58"});
  const auto refused = run_cli(few);
  CHECK(refused.status == 2);
  CHECK(refused.err.find("--replications: expected at least 59 for a target 'in P% of runs'") != std::string::npos);
  CHECK(refused.err.find("got 58") != std::string::npos);
  // --precision: the first stage is made 59 long.
  auto precise = base;
  precise.insert(precise.end(), {"--precision", "0.1", "--json"});
  const auto p = run_cli(precise);
  REQUIRE_MESSAGE(p.status == 0, p.err);
  CHECK(nlohmann::json::parse(p.out)["best"]["replications"] == 59);
  // A malformed clause names what it expected.
  const auto bad = run_cli({"plan", d.steady, "--vary", "consumers.0.count=1,2", "--target", "fraction.completed_on_time>=0.99 in 100% of runs"});
  CHECK(bad.status == 2);
  CHECK(bad.err.find("a percentage above 0 and below 100 after 'in'") != std::string::npos);
  const auto bad2 = run_cli({"plan", d.steady, "--vary", "consumers.0.count=1,2", "--target", "fraction.completed_on_time>=0.99 in 95% of days"});
  CHECK(bad2.status == 2);
  CHECK(bad2.err.find("'runs' after 'of'") != std::string::npos);
}

TEST_CASE("plan: a target that fails in about 10% of runs is rejected, with the observed fraction and its bound") {
  RiskDir d;
  // The threshold: the 7th smallest of 59 replications' stale fractions at 2 consumers, so that
  // 'X<=threshold' holds in exactly the runs at or under it.
  const std::string metric = "/fraction/expired_before_start";
  std::vector<double> x = per_replication(d.noisy, {}, 59, metric);
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  const double threshold = sorted[6];  // the 7th largest: 6 runs above it (about 10%) unless tied
  const auto met = static_cast<std::uint64_t>(std::count_if(x.begin(), x.end(), [&](double v) { return v <= threshold; }));
  REQUIRE(met < 59);
  REQUIRE(met >= 50);
  const auto r = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=2", "--target",
                          "fraction.expired_before_start<=" + brokersim::format_number(threshold) + " in 95% of runs",
                          "--replications", "59", "--json"});
  CHECK(r.status == 5);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["met"] == false);
  const auto& check = j["closest"]["target_checks"][0];
  CHECK(check["runs_met"] == met);
  CHECK(check["holds"] == false);
  CHECK(check["fraction_lower_bound"].get<double>() ==
        doctest::Approx(brokersim::clopper_pearson_lower(met, 59, 0.95)).epsilon(1e-12));
  CHECK(check["fraction_lower_bound"].get<double>() < 0.95);
  CHECK(r.err.find("held in " + std::to_string(met) + " of 59 runs, lower bound ") != std::string::npos);
  // The same threshold on the mean is met: the target over runs is the stricter question.
  const auto on_mean = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=2", "--target",
                                "fraction.expired_before_start<=" + brokersim::format_number(threshold),
                                "--replications", "59", "--json"});
  CHECK(on_mean.status == 0);
  CHECK(nlohmann::json::parse(on_mean.out)["risk"]["runs_missed"] == 59 - met);
}

TEST_CASE("plan: two targets judged at their bounds say so - Bonferroni, 97.5% each - and P(miss) per run") {
  RiskDir d;
  const auto r = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=2:6:1", "--target",
                          "fraction.expired_before_start<=0.05", "--target", "wait_ms.queue.p95<=400", "--replications",
                          "10", "--conservative", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& risk = j["risk"];
  CHECK(risk["judged_at"] == "bound");
  CHECK(risk["bonferroni_targets"] == 2);
  CHECK(risk["per_target_confidence"].get<double>() == doctest::Approx(0.975));
  CHECK(risk["joint_confidence"] == 0.95);
  const std::string s = risk["statement"];
  CHECK(s.find("each target holds at its bound, 97.5% each (Bonferroni over 2 targets, 95% jointly)") != std::string::npos);
  CHECK(s.find("P(miss) per run estimated") != std::string::npos);
  CHECK(risk["runs"] == 10);
  CHECK(risk["p_miss_per_run_upper95"].get<double>() ==
        doctest::Approx(brokersim::clopper_pearson_upper(risk["runs_missed"].get<std::uint64_t>(), 10, 0.95)));
  // The bound's half-width is the 97.5% one: wider than the 95% one the caveats use.
  const auto& c = j["best"]["target_checks"][0];
  CHECK(c["bound_half_width"].is_number());
  // On the means only: said, and no confidence claimed.
  const auto m = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=2:6:1", "--target",
                          "fraction.expired_before_start<=0.05", "--replications", "10", "--json"});
  REQUIRE(m.status == 0);
  const auto mj = nlohmann::json::parse(m.out);
  CHECK(mj["risk"]["judged_at"] == "mean");
  CHECK(mj["risk"]["statement"].get<std::string>().find("judged on the replication means only") != std::string::npos);
}

TEST_CASE("plan: costs tied within their noise are decided by the stricter bound") {
  RiskDir d;
  // The cost is throughput, about the 40 jobs/s offered at every fleet that keeps up: settings 4
  // to 6 cost the same within their intervals, and the one farthest inside the target wins.
  const auto r = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=4:6:1", "--target",
                          "fraction.expired_before_start<=0.05", "--cost", "throughput_per_s", "--replications", "6",
                          "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& tied = j["tied"];
  REQUIRE(tied.size() >= 2);
  // In cost order, each overlapping the cheapest's interval.
  const double c0 = tied[0]["cost"], h0 = tied[0]["cost_ci95"];
  double safest = -1e300;
  std::size_t safest_point = 0;
  for (const auto& t : tied) {
    CHECK(t["cost"].get<double>() >= c0);
    CHECK(t["cost"].get<double>() - t["cost_ci95"].get<double>() <= c0 + h0);
    if (t["worst_safety"].get<double>() > safest) safest = t["worst_safety"], safest_point = t["point"];
  }
  CHECK(j["best"]["point"] == safest_point);
  CHECK(j["best"]["point"] != tied[0]["point"]);  // the cheapest on the mean was not the safest
  CHECK(j["best"]["cost_ci95"].get<double>() > 0);
  // The text says so.
  const auto text = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=4:6:1", "--target",
                             "fraction.expired_before_start<=0.05", "--cost", "throughput_per_s", "--replications", "6"});
  CHECK(text.out.find("Tied on cost (their cost intervals overlap the cheapest's), chosen by the safest worst target margin") !=
        std::string::npos);
  CHECK(text.out.find("<- chosen") != std::string::npos);
}

TEST_CASE("plan: windows.K.METRIC judges one window - K out of range and a misspelt figure exit 2") {
  RiskDir d;
  // Window 1 holds the burst: one consumer lets 2 of 5 go stale there, two serve it.
  const auto r = run_cli({"plan", d.burst, "--vary", "consumers.0.count=1:3:1", "--target",
                          "windows.1.fraction.expired_before_start<=0.01", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["best"]["setting"]["consumers.0.count"] == 2);
  CHECK(j["best"]["metrics"]["windows.1.fraction.expired_before_start"]["mean"] == 0.0);
  for (const auto& t : j["tried"])
    if (t["setting"]["consumers.0.count"] == 1) CHECK(t["targets"][0].get<double>() == doctest::Approx(0.4));
  // Window 0 (three jobs, all on time) is met by one consumer.
  const auto w0 = run_cli({"plan", d.burst, "--vary", "consumers.0.count=1:3:1", "--target",
                           "windows.0.fraction.completed_on_time>=1", "--json"});
  REQUIRE(w0.status == 0);
  CHECK(nlohmann::json::parse(w0.out)["best"]["setting"]["consumers.0.count"] == 1);
  // The sweep's columns stay as they were: no per-window column.
  const auto out_of_range = run_cli({"plan", d.burst, "--vary", "consumers.0.count=1,2", "--target", "windows.3.fraction.expired_before_start<=0.01"});
  CHECK(out_of_range.status == 2);
  CHECK(out_of_range.err.find("expected a window index from 0 to 2 in \"windows.3.fraction.expired_before_start\" "
                              "(the scenario has 3 windows") != std::string::npos);
  const auto misspelt = run_cli({"plan", d.burst, "--vary", "consumers.0.count=1,2", "--target", "windows.1.fraction.expired_befor_start<=0.01"});
  CHECK(misspelt.status == 2);
  CHECK(misspelt.err.find("got \"fraction.expired_befor_start\" (did you mean "
                          "\"windows.1.fraction.expired_before_start\"?)") != std::string::npos);
  const auto no_windows = run_cli({"plan", d.steady, "--vary", "consumers.0.count=1,2", "--target", "windows.0.throughput_per_s>=1"});
  CHECK(no_windows.status == 2);
  CHECK(no_windows.err.find("the scenario has no observe.window_ms") != std::string::npos);
  const auto not_index = run_cli({"plan", d.burst, "--vary", "consumers.0.count=1,2", "--target", "windows.x.throughput_per_s>=1"});
  CHECK(not_index.status == 2);
  CHECK(not_index.err.find("expected windows.K.METRIC") != std::string::npos);
}

TEST_CASE("empirical_quantile: type 7 interpolation between order statistics, NaN left out") {
  using brokersim::empirical_quantile;
  CHECK(empirical_quantile({5, 1, 4, 2, 3}, 0.05) == doctest::Approx(1.2));
  CHECK(empirical_quantile({5, 1, 4, 2, 3}, 0.95) == doctest::Approx(4.8));
  CHECK(empirical_quantile({5, 1, 4, 2, 3}, 0.5) == 3);
  CHECK(empirical_quantile({7}, 0.05) == 7);
  CHECK(empirical_quantile({NAN, 2, 4}, 0.95) == doctest::Approx(3.9));
  CHECK(std::isnan(empirical_quantile({NAN}, 0.5)));
}

TEST_CASE("sweep --spread: NAME_p05 and NAME_p95 are the replications' 5% and 95% quantiles - shards merge") {
  RiskDir d;
  const auto r = run_cli({"sweep", d.noisy, "--vary", "consumers.0.count=2,3", "--replications", "5", "--spread",
                          "--out", d.path("s.csv")});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto lines = brokersim::test::lines_of(read_file(d.path("s.csv")));
  const auto header = split_csv_line(lines[0]);
  const auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  REQUIRE(col("goodput_per_s_p05") == col("goodput_per_s_ci95") + 1);
  REQUIRE(col("goodput_per_s_p95") == col("goodput_per_s_ci95") + 2);
  std::vector<double> x = per_replication(d.noisy, {"consumers.0.count=2"}, 5, "/goodput_per_s");
  std::sort(x.begin(), x.end());
  const auto row = split_csv_line(lines[1]);
  CHECK(std::stod(row[col("goodput_per_s_p05")]) == doctest::Approx(x[0] + 0.2 * (x[1] - x[0])).epsilon(1e-9));
  CHECK(std::stod(row[col("goodput_per_s_p95")]) == doctest::Approx(x[3] + 0.8 * (x[4] - x[3])).epsilon(1e-9));
  const auto meta = nlohmann::json::parse(read_file(d.path("s.csv.meta.json")));
  CHECK(meta["spread"]["quantiles"] == nlohmann::json::array({0.05, 0.95}));
  // Without --spread: no such column and no spread in the metadata.
  REQUIRE(run_cli({"sweep", d.noisy, "--vary", "consumers.0.count=2,3", "--replications", "5", "--out", d.path("p.csv")}).status == 0);
  CHECK(read_file(d.path("p.csv")).find("_p05") == std::string::npos);
  CHECK_FALSE(nlohmann::json::parse(read_file(d.path("p.csv.meta.json"))).contains("spread"));
  // Two shards merge into the same bytes.
  for (const char* k : {"0", "1"})
    REQUIRE(run_cli({"sweep", d.noisy, "--vary", "consumers.0.count=2,3", "--replications", "5", "--spread", "--shard",
                     std::string(k) + "/2", "--out", d.path(std::string("shard") + k + ".csv")}).status == 0);
  const auto merged = run_cli({"merge", d.path("shard0.csv"), d.path("shard1.csv"), "--out", d.path("m.csv")});
  REQUIRE_MESSAGE(merged.status == 0, merged.err);
  CHECK(read_file(d.path("m.csv")) == read_file(d.path("s.csv")));
  // A --spread CSV beside metadata without spread is refused, naming the column.
  auto plain = nlohmann::ordered_json::parse(read_file(d.path("shard0.csv.meta.json")));
  plain.erase("spread");
  d.write("shard0.csv.meta.json", plain.dump(2));
  const auto refused = run_cli({"merge", d.path("shard0.csv"), d.path("shard1.csv"), "--out", d.path("m2.csv")});
  CHECK(refused.status == 2);
  CHECK(refused.err.find("(the metadata has no spread)") != std::string::npos);
}

TEST_CASE("docs: every key plan --json gives about its risk, ties and target checks is named in docs/scenario.md") {
  RiskDir d;
  const std::string doc = read_file(std::string(BROKERSIM_SOURCE_DIR) + "/docs/scenario.md");
  const auto documented = [&](const std::string& key) { return doc.find("`" + key + "`") != std::string::npos; };
  const auto r = run_cli({"plan", d.noisy, "--vary", "consumers.0.count=4:6:1", "--target",
                          "fraction.expired_before_start<=0.05", "--target", "goodput_per_s>=30 in 90% of runs",
                          "--cost", "throughput_per_s", "--replications", "36", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["runs_needed"] == 36);  // 90% at 97.5% (Bonferroni over 2 targets): 0.025^(1/36) >= 0.9
  for (const char* key : {"risk", "runs_needed", "tied"}) CHECK_MESSAGE(documented(key), key);
  for (auto it = j["risk"].begin(); it != j["risk"].end(); ++it) CHECK_MESSAGE(documented(it.key()), it.key());
  REQUIRE(j["tied"].size() >= 1);
  for (auto it = j["tied"][0].begin(); it != j["tied"][0].end(); ++it) CHECK_MESSAGE(documented(it.key()), it.key());
  for (const auto& check : j["best"]["target_checks"])
    for (auto it = check.begin(); it != check.end(); ++it) CHECK_MESSAGE(documented(it.key()), it.key());
  for (const char* key : {"target_checks", "runs_missed", "cost_ci95"}) CHECK(j["best"].contains(key));
  for (const char* key : {"target_checks", "runs_missed", "cost_ci95"}) CHECK_MESSAGE(documented(key), key);
  // The sweep's spread columns and metadata are in docs/outcomes.md.
  const std::string outcomes = read_file(std::string(BROKERSIM_SOURCE_DIR) + "/docs/outcomes.md");
  for (const char* name : {"`NAME_p05`", "`NAME_p95`", "`spread`"}) CHECK_MESSAGE(outcomes.find(name) != std::string::npos, name);
}
