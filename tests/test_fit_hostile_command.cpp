// brokersim fit against the third hostile round (issue 38), the command end to end (the reader,
// the fleet and interval accounting and the exponential interval are in test_fit_hostile.cpp): a
// fleet beyond brokersim's limits, a fit it cannot draw from, file names made safe from queue
// names and opened before the work, --check's producers, every number of the log and the command
// line, and file lines across blank lines.
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>
#include <sys/stat.h>
#include "experiments/cli/fit/arrivals.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/fit/mle.hpp"
#include "sim/distribution.hpp"
#include "tests/fit_hostile_util.hpp"
#include "tests/test_util.hpp"

using namespace fit_hostile_test;

TEST_SUITE("fit") {
  TEST_CASE("fit hostile: a fleet beyond brokersim's limits is named by the log's line, not consumers.0.slots") {
    ScratchDir dir("fit-hostile-fleet");
    // 1,000,001 jobs running at once on one worker: slots would be 1,000,001 (the loader's limit is
    // 1,000,000). Starts increase, so the 1,000,001st to start is the last row, line 1,000,002.
    std::string text = "enqueued_at,started_at,finished_at,worker\n";
    text.reserve(30'000'000);
    char row[64];
    for (int i = 0; i <= 1'000'000; ++i) {
      std::snprintf(row, sizeof row, "0,%d.%06d,100,w\n", 1 + i / 1'000'000, i % 1'000'000);
      text += row;
    }
    const std::string log = dir.write("busy.csv", text);
    const auto r = run_cli({"fit", log, "--columns", "worker=worker", "--time-unit", "s"});
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: " + log + " line 1000002, column started_at: expected at most 1,000,000 jobs running "
                   "at once on one worker (brokersim's limit on a consumer's slots), got this job starting while "
                   "1,000,000 others ran on worker \"w\"\n");
    CHECK(!contains(r.err, "consumers.0"));
    // Without a worker column each running job is a consumer: the same line, and what to do.
    const auto n = run_cli({"fit", log, "--time-unit", "s"});
    CHECK(n.status == 2);
    CHECK(contains(n.err, log + " line 1000002, column started_at: expected at most 1,000,000 jobs running at once "
                               "(without a worker column each is a one-slot consumer"));
    CHECK(!contains(n.err, "consumers.0"));
  }

  TEST_CASE("fit hostile: a service-time fit brokersim cannot draw from gives way to the empirical, not a producers key error") {
    // Weibull shape 0.3, scale 1e7 ms: its largest draw (scale * 36.74^(1/shape)) is 1.6e12 ms,
    // beyond the 1e12 a duration may be. Fitted from 400 of its values, the Weibull wins by AIC.
    const auto d = sim::Distribution::weibull(0.3, 1e7);
    sim::Rng rng(12, 0, "weibull-log");
    std::string text = "enqueued_ms,started_ms,finished_ms\n";
    char row[96];
    for (int i = 0; i < 400; ++i) {
      const double x = std::max(0.001, std::round(d.sample(rng) * 1000) / 1000);
      std::snprintf(row, sizeof row, "%d,%d,%.3f\n", i * 10, i * 10, i * 10 + x);
      text += row;
    }
    ScratchDir dir("fit-hostile-service");
    const auto r = run_cli({"fit", dir.write("heavy.csv", text), "--columns", "enqueued=enqueued_ms,started=started_ms,finished=finished_ms",
                            "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(!contains(r.err, "producers.0"));
    CHECK(contains(r.out, "is one brokersim cannot draw from (service_ms."));
    CHECK(contains(r.out, "the empirical distribution is used"));
    const Scenario fitted = load_scenario_file(dir.path("fitted.json"));
    CHECK(fitted.producers[0].service.kind() == sim::Distribution::Kind::Empirical);
  }

  TEST_CASE("fit hostile: queue names become safe file names, and every output is checked before the work") {
    ScratchDir dir("fit-hostile-names");
    const std::string long_name(300, 'q');
    std::string text = "enqueued_at,started_at,finished_at,queue\n";
    for (const std::string& q : {std::string("a/b"), std::string("a_b"), std::string("../up"), std::string("back\\slash"),
                                 std::string(".hidden"), std::string("it's"), long_name, long_name + "x"})
      for (int i = 0; i < 3; ++i) text += std::to_string(i) + "," + std::to_string(i) + "," + std::to_string(i + 1) + ",\"" + q + "\"\n";
    const std::string log = dir.write("jobs.csv", text);
    fs::create_directory(dir.dir / "out");
    const auto r = run_cli({"fit", log, "--columns", "queue=queue", "--out", dir.path("out/fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    // Every file in out/, none elsewhere; no name longer than NAME_MAX, none starting with '.'.
    const auto files = listing(dir.dir / "out");
    std::vector<std::string> traces;
    for (const auto& f : files) {
      CAPTURE(f);
      CHECK(f.find('/') == std::string::npos);
      CHECK(f.size() <= 255);
      CHECK(f.front() != '.');
      if (f.starts_with("fitted.arrivals.")) traces.push_back(f);
    }
    CHECK(files.size() == 3 + 8);
    CHECK(traces.size() == 8);
    CHECK(std::find(traces.begin(), traces.end(), "fitted.arrivals.a_b.csv") != traces.end());
    CHECK(std::find(traces.begin(), traces.end(), "fitted.arrivals.a_b_2.csv") != traces.end());
    CHECK(listing(dir.dir) == [&] {
      std::vector<std::string> all{"jobs.csv", "out"};
      for (const auto& f : files) all.push_back("out/" + f);
      std::sort(all.begin(), all.end());
      return all;
    }());
    // Each trace holds its own queue's arrivals: a/b's three, not a_b's.
    CHECK(read_file(dir.path("out/fitted.arrivals.a_b.csv")) == "publish_ms\n0\n1000\n2000\n");
    CHECK(read_file(dir.path("out/fitted.arrivals.a_b_2.csv")) == "publish_ms\n0\n1000\n2000\n");
    const Scenario fitted = load_scenario_file(dir.path("out/fitted.json"));
    CHECK(fitted.broker.queues.size() == 8);

    // An output that cannot be opened is found before the log is read: the log here is broken on
    // line 3, but the error is the missing folder.
    const std::string broken = dir.write("broken.csv", kHeader + "1,2,3\n1,2,x\n");
    const auto missing = run_cli({"fit", broken, "--out", dir.path("no/such/fitted.json")});
    CHECK(missing.status == 2);
    CHECK(contains(missing.err, "no/such/fitted.json: cannot open for writing"));
    // A FIFO under a side file's name is refused at once (it would block the write for ever).
    REQUIRE(::mkfifo(dir.path("f.plot.json").c_str(), 0600) == 0);
    const auto fifo = run_cli({"fit", log, "--out", dir.path("f.json")});
    CHECK(fifo.status == 2);
    CHECK(fifo.err == "brokersim: error: --out's plot data: expected a name that is not an existing FIFO, device or folder "
                      "(--out's files are written beside it as files), got \"" + dir.path("f.plot.json") + "\"\n");
    // An --out name too long for its side files.
    const auto too_long = run_cli({"fit", log, "--out", dir.path(std::string(240, 'o') + ".json")});
    CHECK(too_long.status == 2);
    CHECK(contains(too_long.err, "--out: expected a file name of at most 225 bytes before .json"));
  }

  TEST_CASE("fit hostile: a --check producer that is not an object is reported as what it is") {
    ScratchDir dir("fit-hostile-producer");
    const std::string log = dir.write("jobs.csv", kHeader + "0,0,1\n1,1,2\n2,2,3\n");
    const std::string base = R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"work": {}}},
      "consumers": [{"queue": "work", "count": 1}], "producers": )";
    for (const auto& [producers_, got_] : std::vector<std::pair<std::string, std::string>>{
             {"[5]", "producers.0: expected an object (a producer), got 5"},
             {R"([{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}, "x"])",
              "producers.1: expected an object (a producer), got \"x\""},
             {"[[]]", "producers.0: expected an object (a producer), got []"},
             {"7", "producers: expected a non-empty array of producers, got 7"}}) {
      const auto& producers = producers_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& got = got_;
      CAPTURE(producers);
      const std::string scenario = dir.write("check.json", base + producers + "}");
      const auto r = run_cli({"fit", log, "--check", scenario});
      CHECK(r.status == 2);
      CHECK(r.err == "brokersim: error: --check: " + scenario + ": " + got + "\n");
    }
    // A loader error in the scenario names the user's producer, not the rebuilt one.
    const std::string second = dir.write("second.json", R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"other": {}, "work": {}}},
      "consumers": [{"queue": "work", "count": 1}],
      "producers": [{"queue": "other", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1},
                    {"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1, "deadline_ms": -5}]})");
    const std::string queued = dir.write("queued.csv", "enqueued_at,started_at,finished_at,queue\n0,0,1,work\n1,1,2,work\n");
    const auto r = run_cli({"fit", queued, "--columns", "queue=queue", "--check", second});
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--check: " + second + ": producers.1.deadline_ms: expected"));
  }

  TEST_CASE("fit hostile: every number of the log and the command line is checked, naming column or option") {
    ScratchDir dir("fit-hostile-numbers");
    const std::string digits400(400, '9');
    struct Case {
      std::string cell, message;
    };
    for (const auto& [cell_, message_] : std::vector<std::pair<std::string, std::string>>{
             {"1e400", "line 3, column started_at: expected a number of seconds from -9e9 to 9e9 (the years 1678 to 2262"},
             {digits400, "line 3, column started_at: expected a number of seconds from -9e9 to 9e9"},
             {"1." + digits400 + "x", "line 3, column started_at: expected a number of seconds (numbers below 1e11"},
             {"nan", "line 3, column started_at: expected a number of seconds (numbers below 1e11"},
             {"inf", "line 3, column started_at: expected a number of seconds (numbers below 1e11"},
             {"0x10", "line 3, column started_at: expected a number of seconds (numbers below 1e11"},
             {"+-1e3", "line 3, column started_at: expected a number of seconds (numbers below 1e11"}}) {
      const auto& cell = cell_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& message = message_;
      CAPTURE(cell);
      const std::string log = dir.write("n.csv", kHeader + "1,2,3\n2," + cell + ",9e9\n");
      const auto r = run_cli({"fit", log});
      CHECK(r.status == 2);
      CHECK(r.err.rfind("brokersim: error: " + log + " " + message, 0) == 0);
      CHECK(contains(r.err, ", got \""));
    }
    // ISO-8601 past 2262: a time, out of range (not "not an ISO-8601 time").
    CHECK(contains(reader_error(kHeader + "2026-01-01T00:00:00Z,2300-01-01T00:00:00Z,\n"),
                   "line 2, column started_at: expected an ISO-8601 time from 1678 to 2262 (the times int64 nanoseconds "
                   "since 1970 hold), got \"2300-01-01T00:00:00Z\""));
    // 1e-400 s is a number, 0 ns to the clock.
    std::int64_t ns = -1;
    CHECK(fit::parse_decimal_time("1e-400", 1'000'000'000, ns));
    CHECK(ns == 0);
    bool too_far = false;
    CHECK(!fit::parse_decimal_time("1e400", 1'000'000'000, ns, &too_far));
    CHECK(too_far);
    CHECK(!fit::parse_decimal_time("1e4x", 1'000'000'000, ns, &too_far));
    CHECK(!too_far);
    // The options.
    const std::string good = dir.write("good.csv", kHeader + "1,2,3\n2,3,5\n");
    for (const auto& [args_, message_] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--interval", digits400 + "ms"}, "--interval: expected a duration with a unit: 500ms, 10s, 5min, 1h, 1d (at least 1 ms) and at most 365d, got \""},
             {{"--interval", "1e3s"}, "--interval: expected a duration with a unit"},
             {{"--interval", "nanms"}, "--interval: expected a duration with a unit"},
             {{"--check", good, "--replications", digits400}, "--replications: expected an integer >= 2"},
             {{"--check", good, "--replications", "1e1"}, "--replications: expected an integer >= 2"},
             {{"--check", good, "--seed=-1"}, "--seed: expected an integer >= 0"},
             {{"--check", good, "--seed", digits400}, "--seed: expected an integer >= 0"}}) {
      const auto& args = args_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& message = message_;
      std::vector<std::string> command{"fit", good};
      command.insert(command.end(), args.begin(), args.end());
      CAPTURE(args.back());
      const auto r = run_cli(command);
      CHECK(r.status == 2);
      CHECK(r.err.rfind("brokersim: error: " + message, 0) == 0);
    }
  }

  TEST_CASE("fit hostile: jobs longer than RabbitMQ's consumer timeout are not redelivered for ever by the fitted scenario") {
    // A 40-minute job finished in the log: its broker did not enforce the default 30-minute
    // consumer timeout, and the fitted scenario must not either (it would requeue the job every
    // 30 minutes for as long as a run lasts).
    ScratchDir dir("fit-hostile-timeout");
    const std::string log = dir.write("long.csv", kHeader + "0,0,2400\n1,1,2\n2,2,3\n");
    const auto r = run_cli({"fit", log, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(contains(r.out, "jobs ran up to 40.0 min, longer than RabbitMQ's default consumer timeout (30 min)"));
    const auto doc = nlohmann::json::parse(read_file(dir.path("fitted.json")));
    REQUIRE(doc["broker"].contains("consumer_timeout_ms"));
    CHECK(doc["broker"]["consumer_timeout_ms"].is_null());
    CHECK(!load_scenario_file(dir.path("fitted.json")).broker.rabbitmq.consumer_timeout.has_value());
    // Shorter jobs keep the default.
    const auto s = run_cli({"fit", dir.write("short.csv", kHeader + "0,0,60\n1,1,2\n"), "--out", dir.path("short.json")});
    REQUIRE(s.status == 0);
    CHECK(!nlohmann::json::parse(read_file(dir.path("short.json")))["broker"].contains("consumer_timeout_ms"));
  }

  TEST_CASE("fit hostile: rows keep their file line across blank lines") {
    const auto log = fit::read_job_log_text(kHeader + "1,2,3\n\n\n2,3,4\n3,4,5\n\n4,5,6\n", "log.csv", {}, fit::TimeFormat::Auto);
    REQUIRE(log.rows.size() == 4);
    CHECK(log.line_of(0) == 2);
    CHECK(log.line_of(1) == 5);
    CHECK(log.line_of(2) == 6);
    CHECK(log.line_of(3) == 8);
  }
}
