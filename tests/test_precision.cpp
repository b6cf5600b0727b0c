// Answers with a stated precision: the sequential replication rule (experiments/cli/replication/precision.hpp),
// MSER-5 (sim/mser.hpp) and warmup_ms "auto", run / sweep / plan / analytic --validate --precision.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/analytic/fit.hpp"
#include "experiments/cli/analytic/values.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/text.hpp"
#include "sim/mser.hpp"
#include "sim/rng.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

// Uniform noise in [-1, 1) from the simulator's own generator: the same numbers everywhere.
std::vector<double> noise(std::size_t n, std::uint64_t seed) {
  sim::Rng rng(seed, 0, "noise");
  std::vector<double> x(n);
  for (auto& v : x) v = 2 * rng.uniform() - 1;
  return x;
}

// M/M/1+D, exact P(abandon) 0.34396 (the validation design's c=1 rho=0.8 TTL=0.5/mu point, with
// service in ms rather than 100 ms so that a replication is cheap).
constexpr const char* kMMcD = R"({"name": "mm1d", "seed": 3, "stop": {"time_ms": 20000}, "warmup_ms": 1000,
  "broker": {"queues": {"work": {"message_ttl_ms": 0.5}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 800}}, "service_ms": {"exp": {"mean": 1}}}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1, "admission": "none"}]})";

// M/M/20 at rho 0.95, started empty (no warm-up written): Erlang C mean queue length 14.35.
constexpr const char* kMMcHeavy = R"({"name": "mmc-095", "seed": 5, "stop": {"time_ms": 60000}, "warmup_ms": "auto",
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 190}}, "service_ms": {"exp": {"mean": 100}}}],
  "consumers": [{"queue": "work", "count": 20, "prefetch": 1, "slots": 1, "admission": "none"}]})";

// The same fleet at rho 0.75 after a 10 s outage of every consumer: 1,500 jobs wait at 10 s and
// drain at 200 - 150 = 50 jobs/s, so the backlog is gone at about 40 s (fluid model). Erlang C
// mean queue length without the outage: 0.4813.
nlohmann::json outage_scenario() {
  auto doc = nlohmann::json::parse(R"({"name": "outage", "seed": 5, "stop": {"time_ms": 120000}, "warmup_ms": "auto",
    "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 150}}, "service_ms": {"exp": {"mean": 100}}}],
    "consumers": [{"queue": "work", "count": 20, "prefetch": 1, "slots": 1, "admission": "none"}]})");
  for (int i = 0; i < 20; ++i) doc["faults"].push_back({{"at_ms", 0}, {"consumer", i}, {"stall_ms", 10000}});
  return doc;
}

// One row of a sweep CSV as name -> cell.
std::map<std::string, std::string> csv_row(const std::string& csv, std::size_t row) {
  const auto lines = brokersim::test::lines_of(csv);
  const auto header = brokersim::test::split_csv_line(lines.at(0)), cells = brokersim::test::split_csv_line(lines.at(row + 1));
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < header.size(); ++i) out[header[i]] = cells.at(i);
  return out;
}

}  // namespace

TEST_CASE("mser: a stationary series keeps (almost) everything and is steady") {
  const auto x = noise(5000, 1);
  const sim::MserResult m = sim::mser(x);
  CHECK(m.steady);
  CHECK(m.batches == 1000);
  CHECK(m.truncate % 5 == 0);
  CHECK(m.truncate < 500);
}

TEST_CASE("mser: a start-up transient is cut where the series levels off") {
  // 10 - 10 exp(-i / 300) plus noise: within 1% of its level from i = 1380 on.
  auto x = noise(10000, 2);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += 10 - 10 * std::exp(-static_cast<double>(i) / 300);
  const sim::MserResult m = sim::mser(x);
  CHECK(m.steady);
  CHECK(m.truncate >= 600);   // past the steep part (more than 86% of the way up)
  CHECK(m.truncate <= 2500);  // and not far past the level
}

TEST_CASE("mser: a series that still trends at its end is reported as not steady") {
  auto x = noise(5000, 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] += 0.01 * static_cast<double>(i);
  const sim::MserResult m = sim::mser(x);
  CHECK_FALSE(m.steady);
  CHECK(2 * m.truncate <= x.size());  // the cut stays within the first half
  // Too short to decide anything: nothing cut, no claim of a steady state.
  CHECK(sim::mser({1, 2, 3}).truncate == 0);
  CHECK_FALSE(sim::mser({1, 2, 3}).steady);
}

TEST_CASE("precision: Stein's second stage and the relative and absolute tests") {
  brokersim::PrecisionRule rule;
  rule.rel = 0.02;
  rule.abs = 0.001;
  rule.max_replications = 200;
  // n0 = 10: t_{9, 0.975} = 2.262157; mean 100, sd 5: h = 2, N = ceil((2.262157 * 5 / 2)^2) = 32.
  CHECK(brokersim::stein_replications(rule, 10, 100, 5) == 32);
  CHECK(brokersim::stein_replications(rule, 10, -100, 5) == 32);
  CHECK(brokersim::stein_half_width(10, 5, 32) == doctest::Approx(2.262157 * 5 / std::sqrt(32.0)).epsilon(1e-6));
  CHECK(brokersim::stein_half_width(10, 5, 32) <= 2);
  CHECK(brokersim::stein_replications(rule, 10, 100, 0.5) == 10);   // the first stage is enough
  CHECK(brokersim::stein_replications(rule, 10, 100, 0) == 10);     // no spread
  CHECK(brokersim::stein_replications(rule, 10, NAN, 5) == 10);     // a metric the point lacks
  CHECK(brokersim::stein_replications(rule, 10, 100, 50) == 200);   // capped at the maximum
  // Mean near 0: the absolute floor. sd 0.002: N = ceil((2.262157 * 2)^2) = 21.
  CHECK(brokersim::stein_replications(rule, 10, 0, 0.002) == 21);
  // summarize_two_stage: the mean of all; the larger of Stein's half-width from the first n0 and
  // the Student-t half-width over all N.
  const auto two_stage = [](const std::vector<std::vector<double>>& rows) {
    std::vector<const std::vector<double>*> reps;
    for (const auto& r : rows) reps.push_back(&r);
    return brokersim::summarize_two_stage(reps, 3);
  };
  // First stage {1, 3, 2}: sd 1, t_{2, 0.975} = 4.302653; Stein's over N = 5: 4.302653 / sqrt(5) = 1.924.
  // All five {1, 3, 2, 2, 2}: sd sqrt(0.5), t_{4, 0.975} = 2.776445: 0.878. Stein's is larger.
  const brokersim::Summary tight = two_stage({{1}, {3}, {2}, {2}, {2}});
  CHECK(tight.mean[0] == doctest::Approx(2.0));
  CHECK(tight.ci95[0] == doctest::Approx(4.302653 / std::sqrt(5.0)).epsilon(1e-6));
  // All five {1, 3, 2, 2, 10}: sd sqrt(13.3): 2.776445 * 3.6469 / sqrt(5) = 4.528, larger than Stein's.
  const brokersim::Summary skewed = two_stage({{1}, {3}, {2}, {2}, {10}});
  CHECK(skewed.mean[0] == doctest::Approx(3.6));
  CHECK(skewed.ci95[0] == doctest::Approx(2.776445 * std::sqrt(13.3) / std::sqrt(5.0)).epsilon(1e-6));
  CHECK(brokersim::is_precise(rule, 100, 2));
  CHECK_FALSE(brokersim::is_precise(rule, 100, 2.5));
  CHECK(brokersim::is_precise(rule, -100, 2));
  CHECK(brokersim::is_precise(rule, 0, 0.001));  // the floor: a fraction near 0
  CHECK_FALSE(brokersim::is_precise(rule, 0, 0.0011));
  CHECK_FALSE(brokersim::is_precise(rule, 5, NAN));  // one replication has no interval
}

TEST_CASE("precision: bad --precision options are exit-2 errors naming the option") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", kMMcD);
  const auto check = [&](std::vector<std::string> args, const std::string& message) {
    const auto r = run_cli(args);
    CHECK(r.status == 2);
    CHECK_MESSAGE(r.err.find(message) != std::string::npos, r.err);
  };
  check({"run", f, "--precision", "0"}, "--precision: expected a relative precision > 0");
  check({"run", f, "--precision", "x"}, "--precision: expected a relative precision > 0");
  check({"run", f, "--precision-abs", "0.01"}, "--precision-abs: expected --precision REL beside it, got no --precision");
  check({"run", f, "--precision", "0.1", "--max-replications", "2"}, "--max-replications: expected an integer >= 3");
  check({"run", f, "--precision", "0.1", "--max-replications", "100001"},
        "--max-replications: expected an integer >= 3 and <= 100000, got \"100001\"");
  check({"run", f, "--precision", "inf"}, "--precision: expected a relative precision > 0");
  check({"run", f, "--precision", "0.1", "--precision-metric", "goodput"}, "--precision-metric: expected a metric name");
  check({"run", f, "--precision", "0.1", "--trace", d.path("t.csv")}, "--trace: expected no --precision beside it");
  check({"sweep", f, "--vary", "consumers.0.count=1,2", "--precision", "0.1", "--replications", "50",
         "--max-replications", "10"}, "--replications: expected at most --max-replications (10)");
  check({"run", f, "--set", "warmup_ms=\"soon\""}, "warmup_ms: expected a duration >= 0, \"auto\", or");
  check({"run", f, "--set", "warmup_ms={\"auto\": \"queue\"}"}, "warmup_ms.auto: expected \"sojourn\" or \"stale\"");
}

// M/M/4+D at rho 0.9 with a TTL of half a mean service time: a multi-server point.
constexpr const char* kMM4D = R"({"name": "mm4d", "seed": 3, "stop": {"time_ms": 10000}, "warmup_ms": 500,
  "broker": {"queues": {"work": {"message_ttl_ms": 0.5}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 3600}}, "service_ms": {"exp": {"mean": 1}}}],
  "consumers": [{"queue": "work", "count": 4, "prefetch": 1, "slots": 1, "admission": "none"}]})";

// The evidence asked for: on an exact model, the interval covers the exact value and is as narrow
// as asked.
TEST_CASE("precision: run --precision 0.02 on M/M/1+D covers the exact P(abandon) within 2%") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", kMMcD);
  const brokersim::Scenario s = brokersim::load_scenario_file(f, {});
  const brokersim::AnalyticFit fit = brokersim::fit_analytic(s);
  REQUIRE(fit.name == "M/M/c+D");
  const double exact = brokersim::analytic_values(fit).p_abandon;
  CHECK(exact == doctest::Approx(0.34396).epsilon(1e-4));
  const auto r = run_cli({"run", f, "--precision", "0.02", "--precision-metric", "fraction.expired_in_queue",
                          "--precision-metric", "throughput_per_s", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["precision"]["reached"] == true);
  const double mean = j["metrics"]["fraction.expired_in_queue"]["mean"], hw = j["metrics"]["fraction.expired_in_queue"]["ci95"];
  CHECK(hw <= 0.02 * mean);
  CHECK(std::fabs(mean - exact) <= hw);
  const int used = j["replications"];
  CHECK(used >= 3);
  // The stopping point is the fixed-R run of the same replications, number for number.
  const auto fixed = run_cli({"sweep", f, "--vary", "consumers.0.count=1", "--replications", std::to_string(used)});
  REQUIRE(fixed.status == 0);
  const auto header = brokersim::test::split_csv_line(brokersim::test::lines_of(fixed.out)[0]);
  const auto row = brokersim::test::split_csv_line(brokersim::test::lines_of(fixed.out)[1]);
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == "fraction.expired_in_queue_mean") CHECK(std::stod(row[i]) == mean);
}

TEST_CASE("precision: sweep --precision rows are identical for any thread count and shard split") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", kMMcD);
  const std::vector<std::string> base{"sweep", f, "--vary", "broker.queues.work.message_ttl_ms=0.2,0.5,2",
                                      "--set", "stop.time_ms=4000", "--precision", "0.02",
                                      "--precision-metric", "fraction.expired_in_queue", "--max-replications", "30"};
  auto one = base, two = base;
  one.insert(one.end(), {"--threads", "1"});
  two.insert(two.end(), {"--threads", "2"});
  const auto a = run_cli(one), b = run_cli(two);
  REQUIRE_MESSAGE(a.status == 0, a.err);
  CHECK(a.out == b.out);
  // The replications column holds the count each point used: the first stage (10) at least, the
  // maximum (30) at most.
  const auto lines = brokersim::test::lines_of(a.out);
  REQUIRE(lines.size() == 4);
  std::vector<std::string> used;
  for (std::size_t i = 1; i < lines.size(); ++i) used.push_back(brokersim::test::split_csv_line(lines[i])[1]);
  for (const auto& u : used) CHECK((std::stoi(u) >= 10 && std::stoi(u) <= 30));
  // Shards, merged: the bytes of one run.
  std::vector<std::string> shards;
  for (int k = 0; k < 2; ++k) {
    auto args = base;
    const std::string out = d.path("shard" + std::to_string(k) + ".csv");
    args.insert(args.end(), {"--shard", std::to_string(k) + "/2", "--out", out});
    REQUIRE(run_cli(args).status == 0);
    shards.push_back(out);
  }
  const auto merged = run_cli({"merge", shards[0], shards[1], "--out", d.path("all.csv")});
  REQUIRE_MESSAGE(merged.status == 0, merged.err);
  CHECK(brokersim::test::read_file(d.path("all.csv")) == a.out);
  const auto meta = nlohmann::json::parse(brokersim::test::read_file(d.path("all.csv.meta.json")));
  CHECK(meta["precision"]["rel"] == 0.02);
  // Without --replications the first stage is 10, as the help and the README say (it was 3).
  CHECK(meta["precision"]["first_stage"] == 10);
}

TEST_CASE("precision: warmup_ms auto on M/M/20 at rho 0.95 started empty keeps what reaches the exact mean") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", kMMcHeavy);
  // Started empty, the ensemble mean queue length (40 replications, measured once) passes Erlang
  // C's 14.35 between 4 and 8 s and then stays around it. The start-up bias is smaller than one
  // run's own fluctuation at this load, so MSER-5 on the sojourn cuts little (0 in most runs, the
  // rule: truncate only where the bias exceeds the noise). The rule tested: every replication's
  // warm-up lies within the first half of the run, and the mean queue length measured after it,
  // over 8 replications, covers the exact 14.35 with its 95% interval.
  const auto sweep = run_cli({"sweep", f, "--vary", "consumers.0.count=20", "--replications", "8"});
  REQUIRE_MESSAGE(sweep.status == 0, sweep.err);
  const auto row = csv_row(sweep.out, 0);
  const double mean = std::stod(row.at("queues.work.mean_ready_mean")), hw = std::stod(row.at("queues.work.mean_ready_ci95"));
  CHECK(std::fabs(mean - 14.3526) <= hw);
  // One replication: the warm-up reported, and the figures are the same run counted from there
  // (run.warmup_ms equals an explicit warmup_ms of that value).
  const auto r = run_cli({"run", f, "--json", "--replication", "1"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const double w = j["run"]["warmup_ms"];
  CHECK(w > 0);
  CHECK(w < 30000);
  CHECK(j["run"]["steady_state"] == true);
  const auto same = run_cli({"run", f, "--json", "--replication", "1", "--set", "warmup_ms=" + brokersim::format_number(w)});
  REQUIRE(same.status == 0);
  const auto k = nlohmann::json::parse(same.out);
  CHECK(k["queues"]["work"]["mean_ready"] == j["queues"]["work"]["mean_ready"]);
  CHECK(k["outcomes"] == j["outcomes"]);
  CHECK_FALSE(k["run"].contains("warmup_ms"));  // only "auto" adds the key: other runs are as before
  // rho 1.3: the queue grows to the end, no warm-up makes it steady, and the summary says so.
  const auto over = run_cli({"run", f, "--set", "producers.0.arrivals.poisson.rate_per_s=260"});
  REQUIRE(over.status == 0);
  CHECK(over.out.find("Warm-up chosen by MSER-5 on the sojourn of each job, averaged over 10 pilot replications") != std::string::npos);
  CHECK(over.out.find("WARNING: no steady state was reached in this run") != std::string::npos);
  const auto over_json = nlohmann::json::parse(
      run_cli({"run", f, "--json", "--set", "producers.0.arrivals.poisson.rate_per_s=260"}).out);
  CHECK(over_json["run"]["steady_state"] == false);
}

TEST_CASE("precision: warmup_ms auto cuts an outage backlog where it has drained") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", outage_scenario().dump());
  // The rule tested: the warm-up lies within 5 s before to 10 s after the fluid drain time (40 s)
  // in each of 4 replications, and over 8 the mean queue length after it covers Erlang C's 0.4813
  // (with no warm-up the backlog makes it more than ten times that).
  for (int rep = 0; rep < 4; ++rep) {
    const auto r = run_cli({"run", f, "--json", "--replication", std::to_string(rep)});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["run"]["warmup_ms"].get<double>() >= 35000);
    CHECK(j["run"]["warmup_ms"].get<double>() <= 50000);
    CHECK(j["run"]["steady_state"] == true);
  }
  const auto with = csv_row(run_cli({"sweep", f, "--vary", "consumers.0.count=20", "--replications", "8"}).out, 0);
  CHECK(std::fabs(std::stod(with.at("queues.work.mean_ready_mean")) - 0.4813) <= std::stod(with.at("queues.work.mean_ready_ci95")));
  const auto without = csv_row(
      run_cli({"sweep", f, "--vary", "consumers.0.count=20", "--replications", "8", "--set", "warmup_ms=0"}).out, 0);
  CHECK(std::stod(without.at("queues.work.mean_ready_mean")) > 10 * 0.4813);
}

TEST_CASE("precision: plan --precision accepts and rejects at the bound and reports undecided settings") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", kMMcD);
  // P(abandon) falls with the TTL: 0.2 ms misses 0.30 clearly, 2 ms meets it clearly, and at
  // 0.5 ms (0.344) a target of 0.345 straddles the interval for any affordable replication count.
  const std::vector<std::string> base{"plan", f, "--set", "stop.time_ms=4000", "--vary",
                                      "broker.queues.work.message_ttl_ms=0.2,0.5,2", "--bisect", "none", "--json",
                                      "--cost", "broker.queues.work.message_ttl_ms", "--precision", "0.01",
                                      "--max-replications", "9"};
  auto clear = base;
  clear.insert(clear.end(), {"--target", "fraction.expired_in_queue<=0.30"});
  const auto a = run_cli(clear);
  REQUIRE_MESSAGE(a.status == 0, a.err);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["best"]["setting"]["broker.queues.work.message_ttl_ms"] == 2);
  std::uint64_t sum = 0;
  for (const auto& t : j["tried"]) sum += t["replications"].get<std::uint64_t>();
  CHECK(j["replications_run"] == sum);
  CHECK(j["tried"][0]["replications"] == 9);  // 0.2 ms: rejected at its bound after the first stage (9: the maximum)
  CHECK(j["tried"][0]["meets"] == false);
  CHECK(j["tried"][0]["undecided"] == false);

  auto close = base;
  close.insert(close.end(), {"--target", "fraction.expired_in_queue<=0.345", "--precision-abs", "0"});
  const auto b = run_cli(close);
  const auto k = nlohmann::json::parse(b.out);
  REQUIRE(k["tried"].size() >= 2);
  CHECK(k["tried"][1]["setting"]["broker.queues.work.message_ttl_ms"] == 0.5);
  CHECK(k["tried"][1]["undecided"] == true);
  CHECK(k["tried"][1]["meets"] == false);
  CHECK(k["tried"][1]["replications"] == 9);
  CHECK(k["undecided"] == nlohmann::json::array({1}));
  // The text report says so.
  close.erase(std::find(close.begin(), close.end(), "--json"));
  const auto t = run_cli(close);
  CHECK(t.out.find("undecided") != std::string::npos);
  CHECK(t.out.find("replications in all") != std::string::npos);
}

TEST_CASE("precision: analytic --validate --precision states each point's replications") {
  const auto r = run_cli({"analytic", "--validate", "--jobs", "1000", "--precision", "0.2", "--max-replications", "4"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("until every compared metric's 95% half-width is within 20% of its mean") != std::string::npos);
  int rows = 0;
  for (const auto& line : brokersim::test::lines_of(r.out)) {
    if (line.rfind("| M/M", 0) != 0 && line.rfind("| Erlang", 0) != 0 && line.rfind("| prefetch", 0) != 0) continue;
    ++rows;
    const std::string last = line.substr(line.rfind('|', line.size() - 2) + 1);
    const int used = std::stoi(last);
    CHECK((used >= 3 && used <= 4));
  }
  CHECK(rows > 20);
}

// A 95% interval misses the exact value one time in twenty, and a sequential rule, which stops
// when the spread of the first replications happens to look small, misses somewhat more often
// (measured over 60 seeds of this point: 88% coverage starting at 3 replications, 92% at 10). So
// over 20 seeds: every interval is within 2%, and at least 16 cover the exact value (with true
// coverage 0.88, 15 or fewer would happen with probability about 0.1; the seeds are fixed, so the
// test is deterministic).
TEST_CASE("precision: run --precision 0.02 on M/M/4+D - intervals within 2% cover the exact P(abandon) as a sequential rule does") {
  ScratchDir d("brokersim-precision");
  const std::string f = d.write("s.json", kMM4D);
  const brokersim::AnalyticFit fit = brokersim::fit_analytic(brokersim::load_scenario_file(f, {}));
  REQUIRE(fit.name == "M/M/c+D");
  const double exact = brokersim::analytic_values(fit).p_abandon;
  int covered = 0;
  for (int seed = 1; seed <= 20; ++seed) {
    const auto r = run_cli({"run", f, "--seed", std::to_string(seed), "--precision", "0.02", "--precision-metric",
                            "fraction.expired_in_queue", "--json"});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["precision"]["reached"] == true);
    const double mean = j["metrics"]["fraction.expired_in_queue"]["mean"], hw = j["metrics"]["fraction.expired_in_queue"]["ci95"];
    CHECK(hw <= 0.02 * mean);
    if (std::fabs(mean - exact) <= hw) ++covered;
  }
  CAPTURE(exact);
  CHECK(covered >= 16);
}

TEST_CASE("precision: run --precision says NOT reached when --max-replications stops it short") {
  // Stein's rule would need far more than 5 replications for 0.01% of the throughput: the count it
  // needs is capped at the maximum, and the run must still say the precision was not reached.
  ScratchDir d("brokersim-precision-short");
  const std::string f = d.write("s.json", kMMcD);
  const auto r = run_cli({"run", f, "--precision", "0.0001", "--max-replications", "5", "--precision-metric",
                          "throughput_per_s", "--json"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["replications"] == 5);
  CHECK(j["precision"]["reached"] == false);
  CHECK(j["metrics"]["throughput_per_s"]["ci95"].get<double>() > 0.0001 * j["metrics"]["throughput_per_s"]["mean"].get<double>());
  CHECK(r.err.find("warning: the precision asked was not reached") != std::string::npos);
}
