// brokersim fit on a generated log with a known truth, written as a worker pool writes a row per
// attempt: four one-slot workers whose clocks are a few ms off the producer's, FIFO, Poisson
// messages, lognormal service times; attempts that fail at once and are retried (several rows per
// message id), and about 0.3% of rows that fail part-way through (a short partial execution, also
// retried). The fit must bring back the fleet, the per-message rate, the service law, and a
// --check verdict that the true system's scenario agrees with the log.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <queue>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

// A named namespace: the test files are compiled several to a unit.
namespace fit_generated_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

// The truth.
constexpr double kRatePerS = 25;            // messages
constexpr double kSpanS = 1800;
constexpr double kServiceMeanMs = 120, kServiceCv = 0.5;  // lognormal
constexpr int kWorkers = 4;
constexpr double kClockOffsetMs[kWorkers] = {-4.0, -2.0, 1.5, 3.0};  // each worker's clock minus the producer's
constexpr double kRetryAtOnce = 0.08;        // an attempt that fails as it starts (a dependency down) and is retried
constexpr double kFailPartWay = 0.003;       // an attempt that fails part-way (a short partial execution), retried
constexpr double kPartialMeanMs = 3;         // how far into its execution it fails, on average

// xoshiro-free and library-free draws, so the log is the same on every standard library.
class GeneratorRng {
 public:
  explicit GeneratorRng(std::uint64_t seed) : s_(seed) {}
  double uniform() {  // (0, 1)
    s_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = s_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) * 0x1.0p-53;
  }
  double exponential(double mean) { return -mean * std::log(uniform()); }
  double lognormal(double mean, double cv) {
    const double s2 = std::log(1 + cv * cv), mu = std::log(mean) - s2 / 2;
    const double normal = std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform());
    return std::exp(mu + std::sqrt(s2) * normal);
  }

 private:
  std::uint64_t s_;
};

struct GeneratedLog {
  std::string csv;
  std::size_t messages = 0, rows = 0, failed_part_way = 0, retried_at_once = 0;
};

// A FIFO pool of kWorkers one-slot workers, simulated event by event; every attempt is a row.
GeneratedLog generate_log(std::uint64_t seed) {
  GeneratorRng rng(seed);
  GeneratedLog out;
  out.csv = "task_id,enqueued_at,started_at,finished_at,worker,status\n";
  struct Event {
    double t;
    std::uint64_t order;
    int worker;  // -1: an attempt enqueued (message `id`); else that worker is free again
    std::size_t id;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : order > o.order; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t order = 0;
  for (double t = rng.exponential(1 / kRatePerS); t < kSpanS; t += rng.exponential(1 / kRatePerS))
    events.push({t, order++, -1, out.messages++});
  std::deque<std::pair<std::size_t, double>> waiting;  // message, enqueued
  bool busy[kWorkers] = {};
  const auto row = [&](std::size_t id, double enqueued, double started, double finished, int w, const char* status) {
    char buf[200];
    const double offset = kClockOffsetMs[w] / 1000;
    if (finished < 0)
      std::snprintf(buf, sizeof buf, "t%zu,%.6f,%.6f,,w%d,%s\n", id, enqueued, started + offset, w, status);
    else
      std::snprintf(buf, sizeof buf, "t%zu,%.6f,%.6f,%.6f,w%d,%s\n", id, enqueued, started + offset, finished + offset, w, status);
    out.csv += buf;
    ++out.rows;
  };
  while (!events.empty()) {
    const Event e = events.top();
    events.pop();
    if (e.worker < 0) waiting.emplace_back(e.id, e.t);
    else busy[e.worker] = false;
    for (int w = 0; w < kWorkers && !waiting.empty(); ++w) {
      if (busy[w]) continue;
      const auto [id, enqueued] = waiting.front();
      waiting.pop_front();
      const double u = rng.uniform(), service = rng.lognormal(kServiceMeanMs, kServiceCv) / 1000;
      double ends = e.t + service;
      if (u < kRetryAtOnce) {
        row(id, enqueued, e.t, -1, w, "retry");
        ends = e.t;
        ++out.retried_at_once;
      } else if (u < kRetryAtOnce + kFailPartWay) {
        ends = e.t + std::min(service, rng.exponential(kPartialMeanMs / 1000));
        row(id, enqueued, e.t, ends, w, "error");
        ++out.failed_part_way;
      } else {
        row(id, enqueued, e.t, ends, w, "success");
      }
      if (u < kRetryAtOnce + kFailPartWay) events.push({ends, order++, -1, id});  // sent again as it fails
      busy[w] = true;
      events.push({ends, order++, w, 0});
    }
  }
  return out;
}

const char* kTrueScenario = R"({
  "name": "the generated log's system", "seed": 5, "stop": {"time_ms": 1800000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 25}},
                 "service_ms": {"lognormal": {"mean": 120, "cv": 0.5}}}],
  "consumers": [{"queue": "work", "count": 4, "prefetch": 1, "slots": 1}]})";

}  // namespace fit_generated_test

using namespace fit_generated_test;

TEST_SUITE("fit") {
  TEST_CASE("fit generated log: skewed clocks, retried attempts and failed partial executions give back the truth") {
    ScratchDir dir("fit-generated");
    const GeneratedLog g = generate_log(20260101);
    // The log is what the test means: retries by the thousand, partial failures about 0.3% of rows.
    REQUIRE(g.retried_at_once > g.messages / 20);
    const double partial_share = static_cast<double>(g.failed_part_way) / static_cast<double>(g.rows);
    REQUIRE(partial_share > 0.002);
    REQUIRE(partial_share < 0.004);
    const std::string log = dir.write("jobs.csv", g.csv);
    const std::string truth = dir.write("truth.json", kTrueScenario);
    // --check's tolerance is the clocks' disagreement (5 ms): beyond it, a figure does not match.
    const auto r = run_cli({"fit", log, "--columns", "worker=worker", "--out", dir.path("fitted.json"), "--check", truth,
                            "--check-tolerance", "5ms"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    // The fleet: four workers, one job at a time each (their clocks are up to 4 ms behind).
    CHECK(r.out.find("consumers count 4, slots 1") != std::string::npos);
    const auto fitted = nlohmann::json::parse(read_file(dir.path("fitted.json")));
    CHECK(fitted["consumers"][0]["count"] == kWorkers);
    CHECK(fitted["consumers"][0]["slots"] == 1);
    // The rate per message: its count is the messages generated, and the rate lies within the
    // 99.9% interval of a Poisson count around the truth (3.29 standard errors), where the rows'
    // rate does not.
    CHECK(fitted["producers"][0]["fitted"]["arrivals"] == g.messages);
    const auto plot = nlohmann::json::parse(read_file(dir.path("fitted.plot.json")));
    const double span_s = plot["queues"][0]["arrivals"]["span_ms"].get<double>() / 1000;
    const double rate = static_cast<double>(g.messages) / span_s, rows_rate = static_cast<double>(g.rows) / span_s;
    const double tolerance = 3.29 * std::sqrt(kRatePerS / span_s);
    CHECK(std::abs(rate - kRatePerS) <= tolerance);
    CHECK(std::abs(rows_rate - kRatePerS) > tolerance);
    double schedule_mean = 0, covered = 0;
    const auto& steps = fitted["producers"][0]["arrivals"]["rate_schedule"];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double from = steps[i]["from_ms"].get<double>() / 1000;
      const double to = i + 1 < steps.size() ? steps[i + 1]["from_ms"].get<double>() / 1000 : span_s;
      schedule_mean += steps[i]["rate_per_s"].get<double>() * (to - from);
      covered += to - from;
    }
    CHECK(std::abs(schedule_mean / covered - kRatePerS) <= tolerance);
    CHECK(plot["queues"][0]["attempts"]["messages"] == g.messages);
    CHECK(plot["queues"][0]["attempts"]["rows"] == g.rows);
    // The service law: the true lognormal is not rejected, and its 95% intervals hold the truth.
    const auto& fits = plot["queues"][0]["service"]["fits"];
    CHECK(plot["queues"][0]["service"]["chosen"] == "lognormal");
    bool found = false;
    for (const auto& f : fits) {
      if (f["name"] != "lognormal") continue;
      found = true;
      CHECK(f["ks"].get<double>() < 0.0074);  // below the 1% critical distance for this many values
      for (const auto& [index, value] : std::vector<std::pair<std::size_t, double>>{{0, kServiceMeanMs}, {1, kServiceCv}}) {
        const auto& p = f["params"][index];
        CAPTURE(p);
        CHECK(p["lo95"].get<double>() <= value);
        CHECK(p["hi95"].get<double>() >= value);
      }
    }
    CHECK(found);
    // The failed attempts, on their own: the partial executions, short.
    const auto& failures = plot["queues"][0]["failures"];
    CHECK(failures["with_finish_time"] == g.failed_part_way);
    CHECK(failures["failed"] == g.failed_part_way + g.retried_at_once);
    CHECK(failures["messages_failed"] == 0);  // every message was retried until it succeeded
    CHECK(failures["durations"]["mean_ms"].get<double>() < 2 * kPartialMeanMs);
    // No failure_probability: on RabbitMQ a failed execution is final, and no message ended failed.
    CHECK_FALSE(fitted["consumers"][0].contains("failure_probability"));
    // --check through the true system's scenario: the model agrees with the log, to within the
    // clocks' disagreement (a worker ahead of the producer adds up to 3 ms to a wait of 0).
    CHECK(r.out.find("does not match") == std::string::npos);
    CHECK((r.out.find("Verdict: the model matches the log") != std::string::npos ||
           r.out.find("Verdict: the model differs slightly from the log") != std::string::npos));
  }
}
