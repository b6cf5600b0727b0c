// brokersim fit end to end (the reader and the fits are in test_fit.cpp): a log from brokersim's
// own --trace fitted back and checked against the scenario that made it, --check's verdicts, bursty
// logs, bad and mangled logs, and logs of several queues.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/cli/fit/log_reader.hpp"
#include "tests/fit_test_util.hpp"
#include "tests/test_util.hpp"

// A namespace of its own: test files are compiled several to a unit.
namespace fit_command_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using brokersim::test::within_999;
namespace fs = std::filesystem;

const std::string kSource = BROKERSIM_SOURCE_DIR;
const std::string kTraceColumns = "enqueued=created_ms,started=started_ms,finished=finished_ms,worker=consumer";

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}


TEST_SUITE("fit") {
  TEST_CASE("fit command: a log from run --trace of a known scenario, fitted back and checked") {
    ScratchDir dir("fit-known");
    const std::string scenario = kSource + "/experiments/fit/examples/known-gamma.json";
    const std::string trace = dir.path("jobs.csv");
    REQUIRE(run_cli({"run", scenario, "--set", "stop.time_ms=600000", "--trace", trace}).status == 0);
    const auto r = run_cli({"fit", trace, "--columns", kTraceColumns, "--out", dir.path("fitted.json"), "--check",
                            scenario, "--replications", "8"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("times: numbers, and the column created_ms is named in ms") != std::string::npos);
    CHECK(r.out.find("chosen: gamma") != std::string::npos);
    CHECK(r.out.find("Poisson within each interval") != std::string::npos);
    CHECK(r.out.find("4 distinct workers ran jobs") != std::string::npos);
    CHECK(r.out.find("Verdict: the model matches the log") != std::string::npos);
    // The true parameters lie in their intervals (99.9%, from the reported 95% standard errors).
    const auto plot = nlohmann::json::parse(read_file(dir.path("fitted.plot.json")));
    const auto& fits = plot["queues"][0]["service"]["fits"];
    REQUIRE(fits[0]["name"] == "gamma");
    for (const auto& [index, truth] : std::vector<std::pair<int, double>>{{0, 2.0}, {1, 50.0}}) {
      const auto& p = fits[0]["params"][static_cast<std::size_t>(index)];
      fit::Estimate e{p["name"], p["value"], p["lo95"], p["hi95"]};
      CAPTURE(e.name);
      CHECK(within_999(e, truth));
    }
    // The fitted scenario loads and has the fitted pieces.
    const Scenario fitted = load_scenario_file(dir.path("fitted.json"));
    CHECK(fitted.producers[0].service.kind() == sim::Distribution::Kind::Gamma);
    CHECK(fitted.producers[0].arrivals.kind == ArrivalSpec::Kind::RateSchedule);
    CHECK(fitted.consumers[0].count == 4);
    double mean_rate = 0;
    for (const auto& s : fitted.producers[0].arrivals.schedule) mean_rate += s.rate_per_s;
    mean_rate /= static_cast<double>(fitted.producers[0].arrivals.schedule.size());
    CHECK(std::abs(mean_rate - 30) < 4.5 * std::sqrt(30.0 / 600));  // 18,000 arrivals in 600 s
    CHECK(files_in(dir.dir) == std::vector<std::string>{"fitted.arrivals.csv", "fitted.json", "fitted.overtime.csv",
                                                         "fitted.plot.json", "jobs.csv"});
  }

  TEST_CASE("fit command: --check says plainly where a wrong fleet does not match") {
    ScratchDir dir("fit-mismatch");
    const std::string scenario = kSource + "/experiments/fit/examples/known-gamma.json";
    const std::string trace = dir.path("jobs.csv");
    REQUIRE(run_cli({"run", scenario, "--set", "stop.time_ms=300000", "--trace", trace}).status == 0);
    // The user's scenario says 5 consumers where the log's system had 4: waits are shorter.
    nlohmann::json doc = nlohmann::json::parse(read_file(scenario));
    doc["consumers"][0]["count"] = 5;
    const std::string five = dir.write("five.json", doc.dump());
    const auto r = run_cli({"fit", trace, "--columns", kTraceColumns, "--check", five, "--replications", "5"});
    INFO(r.out << r.err);
    CHECK(r.status == 6);
    CHECK(r.out.find("Verdict: the model does not match the log") != std::string::npos);
    CHECK(r.out.find("mean wait: the log's") != std::string::npos);
    CHECK(r.out.find("the model's waits are too short there") != std::string::npos);
    CHECK(files_in(dir.dir) == std::vector<std::string>{"five.json", "jobs.csv"});
  }

  TEST_CASE("fit command: a bursty log is flagged, with its arrivals written as a trace to replay") {
    ScratchDir dir("fit-burst");
    const std::string trace = dir.path("jobs.csv");
    REQUIRE(run_cli({"run", kSource + "/experiments/fit/examples/burst.json", "--trace", trace}).status == 0);
    const auto r = run_cli({"fit", trace, "--columns", kTraceColumns, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("NOT Poisson: arrivals come in bursts") != std::string::npos);
    CHECK(r.out.find("--set 'producers.0.arrivals={\"trace_csv\": \"fitted.arrivals.csv\"}'") != std::string::npos);
    // The suggestion works: the fitted scenario replays the log's arrivals.
    const Scenario replay = load_scenario_file(dir.path("fitted.json"), {"producers.0.arrivals={\"trace_csv\": \"fitted.arrivals.csv\"}"});
    const auto log = fit::read_job_log(trace, fit::parse_column_names(kTraceColumns), fit::TimeFormat::Auto);
    CHECK(replay.producers[0].arrivals.trace.size() == log.rows.size());
  }

  TEST_CASE("fit command: a bad log or option exits 2 naming the line and column, and writes nothing") {
    ScratchDir dir("fit-bad");
    const std::string h = "enqueued_at,started_at,finished_at\n";
    for (const auto& [text_, message_] : std::vector<std::pair<std::string, std::string>>{
             // 2 s before its start: beyond the default --skew-tolerance of 1 s.
             {h + "1,2,3\n2,5,3\n", "bad.csv line 3, column finished_at: expected a time at or after started_at (5), or at most 1000 ms before it (--skew-tolerance: clock skew), got \"3\", 2000 ms before it"},
             {"when,started_at,finished_at\n1,2,3\n", "bad.csv line 1: expected a header naming the column \"enqueued_at\""},
             {h + "1,2,3\n2,soon,3\n", "bad.csv line 3, column started_at: expected a number of seconds"},
             {"", "bad.csv: expected a header row naming the columns, got an empty file"},
             {h + "\n\n", "bad.csv: expected at least one job row after the header, got none"},
             {h + "1,,\n", "bad.csv: expected jobs with both started_at and finished_at, got none"}}) {
      const auto& text = text_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& message = message_;
      CAPTURE(text);
      const std::string log = dir.write("bad.csv", text);
      const auto r = run_cli({"fit", log, "--out", dir.path("fitted.json")});
      CHECK(r.status == 2);
      CHECK(r.err.find("brokersim: error: " + log.substr(0, log.size() - 7) + message) == 0);
      CHECK(files_in(dir.dir) == std::vector<std::string>{"bad.csv"});
    }
    const std::string good = dir.write("bad.csv", h + "1,2,3\n2,3,5\n3,4,4.5\n");
    for (const auto& [args_, message_] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"fit"}, "fit: expected a job log (CSV), got nothing"},
             {{"fit", dir.path("missing.csv")}, dir.path("missing.csv") + ": cannot read file (No such file or directory)"},
             {{"fit", good, "--out", good}, "--out: expected a file that no other input or output of the command uses"},
             {{"fit", good, "--out", "-"}, "--out: expected a file name (files are written beside it), got \"-\""},
             {{"fit", good, "--interval", "ten"}, "--interval: expected a duration with a unit"},
             {{"fit", good, "--replications", "3"}, "--replications: expected --check beside it, got no --check"},
             {{"fit", good, "--check", dir.path("none.json")}, dir.path("none.json") + ": cannot read file"}}) {
      const auto& args = args_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& message = message_;
      CAPTURE(args.back());
      const auto r = run_cli(args);
      CHECK(r.status == 2);
      CHECK(r.err.find("brokersim: error: " + message) == 0);
      CHECK(files_in(dir.dir) == std::vector<std::string>{"bad.csv"});
    }
  }
}

TEST_SUITE("fit") {
  TEST_CASE("fit: degenerate samples still give a distribution (Weibull with outliers, all equal, all zero)") {
    // 999 values near 1 ms and one of 1e9 ms: x^k overflows a double for k near 40 unless scaled.
    std::vector<double> xs(999);
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = 1 + 0.001 * static_cast<double>(i);
    xs.push_back(1e9);
    const auto w = fit::fit_weibull(xs);
    CHECK(std::isfinite(w.a));
    CHECK(std::isfinite(w.b));
    CHECK(std::isfinite(w.log_likelihood));
    const auto same = fit::fit_service_times({5, 5, 5});
    CHECK(same.fits[same.chosen].name == "exp");  // the only family with an estimate; KS rejects nothing at n = 3
    const auto zeros = fit::fit_service_times({0, 0, 0});
    REQUIRE(zeros.fits.size() == 1);
    CHECK(zeros.fits[0].syntax.dump() == R"({"empirical":[0.0,0.0,0.0]})");
  }

  TEST_CASE("fit command: a one-job log and a log of zero service times give scenarios that load and run") {
    ScratchDir dir("fit-tiny");
    for (const std::string& text : {std::string("enqueued_at,started_at,finished_at\n1,2,3\n"),
                                    std::string("enqueued_at,started_at,finished_at\n1,2,2\n1,2,2\n5,5,5\n")}) {
      CAPTURE(text);
      const std::string log = dir.write("log.csv", text);
      const auto r = run_cli({"fit", log, "--out", dir.path("fitted.json")});
      INFO(r.out << r.err);
      CHECK(r.status == 0);
      CHECK_NOTHROW(load_scenario_file(dir.path("fitted.json")));
    }
  }

  TEST_CASE("fit command: random bytes and mangled logs exit 2 with a line number, never crash") {
    ScratchDir dir("fit-garbage");
    sim::Rng rng(77, 0, "garbage");
    const std::string good = "enqueued_at,started_at,finished_at\n1,2,3\n2,3,5\n2026-01-01T00:00:00Z,4,5\n";
    for (int i = 0; i < 60; ++i) {
      std::string text = good;
      // Flip, delete or insert a few characters (commas, quotes, digits, newlines, bytes).
      static const char kAlphabet[] = ",\"\n\r0123456789.-:TZe x\xff";
      for (int e = 0; e < 3; ++e) {
        const std::size_t at = rng.below(text.size());
        const char c = kAlphabet[rng.below(sizeof kAlphabet - 1)];
        switch (rng.below(3)) {
          case 0: text[at] = c; break;
          case 1: text.erase(at, 1); break;
          default: text.insert(at, 1, c); break;
        }
      }
      CAPTURE(text);
      const auto r = run_cli({"fit", dir.write("log.csv", text)});
      CHECK((r.status == 0 || r.status == 2));
      if (r.status == 2) CHECK(r.err.rfind("brokersim: error: ", 0) == 0);
    }
  }
}

TEST_SUITE("fit") {
  TEST_CASE("fit command: a queue column fits each queue on its own, and --check maps them by name") {
    ScratchDir dir("fit-queues");
    // Two queues from one run: "fast" (exp, mean 20 ms) and "slow.jobs" (constant 200 ms), each
    // with its own consumers; the log names the queue of each job.
    const std::string scenario = dir.write("two.json", R"({
      "seed": 3, "stop": {"time_ms": 300000},
      "broker": {"queues": {"fast": {}, "slow_jobs": {}}},
      "producers": [
        {"queue": "fast", "arrivals": {"poisson": {"rate_per_s": 40}}, "service_ms": {"exp": {"mean": 20}}},
        {"queue": "slow_jobs", "arrivals": {"poisson": {"rate_per_s": 5}}, "service_ms": 200}],
      "consumers": [{"queue": "fast", "count": 2}, {"queue": "slow_jobs", "count": 2}]})");
    const std::string trace = dir.path("jobs.csv");
    REQUIRE(run_cli({"run", scenario, "--trace", trace}).status == 0);
    const auto r = run_cli({"fit", trace, "--columns", kTraceColumns + ",queue=queue", "--out", dir.path("fitted.json"),
                            "--check", scenario, "--replications", "5"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("Queue \"fast\"") != std::string::npos);
    CHECK(r.out.find("Queue \"slow_jobs\"") != std::string::npos);
    CHECK(r.out.find("Verdict: the model matches the log") != std::string::npos);
    const Scenario fitted = load_scenario_file(dir.path("fitted.json"));
    REQUIRE(fitted.producers.size() == 2);
    CHECK(fitted.broker.queues[0].name == "fast");
    CHECK(fitted.consumers[0].count == 2);
    CHECK(fitted.consumers[1].count == 2);
    // Constant service times have no spread: every parametric fit is refused, the empirical stays.
    CHECK(fitted.producers[1].service.kind() == sim::Distribution::Kind::Empirical);
    CHECK(fitted.producers[1].service.mean() == doctest::Approx(200e6));
    CHECK(fitted.producers[0].service.kind() == sim::Distribution::Kind::Exp);
    CHECK(fs::exists(dir.path("fitted.arrivals.fast.csv")));
    CHECK(fs::exists(dir.path("fitted.arrivals.slow_jobs.csv")));
    // A log queue the scenario does not have is named.
    const std::string other = dir.write("other.json", R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"a": {}, "b": {}}},
      "producers": [{"queue": "a", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}]})");
    const auto bad = run_cli({"fit", trace, "--columns", kTraceColumns + ",queue=queue", "--check", other});
    CHECK(bad.status == 2);
    CHECK(bad.err.find("a queue named as the log's \"fast\" (the log has several queues), got the queues \"a\", \"b\"") !=
          std::string::npos);
  }
}

}  // namespace fit_command_test
