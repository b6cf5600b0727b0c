// Days that differ: a log covering several whole days, cut at midnight (UTC for
// ISO-8601 times and numbers since the epoch; 24-hour windows of the log's own origin otherwise),
// gives each day's volume and peak and the day-to-day spread of the volume, which a plan needs to
// mean "on 95% of days" rather than "on 95% of copies of the day fitted". The spread is what
// producers[].volume.per_run draws from (docs/fit.md, "Days that differ").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace brokersim::fit {

inline constexpr std::int64_t kDayNs = 86'400'000'000'000LL;
// A day counts as whole when the log covers at least this much of it (its first and last days
// usually start and end a little after and before midnight).
inline constexpr std::int64_t kWholeDayNs = 23 * 3'600'000'000'000LL + 30 * 60'000'000'000LL;

struct DayVolume {
  std::int64_t start = 0;     // the day's midnight, in the log's time (ns)
  std::size_t jobs = 0;       // arrivals in the day
  double peak_per_s = 0;      // the highest hourly rate of the day (arrivals in its busiest hour / 3600 s)
};

struct DayFit {
  std::vector<DayVolume> days;  // the whole days, in order
  std::size_t partial = 0;      // days the log covers only in part (left out)
  double mean_jobs = 0;
  double sample_cv = 0;         // sd / mean of the daily volumes (n - 1)
  // The volume's cv as a lognormal spread: sqrt(exp(s^2) - 1), s the sd of log(volume), with the
  // 95% interval from s^2's chi-square distribution on n - 1 degrees of freedom. Only when every
  // whole day has jobs (a day without any is not lognormal): `lognormal` false otherwise.
  bool lognormal = false;
  double cv = 0, cv_lo = 0, cv_hi = 0;
  bool estimable() const { return days.size() >= 2; }
};

// `times` sorted ascending, absolute ns in the log's time; the log covers [origin, end].
DayFit fit_days(const std::vector<std::int64_t>& times, std::int64_t origin, std::int64_t end);

}  // namespace brokersim::fit
