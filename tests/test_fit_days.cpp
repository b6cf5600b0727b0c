// fit over several days (issue 42): each whole day's volume and busiest hour, partial days left
// out, the day-to-day spread as a lognormal cv with a chi-square interval that covers at its
// nominal level, and the report's lines with one day and with several.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "experiments/cli/fit/days.hpp"
#include "sim/rng.hpp"
#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::fit::DayFit;
using brokersim::fit::fit_days;
using brokersim::fit::kDayNs;

namespace {

constexpr std::int64_t kHour = 3'600'000'000'000LL;

// `volumes[d]` jobs on day d (from midnight of day `first`), evenly spread over the day; the log
// covers [first day + offset, end of the last day - offset].
std::vector<std::int64_t> day_times(const std::vector<std::size_t>& volumes, std::int64_t first) {
  std::vector<std::int64_t> t;
  for (std::size_t d = 0; d < volumes.size(); ++d)
    for (std::size_t j = 0; j < volumes[d]; ++j)
      t.push_back(first + static_cast<std::int64_t>(d) * kDayNs +
                  static_cast<std::int64_t>((static_cast<double>(j) + 0.5) * static_cast<double>(kDayNs) / static_cast<double>(volumes[d])));
  return t;
}

}  // namespace

TEST_CASE("fit days: each whole day's jobs and busiest hour, and partial days left out") {
  const std::int64_t first = 20'000 * kDayNs;  // a midnight
  std::vector<std::int64_t> t = day_times({240, 480, 720}, first);
  // Three jobs in one hour of the second day: its busiest hour has 20 + 3 of them.
  for (int i = 0; i < 3; ++i) t.push_back(first + kDayNs + 5 * kHour + i);
  // A fourth day the log covers for two hours only.
  t.push_back(first + 3 * kDayNs + kHour);
  std::sort(t.begin(), t.end());
  const DayFit d = fit_days(t, first, first + 3 * kDayNs + 2 * kHour);
  REQUIRE(d.days.size() == 3);
  CHECK(d.partial == 1);
  CHECK(d.days[0].start == first);
  CHECK(d.days[0].jobs == 240);
  CHECK(d.days[1].jobs == 483);
  CHECK(d.days[2].jobs == 720);
  CHECK(d.days[0].peak_per_s == doctest::Approx(10.0 / 3600));
  CHECK(d.days[1].peak_per_s == doctest::Approx(23.0 / 3600));
  CHECK(d.mean_jobs == doctest::Approx((240.0 + 483 + 720) / 3));
  // The lognormal cv from the logs' sample variance.
  const double l[] = {std::log(240.0), std::log(483.0), std::log(720.0)};
  const double m = (l[0] + l[1] + l[2]) / 3;
  const double s2 = ((l[0] - m) * (l[0] - m) + (l[1] - m) * (l[1] - m) + (l[2] - m) * (l[2] - m)) / 2;
  CHECK(d.lognormal);
  CHECK(d.cv == doctest::Approx(std::sqrt(std::expm1(s2))));
  CHECK(d.cv_lo < d.cv);
  CHECK(d.cv_hi > d.cv);
  // A log starting 20 minutes after midnight still has that day whole (23 h 40 min of it).
  const DayFit late = fit_days(t, first + 20 * 60'000'000'000LL, first + 3 * kDayNs);
  CHECK(late.days.size() == 3);
}

TEST_CASE("fit days: one day cannot give a spread, and a day without jobs is not lognormal") {
  const std::int64_t first = 100 * kDayNs;
  const DayFit one = fit_days(day_times({500}, first), first, first + kDayNs - 1);
  CHECK(one.days.size() == 1);
  CHECK_FALSE(one.estimable());
  const DayFit gap = fit_days(day_times({500, 0, 700}, first), first, first + 3 * kDayNs - 1);
  REQUIRE(gap.days.size() == 3);
  CHECK(gap.days[1].jobs == 0);
  CHECK(gap.estimable());
  CHECK_FALSE(gap.lognormal);
  CHECK(gap.sample_cv > 0);
}

TEST_CASE("fit days: the cv's 95% interval covers the true spread at its nominal level") {
  // 400 logs of 10 days whose volumes are lognormal with cv 0.15 (mean 2,000 a day): the interval
  // covers 0.15 in 95% of them; 4 binomial sd (0.011) either side.
  sim::Rng rng(7, 0, "test.fit_days");
  const double sigma2 = std::log1p(0.15 * 0.15);
  int covered = 0;
  constexpr int kLogs = 400;
  for (int k = 0; k < kLogs; ++k) {
    std::vector<std::size_t> v;
    for (int d = 0; d < 10; ++d) v.push_back(static_cast<std::size_t>(std::lround(2000 * std::exp(std::sqrt(sigma2) * rng.standard_normal() - sigma2 / 2))));
    const std::int64_t first = 1000 * kDayNs;
    const DayFit f = fit_days(day_times(v, first), first, first + 10 * kDayNs - 1);
    covered += f.cv_lo <= 0.15 && 0.15 <= f.cv_hi;
  }
  const double rate = static_cast<double>(covered) / kLogs;
  CHECK(rate >= 0.95 - 4 * 0.011);
  CHECK(rate <= 0.95 + 4 * 0.011);
}

TEST_CASE("fit command: the Days lines for a log of several days and for one day") {
  brokersim::test::ScratchDir dir("fit-days");
  std::string several = "enqueued_at,started_at,finished_at\n";
  const long long midnight = 1'780'012'800;  // 2026-05-29T00:00:00Z
  for (int day = 0; day < 4; ++day)
    for (int j = 0; j < 100 + 50 * day; ++j) {
      const double t = static_cast<double>(midnight + day * 86400LL) + (j + 0.5) * 86400.0 / (100 + 50 * day);
      several += std::to_string(t) + "," + std::to_string(t + 1) + "," + std::to_string(t + 2) + "\n";
    }
  const auto r = brokersim::test::run_cli({"fit", dir.write("days.csv", several)});
  REQUIRE(r.status == 0);
  CHECK(r.out.find("  Days: 4 whole days, 175 jobs a day on average; day-to-day spread of the volume: cv ") != std::string::npos);
  CHECK(r.out.find("    day from 1780012800.000 s: 100 jobs, busiest hour ") != std::string::npos);
  CHECK(r.out.find("    --set 'producers.0.volume={\"per_run\": {\"lognormal\": {\"mean\": 1, \"cv\": ") != std::string::npos);
  std::string hour = "enqueued_at,started_at,finished_at\n";
  for (int j = 0; j < 100; ++j) hour += std::to_string(midnight + j * 36) + "," + std::to_string(midnight + j * 36 + 1) + "," + std::to_string(midnight + j * 36 + 2) + "\n";
  const auto one = brokersim::test::run_cli({"fit", dir.write("hour.csv", hour)});
  REQUIRE(one.status == 0);
  CHECK(one.out.find("  Days: 0 whole days in the log (1.0 h): day-to-day variation cannot be estimated from it.") != std::string::npos);
}

TEST_CASE("fit --days writes one mean day with the days' spread - and refuses one day or --check") {
  brokersim::test::ScratchDir dir("fit-days-mode");
  std::string several = "enqueued_at,started_at,finished_at\n";
  const long long midnight = 1'780'012'800;
  // Four days of 100, 150, 200, 250 jobs, evenly spread: the mean day has 175 jobs, 175/86400 a second.
  for (int day = 0; day < 4; ++day)
    for (int j = 0; j < 100 + 50 * day; ++j) {
      const double t = static_cast<double>(midnight + day * 86400LL) + (j + 0.5) * 86400.0 / (100 + 50 * day);
      several += std::to_string(t) + "," + std::to_string(t + 1) + "," + std::to_string(t + 2) + "\n";
    }
  const std::string log = dir.write("days.csv", several);
  const std::string out = dir.path("fitted.json");
  const auto r = brokersim::test::run_cli({"fit", log, "--days", "--out", out});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("  --days: the fitted scenario is one mean day of these 4 (time 0 at midnight, stop at 24 h)") != std::string::npos);
  CHECK(r.out.find("To plan over days that differ like these") == std::string::npos);
  // The Poisson verdict is the mean day's (the scenario written), and no whole-log trace is offered
  // (a trace of every day is not a day, and a volume with it is refused).
  CHECK(r.out.find("    the mean day (--days), counted per ") != std::string::npos);
  CHECK(r.out.find("over the whole log (--days writes the mean day's, below): ") != std::string::npos);
  CHECK(r.out.find("trace_csv") == std::string::npos);
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["stop"]["time_ms"] == 86400000.0);
  const auto& schedule = j["producers"][0]["arrivals"]["rate_schedule"];
  double jobs = 0;
  for (std::size_t k = 0; k < schedule.size(); ++k) {
    const double from = schedule[k]["from_ms"].get<double>(), to = k + 1 < schedule.size() ? schedule[k + 1]["from_ms"].get<double>() : 86400000.0;
    jobs += schedule[k]["rate_per_s"].get<double>() * (to - from) / 1000;
  }
  CHECK(jobs == doctest::Approx(175).epsilon(1e-4));
  const double l[] = {std::log(100.0), std::log(150.0), std::log(200.0), std::log(250.0)};
  const double m = (l[0] + l[1] + l[2] + l[3]) / 4;
  double s2 = 0;
  for (double x : l) s2 += (x - m) * (x - m);
  s2 /= 3;
  CHECK(j["producers"][0]["volume"]["per_run"]["lognormal"]["cv"].get<double>() == doctest::Approx(std::sqrt(std::expm1(s2))).epsilon(1e-5));
  CHECK(j["producers"][0]["volume"]["per_run"]["lognormal"]["mean"] == 1);
  CHECK(j["producers"][0]["volume"]["fitted"]["days"] == 4);
  // A plan over the fitted day says where its spread came from and how well it is known.
  const auto plan = brokersim::test::run_cli({"plan", out, "--vary", "consumers.0.count=1,2", "--target",
                                              "wait_ms.queue.p99<=60000 in 95% of runs", "--replications", "59", "--json"});
  INFO(plan.err);
  const auto pj = nlohmann::json::parse(plan.out);
  const auto& cover = pj["risk"]["runs_cover"];
  CHECK(cover["volumes"][0]["fitted_days"] == 4);
  CHECK(cover["statement"].get<std::string>().find(" as fitted from 4 days (its 95% interval ") != std::string::npos);
  // One day: no spread to fit.
  std::string hour = "enqueued_at,started_at,finished_at\n";
  for (int k = 0; k < 100; ++k) hour += std::to_string(midnight + k * 36) + "," + std::to_string(midnight + k * 36 + 1) + "," + std::to_string(midnight + k * 36 + 2) + "\n";
  const auto one = brokersim::test::run_cli({"fit", dir.write("hour.csv", hour), "--days"});
  CHECK(one.status == 2);
  CHECK(one.err.find("--days: expected a log covering at least 2 whole days (UTC midnight to midnight, 23.5 h of each) in every queue, got 0 whole days") != std::string::npos);
  // A small log's mean day is cut at most into whole days; an interval longer than a day is refused.
  CHECK(r.out.find("intervals of 2d") == std::string::npos);
  const auto week = brokersim::test::run_cli({"fit", log, "--days", "--interval", "7d"});
  CHECK(week.status == 2);
  CHECK(week.err.find("--interval: expected at most 1d with --days (the fitted scenario is one day), got \"7d\"") != std::string::npos);
  const auto check = brokersim::test::run_cli({"fit", log, "--days", "--check", log});
  CHECK(check.status == 2);
  CHECK(check.err.find("--days: expected no --check beside it") != std::string::npos);
}

TEST_CASE("days_csv arrivals replay one whole day a run - drawn from its own stream and reported") {
  brokersim::test::ScratchDir dir("days-csv");
  // Three days of 5, 7 and 9 jobs (publish_ms from the first day's midnight).
  std::string trace = "publish_ms\n";
  const int jobs[] = {5, 7, 9};
  for (int d = 0; d < 3; ++d)
    for (int j = 0; j < jobs[d]; ++j) trace += std::to_string(d * 86'400'000LL + 3'600'000LL * (j + 1)) + "\n";
  dir.write("days.csv", trace);
  const std::string scenario = dir.write("s.json", R"({"stop": {"time_ms": 86400000},
    "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"days_csv": "days.csv"}, "service_ms": 10}],
    "consumers": [{"queue": "q"}]})");
  std::set<int> seen;
  for (std::uint64_t r = 0; r < 30; ++r) {
    brokersim::Scenario s = brokersim::load_scenario_file(scenario, {});
    s.replication = r;
    const brokersim::RunResult run = brokersim::simulate(s, {});
    const int day = static_cast<int>(run.days.at(0));
    REQUIRE(day >= 0);
    REQUIRE(day < 3);
    seen.insert(day);
    // The run is that day: its jobs, at its own times of day.
    CHECK(run.generated == static_cast<std::uint64_t>(jobs[day]));
    // Common random numbers: the same replication with another fleet replays the same day.
    brokersim::Scenario other = brokersim::load_scenario_file(scenario, {"consumers.0.count=3"});
    other.replication = r;
    CHECK(brokersim::simulate(other, {}).days.at(0) == run.days.at(0));
  }
  CHECK(seen.size() == 3);
  const auto j = brokersim::test::run_cli({"run", scenario, "--json"});
  REQUIRE(j.status == 0);
  CHECK(nlohmann::json::parse(j.out)["producers"]["0"].contains("day"));
  // A plan over it says what its runs are: the trace's days, not copies of one.
  const auto plan = brokersim::test::run_cli({"plan", scenario, "--vary", "consumers.0.count=1,2", "--target",
                                              "wait_ms.queue.p99<=1000 in 95% of runs", "--replications", "59"});
  CHECK(plan.out.find("Runs are days drawn from a trace's whole days, each with its own volume and shape (producers.0 3 days, "
                      "arrivals days_csv)") != std::string::npos);
  // A trace of one day has nothing to resample; a volume would rescale given times.
  dir.write("one.csv", "publish_ms\n1000\n2000\n");
  CHECK(brokersim::test::load_error(R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"days_csv": ")" + dir.path("one.csv") + R"("}, "service_ms": 10}]})")
            .find("producers.0.arrivals.days_csv: expected a trace of at least 2 whole days") == 0);
  CHECK(brokersim::test::load_error(R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"days_csv": ")" + dir.path("days.csv") + R"("}, "service_ms": 10,
                   "volume": {"multiplier": 2}}]})")
            .find("producers.0.volume: expected no volume with arrivals days_csv") == 0);
}
