// sweep warns where a point's runs may carry their start-up (issue 44, item 3's warning): no
// steady state under warmup_ms "auto", or no warm-up while consumers attach late.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace warmup_warnings_test {

using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

// M/M/2 at rho 0.5 whose one consumer group attaches at 2 s: a backlog of about 200 jobs builds
// first, and without a warm-up the figures count its draining.
constexpr const char* kLate = R"({"name": "late", "seed": 4, "stop": {"time_ms": 10000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 100}}, "service_ms": {"exp": {"mean": 10}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 1, "admission": "none", "start_ms": 2000}]})";

// warmup_ms "auto" on one consumer at rho 0.5 (10,000 jobs a run), or (rate 1300/s) rho 1.3,
// where the queue grows to the end and no run reaches a steady state.
constexpr const char* kAuto = R"({"name": "auto", "seed": 4, "stop": {"time_ms": 20000}, "warmup_ms": "auto",
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 500}}, "service_ms": {"exp": {"mean": 1}}}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1, "admission": "none"}]})";

std::map<std::string, std::string> row_of(const std::string& csv) {
  const auto lines = brokersim::test::lines_of(csv);
  const auto header = brokersim::test::split_csv_line(lines.at(0)), cells = brokersim::test::split_csv_line(lines.at(1));
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < header.size(); ++i) out[header[i]] = cells.at(i);
  return out;
}

}  // namespace warmup_warnings_test

using namespace warmup_warnings_test;

TEST_CASE("warm-up warnings: sweep flags no warm-up with late consumers in a column and on stderr") {
  ScratchDir d("brokersim-warmup-warn");
  const std::string f = d.write("s.json", kLate);
  const auto r = run_cli({"sweep", f, "--vary", "consumers.0.count=2", "--replications", "2"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(row_of(r.out).at("run.warmup_doubtful_mean") == "1");
  CHECK(r.err.find("brokersim: warning: sweep: consumers.0.count=2: warmup_ms is 0 while consumers.0 attaches at 2000 ms "
                   "(consumers.0.start_ms): their figures may carry the start-up transient") != std::string::npos);
  // A warm-up past the start: nothing in doubt, no column, no warning (the CSV is as before).
  const auto w = run_cli({"sweep", f, "--vary", "consumers.0.count=2", "--replications", "2", "--set", "warmup_ms=4000"});
  REQUIRE_MESSAGE(w.status == 0, w.err);
  CHECK(w.out.find("warmup_doubtful") == std::string::npos);
  CHECK(w.err.empty());
}

TEST_CASE("warm-up warnings: sweep flags runs with no steady state under warmup_ms auto") {
  ScratchDir d("brokersim-warmup-warn");
  const std::string f = d.write("s.json", kAuto);
  const auto steady = run_cli({"sweep", f, "--vary", "consumers.0.count=1", "--replications", "2"});
  REQUIRE_MESSAGE(steady.status == 0, steady.err);
  CHECK(row_of(steady.out).at("run.warmup_doubtful_mean") == "0");
  CHECK(steady.err.empty());
  const auto over = run_cli({"sweep", f, "--vary", "producers.0.arrivals.poisson.rate_per_s=1300", "--replications", "2"});
  REQUIRE_MESSAGE(over.status == 0, over.err);
  CHECK(row_of(over.out).at("run.warmup_doubtful_mean") == "1");
  CHECK(over.err.find("producers.0.arrivals.poisson.rate_per_s=1300: under warmup_ms \"auto\" its pilots' average series "
                      "reached no steady state, or the data kept after the cut failed the bias check") != std::string::npos);
  // run --json has the figure too.
  const auto j = nlohmann::json::parse(run_cli({"run", f, "--json"}).out);
  CHECK(j["run"]["warmup_doubtful"] == 0);
}
