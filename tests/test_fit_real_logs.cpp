// brokersim fit on logs as real workers write them (issue 39, items 5-8): clock skew clamped up to
// --skew-tolerance and counted, outcomes from a Celery state column or from succeeded / failed
// timestamp columns, failed and unfinished jobs left out of the slots, and --check's three-word
// verdict with a practical tolerance.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/fit/arrivals.hpp"
#include "experiments/cli/fit/check.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "tests/test_util.hpp"

// A named namespace: the test files are compiled several to a unit.
namespace fit_real_logs_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

const std::string kRealLogsSource = BROKERSIM_SOURCE_DIR;

fit::JobLog real_logs_read(const std::string& text, const fit::ColumnNames& columns, std::int64_t skew_ns) {
  fit::ReadOptions o;
  o.skew_tolerance_ns = skew_ns;
  return fit::read_job_log_text(text, "log.csv", columns, fit::TimeFormat::Auto, o);
}

std::string real_logs_error(const std::string& text, const fit::ColumnNames& columns, std::int64_t skew_ns) {
  try {
    real_logs_read(text, columns, skew_ns);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "accepted";
}

bool real_logs_has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const std::string kRealLogsCelery = "enqueued=sent,started=started,state=state,succeeded=succeeded,failed=failed,worker=worker";

}  // namespace fit_real_logs_test

using namespace fit_real_logs_test;

TEST_SUITE("fit") {
  TEST_CASE("fit real logs: a start or finish up to --skew-tolerance before the event it follows is clamped and counted") {
    const fit::ColumnNames c = fit::parse_column_names("enqueued=sent_ms,started=started_ms,finished=done_ms,worker=w");
    const std::string text =
        "sent_ms,started_ms,done_ms,w\n"
        "1000,1002,1010,a\n"
        "2000,1994,2004,c\n"   // start 6 ms before the enqueue: a wait of 0, the start kept on the worker's clock
        "3000,2997,3001,c\n"   // 3 ms
        "4000,4005,4004,a\n";  // finish 1 ms before the start: moved to it
    const fit::JobLog log = real_logs_read(text, c, 50'000'000);
    REQUIRE(log.rows.size() == 4);
    // The worker's own clock is kept (its executions' order and gaps); the wait is clamped to 0.
    CHECK(log.rows[1].started == 1994'000'000);
    CHECK(log.rows[1].finished == 2004'000'000);
    CHECK(log.rows[1].wait() == 0);
    CHECK(log.rows[2].started == 2997'000'000);
    CHECK(log.rows[2].finished == 3001'000'000);
    CHECK(log.rows[2].wait() == 0);
    CHECK(log.rows[0].wait() == 2'000'000);
    CHECK(log.rows[3].finished == 4005'000'000);
    CHECK(log.skew.rows == 3);
    CHECK(log.skew.starts == 2);
    CHECK(log.skew.start_max == 6'000'000);
    CHECK(log.skew.start_sum == doctest::Approx(9e6));
    CHECK(log.skew.finishes == 1);
    CHECK(log.skew.finish_max == 1'000'000);
    CHECK(log.skew.per_worker == std::vector<std::size_t>{1, 2});
    CHECK(log.skew.rows_per_worker == std::vector<std::size_t>{2, 2});
    // Beyond the bound: the row's line and column, the gap and the bound.
    CHECK(real_logs_error(text, c, 5'000'000) ==
          "log.csv line 3, column started_ms: expected a time at or after sent_ms (2000), or at most 5 ms before it "
          "(--skew-tolerance: clock skew), got \"1994\", 6 ms before it");
    CHECK(real_logs_error(text, c, 2'000'000) ==
          "log.csv line 3, column started_ms: expected a time at or after sent_ms (2000), or at most 2 ms before it "
          "(--skew-tolerance: clock skew), got \"1994\", 6 ms before it");
    // Tolerance 0: strict, the message as before.
    CHECK(real_logs_error(text, c, 0) == "log.csv line 3, column started_ms: expected a time at or after sent_ms (2000), got \"1994\"");
  }

  TEST_CASE("fit real logs: --skew-tolerance is parsed, bounded and reported") {
    CHECK(fit::parse_skew_tolerance("50ms", "--skew-tolerance") == 50'000'000);
    CHECK(fit::parse_skew_tolerance("1s", "--skew-tolerance") == 1'000'000'000);
    CHECK(fit::parse_skew_tolerance("250us", "--skew-tolerance") == 250'000);
    CHECK(fit::parse_skew_tolerance("0", "--skew-tolerance") == 0);
    for (const std::string bad : {"", "ms", "5", "-1s", "2h", "1e400s", "5 ms", "nan"}) {
      CAPTURE(bad);
      CHECK_THROWS_AS(fit::parse_skew_tolerance(bad, "--skew-tolerance"), ScenarioError);
    }
    ScratchDir dir("fit-skew");
    const std::string log = dir.write("jobs.csv", "sent_ms,started_ms,finished_ms\n0,2,10\n100,94,110\n200,203,250\n");
    const auto bad = run_cli({"fit", log, "--columns", "enqueued=sent_ms,started=started_ms,finished=finished_ms", "--skew-tolerance", "soon"});
    CHECK(bad.status == 2);
    CHECK(bad.err == "brokersim: error: --skew-tolerance: expected a duration from 0 to 1h: 0, 250us, 50ms, 1s, 1min, got \"soon\"\n");
    const auto strict = run_cli({"fit", log, "--columns", "enqueued=sent_ms,started=started_ms,finished=finished_ms", "--skew-tolerance", "0"});
    CHECK(strict.status == 2);
    CHECK(real_logs_has(strict.err, "jobs.csv line 3, column started_ms: expected a time at or after sent_ms (100), got \"94\""));
    const auto r = run_cli({"fit", log, "--columns", "enqueued=sent_ms,started=started_ms,finished=finished_ms",
                            "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    const std::string note =
        "clock skew: 1 of 3 rows (33.3%) clamped, each by at most --skew-tolerance 1000 ms: 1 started_ms before sent_ms "
        "by up to 6 ms (mean 6 ms), their waits counted as 0 (start and finish kept on the worker's clock, so its executions do not overlap)";
    CHECK(real_logs_has(r.out, "  " + note + "\n"));
    const auto doc = nlohmann::json::parse(read_file(dir.path("fitted.json")));
    CHECK(doc["notes"] == nlohmann::json::array({note}));
    const auto plot = nlohmann::json::parse(read_file(dir.path("fitted.plot.json")));
    CHECK(plot["skew"]["rows"] == 1);
    CHECK(plot["skew"]["starts"] == 1);
    CHECK(plot["skew"]["start_max_ms"] == 6.0);
    CHECK(plot["skew"]["start_mean_ms"] == 6.0);
    CHECK(plot["skew"]["tolerance_ms"] == 1000.0);
  }

  TEST_CASE("fit real logs: outcome from a Celery state column, and from succeeded / failed timestamp columns") {
    const fit::ColumnNames c = fit::parse_column_names(kRealLogsCelery);
    CHECK(c.finished.empty());  // no finished column needed
    const std::string h = "uuid,state,sent,started,succeeded,failed,worker\n";
    const fit::JobLog log = real_logs_read(h +
                                     "a,SUCCESS,10,11,15,,w1\n"
                                     "b,FAILURE,12,13,,14,w1\n"
                                     "c,failure,12,13,,,w1\n"    // lost: no finish time (states case-insensitive)
                                     "d,RETRY,13,14,,,w2\n"
                                     "e,REVOKED,14,,,15,\n"      // revoked before it started: the time is dropped
                                     "f,STARTED,15,16,,,w2\n"
                                     "g,PENDING,16,,,,\n"
                                     "h,RECEIVED,17,,,,\n",
                                 c, 0);
    REQUIRE(log.rows.size() == 8);
    using O = fit::Outcome;
    const std::vector<O> want{O::Succeeded, O::Failed, O::Failed, O::Failed, O::Failed, O::Running, O::Queued, O::Queued};
    for (std::size_t i = 0; i < want.size(); ++i) {
      CAPTURE(i);
      CHECK(log.rows[i].outcome == want[i]);
    }
    CHECK(log.rows[0].finished == 15'000'000'000);
    CHECK(log.rows[1].finished == 14'000'000'000);
    CHECK(log.rows[2].finished == fit::kNoTime);
    CHECK(log.rows[4].finished == fit::kNoTime);
    CHECK(log.has_outcome);
    // Contradictions and unknown states name the line and the column.
    CHECK(real_logs_error(h + "a,SUCCESS,10,11,,15,w1\n", c, 0) ==
          "log.csv line 2, column failed: expected an empty cell (the state is SUCCESS), got \"15\"");
    CHECK(real_logs_error(h + "a,FAILURE,10,11,15,,w1\n", c, 0) ==
          "log.csv line 2, column succeeded: expected an empty cell (the state is FAILURE), got \"15\"");
    CHECK(real_logs_error(h + "a,STARTED,10,11,15,,w1\n", c, 0) ==
          "log.csv line 2, column succeeded: expected an empty cell (the state is STARTED: a task not finished), got \"15\"");
    const std::string states = std::string("expected a state: ") + fit::kStateWords + ", in any case";
    CHECK(real_logs_error(h + "a,MAYBE,10,11,15,,w1\n", c, 0) == "log.csv line 2, column state: " + states + ", got \"MAYBE\"");
    CHECK(real_logs_error(h + "a,,10,11,15,,w1\n", c, 0) == "log.csv line 2, column state: " + states + ", got an empty cell");
    CHECK(real_logs_error(h + "a,SUCCESS,10,,15,,w1\n", c, 0) ==
          "log.csv line 2, column started: expected a time (the job has a succeeded), got an empty cell");
    // Without a state column: the outcome follows the column that is set; both set is refused.
    const fit::ColumnNames t = fit::parse_column_names("enqueued=sent,started=started,succeeded=succeeded,failed=failed");
    const fit::JobLog two = real_logs_read("sent,started,succeeded,failed\n1,2,3,\n1,2,,4\n1,2,,\n", t, 0);
    CHECK(two.rows[0].outcome == O::Succeeded);
    CHECK(two.rows[1].outcome == O::Failed);
    CHECK(two.rows[1].finished == 4'000'000'000);
    CHECK(two.rows[2].outcome == O::Running);
    CHECK(real_logs_error("sent,started,succeeded,failed\n1,2,3,4\n", t, 0) ==
          "log.csv line 2, column failed: expected an empty cell when succeeded is set (a job succeeds or fails, not "
          "both), got \"4\"");
    // A finish before its start in the failed column is clamped like any other.
    const fit::JobLog skewed = real_logs_read("sent,started,succeeded,failed\n1,2,,1.999\n", t, 10'000'000);
    CHECK(skewed.rows[0].finished == 2'000'000'000);
    CHECK(skewed.skew.finishes == 1);
    CHECK(real_logs_error("sent,started,succeeded,failed\n1,2,,1.5\n", t, 10'000'000) ==
          "log.csv line 2, column failed: expected a time at or after started (2), or at most 10 ms before it "
          "(--skew-tolerance: clock skew), got \"1.5\", 500 ms before it");
    CHECK_THROWS_AS(fit::parse_column_names("state="), ScenarioError);
  }

  TEST_CASE("fit real logs: failed and unfinished jobs are left out of the slots, their count said") {
    // One worker running 2 at once; 5 failed jobs and 1 still running without a finish time.
    std::string text = "sent,started,succeeded,failed,state,worker\n"
                       "0,0,10,,SUCCESS,w\n"
                       "1,1,11,,SUCCESS,w\n"
                       "20,20,30,,SUCCESS,w\n"
                       "21,21,,25,FAILURE,w\n";
    for (int i = 0; i < 5; ++i) text += std::to_string(30 + i) + "," + std::to_string(30 + i) + ",,,FAILURE,w\n";
    text += "40,40,,,STARTED,w\n50,50,60,,SUCCESS,w\n";
    const fit::ColumnNames c = fit::parse_column_names("enqueued=sent,started=started,state=state,succeeded=succeeded,failed=failed,worker=worker");
    const fit::JobLog log = real_logs_read(text, c, 0);
    std::vector<std::size_t> rows(log.rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    const fit::FleetFit fleet = fit::fit_fleet(log, rows, 0, 50'000'000'000, 10'000'000'000);
    CHECK(fleet.count == 1);
    CHECK(fleet.slots == 2);  // was 7: each failed job counted as running until the log's end
    CHECK(fleet.unfinished == 6);
    CHECK(fleet.failed_unfinished == 5);
    CHECK(fleet.why ==
          "1 distinct workers ran jobs (at most 1 in one interval), each running up to 2 at once: consumers count 1, "
          "slots 2 (6 started jobs without a finish time left out of the slots, 5 of them failed)");
  }

  TEST_CASE("fit real logs: the Flower-style example log fits with its skew clamped and its failures counted") {
    ScratchDir dir("fit-flower");
    const std::string log = kRealLogsSource + "/experiments/fit/examples/flower-tasks.csv";
    const auto r = run_cli({"fit", log, "--columns", kRealLogsCelery, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(real_logs_has(r.out, "brokersim fit: " + log + ": 532 jobs, 1 queue, 3 workers\n"));
    CHECK(real_logs_has(r.out, "  clock skew: "));
    CHECK(real_logs_has(r.out, "most on worker \"celery@pod-c\""));
    CHECK(real_logs_has(r.out, "  outcomes (from the column state): 477 succeeded, 52 failed ("));
    CHECK(real_logs_has(r.out, "2 running, 1 queued when the log was taken"));
    CHECK(real_logs_has(r.out, "consumers count 3, slots 4"));
    const auto fitted = nlohmann::json::parse(read_file(dir.path("fitted.json")));
    CHECK(fitted["consumers"][0]["count"] == 3);
    CHECK(fitted["consumers"][0]["slots"] == 4);
    // The skew, the outcomes, the failed attempts and the failure_probability written.
    CHECK(fitted["notes"].size() == 4);
    // Strict, the log is refused at its first skewed row, named by line and column.
    const auto strict = run_cli({"fit", log, "--columns", kRealLogsCelery, "--skew-tolerance", "0"});
    CHECK(strict.status == 2);
    CHECK(real_logs_has(strict.err, "column started: expected a time at or after sent ("));
  }

  TEST_CASE("fit real logs: --check-tolerance is parsed and bounded") {
    double rel = -1, abs = -1;
    fit::parse_check_tolerance("10%", rel, abs);
    CHECK(rel == doctest::Approx(0.1));
    CHECK(abs == 0);
    fit::parse_check_tolerance("50ms", rel, abs);
    CHECK(rel == 0);
    CHECK(abs == 50);
    fit::parse_check_tolerance("10%,2s", rel, abs);
    CHECK(rel == doctest::Approx(0.1));
    CHECK(abs == 2000);
    fit::parse_check_tolerance("0", rel, abs);
    CHECK(rel == 0);
    CHECK(abs == 0);
    for (const std::string bad : {"", "10", "ten%", "10%,20%", "5ms,5ms", "-1%", "2h", "1e400ms", "0,10%", "10%,"}) {
      CAPTURE(bad);
      CHECK_THROWS_AS(fit::parse_check_tolerance(bad, rel, abs), ScenarioError);
    }
    CHECK(fit::describe_tolerance(0.1, 20) == "10% or 20 ms, the larger");
    ScratchDir dir("fit-tol");
    const std::string log = dir.write("jobs.csv", "enqueued_at,started_at,finished_at\n1,2,3\n");
    const auto r = run_cli({"fit", log, "--check-tolerance", "5%"});
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: --check-tolerance: expected --check beside it, got no --check\n");
  }

  TEST_CASE("fit real logs: --check says matches, differs slightly or does not match, with the size of the gap") {
    ScratchDir dir("fit-verdict");
    const std::string scenario = kRealLogsSource + "/experiments/fit/examples/known-gamma.json";
    const std::string trace = dir.path("jobs.csv");
    REQUIRE(run_cli({"run", scenario, "--set", "stop.time_ms=120000", "--trace", trace}).status == 0);
    // Five consumers where the log's system had four: the waits are about a quarter.
    nlohmann::json doc = nlohmann::json::parse(read_file(scenario));
    doc["consumers"][0]["count"] = 5;
    const std::string five = dir.write("five.json", doc.dump());
    const std::string cols = "enqueued=created_ms,started=started_ms,finished=finished_ms,worker=consumer";
    const auto strict = run_cli({"fit", trace, "--columns", cols, "--check", five, "--replications", "4", "--seed", "7"});
    INFO(strict.out << strict.err);
    CHECK(strict.status == 6);
    CHECK(real_logs_has(strict.out, "difference (95% interval)   tolerance   verdict"));
    CHECK(real_logs_has(strict.out, "does not match\n"));
    CHECK(real_logs_has(strict.out, "Verdict: the model does not match the log (tolerance 10% or 20 ms, the larger).\n  Fails first: "));
    CHECK(real_logs_has(strict.out, "beyond the tolerance of"));
    CHECK(real_logs_has(strict.out, "the model's waits are too short there"));
    // A tolerance of 10x the log's value: the same gap differs slightly, and the command succeeds.
    const auto loose = run_cli({"fit", trace, "--columns", cols, "--check", five, "--replications", "4", "--seed", "7",
                                "--check-tolerance", "1000%"});
    INFO(loose.out << loose.err);
    CHECK(loose.status == 0);
    CHECK(real_logs_has(loose.out, "differs slightly\n"));
    CHECK(real_logs_has(loose.out, "Verdict: the model differs slightly from the log: outside the range of the model's own runs, "
                         "but by less than the tolerance (--check-tolerance 1000%):\n"));
    CHECK(!real_logs_has(loose.out, "does not match"));
    // Against its own scenario: no figure does not match (the runs differ from the log by chance,
    // by less than the default tolerance where outside the runs' range).
    const auto same = run_cli({"fit", trace, "--columns", cols, "--check", scenario, "--replications", "8", "--seed", "7"});
    INFO(same.out << same.err);
    CHECK(same.status == 0);
    CHECK(!real_logs_has(same.out, "does not match"));
  }
}
