// brokersim fit against the third hostile round (issue 38): limits checked while the log is read
// and before intervals are allocated, the fleet and interval accounting in time linear in the
// executions and intervals, --check giving no verdict from runs stopped at a limit, the exact
// interval of an exponential mean, errors named by the log's line and column (never by a key of
// the scenario fitted from it), file names made safe from queue names and opened before the work,
// and every number of the log and the command line read by a checked routine.
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
  TEST_CASE("fit hostile: the 65th queue is refused while the log is read, naming its line, column and the limit") {
    fit::ColumnNames c;
    c.queue = "queue";
    // 100,000 queues, and a broken row after the 65th: the queue limit must stop the reader first.
    std::string text = "enqueued_at,started_at,finished_at,queue\n";
    for (int i = 0; i < 100'000; ++i) {
      text += "1,2,3,q" + std::to_string(i) + "\n";
      if (i == 200) text += "1,2,broken,q0\n";
    }
    CHECK(reader_error(text, c) ==
          "log.csv line 66, column queue: expected at most 64 distinct queue names (brokersim's limit on a scenario's "
          "queues: fit the log's queues in groups of at most 64), got \"q64\", the 65th");
    // 64 queues are read.
    std::string ok = "enqueued_at,started_at,finished_at,queue\n";
    for (int i = 0; i < 64; ++i) ok += "1,2,3,q" + std::to_string(i) + "\n";
    CHECK(fit::read_job_log_text(ok, "log.csv", c, fit::TimeFormat::Auto).queues.size() == 64);
    // The command: exit 2, the line named, nothing written.
    ScratchDir dir("fit-hostile-queues");
    const std::string log = dir.write("many.csv", text);
    const auto r = run_cli({"fit", log, "--columns", "queue=queue", "--out", dir.path("fitted.json")});
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: " + log + " line 66, column queue: expected at most 64 distinct queue names "
                   "(brokersim's limit on a scenario's queues: fit the log's queues in groups of at most 64), got \"q64\", the 65th\n");
    CHECK(listing(dir.dir) == std::vector<std::string>{"many.csv"});
  }

  TEST_CASE("fit hostile: a span beyond 1e11 ms and a job longer than that are refused at their line") {
    CHECK(reader_error(kHeader + "0,1,2\n\n100000001,100000001,100000002\n") ==
          "log.csv line 4, column enqueued_at: expected a time at most 1e11 ms (about 3 years) after the earliest "
          "enqueue (line 2): a log spans at most that, got \"100000001\", 1e+11 ms after it");
    CHECK(reader_error(kHeader + "100000001,100000001,100000002\n0,1,2\n") ==
          "log.csv line 3, column enqueued_at: expected a time at most 1e11 ms (about 3 years) before the latest "
          "enqueue (line 2): a log spans at most that, got \"0\", 1e+11 ms before it");
    CHECK(reader_error(kHeader + "0,1,100000001\n") ==
          "log.csv line 2, column finished_at: expected a time at most 1e11 ms (about 3 years) after enqueued_at (0), "
          "got \"100000001\", 1e+11 ms after it");
    // Exactly 1e11 ms is the longest span read.
    CHECK(reader_error(kHeader + "0,1,2\n100000000,100000000,100000001\n") == "accepted");
  }

  TEST_CASE("fit hostile: the number of intervals is checked before any is allocated") {
    ScratchDir dir("fit-hostile-intervals");
    // Two rows 1e8 s apart: --interval 1ms would be 1e11 intervals (std::bad_alloc before).
    const std::string log = dir.write("wide.csv", kHeader + "0,1,2\n100000000,100000000,100000001\n");
    const auto r = run_cli({"fit", log, "--interval", "1ms", "--out", dir.path("fitted.json")});
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: --interval: expected an interval that cuts the log's span (100000000000 ms) into at "
                   "most 1,000,000 intervals, so 2min or longer, got \"1ms\": 100,000,000,000 intervals\n");
    CHECK(listing(dir.dir) == std::vector<std::string>{"wide.csv"});
    // The limit is shared by the queues: two queues over 1,000 s at 1 ms are 2,000,000.
    const std::string two = dir.write("two.csv", "enqueued_at,started_at,finished_at,queue\n0,0,1,a\n1000,1000,1001,b\n");
    const auto q = run_cli({"fit", two, "--columns", "queue=queue", "--interval", "1ms"});
    CHECK(q.status == 2);
    CHECK(q.err == "brokersim: error: --interval: expected an interval that cuts the log's span (1000000 ms) into at most "
                   "1,000,000 intervals over its 2 queues (500,000 each), so 2ms or longer, got \"1ms\": 1,000,000 "
                   "intervals per queue\n");
    CHECK(run_cli({"fit", two, "--columns", "queue=queue", "--interval", "2ms"}).status == 0);
    // The functions refuse too, whoever calls them.
    CHECK_THROWS_AS(fit::fit_arrivals({0, 1}, 0, 100'000'000'000'000'000LL, 1'000'000), ScenarioError);
    CHECK(fit::interval_count(1'000'000'000'000LL, 1'000'000) == 1'000'000);
    CHECK(fit::interval_count(1'000'000'000'001LL, 1'000'000) == 1'000'001);
    CHECK(fit::interval_count(0, 1'000'000) == 1);
  }

  TEST_CASE("fit hostile: busy executions and active workers by difference arrays equal the interval-by-interval count") {
    // Random executions over 200 intervals, some spanning many, some none (instant), some never
    // finished, three workers.
    sim::Rng rng(38, 0, "fleet");
    std::string text = "enqueued_at,started_at,finished_at,worker\n";
    for (int i = 0; i < 300; ++i) {
      const std::int64_t enq = static_cast<std::int64_t>(rng.below(190'000));
      const std::int64_t start = enq + static_cast<std::int64_t>(rng.below(5000));
      const std::int64_t length = rng.below(4) == 0 ? 0 : static_cast<std::int64_t>(rng.below(rng.below(2) ? 500 : 60'000));
      const bool finished = rng.below(20) != 0;
      text += std::to_string(enq) + "," + std::to_string(start) + "," + (finished ? std::to_string(start + length) : "") +
              ",w" + std::to_string(rng.below(3)) + "\n";
    }
    text += "200000,,,\n";
    fit::ColumnNames c;
    c.worker = "worker";
    const auto log = fit::read_job_log_text(text, "log.csv", c, fit::TimeFormat::Milliseconds);
    std::vector<std::size_t> rows(log.rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    std::int64_t origin = log.rows.front().enqueued, end = origin;
    for (const auto& r : log.rows) {
      origin = std::min(origin, r.enqueued);
      end = std::max(end, r.enqueued);
    }
    for (const std::int64_t interval : {1'000'000'000LL, 7'000'000'000LL, 1'000'000LL * 333}) {
      CAPTURE(interval);
      const auto fleet = fit::fit_fleet(log, rows, origin, end, interval);
      const auto naive = naive_fleet(log, origin, end, interval);
      REQUIRE(fleet.busy.size() == naive.busy.size());
      for (std::size_t i = 0; i < naive.busy.size(); ++i) {
        CAPTURE(i);
        CHECK(fleet.busy[i] == doctest::Approx(naive.busy[i]).epsilon(1e-12));
        CHECK(fleet.active[i] == naive.active[i]);
      }
    }
  }

  TEST_CASE("fit hostile: 20,000 executions over 1,000 s at 1 ms intervals cost executions + intervals") {
    // Each execution spans the whole log: walked interval by interval this is 2e10 steps (minutes);
    // by difference arrays 20,000 + 1,000,000.
    std::string text = "enqueued_at,started_at,finished_at\n";
    for (int i = 0; i < 20'000; ++i) text += "0,0,1000\n";
    text += "1000,1000,1000\n";
    const auto log = fit::read_job_log_text(text, "log.csv", {}, fit::TimeFormat::Seconds);
    std::vector<std::size_t> rows(log.rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
    const std::int64_t span = 1000LL * 1'000'000'000;
    const auto fleet = fit::fit_fleet(log, rows, 0, span, 1'000'000);
    REQUIRE(fleet.busy.size() == 1'000'001);
    CHECK(fleet.busy[0] == 20'000);
    CHECK(fleet.busy[999'999] == 20'000);
    CHECK(fleet.busy[1'000'000] == 0);  // the zero-length interval at the log's end
    CHECK(fleet.count == 20'000);
    CHECK(fleet.peak == 20'000);
    // Arrivals at 1 ms: the counts, with no 10 x intervals array of sub-counts.
    std::vector<std::int64_t> times;
    for (const auto& r : log.rows) times.push_back(r.enqueued);
    std::sort(times.begin(), times.end());
    const auto arrivals = fit::fit_arrivals(times, 0, span, 1'000'000);
    CHECK(arrivals.steps.size() == 1'000'000);
    CHECK(arrivals.steps.front().count == 20'000);
    CHECK(arrivals.steps.back().count == 1);
    // The command end to end (no --out: the 1,000,000-row time series is not written).
    ScratchDir dir("fit-hostile-linear");
    const auto r = run_cli({"fit", dir.write("jobs.csv", text), "--interval", "1ms"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(contains(r.out, "in 1000000 intervals of 1ms"));
  }

  TEST_CASE("fit hostile: the dispersion test gathered interval by interval equals the sub-interval count") {
    // One pass over the sorted times now; the statistic is the same as from a table of 10 counts
    // per interval: recomputed here from that table.
    sim::Rng rng(5, 0, "dispersion");
    std::vector<std::int64_t> times;
    for (double t = 0;;) {
      t += rng.exponential(0.3);
      if (t >= 600) break;
      times.push_back(static_cast<std::int64_t>(t * 1e9));
      if (rng.below(10) == 0) times.push_back(static_cast<std::int64_t>(t * 1e9) + 1000);  // some clumping
    }
    std::sort(times.begin(), times.end());
    const std::int64_t span = 600LL * 1'000'000'000, interval = 10LL * 1'000'000'000;
    const auto fit = fit::fit_arrivals(times, 0, span, interval);
    std::vector<std::vector<double>> sub(60, std::vector<double>(10, 0));
    for (const std::int64_t t : times) {
      const auto i = static_cast<std::size_t>(std::min<std::int64_t>(t / interval, 59));
      sub[i][static_cast<std::size_t>(std::min<std::int64_t>((t - static_cast<std::int64_t>(i) * interval) / (interval / 10), 9))] += 1;
    }
    double stat = 0, dof = 0;
    for (const auto& s : sub) {
      double c = 0;
      for (double x : s) c += x;
      if (c < 2) continue;
      for (double x : s) stat += (x - c / 10) * (x - c / 10) / (c / 10);
      dof += 9;
    }
    REQUIRE(fit.tested);
    CHECK(fit.dof == dof);
    CHECK(fit.dispersion == doctest::Approx(stat / dof).epsilon(1e-12));
  }

  TEST_CASE("fit hostile: --check gives no verdict when its runs stopped at limits.max_events (exit status 3)") {
    ScratchDir dir("fit-hostile-limit");
    const std::string source = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/fit/examples/known-gamma.json";
    const std::string trace = dir.path("jobs.csv");
    REQUIRE(run_cli({"run", source, "--set", "stop.time_ms=120000", "--trace", trace}).status == 0);
    nlohmann::json doc = nlohmann::json::parse(read_file(source));
    doc["limits"] = {{"max_events", 2000}};
    const std::string limited = dir.write("limited.json", doc.dump());
    const auto r = run_cli({"fit", trace, "--columns", "enqueued=created_ms,started=started_ms,finished=finished_ms,worker=consumer",
                            "--check", limited, "--replications", "3"});
    INFO(r.out << r.err);
    CHECK(r.status == 3);
    CHECK(!contains(r.out, "Verdict: the model matches the log"));
    CHECK(!contains(r.out, "Verdict: the model does NOT match"));
    CHECK(contains(r.out, "No verdict: replication 0 stopped at limits.max_events (2,000 events) after creating "));
    CHECK(contains(r.out, "so its waits cover only part of the log's span: raise limits.max_events in " + limited));
    CHECK(contains(r.err, "brokersim: warning: fit --check gives no verdict: replication 0 stopped at limits.max_events"));
    // Without the limit the same check has a verdict.
    const auto ok = run_cli({"fit", trace, "--columns", "enqueued=created_ms,started=started_ms,finished=finished_ms,worker=consumer",
                             "--check", source, "--replications", "3"});
    CHECK(ok.status == 0);
    CHECK(contains(ok.out, "Verdict: the model matches the log"));
  }

  TEST_CASE("fit hostile: the exponential mean's interval is the exact chi-square one, never below zero") {
    // Chi-square quantiles from tables (Abramowitz and Stegun 26.4): 2 degrees of freedom 0.0506356
    // and 7.377759; 6: 1.237344 and 14.44938; 10: 3.246973 and 20.48318.
    const auto one = fit::exponential_mean_interval(10.0, 1);
    CHECK(one.lo == doctest::Approx(2 * 10.0 / 7.377759).epsilon(1e-6));
    CHECK(one.hi == doctest::Approx(2 * 10.0 / 0.0506356).epsilon(1e-5));
    const auto five = fit::exponential_mean_interval(3.0, 5);
    CHECK(five.lo == doctest::Approx(10 * 3.0 / 20.48318).epsilon(1e-6));
    CHECK(five.hi == doctest::Approx(10 * 3.0 / 3.246973).epsilon(1e-6));
    // Through the fit, on the sample the textbook interval took below zero: 2333 -+ 2641.
    const auto e = fit::fit_exponential({1000, 2000, 4000});
    CHECK(e.params[0].value == doctest::Approx(7000.0 / 3));
    CHECK(e.params[0].lo == doctest::Approx(14000 / 14.44938).epsilon(1e-6));
    CHECK(e.params[0].hi == doctest::Approx(14000 / 1.237344).epsilon(1e-6));
    // Coverage on small samples, fixed seeds: exactly 95% in expectation; 4,000 samples of 3 give
    // a binomial standard error of 0.0034, and 0.937 .. 0.963 is about 3.8 of them either side.
    int covered = 0, positive = 0;
    constexpr int kSamples = 4000;
    for (int i = 0; i < kSamples; ++i) {
      sim::Rng rng(1000 + static_cast<std::uint64_t>(i), 0, "exp-coverage");
      std::vector<double> xs(3);
      for (auto& x : xs) x = rng.exponential(10.0);
      std::sort(xs.begin(), xs.end());
      const auto f = fit::fit_exponential(xs);
      covered += f.params[0].lo <= 10.0 && 10.0 <= f.params[0].hi;
      positive += f.params[0].lo > 0;
    }
    CHECK(positive == kSamples);
    CHECK(covered / double(kSamples) >= 0.937);
    CHECK(covered / double(kSamples) <= 0.963);
    // The other families' intervals are on the log scale: positive on the smallest samples too.
    for (const auto& xs : std::vector<std::vector<double>>{{1, 1000}, {0.001, 0.002, 50}, {3, 4, 400, 5000}}) {
      for (const auto& f : {fit::fit_lognormal(xs), fit::fit_gamma(xs), fit::fit_weibull(xs)}) {
        CAPTURE(f.name);
        for (const auto& p : f.params) {
          CAPTURE(p.name);
          CHECK(p.lo > 0);
          CHECK(p.lo <= p.value);
          CHECK(p.value <= p.hi);
        }
      }
    }
  }
}
