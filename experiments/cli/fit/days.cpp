#include "experiments/cli/fit/days.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>

namespace brokersim::fit {

namespace {

constexpr std::int64_t kHourNs = 3'600'000'000'000LL;

// The midnight at or before t (floor division: times before the origin 0 are negative).
std::int64_t day_start(std::int64_t t) {
  const std::int64_t q = t / kDayNs;
  return (t % kDayNs < 0 ? q - 1 : q) * kDayNs;
}

}  // namespace

DayFit fit_days(const std::vector<std::int64_t>& times, std::int64_t origin, std::int64_t end) {
  DayFit fit;
  if (times.empty() || end < origin) return fit;
  const std::int64_t first = day_start(origin), last = day_start(end);
  std::size_t i = 0;
  for (std::int64_t d = first; d <= last; d += kDayNs) {
    const std::int64_t covered = std::min(end, d + kDayNs) - std::max(origin, d);
    DayVolume day{d, 0, 0};
    std::size_t hour_jobs[24] = {};
    while (i < times.size() && times[i] < d + kDayNs) {
      if (times[i] >= d) {
        ++day.jobs;
        ++hour_jobs[static_cast<std::size_t>((times[i] - d) / kHourNs)];
      }
      ++i;
    }
    if (covered < kWholeDayNs) {
      ++fit.partial;
      continue;
    }
    day.peak_per_s = static_cast<double>(*std::max_element(std::begin(hour_jobs), std::end(hour_jobs))) / 3600.0;
    fit.days.push_back(day);
  }
  const auto n = static_cast<double>(fit.days.size());
  if (fit.days.empty()) return fit;
  double sum = 0;
  for (const auto& d : fit.days) sum += static_cast<double>(d.jobs);
  fit.mean_jobs = sum / n;
  if (fit.days.size() < 2) return fit;
  double ss = 0;
  bool all_positive = true;
  for (const auto& d : fit.days) {
    ss += (static_cast<double>(d.jobs) - fit.mean_jobs) * (static_cast<double>(d.jobs) - fit.mean_jobs);
    all_positive = all_positive && d.jobs > 0;
  }
  fit.sample_cv = fit.mean_jobs > 0 ? std::sqrt(ss / (n - 1)) / fit.mean_jobs : 0.0;
  if (!all_positive) return fit;
  double log_mean = 0;
  for (const auto& d : fit.days) log_mean += std::log(static_cast<double>(d.jobs));
  log_mean /= n;
  double s2 = 0;
  for (const auto& d : fit.days) s2 += std::pow(std::log(static_cast<double>(d.jobs)) - log_mean, 2);
  s2 /= n - 1;
  const boost::math::chi_squared chi(n - 1);
  const auto cv_of = [](double var) { return std::sqrt(std::expm1(var)); };
  fit.lognormal = true;
  fit.cv = cv_of(s2);
  fit.cv_lo = cv_of((n - 1) * s2 / boost::math::quantile(chi, 0.975));
  fit.cv_hi = cv_of((n - 1) * s2 / boost::math::quantile(chi, 0.025));
  return fit;
}

}  // namespace brokersim::fit
