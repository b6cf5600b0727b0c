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

#include "experiments/fit/arrivals.hpp"
#include "experiments/fit/log_reader.hpp"
#include "experiments/fit/mle.hpp"
#include "sim/distribution.hpp"
#include "tests/test_util.hpp"

// A named namespace, not an anonymous one: the test files are compiled several to a unit.
namespace fit_hostile_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
namespace fs = std::filesystem;

const std::string kHeader = "enqueued_at,started_at,finished_at\n";

std::string reader_error(const std::string& text, const fit::ColumnNames& columns = {},
                         fit::TimeFormat format = fit::TimeFormat::Auto) {
  try {
    fit::read_job_log_text(text, "log.csv", columns, format);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "accepted";
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The per-interval busy executions and active workers, the obvious way: each execution walks every
// interval it spans (what fit_fleet did, in time proportional to executions x intervals).
struct NaiveFleet {
  std::vector<double> busy, active;
};
NaiveFleet naive_fleet(const fit::JobLog& log, std::int64_t origin, std::int64_t end, std::int64_t interval) {
  const std::int64_t k = (end - origin) / interval + 1;
  NaiveFleet f{std::vector<double>(static_cast<std::size_t>(k), 0.0), std::vector<double>(static_cast<std::size_t>(k), 0.0)};
  std::vector<std::vector<bool>> seen(log.workers.size(), std::vector<bool>(static_cast<std::size_t>(k), false));
  for (const auto& r : log.rows) {
    // An execution without a finish time is left out of the busy and active counts (issue 39: a
    // failed job without one counted as running until the log's end).
    if (r.started == fit::kNoTime || r.finished == fit::kNoTime) continue;
    const std::int64_t fin = r.finished;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t lo = origin + i * interval, hi = lo + interval;
      const std::int64_t overlap = std::min(fin, hi) - std::max(r.started, lo);
      if (overlap > 0) f.busy[static_cast<std::size_t>(i)] += static_cast<double>(overlap) / static_cast<double>(interval);
      // Busy over [started, finished); an instant job counts in its own interval.
      const bool in = (r.started < hi && fin > lo) || (fin == r.started && r.started >= lo && r.started < hi);
      if (in && log.has_worker()) seen[r.worker][static_cast<std::size_t>(i)] = true;
    }
  }
  for (const auto& w : seen)
    for (std::size_t i = 0; i < w.size(); ++i) f.active[i] += w[i];
  return f;
}

}  // namespace fit_hostile_test

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
    CHECK(!load_scenario_file(dir.path("fitted.json")).broker.consumer_timeout.has_value());
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
