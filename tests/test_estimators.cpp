// Issue 20: estimators without bias and intervals that cover. A timed run follows the jobs created
// in its span past stop.time_ms; rates count completions inside the span; levels are time averages
// of every message. Checked exactly on small deterministic scenarios, and statistically on an
// exact model (M/M/4+D) at 10,000 replications, where the old estimators were measurably biased.
#include <cmath>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "experiments/cli/analytic/fit.hpp"
#include "experiments/cli/analytic/values.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "test_util.hpp"

using brokersim::Outcome;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;
using brokersim::test::ScratchDir;

namespace {

// One consumer, one slot; jobs at 0, 1 s and 2 s of 1.5 s each; the run stops at 3 s.
// Job 0 runs 0-1.5 s, job 1 1.5-3 s, job 2 3-4.5 s: it is in service at the stop.
constexpr const char* kThreeJobs = R"({"name": "follow", "seed": 1, "stop": {"time_ms": 3000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 1000}}, "service_ms": 1500}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1, "admission": "none"}]})";

}  // namespace

TEST_CASE("estimators: a timed run follows the jobs created in its span until they leave") {
  const auto run = run_scenario(kThreeJobs);
  const auto& r = run.result;
  // Jobs at 0, 1, 2 and 3 s are in the span (3 s is its last instant); the job at 3 s waits for
  // job 2 and runs 4.5-6 s: the run follows until 6 s.
  CHECK(r.generated == 4);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 4);
  CHECK(run.outcome(Outcome::InSystem) == 0);
  CHECK(r.followed == sim::from_ms(3000));
  const auto j = run.json();
  CHECK(j["run"]["followed_ms"] == 3000.0);
  CHECK(j["run"]["simulated_ms"] == 3000.0);  // the span, not the follow-up
  CHECK(j["run"]["measured_s"] == 3.0);
  // Throughput: completions inside the span (1.5 s and 3 s), not the span's jobs: 2 / 3 s.
  CHECK(j["throughput_per_s"] == doctest::Approx(2.0 / 3.0));
  // The sojourn of every job is measured, the followed ones' included: 1.5, 2, 2.5, 3 s.
  CHECK(j["wait_ms"]["sojourn"]["count"] == 4);
  CHECK(j["wait_ms"]["sojourn"]["max"] == doctest::Approx(3000).epsilon(0.01));
  // Jobs the run created while following (at 4 and 5 s) are simulated but in no job figure; the
  // trace marks them like warm-up jobs.
  int outside = 0;
  for (const auto& row : run.trace) outside += row["warmup"] == "1";
  CHECK(outside == static_cast<int>(run.trace.size()) - 4);
  CHECK(outside >= 1);
}

TEST_CASE("estimators: following stops at the horizon, as long again as the span - the rest is in_system") {
  // One slot, a job every second of 10 s each: the backlog at the 4 s stop takes far longer than
  // 4 s to drain.
  const auto run = run_scenario(kThreeJobs, {"stop.time_ms=4000", "producers.0.service_ms=10000"});
  CHECK(run.result.followed == sim::from_ms(4000));
  CHECK(run.outcome(Outcome::InSystem) > 0);
  CHECK(run.result.generated == 5);
}

TEST_CASE("estimators: levels are time averages of every message, from the warm-up's end") {
  // Warm-up 2.5 s: jobs 0-2 are warm-up jobs. Over 2.5-3 s job 1 executes (unacked 1) and job 2
  // waits (ready 1); over 3-4.5 s job 2 executes and job 3 waits... the level counts them all.
  const auto run = run_scenario(kThreeJobs, {"warmup_ms=2500", "stop.time_ms=4000"});
  const auto& q = run.queue("work");
  // Span 2.5-4 s: ready is 1 over 2.5-3 s (job 2), 1 over 3-4 s (job 3 waits for job 2, which
  // started at 3 s), then job 4 at 4 s: mean ready 1; unacked is 1 throughout.
  CHECK(q.mean_ready == doctest::Approx(1.0));
  CHECK(q.mean_unacked == doctest::Approx(1.0));
  CHECK(q.max_ready >= 1);
}

// M/M/4+D as in the issue (lambda 6/s, mu 1/s, c 4, patience 100 ms: rho 1.5) in short runs of
// 30 s after a 20 s warm-up, where dropping the ~4 jobs still in the system at the stop made
// throughput about 4% low. 10,000 replications: each mean must be within its 99% confidence
// interval of the exact value (the 95% half-width x 2.576 / 1.960).
TEST_CASE("estimators: no bias at 10,000 replications on M/M/4+D (throughput, goodput, abandonment, waits, levels)") {
  ScratchDir d("brokersim-estimators");
  const std::string f = d.write("s.json", R"({"name": "mm4d", "seed": 7, "stop": {"time_ms": 50000}, "warmup_ms": 20000,
    "broker": {"queues": {"work": {"message_ttl_ms": 100}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 6}}, "service_ms": {"exp": {"mean": 1000}}}],
    "consumers": [{"queue": "work", "count": 4, "prefetch": 1, "slots": 1, "admission": "none"}]})");
  const brokersim::AnalyticFit fit = brokersim::fit_analytic(brokersim::load_scenario_file(f, {}));
  REQUIRE(fit.name == "M/M/c+D");
  REQUIRE(fit.exact);
  const brokersim::AnalyticValues exact = brokersim::analytic_values(fit);
  CHECK(exact.throughput_per_s == doctest::Approx(3.37693567).epsilon(1e-8));
  const auto r = run_cli({"sweep", f, "--vary", "consumers.0.count=4", "--replications", "10000", "--threads", "2"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto lines = brokersim::test::lines_of(r.out);
  const auto header = brokersim::test::split_csv_line(lines[0]);
  const auto row = brokersim::test::split_csv_line(lines[1]);
  const auto cell = [&](const std::string& name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return std::stod(row[i]);
    FAIL("no column " << name);
    return 0.0;
  };
  const struct {
    const char* metric;
    double exact;
  } checks[] = {
      {"throughput_per_s", exact.throughput_per_s},
      {"goodput_per_s", exact.throughput_per_s},  // no deadline: every completion is on time
      {"fraction.expired_in_queue", exact.p_abandon},
      {"wait_ms.queue.mean", exact.mean_wait_served_s * 1000},
      {"queues.work.mean_ready", exact.mean_ready},
      {"queues.work.mean_unacked", exact.mean_unacked},
      {"slot_utilization", exact.utilization},
  };
  for (const auto& c : checks) {
    const double mean = cell(std::string(c.metric) + "_mean"), hw99 = cell(std::string(c.metric) + "_ci95") * 2.576 / 1.960;
    CAPTURE(c.metric);
    CAPTURE(mean);
    CAPTURE(c.exact);
    CAPTURE(hw99);
    CHECK(std::fabs(mean - c.exact) <= hw99);
    CHECK(hw99 < 0.01 * c.exact);  // and the test is sharp: the interval is within 1%
  }
}

// Stein's rule covers at its nominal level: analytic --coverage over 60 seeds of the issue's
// M/M/4+D point (runs of ~1,000 jobs, --precision 0.05). With true coverage 0.95 the count of
// covering seeds per metric is Binomial(60, 0.95); 52 or fewer has probability 0.035. The seeds are
// fixed, so the test is deterministic; the README has the 200-seed table.
TEST_CASE("estimators: analytic --coverage - Stein's intervals cover at 95% on exact models") {
#ifdef BROKERSIM_SANITIZE
  // Under the sanitizers (ten times slower) the code path is what is checked, on the fewest seeds
  // --coverage takes (10); the coverage claim is the optimised build's, on all 60.
  const char* seeds = "10";
#else
  const char* seeds = "60";
#endif
  const auto r = run_cli({"analytic", "--coverage", seeds, "--jobs", "1000", "--precision", "0.05"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  int rows = 0;
  for (const auto& line : brokersim::test::lines_of(r.out)) {
    const auto cells = brokersim::test::split_csv_line(line);
    if (line.rfind("| M/M/", 0) != 0 && line.rfind("| Erlang", 0) != 0) continue;
    // | model | metric | seeds | nominal | measured | CI | mean R |
    std::vector<std::string> parts;
    std::string part;
    for (char ch : line) {
      if (ch == '|') {
        parts.push_back(part);
        part.clear();
      } else {
        part += ch;
      }
    }
    REQUIRE(parts.size() >= 6);
    const double measured = std::stod(parts[5]);
    CAPTURE(line);
#ifdef BROKERSIM_SANITIZE
    CHECK(measured >= 0);
    CHECK(measured <= 1);
#else
    CHECK(measured >= 53.0 / 60 - 1e-9);
#endif
    ++rows;
  }
  CHECK(rows >= 20);
}
