// brokersim fit (experiments/cli/fit/): the log reader's formats and errors, the maximum likelihood
// fits (exact on small samples, and their 95% intervals covering the truth at the stated rate),
// the Poisson test on Poisson, bursty and periodic arrivals. The command end to end is in
// test_fit_command.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <boost/math/special_functions/digamma.hpp>

#include "experiments/cli/fit/arrivals.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/fit/mle.hpp"
#include "sim/distribution.hpp"
#include "tests/fit_test_util.hpp"
#include "tests/test_util.hpp"

namespace {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using brokersim::test::within_999;
namespace fs = std::filesystem;

std::vector<double> draw(const sim::Distribution& d, std::uint64_t seed, std::size_t n) {
  sim::Rng rng(seed, 0, "fit-test");
  std::vector<double> xs(n);
  for (auto& x : xs) x = d.sample(rng);
  std::sort(xs.begin(), xs.end());
  return xs;
}

fit::JobLog log_of(const std::string& text, const fit::ColumnNames& columns = {},
                   fit::TimeFormat format = fit::TimeFormat::Auto) {
  return fit::read_job_log_text(text, "log.csv", columns, format);
}

std::string error_of(const std::string& text, const fit::ColumnNames& columns = {}) {
  try {
    log_of(text, columns);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_SUITE("fit") {
  TEST_CASE("fit: ISO-8601 and decimal times, exactly to the nanosecond") {
    std::int64_t ns = 0;
    bool naive = false;
    REQUIRE(fit::parse_iso8601("1970-01-01T00:00:00Z", ns, naive));
    CHECK(ns == 0);
    CHECK(!naive);
    REQUIRE(fit::parse_iso8601("2026-12-03T15:28:43.123456789Z", ns, naive));
    CHECK(ns == 1796311723123456789LL);
    REQUIRE(fit::parse_iso8601("2026-12-03 16:28:43.5+01:00", ns, naive));
    CHECK(ns == 1796311723500000000LL);
    REQUIRE(fit::parse_iso8601("2026-12-03T15:28:43", ns, naive));
    CHECK(naive);
    REQUIRE(fit::parse_iso8601("2024-02-29T00:00:00-0130", ns, naive));
    CHECK(ns == (19782LL * 86400 + 5400) * 1'000'000'000LL);
    for (const char* bad : {"2026-02-29T00:00:00Z", "2026-13-01", "2026-12-03T25:00:00Z", "2026-12-03T15:28:43Q",
                            "2026-12-03T15:28:43.Z", "12/03/2026"})
      CHECK_MESSAGE(!fit::parse_iso8601(bad, ns, naive), bad);
    REQUIRE(fit::parse_decimal_time("1733239723.123456789", 1'000'000'000, ns));
    CHECK(ns == 1733239723123456789LL);
    REQUIRE(fit::parse_decimal_time("12.5", 1'000'000, ns));
    CHECK(ns == 12'500'000);
    REQUIRE(fit::parse_decimal_time("-3", 1'000'000, ns));
    CHECK(ns == -3'000'000);
    REQUIRE(fit::parse_decimal_time("1.5e3", 1'000'000, ns));
    CHECK(ns == 1'500'000'000);
    for (const char* bad : {"", ".", "1.2.3", "12a", "9999999999999", "nan"})
      CHECK_MESSAGE(!fit::parse_decimal_time(bad, 1'000'000'000, ns), bad);
  }

  TEST_CASE("fit: the time format is detected and stated") {
    const auto iso = log_of("enqueued_at,started_at,finished_at\n2026-01-01T00:00:00Z,2026-01-01T00:00:01Z,2026-01-01T00:00:03Z\n");
    CHECK(iso.format == fit::TimeFormat::Iso8601);
    CHECK(iso.rows[0].started - iso.rows[0].enqueued == 1'000'000'000);
    const auto epoch_ms = log_of("enqueued_at,started_at,finished_at\n1764547200000,1764547200250,1764547200300\n");
    CHECK(epoch_ms.format == fit::TimeFormat::Milliseconds);
    CHECK(epoch_ms.rows[0].started - epoch_ms.rows[0].enqueued == 250'000'000);
    const auto epoch_s = log_of("enqueued_at,started_at,finished_at\n1764547200,1764547200.25,1764547201\n");
    CHECK(epoch_s.format == fit::TimeFormat::Seconds);
    fit::ColumnNames trace;
    trace.enqueued = "created_ms";
    trace.started = "started_ms";
    trace.finished = "finished_ms";
    const auto named = log_of("created_ms,started_ms,finished_ms\n10,12.5,20\n", trace);
    CHECK(named.format == fit::TimeFormat::Milliseconds);
    CHECK(named.format_reason.find("named in ms") != std::string::npos);
    const auto forced = log_of("enqueued_at,started_at,finished_at\n10,12.5,20\n", {}, fit::TimeFormat::Milliseconds);
    CHECK(forced.rows[0].finished == 20'000'000);
    const auto quoted = log_of("\"enqueued_at\",\"started_at\",\"finished_at\"\n\"1\",\"2\",\"4\"\n");
    CHECK(quoted.rows[0].finished - quoted.rows[0].started == 2'000'000'000);
  }

  TEST_CASE("fit: bad logs name the line and the column") {
    const std::string h = "enqueued_at,started_at,finished_at\n";
    CHECK(error_of("") == "log.csv: expected a header row naming the columns, got an empty file");
    CHECK(error_of(h) == "log.csv: expected at least one job row after the header, got none");
    CHECK(error_of("enqueued_at,started_at,done\n1,2,3\n") ==
          "log.csv line 1: expected a header naming the column \"finished_at\" (map yours with --columns), got "
          "\"enqueued_at,started_at,done\"");
    CHECK(error_of(h + "1,2,3\n1,x,3\n") == "log.csv line 3, column started_at: expected a number of seconds "
                                            "(numbers below 1e11 in enqueued_at: seconds (say --time-unit ms if they "
                                            "are milliseconds)), got \"x\"");
    CHECK(error_of(h + "1,2,3\n1,3,2.5\n") ==
          "log.csv line 3, column finished_at: expected a time at or after started_at (3), got \"2.5\"");
    CHECK(error_of(h + "5,2,3\n") == "log.csv line 2, column started_at: expected a time at or after enqueued_at (5), got \"2\"");
    CHECK(error_of(h + "1,,3\n") == "log.csv line 2, column started_at: expected a time (the job has a finished_at), got an empty cell");
    CHECK(error_of(h + ",1,3\n") == "log.csv line 2, column enqueued_at: expected a time, got an empty cell");
    CHECK(error_of(h + "1,2\n") == "log.csv line 2: expected 3 cells, as the header has, got 2");
    CHECK(error_of(h + "2026-01-01T00:00:00Z,2026-01-01T00:00:01Z,3\n") ==
          "log.csv line 2, column finished_at: expected an ISO-8601 time like 2026-12-03T15:28:43.5Z (ISO-8601 in "
          "enqueued_at), got \"3\"");
    CHECK(error_of(h + "1,2,\"3\n") == "log.csv line 2: expected a closing quote, got the end of the line");
    CHECK(error_of("a,a\n") == "log.csv line 1: expected each column name once, got \"a\" twice");
    CHECK(error_of(h + std::string(fit::kMaxLineBytes + 1, '1') + "\n").find("log.csv line 2: expected a line of at most") == 0);
  }

  TEST_CASE("fit: --columns and --time-unit are validated") {
    CHECK(fit::parse_column_names("enqueued=a,started=b,finished=c,queue=q,worker=w").worker == "w");
    for (const auto& [text_, message_] : std::vector<std::pair<std::string, std::string>>{
             {"enqueued=a,start=b", "--columns: expected FIELD=NAME items with FIELD one of enqueued, started, finished, queue, worker, state, succeeded, failed, id, got \"start=b\""},
             {"enqueued=", "--columns: expected a column name after \"enqueued=\", got nothing"},
             {"queue=a,queue=b", "--columns: expected each field once, got \"queue\" twice"}}) {
      const auto& text = text_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& message = message_;
      CAPTURE(text);
      try {
        fit::parse_column_names(text);
        FAIL("accepted");
      } catch (const ScenarioError& e) {
        CHECK(std::string(e.what()) == message);
      }
    }
    CHECK_THROWS_WITH_AS(fit::parse_time_format("us"), "--time-unit: expected one of \"auto\", \"iso\", \"s\", \"ms\", got \"us\"",
                         ScenarioError);
    CHECK(fit::parse_interval("5min") == 300'000'000'000LL);
    CHECK(fit::parse_interval("0.5s") == 500'000'000LL);
    CHECK_THROWS_AS(fit::parse_interval("5"), ScenarioError);
    CHECK_THROWS_AS(fit::parse_interval("0.1ms"), ScenarioError);
    CHECK(fit::format_interval(300'000'000'000LL) == "5min");
  }

  TEST_CASE("fit: exact maximum likelihood on a small sample") {
    const std::vector<double> xs{1000, 2000, 4000};
    const auto e = fit::fit_exponential(xs);
    CHECK(e.params[0].value == doctest::Approx(7000.0 / 3));
    CHECK(e.log_likelihood == doctest::Approx(-3 * std::log(7000.0 / 3) - 3));
    CHECK(e.aic == doctest::Approx(2 + 6 * std::log(7000.0 / 3) + 6));
    // logs: ln 1000 + {0, ln 2, ln 4}: mu = ln 1000 + ln 2, sigma^2 = (2/3) ln(2)^2.
    const auto l = fit::fit_lognormal(xs);
    CHECK(l.a == doctest::Approx(std::log(2000.0)));
    CHECK(l.b * l.b == doctest::Approx(2.0 / 3 * std::log(2.0) * std::log(2.0)));
    CHECK(l.params[0].value == doctest::Approx(std::exp(l.a + l.b * l.b / 2)));
    // KS distance of the exponential by hand: F(x) = 1 - exp(-x / m) at the three points.
    double d = 0;
    for (int i = 0; i < 3; ++i) {
      const double f = 1 - std::exp(-xs[static_cast<std::size_t>(i)] / (7000.0 / 3));
      d = std::max({d, f - i / 3.0, (i + 1) / 3.0 - f});
    }
    CHECK(e.ks == doctest::Approx(d));
    // The gamma and Weibull estimates solve their score equations.
    const auto g = fit::fit_gamma(xs);
    const double s = std::log(7000.0 / 3) - std::log(8e9) / 3;
    CHECK(std::log(g.a) - boost::math::digamma(g.a) == doctest::Approx(s).epsilon(1e-10));
    CHECK(g.a * g.b == doctest::Approx(7000.0 / 3));
    const auto w = fit::fit_weibull(xs);
    double s0 = 0, s1 = 0, sl = 0;
    for (double x : xs) {
      s0 += std::pow(x, w.a);
      s1 += std::pow(x, w.a) * std::log(x);
      sl += std::log(x);
    }
    CHECK(s1 / s0 - 1 / w.a - sl / 3 == doctest::Approx(0).scale(1e-8));
    CHECK(std::pow(w.b, w.a) == doctest::Approx(s0 / 3).epsilon(1e-9));
    CHECK_THROWS_AS(fit::fit_gamma({5, 5, 5}), std::invalid_argument);
    // The empirical keeps a small sample whole, and a large one as 1000 quantiles.
    CHECK(fit::fit_empirical(xs).values == xs);
    CHECK(fit::fit_empirical(draw(sim::Distribution::exp(1), 3, 5000)).values.size() == fit::kEmpiricalValues);
  }

  TEST_CASE("fit: each family recovered from its own samples, and chosen by AIC") {
    struct Case {
      sim::Distribution d;
      const char* name;
      double p1, p2;  // the syntax's parameters
    };
    const double ln_cv = 0.8;
    const std::vector<Case> cases{{sim::Distribution::exp(120), "exp", 120, 0},
                                  {sim::Distribution::lognormal(100, ln_cv), "lognormal", 100, ln_cv},
                                  {sim::Distribution::gamma(2.5, 40), "gamma", 2.5, 40},
                                  {sim::Distribution::weibull(0.8, 90), "weibull", 0.8, 90}};
    std::uint64_t seed = 100;
    for (const auto& c : cases) {
      CAPTURE(c.name);
      const auto fit = fit::fit_service_times(draw(c.d, seed++, 20000));
      const auto& chosen = fit.fits[fit.chosen];
      CHECK(chosen.name == c.name);
      CHECK(within_999(chosen.params[0], c.p1));
      if (chosen.params.size() > 1) CHECK(within_999(chosen.params[1], c.p2));
      CHECK(chosen.ks_p > 0.001);
    }
  }

  TEST_CASE("fit: the 95% intervals cover the true parameters about 95% of the time") {
    // 300 samples of 400 each. Coverage is binomial(300, 0.95): 3.3 standard errors (0.0126
    // each) either side allow 0.908 .. 0.992.
    constexpr int kSamples = 300;
    const auto coverage = [&](const sim::Distribution& d, auto fitter, double p1, double p2, std::uint64_t seed) {
      int c1 = 0, c2 = 0;
      for (int i = 0; i < kSamples; ++i) {
        const auto f = fitter(draw(d, seed + static_cast<std::uint64_t>(i), 400));
        c1 += f.params[0].lo <= p1 && p1 <= f.params[0].hi;
        c2 += f.params[1].lo <= p2 && p2 <= f.params[1].hi;
      }
      return std::pair<double, double>(c1 / double(kSamples), c2 / double(kSamples));
    };
    for (const auto& [name_, cov_] : std::vector<std::pair<std::string, std::pair<double, double>>>{
             {"lognormal", coverage(sim::Distribution::lognormal(100, 0.7), fit::fit_lognormal, 100, 0.7, 1000)},
             {"gamma", coverage(sim::Distribution::gamma(1.7, 30), fit::fit_gamma, 1.7, 30, 2000)},
             {"weibull", coverage(sim::Distribution::weibull(1.3, 50), fit::fit_weibull, 1.3, 50, 3000)}}) {
      const auto& name = name_;  // not the binding: clang 14 cannot capture one in a check's lambda
      const auto& cov = cov_;
      CAPTURE(name);
      CHECK(cov.first >= 0.908);
      CHECK(cov.first <= 0.992);
      CHECK(cov.second >= 0.908);
      CHECK(cov.second <= 0.992);
    }
  }

  TEST_CASE("fit: Poisson arrivals pass the dispersion test, bursts and a timer do not") {
    constexpr std::int64_t kS = 1'000'000'000;
    const std::int64_t span = 3600 * kS;
    // Poisson at 5/s for the first half hour, 20/s after.
    sim::Rng rng(9, 0, "arrivals");
    std::vector<std::int64_t> poisson;
    for (double t = 0;;) {
      t += rng.exponential(t < 1800 ? 0.2 : 0.05);
      if (t * 1e9 > static_cast<double>(span)) break;
      poisson.push_back(static_cast<std::int64_t>(t * 1e9));
    }
    std::string why;
    const std::int64_t interval = fit::default_interval(span, poisson.size(), why);
    CHECK(interval == 30 * kS);  // 120 intervals of 375 arrivals on average
    const auto p = fit::fit_arrivals(poisson, 0, span, interval);
    CHECK(p.tested);
    CHECK(p.poisson);
    CHECK(p.steps.size() == 120);
    // Each interval's 95% interval holds its true rate.
    int covered = 0;
    for (const auto& s : p.steps) covered += s.lo <= (s.from_ms < 1.8e6 ? 5 : 20) && (s.from_ms < 1.8e6 ? 5 : 20) <= s.hi;
    CHECK(covered >= 107);  // binomial(120, 0.95): P(< 107) < 0.5%
    // The schedule merges the intervals of each rate: two steps, the change where it happened.
    REQUIRE(p.segments.size() == 2);
    CHECK(p.segments[1].from_ms == 1.8e6);
    CHECK(p.segments[0].lo <= 5);
    CHECK(p.segments[0].hi >= 5);
    CHECK(p.segments[1].lo <= 20);
    CHECK(p.segments[1].hi >= 20);
    // Bursts of 10 jobs within 1 ms, at Poisson times (0.5/s): the same mean rate, clumped.
    std::vector<std::int64_t> bursts;
    for (double t = 0;;) {
      t += rng.exponential(2.0);
      if (t * 1e9 > static_cast<double>(span) - 1e6) break;
      for (int j = 0; j < 10; ++j) bursts.push_back(static_cast<std::int64_t>(t * 1e9) + j * 100'000);
    }
    const auto b = fit::fit_arrivals(bursts, 0, span, interval);
    CHECK(!b.poisson);
    CHECK(b.dispersion > 5);
    CHECK(b.verdict.find("bursts") != std::string::npos);
    // One job every 200 ms exactly.
    std::vector<std::int64_t> timer;
    for (std::int64_t t = 0; t < span; t += kS / 5) timer.push_back(t);
    const auto r = fit::fit_arrivals(timer, 0, span, interval);
    CHECK(!r.poisson);
    CHECK(r.dispersion < 0.1);
    CHECK(r.verdict.find("more regular") != std::string::npos);
  }

  TEST_CASE("fit: workers over time and slots per worker from a worker column") {
    fit::ColumnNames c;
    c.worker = "worker";
    // w1 runs two jobs at once (1..3 and 2..4), w2 one (5..6); interval 1 s.
    const auto log = log_of("enqueued_at,started_at,finished_at,worker\n0,1,3,w1\n0,2,4,w1\n4,5,6,w2\n6,,,\n", c);
    std::vector<std::size_t> rows{0, 1, 2, 3};
    const auto f = fit::fit_fleet(log, rows, 0, 6'000'000'000LL, 1'000'000'000LL);
    CHECK(f.from_workers);
    CHECK(f.count == 2);
    CHECK(f.slots == 2);
    CHECK(f.active == std::vector<double>{0, 1, 1, 1, 0, 1, 0});
    CHECK(f.busy[2] == doctest::Approx(2.0));
    CHECK(f.busy[5] == doctest::Approx(1.0));
  }
}
