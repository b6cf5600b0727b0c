// producers[].volume: days that differ (a per-run multiplier drawn from its own stream, so run r
// of every setting sees the same day) and growth as a what-if (a fixed multiplier any sweep or
// plan can vary). Exact counts on periodic arrivals, a Poisson count within its own spread, the
// draw's common random numbers across settings, run --json, and the loader's refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

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
  CHECK(text.out.find("Headroom: meets every target up to volume x1.20 (+20%); misses at x1.25") != std::string::npos);
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
