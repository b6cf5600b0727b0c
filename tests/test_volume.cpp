// producers[].volume: days that differ (a per-run multiplier drawn from its own stream, so run r
// of every setting sees the same day) and growth as a what-if (a fixed multiplier any sweep or
// plan can vary). Exact counts on periodic arrivals, a Poisson count within its own spread, the
// draw's common random numbers across settings, run --json, and the loader's refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/plan/headroom.hpp"
#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

// One job every 100 ms until the run stops at 10 s (jobs at 0, 100, ..., 10,000 ms: 101 of them).
constexpr const char* kVolumeEvery100 = R"({"stop": {"time_ms": 10000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 100}}, "service_ms": 1}],
  "consumers": [{"queue": "work", "prefetch": 1, "count": 2}]})";

constexpr const char* kVolumePoisson = R"({"stop": {"time_ms": 500000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}}, "service_ms": 1}],
  "consumers": [{"queue": "work", "prefetch": 1, "count": 4}]})";

// Run `replication` of the scenario with `sets`: what the producer's draw was.
brokersim::RunResult volume_run(const std::vector<std::string>& sets, std::uint64_t replication) {
  nlohmann::json doc = brokersim::parse_json_text(kVolumeEvery100, "test");
  for (const auto& s : sets) brokersim::apply_set(doc, s);
  brokersim::Scenario s = brokersim::load_scenario(doc, ".");
  s.replication = replication;
  return brokersim::simulate(s, {});
}

}  // namespace

TEST_CASE("volume multiplier scales periodic arrivals exactly") {
  CHECK(run_scenario(kVolumeEvery100).result.generated == 101);
  CHECK(run_scenario(kVolumeEvery100, {"producers.0.volume={\"multiplier\": 2}"}).result.generated == 201);
  CHECK(run_scenario(kVolumeEvery100, {"producers.0.volume={\"multiplier\": 0.5}"}).result.generated == 51);
  // A day with no volume creates nothing.
  CHECK(run_scenario(kVolumeEvery100, {"producers.0.volume={\"per_run\": 0}"}).result.generated == 0);
}

TEST_CASE("volume multiplier scales a Poisson rate within the count's spread") {
  // 20/s x 1.5 over 500 s: 15,000 expected, sd sqrt(15,000) = 122; 4 sd either side. Unscaled it
  // would be 10,000, 41 sd away.
  const double n = static_cast<double>(
      run_scenario(kVolumePoisson, {"producers.0.volume={\"multiplier\": 1.5}"}).result.generated);
  CHECK(std::abs(n - 15000) < 4 * std::sqrt(15000.0));
}

TEST_CASE("volume per_run draws one multiplier a run from its own stream - the same day for every setting") {
  const std::string volume = "producers.0.volume={\"per_run\": {\"uniform\": {\"min\": 0.5, \"max\": 1.5}}, \"multiplier\": 2}";
  std::vector<double> days;
  for (std::uint64_t r = 0; r < 4; ++r) {
    const auto a = volume_run({volume}, r);
    REQUIRE(a.volumes.size() == 1);
    const double m = a.volumes[0];
    CHECK(m >= 1.0);  // 2 x [0.5, 1.5]
    CHECK(m <= 3.0);
    // Periodic every 100 ms / m (rounded to the ns) until 10 s: the jobs at 0, 100 / m, ... up to 10,000 ms.
    const auto every_ns = static_cast<std::uint64_t>(std::llround(1e8 / m));
    CHECK(a.generated == 10'000'000'000ull / every_ns + 1);
    // Another consumer setting: the same day (common random numbers across a sweep).
    const auto b = volume_run({volume, "consumers.0.count=5", "consumers.0.prefetch=3"}, r);
    CHECK(b.volumes.at(0) == m);
    CHECK(b.generated == a.generated);
    days.push_back(m);
  }
  // Four replications, four days.
  for (std::size_t i = 1; i < days.size(); ++i) CHECK(days[i] != days[0]);
}

TEST_CASE("volume in run --json only where producers give it") {
  CHECK(!run_scenario(kVolumeEvery100).json().contains("producers"));
  const auto j = run_scenario(kVolumeEvery100, {"producers.0.volume={\"multiplier\": 2}"}).json();
  REQUIRE(j.contains("producers"));
  CHECK(j["producers"]["0"]["volume"] == 2.0);
}

TEST_CASE("volume refusals name the key and what it expects") {
  CHECK(load_error(kVolumeEvery100, {"producers.0.volume={\"multiplier\": 0}"}) ==
        "producers.0.volume.multiplier: expected a number > 0 and at most 1e6, got 0");
  CHECK(load_error(kVolumeEvery100, {"producers.0.volume={\"days\": 3}"}).starts_with("producers.0.volume.days: unknown key"));
  CHECK(load_error(kVolumeEvery100, {"producers.0.volume=2"}) ==
        "producers.0.volume: expected an object {\"multiplier\": x, \"per_run\": distribution}, got 2");
  // Arrivals at given times cannot be scaled: the error says how to vary them.
  CHECK(load_error(kVolumeEvery100, {"producers.0.arrivals={\"at_ms\": [0, 5]}", "producers.0.volume={\"multiplier\": 2}"})
            .starts_with("producers.0.volume: expected no volume with arrivals at_ms"));
  CHECK(load_error(kVolumeEvery100, {"producers.0.volume={\"multiplier\": 1}"}) == "(no error)");
}

namespace {

// Ten jobs a second, 250 ms each, a 1 s deadline, three single-slot consumers: capacity 12 a
// second. Deterministic: every look at a volume is exact.
constexpr const char* kVolumeHeadroom = R"({"stop": {"time_ms": 60000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 100}}, "service_ms": 250, "deadline_ms": 1000}],
  "consumers": [{"queue": "work", "prefetch": 1, "count": 3}]})";

}  // namespace

TEST_CASE("plan --headroom bisects the volume the chosen setting still carries") {
  brokersim::test::ScratchDir dir("volume-headroom");
  const std::string file = dir.write("headroom.json", kVolumeHeadroom);
  const auto plan = brokersim::test::run_cli({"plan", file, "--vary", "consumers.0.count=3", "--target",
                                              "fraction.completed_on_time>=1", "--replications", "1", "--headroom", "--json"});
  REQUIRE_MESSAGE(plan.status == 0, plan.err);
  const auto j = nlohmann::json::parse(plan.out);
  // x1.20 is 12 a second, exactly the capacity: every job on time. At x1.25 the backlog grows by
  // half a job a second and jobs miss their deadline within the minute.
  CHECK(j["headroom"]["available"] == true);
  CHECK(j["headroom"]["meets_up_to"].get<double>() == doctest::Approx(1.20));
  CHECK(j["headroom"]["misses_at"].get<double>() == doctest::Approx(1.25));
  CHECK(j["headroom"]["runs"].get<int>() == static_cast<int>(j["headroom"]["judged"].size()));
  // Without per_run the runs are copies of one day, and plan says so.
  CHECK(j["risk"]["runs_cover"]["days_vary"] == false);
  const auto text = brokersim::test::run_cli({"plan", file, "--vary", "consumers.0.count=3", "--target",
                                              "fraction.completed_on_time>=1", "--replications", "1", "--headroom"});
  CHECK(text.out.find("Headroom: meets every target up to volume x1.20 (+20%); shown to miss at x1.25, where target 1 "
                      "(fraction.completed_on_time>=1) missed on the runs' means (every producer's volume scaled") != std::string::npos);
  CHECK(j["headroom"]["misses_at_verdict"] == "shown_to_miss");
  CHECK(j["headroom"]["misses_at_why"] == "target 1 (fraction.completed_on_time>=1) missed on the runs' means");
  CHECK(j["headroom"]["judged"][0]["verdict"] == "shown_to_miss");  // x4.00, looked at first
  CHECK(text.out.find("Runs are copies of one day") != std::string::npos);
  // With a volume that varies from run to run, plan names it.
  const auto days = brokersim::test::run_cli({"plan", file, "--set", "producers.0.volume={\"per_run\": {\"lognormal\": {\"mean\": 1, \"cv\": 0.1}}}",
                                              "--vary", "consumers.0.count=3:6:1", "--target", "fraction.completed_on_time>=0.9",
                                              "--replications", "3", "--json"});
  REQUIRE_MESSAGE(days.status == 0, days.err);
  const auto d = nlohmann::json::parse(days.out)["risk"]["runs_cover"];
  CHECK(d["days_vary"] == true);
  CHECK(d["volumes"][0]["volume_cv"].get<double>() == doctest::Approx(0.1));
}

namespace {

// One target's judgement as judge_point leaves it for a setting that did not meet it.
brokersim::PointResult headroom_short_of(double margin, std::uint64_t runs_met, std::uint64_t runs) {
  brokersim::PointResult r;
  r.meets = false;
  r.holds = {false};
  r.margin = {margin};
  r.runs_met = {runs_met};
  r.runs_judged = {runs};
  r.replications = runs;
  return r;
}

}  // namespace

TEST_CASE("plan --headroom says whether a look was shown to miss or only not shown to meet") {
  using brokersim::LookVerdict;
  const std::vector<brokersim::Target> mean{brokersim::parse_target("fraction.expired_before_start<=0.01")};
  // On the means: a mean past the threshold is a miss; a mean inside it whose bound is not
  // (--conservative) is no meet.
  auto look = brokersim::look_verdict(1.25, headroom_short_of(-0.002, 0, 10), mean, false);
  CHECK(look.verdict == LookVerdict::ShownToMiss);
  CHECK(look.why == "target 1 (fraction.expired_before_start<=0.01) missed on the runs' means");
  look = brokersim::look_verdict(1.25, headroom_short_of(0.002, 0, 10), mean, false);
  CHECK(look.verdict == LookVerdict::NotShownToMeet);
  CHECK(look.why == "target 1 (fraction.expired_before_start<=0.01) met on the runs' means but not at its confidence bound");
  // Over runs: 58 of 59 is above 95% but its Clopper-Pearson bound is not; 55 of 59 is below.
  const std::vector<brokersim::Target> runs{brokersim::parse_target("wait_ms.queue.p99<=2000 in 95% of runs")};
  look = brokersim::look_verdict(1.25, headroom_short_of(-5, 58, 59), runs, false);
  CHECK(look.verdict == LookVerdict::NotShownToMeet);
  CHECK(look.why == "target 1 (wait_ms.queue.p99<=2000 in 95% of runs) met in 58 of 59 runs but not at its confidence bound");
  look = brokersim::look_verdict(1.25, headroom_short_of(-5, 55, 59), runs, false);
  CHECK(look.verdict == LookVerdict::ShownToMiss);
  CHECK(look.why == "target 1 (wait_ms.queue.p99<=2000 in 95% of runs) missed in 55 of 59 runs");
  // --precision: decided at the bound towards passing is a miss; a straddling interval is no meet.
  auto undecided = headroom_short_of(-0.002, 0, 40);
  undecided.decided = {false};
  look = brokersim::look_verdict(1.25, undecided, mean, true);
  CHECK(look.verdict == LookVerdict::NotShownToMeet);
  CHECK(look.why == "target 1 (fraction.expired_before_start<=0.01) undecided after 40 runs (its interval still straddles it)");
  auto decided = undecided;
  decided.decided = {true};
  look = brokersim::look_verdict(1.25, decided, mean, true);
  CHECK(look.verdict == LookVerdict::ShownToMiss);
  CHECK(look.why == "target 1 (fraction.expired_before_start<=0.01) missed at its confidence bound after 40 runs");
  // Runs stopped at a limit show nothing.
  auto stopped = headroom_short_of(-0.002, 0, 10);
  stopped.incomplete = 3;
  look = brokersim::look_verdict(1.25, stopped, mean, false);
  CHECK(look.verdict == LookVerdict::NotShownToMeet);
  CHECK(look.why == "3 of its runs stopped at a limit or measured nothing");
  // The text names which.
  brokersim::Headroom h;
  h.meets_up_to = 1.2;
  h.misses_at = brokersim::look_verdict(1.25, headroom_short_of(0.002, 0, 10), mean, false);
  CHECK(brokersim::headroom_text(h).starts_with(
      "Headroom: meets every target up to volume x1.20 (+20%); not shown to meet at x1.25, where target 1 "
      "(fraction.expired_before_start<=0.01) met on the runs' means but not at its confidence bound ("));
}

TEST_CASE("plan --headroom on replayed days names days_csv, the key the scenario has") {
  brokersim::test::ScratchDir dir("volume-headroom-days");
  dir.write("days.csv", "publish_ms\n0\n100\n86400000\n86400100\n");
  const std::string file = dir.write("days.json", R"({"stop": {"time_ms": 1000},
    "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"days_csv": "days.csv"}, "service_ms": 10}],
    "consumers": [{"queue": "work", "prefetch": 1}]})");
  const std::vector<std::string> args = {"plan", file, "--vary", "consumers.0.count=1", "--target",
                                         "fraction.completed_on_time>=0.5", "--replications", "2", "--headroom"};
  const auto text = brokersim::test::run_cli(args);
  REQUIRE_MESSAGE(text.status == 0, text.err);
  const std::string reason =
      "producers.0 replays whole days of a trace (days_csv), each run one day at its own volume, which no volume "
      "multiplier scales: for headroom, plan with a rate_schedule and a volume.per_run in its place (fit --days writes both)";
  CHECK(text.out.find("Headroom: not available: " + reason + "\n") != std::string::npos);
  auto json_args = args;
  json_args.push_back("--json");
  const auto j = nlohmann::json::parse(brokersim::test::run_cli(json_args).out);
  CHECK(j["headroom"]["available"] == false);
  CHECK(j["headroom"]["reason"] == reason);
  // Fixed times and a trace still name their own keys.
  CHECK(brokersim::unscalable_volume(brokersim::test::run_scenario(R"({"stop": {"time_ms": 10}, "broker": {"queues": {"w": {}}},
    "producers": [{"queue": "w", "arrivals": {"at_ms": [0]}, "service_ms": 1}], "consumers": [{"queue": "w"}]})").scenario, 0) ==
        "producers.0 has arrivals at given times (at_ms), which no volume scales");
}
