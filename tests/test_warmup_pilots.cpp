// Issue 44: warmup_ms "auto" chosen on the average of pilot replications (one cut for every
// replication, never from a reported replication's own data), its bias check, and the
// skew-aware interval (Johnson's modified t) printed for means over replications.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <boost/math/distributions/students_t.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/replication/warmup.hpp"
#include "models/run_observer.hpp"
#include "models/simulation.hpp"
#include "sim/rng.hpp"
#include "tests/test_util.hpp"

namespace warmup_pilots_test {

using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

// M/M/4 at rho 0.9 whose consumers attach at 10 s: about 360 jobs wait, drained at 4 jobs/s
// (fluid) by about 100 s; 400 s in all.
constexpr const char* kPilotLate = R"({"name": "late", "seed": 7, "stop": {"time_ms": 400000}, "warmup_ms": "auto",
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 36}}, "service_ms": {"exp": {"mean": 100}}}],
  "consumers": [{"queue": "work", "count": 4, "prefetch": 1, "slots": 1, "admission": "none", "start_ms": 10000}]})";

// Johnson's statistic t1 = (u + b + a u^2) / (s / sqrt(n)), u = mean - mu.
double pilots_johnson_t(const std::vector<double>& x, double mu) {
  const double n = static_cast<double>(x.size());
  double m = 0;
  for (double v : x) m += v;
  m /= n;
  double m2 = 0, m3 = 0;
  for (double v : x) {
    m2 += (v - m) * (v - m);
    m3 += (v - m) * (v - m) * (v - m);
  }
  const double s2 = m2 / (n - 1), k3 = n * m3 / ((n - 1) * (n - 2)), u = m - mu;
  return (u + k3 / (6 * s2 * n) + k3 / (3 * s2 * s2) * u * u) / std::sqrt(s2 / n);
}

// Whether a replication still drains the backlog its late consumers found when its warm-up ends:
// some job created in the 5 s after it waits over 2 s in the queue (80 jobs ahead of it at 40/s).
// In steady state a wait that long has chance C(4, 3.6) e^(-4/s x 2 s) = 0.75 x 0.00034 = 0.00025.
class BacklogAtCut : public brokersim::JobObserver {
 public:
  explicit BacklogAtCut(brokersim::Time cut) : cut_(cut) {}
  void job_ended(const brokersim::Job& job, brokersim::Outcome, const brokersim::JobAccount& account) override {
    if (job.created >= cut_ && job.created < cut_ + 5000 * sim::kNsPerMs && account.stages.queue > 2000 * sim::kNsPerMs) draining = true;
  }
  bool draining = false;

 private:
  brokersim::Time cut_;
};

}  // namespace warmup_pilots_test

using namespace warmup_pilots_test;

TEST_CASE("warm-up pilots: one cut for every replication and the same for any thread count") {
  ScratchDir d("brokersim-warmup-pilots");
  const std::string f = d.write("s.json", kPilotLate);
  const auto r0 = nlohmann::json::parse(run_cli({"run", f, "--json", "--replication", "0"}).out);
  const auto r3 = nlohmann::json::parse(run_cli({"run", f, "--json", "--replication", "3"}).out);
  // The cut is the pilots', not the replication's: the same in both, past the fluid drain (~100 s)
  // and well before the end, and the runs differ (their own streams).
  CHECK(r0["run"]["warmup_ms"] == r3["run"]["warmup_ms"]);
  const double w = r0["run"]["warmup_ms"];
  CHECK(w > 60000);
  CHECK(w < 200000);
  CHECK(r0["outcomes"] != r3["outcomes"]);
  CHECK(r0["run"]["steady_state"] == true);
  CHECK(r0["run"]["warmup_doubtful"] == 0);
  CHECK(std::fabs(r0["run"]["warmup_trend_t"].get<double>()) <= brokersim::student_t_quantile(9, 0.99));
  // A sweep's CSV, byte for byte, on one thread and on three.
  const auto one = run_cli({"sweep", f, "--vary", "consumers.0.count=4,5", "--replications", "3", "--threads", "1"});
  const auto three = run_cli({"sweep", f, "--vary", "consumers.0.count=4,5", "--replications", "3", "--threads", "3"});
  REQUIRE_MESSAGE(one.status == 0, one.err);
  CHECK(one.out == three.out);
}

TEST_CASE("warm-up pilots: the bias check flags kept data that still trends") {
  // rho 1.3: the queue grows to the end, so the kept data's second half waits longer than its
  // first in every pilot (t far below 0), and the run is in doubt.
  ScratchDir d("brokersim-warmup-pilots");
  auto doc = nlohmann::json::parse(kPilotLate);
  doc["producers"][0]["arrivals"]["poisson"]["rate_per_s"] = 52;
  doc["stop"]["time_ms"] = 100000;
  const std::string f = d.write("s.json", doc.dump());
  const auto j = nlohmann::json::parse(run_cli({"run", f, "--json"}).out);
  CHECK(j["run"]["warmup_doubtful"] == 1);
  const auto text = run_cli({"run", f});
  CHECK(text.out.find("averaged over 10 pilot replications (not among those reported)") != std::string::npos);
}

TEST_CASE("skew-aware interval: Johnson's statistic is -+t at the interval's ends") {
  // Right-skewed samples (exponential): the interval reaches further above the mean than Student
  // t's, and less far below; Johnson's statistic at each end is the t quantile (inverted exactly).
  sim::Rng rng(11, 0, "johnson");
  std::vector<double> x;
  for (int i = 0; i < 10; ++i) x.push_back(-std::log(rng.uniform_pos()));
  x.push_back(6.0);  // a long right tail, so that the sample's skewness is clearly positive
  const double t = brokersim::student_t_quantile(x.size() - 1, 0.95);
  const auto st = brokersim::student_t_interval(x, 0.95);
  const auto j = brokersim::johnson_interval(x, 0.95);
  CHECK(j.hi - j.mean > st.half_width);
  CHECK(j.mean - j.lo < st.half_width);
  CHECK(pilots_johnson_t(x, j.lo) == doctest::Approx(t).epsilon(1e-9));
  // The upper end is either the root (t1 = -t) or the vertex of the quadratic, where t1 is at its
  // lowest and above -t.
  const double at_hi = pilots_johnson_t(x, j.hi);
  CHECK(at_hi >= -t - 1e-9);
  // Printed only where the skewness is significant (else Student t's).
  CHECK(brokersim::skew_aware_half_width(x, 0.95) ==
        doctest::Approx(brokersim::significantly_skewed(x) ? j.hi - j.mean : st.half_width));
  // Mirrored samples give the mirrored interval; symmetric ones Student t's exactly.
  std::vector<double> m;
  for (double v : x) m.push_back(-v);
  const auto k = brokersim::johnson_interval(m, 0.95);
  CHECK(k.lo == doctest::Approx(-j.hi));
  CHECK(k.hi == doctest::Approx(-j.lo));
  const std::vector<double> sym{1, 2, 3, 4, 5};
  const auto s = brokersim::johnson_interval(sym, 0.95);
  const auto ss = brokersim::student_t_interval(sym, 0.95);
  CHECK(s.hi - s.mean == doctest::Approx(ss.half_width));
  CHECK(brokersim::skew_aware_half_width(sym, 0.95) == doctest::Approx(ss.half_width));
}

TEST_CASE("skew-aware interval: covers right-skewed means at least as often as Student t") {
  // Samples of 10 exponentials (skewness 2): Student t's 95% interval for the mean covers about
  // 0.900, its misses nearly all low; the printed skew-aware one (Johnson's only where the
  // sample's skewness is significant) 0.908 (100,000 samples, measured apart from this test,
  // standard error 0.0009). Over 4,000 samples: never less than Student t (it is never narrower),
  // and at least 0.89 (0.908 less 4.7 standard errors, sqrt(0.908 x 0.092 / 4000) = 0.0046).
  sim::Rng rng(12, 0, "johnson-coverage");
  int covered_t = 0, covered_j = 0, low_t = 0;
  const int trials = 4000;
  std::vector<double> x(10);
  for (int k = 0; k < trials; ++k) {
    for (double& v : x) v = -std::log(rng.uniform_pos());
    const auto st = brokersim::student_t_interval(x, 0.95);
    covered_t += std::fabs(st.mean - 1) <= st.half_width;
    low_t += st.mean + st.half_width < 1;
    covered_j += std::fabs(st.mean - 1) <= brokersim::skew_aware_half_width(x, 0.95);
  }
  CAPTURE(covered_t);
  CAPTURE(covered_j);
  CHECK(covered_j >= covered_t);
  CHECK(static_cast<double>(covered_j) / trials >= 0.89);
  CHECK(low_t > 3 * (trials - covered_t - low_t));
}

TEST_CASE("warm-up pilots: one cut for every replication lies past where a new replication settles at 99%") {
  // Ten pilots that settle at known jobs T_i (10 before, 1 after: each one's own MSER-5 truncation
  // is T_i exactly, the average's is the slowest's, 1,080). The cut is the normal upper prediction
  // bound of an eleventh, mean + t_{0.99, 9} s sqrt(1 + 1/10), past the largest pilot: a new
  // replication settling like these (mean 1,000, standard deviation 50) does so after the average's
  // cut with chance 5.4% and after the prediction with chance 0.2%.
  const std::vector<std::size_t> settles{925, 950, 970, 985, 1000, 1010, 1025, 1040, 1055, 1080};
  std::vector<std::vector<double>> series;
  double sum = 0, sumsq = 0;
  for (std::size_t t : settles) {
    std::vector<double> x(6000, 1.0);
    std::fill(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(t), 10.0);
    series.push_back(x);
    sum += static_cast<double>(t);
    sumsq += static_cast<double>(t) * static_cast<double>(t);
  }
  const double n = 10, mean = sum / n, sd = std::sqrt((sumsq - sum * sum / n) / (n - 1));
  const double t99 = boost::math::quantile(boost::math::students_t(9), 0.99);
  const auto predicted = static_cast<std::size_t>(std::ceil(mean + t99 * sd * std::sqrt(1 + 1 / n)));
  CHECK(brokersim::cut_for_every_replication(series, 1080) == predicted);
  CHECK(predicted > 1000 + 2.326 * 50);  // past the 99% quantile of the law the pilots were drawn from
  // Never before the average's own cut, and the prediction no further than half the series.
  CHECK(brokersim::cut_for_every_replication(series, 2500) == 2500);
  for (auto& x : series) x.resize(2000);
  CHECK(brokersim::cut_for_every_replication(series, 0) == 1000);
}

TEST_CASE("warm-up pilots: a late fleet's backlog is drained at the cut in 99% of replications") {
  // kPilotLate (M/M/4 at rho 0.9, consumers 10 s late, 400 s) over seeds 1-30, replications 0-9:
  // the replications still draining their backlog when the cut ends. Cut where the pilots' average
  // settles, 5.2% of 1,000 were (seeds 1-100, measured apart from this test; the mean queue wait
  // then +4.1%, standard error 1.2%); cut at the prediction, 0.2%. Of 300, at most the count a 1%
  // chance gives plus 3 of its standard errors: 3 + 3 sqrt(300 x 0.01 x 0.99) = 8.2.
  const auto doc = nlohmann::json::parse(kPilotLate);
  int draining = 0, replications = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    auto with_seed = doc;
    with_seed["seed"] = seed;
    brokersim::Scenario point = brokersim::load_scenario(with_seed, ".");
    brokersim::choose_auto_warmup(point, 1);
    for (std::uint64_t r = 0; r < 10; ++r) {
      brokersim::Scenario s = point;
      s.replication = r;
      BacklogAtCut backlog(s.warmup);
      brokersim::RunOptions o;
      o.job_observer = &backlog;
      brokersim::simulate(s, o);
      draining += backlog.draining;
      ++replications;
    }
  }
  CAPTURE(draining);
  CHECK(replications == 300);
  CHECK(draining <= 8);
}
