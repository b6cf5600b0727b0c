#include "experiments/cli/replication/warmup.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "experiments/cli/replication/statistics.hpp"
#include "sim/mser.hpp"

namespace brokersim {

namespace {

// One pilot's job-level series: the jobs with an outcome (those still in the system at the end
// have no value yet), in creation order.
struct PilotSeries {
  std::vector<double> value;
  std::vector<Time> created;
};

PilotSeries pilot_series(const Scenario& s, std::uint64_t replication) {
  Scenario pilot = s;
  pilot.warmup = 0;
  pilot.replication = replication;
  std::vector<JobSample> samples;
  RunOptions o;
  o.job_series = &samples;
  o.job_series_stale = s.auto_warmup->stale;
  simulate(pilot, o);
  PilotSeries out;
  for (const auto& js : samples)
    if (js.created >= 0) {
      out.value.push_back(js.value);
      out.created.push_back(js.created);
    }
  return out;
}

// The mean of x[from, to).
double mean_of(const std::vector<double>& x, std::size_t from, std::size_t to) {
  double sum = 0;
  for (std::size_t i = from; i < to; ++i) sum += x[i];
  return sum / static_cast<double>(to - from);
}

// The pilots, on up to `threads` threads, stored in pilot order whatever thread ran each.
std::vector<PilotSeries> run_pilots(const Scenario& s, unsigned threads) {
  std::vector<PilotSeries> pilots(kWarmupPilots);
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::exception_ptr failure;
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < pilots.size();) {
      try {
        pilots[i] = pilot_series(s, kWarmupPilotBase + i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        next = pilots.size();
      }
    }
  };
  const unsigned n = std::min<unsigned>(std::max(1u, threads), static_cast<unsigned>(pilots.size()));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  return pilots;
}

// The average series, job by job, over the pilots (summed in pilot order), up to the shortest.
std::vector<double> average_series(const std::vector<PilotSeries>& pilots) {
  std::size_t m = std::numeric_limits<std::size_t>::max();
  for (const auto& p : pilots) m = std::min(m, p.value.size());
  std::vector<double> average(m, 0.0);
  for (const auto& p : pilots)
    for (std::size_t k = 0; k < m; ++k) average[k] += p.value[k];
  for (double& v : average) v /= static_cast<double>(pilots.size());
  return average;
}

// The bias check on the kept data [d, m): first half's mean less second half's, per pilot; their
// paired Student-t statistic (NaN when too few jobs are kept or it cannot be computed).
void check_kept_data(const std::vector<PilotSeries>& pilots, std::size_t d, std::size_t m, AutoWarmup& a) {
  a.trend_t = std::numeric_limits<double>::quiet_NaN();
  a.trending = false;
  if (m < d + 4) return;
  const std::size_t half = d + (m - d) / 2;
  std::vector<double> diff;
  for (const auto& p : pilots) diff.push_back(mean_of(p.value, d, half) - mean_of(p.value, half, m));
  const MeanInterval ci = student_t_interval_with(diff, 1.0);  // the standard error of the mean difference
  if (ci.half_width > 0) {
    a.trend_t = ci.mean / ci.half_width;
    a.trending = std::fabs(a.trend_t) > student_t_quantile(diff.size() - 1, 0.99);
  } else if (ci.mean == 0) {
    a.trend_t = 0;
  }
}

}  // namespace

std::size_t cut_for_every_replication(const std::vector<std::vector<double>>& series, std::size_t average_cut) {
  std::size_t m = std::numeric_limits<std::size_t>::max();
  for (const auto& x : series) m = std::min(m, x.size());
  if (series.size() < 2 || m == 0) return average_cut;
  std::vector<double> settled;
  for (const auto& x : series)
    settled.push_back(static_cast<double>(sim::mser(std::vector<double>(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(m))).truncate));
  const double n = static_cast<double>(settled.size());
  const MeanInterval spread = student_t_interval_with(settled, std::sqrt(n));  // t = sqrt(n): the half-width is s
  const double bound = spread.mean + student_t_quantile(settled.size() - 1, 0.98) * spread.half_width * std::sqrt(1 + 1 / n);
  const auto predicted = static_cast<std::size_t>(std::ceil(std::min(bound, static_cast<double>(m / 2))));
  return std::max(average_cut, predicted);
}

void choose_auto_warmup(Scenario& s, unsigned threads) {
  if (!s.auto_warmup || s.auto_warmup->chosen) return;
  const std::vector<PilotSeries> pilots = run_pilots(s, threads);
  const std::vector<double> average = average_series(pilots);
  const std::size_t m = average.size();
  const sim::MserResult r = sim::mser(average);
  std::vector<std::vector<double>> series;
  for (const auto& p : pilots) series.push_back(p.value);
  const std::size_t d = cut_for_every_replication(series, r.truncate < m ? r.truncate : 0);
  Time warmup = 0;
  if (d > 0 && d < m) {
    // The mean creation time of job d: a sum of integers, exact.
    __extension__ typedef __int128 Wide;  // ten times a horizon of int64 ns overflows int64
    Wide sum = 0;
    for (const auto& p : pilots) sum += p.created[d];
    warmup = static_cast<Time>(sum / static_cast<Wide>(pilots.size()));
    if (s.stop_time && warmup >= *s.stop_time) warmup = 0;
  }
  s.warmup = warmup;
  s.auto_warmup->chosen = true;
  s.auto_warmup->steady = r.steady;
  s.auto_warmup->jobs_discarded = warmup > 0 ? d : 0;
  check_kept_data(pilots, d, m, *s.auto_warmup);
}

void choose_auto_warmup_per_run(Scenario& s) {
  if (!s.auto_warmup || s.auto_warmup->chosen) return;
  const PilotSeries p = pilot_series(s, s.replication);
  const sim::MserResult m = sim::mser(p.value);
  s.warmup = m.truncate > 0 && m.truncate < p.created.size() ? p.created[m.truncate] : 0;
  s.auto_warmup->chosen = true;
  s.auto_warmup->steady = m.steady;
  s.auto_warmup->jobs_discarded = m.truncate;
  s.auto_warmup->trend_t = std::numeric_limits<double>::quiet_NaN();
  s.auto_warmup->trending = false;
}

RunResult simulate_with_warmup(Scenario& s, const RunOptions& options, unsigned threads) {
  choose_auto_warmup(s, threads);
  return simulate(s, options);
}

}  // namespace brokersim
