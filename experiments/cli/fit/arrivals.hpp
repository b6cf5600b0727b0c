// What a job log says over time: the arrival rate per interval (a rate_schedule) with a test of
// whether arrivals are Poisson within each interval, and the workers and busy executions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/cli/fit/log_reader.hpp"

namespace brokersim::fit {

// The default interval: the shortest of 1, 2, 5, 10, 20, 50, 100, 200, 500 ms, 1, 2, 5, 10, 15, 30 s,
// 1, 2, 5, 10, 15, 30 min, 1, 2, 3, 6, 12 h, 1, 2, 7 days that cuts the span into at most 200
// intervals holding 100 arrivals each on average (a rate known to about +-20%); the longest that
// is no longer than the span when the log is too small for that. `why` says which.
std::int64_t default_interval(std::int64_t span_ns, std::size_t arrivals, std::string& why);

// "500ms", "10s", "5min", "1h", "1d" -> ns; a ScenarioError naming --interval otherwise.
std::int64_t parse_interval(const std::string& text);

// At most this many intervals over all the log's queues (each interval is a rate step, a row of
// the time series and the plot data, about 250 bytes in all): 1 ms over 1,000 s for one queue.
inline constexpr std::int64_t kMaxIntervals = 1'000'000;
// The intervals a span is cut into: ceil(span / interval), at least 1.
std::int64_t interval_count(std::int64_t span_ns, std::int64_t interval);
// Before anything is allocated: a ScenarioError naming --interval (`given` as the user wrote it),
// the limit, the shortest interval within it, and the count `interval` would give, when `queues`
// queues cut into intervals of `interval` over `span_ns` exceed kMaxIntervals.
void check_interval_count(std::int64_t span_ns, std::int64_t interval, std::size_t queues, const std::string& given);
// 300000000000 -> "5min"
std::string format_interval(std::int64_t ns);

struct RateStep {
  double from_ms = 0;       // from the log's origin
  std::size_t count = 0;    // arrivals in [from, from + interval)
  double exposure_s = 0;    // the part of the interval inside the log's span
  double rate_per_s = 0, lo = 0, hi = 0;  // count / exposure, with its exact 95% Poisson interval
};

struct ArrivalFit {
  std::size_t n = 0;
  std::int64_t interval = 0;
  std::vector<RateStep> steps;     // one per interval
  // The rate_schedule: adjacent intervals merged while their counts are consistent with one rate
  // (conditional binomial test, two-sided, 0.1%). A rate estimated per interval carries the
  // interval's Poisson noise, and arrivals drawn at that rate then vary twice as much as the
  // log's did (variance lambda T from the estimate plus lambda T from the draw), which inflates
  // simulated waits; merging keeps the noise only where the rate really changes.
  std::vector<RateStep> segments;
  // Index of dispersion of the counts in 10 equal sub-intervals of each full interval, given the
  // interval's total (Fisher's test of a constant-rate Poisson process within each interval):
  // chi-square with `dof` degrees of freedom under the hypothesis.
  double dispersion = 0, dof = 0, p_value = 1;
  bool tested = false;      // false: too few arrivals for the test (fewer than 2 in every interval)
  bool poisson = true;      // not rejected at the 1% level (two-sided)
  std::string verdict;      // one sentence
};

// `times` sorted ascending (ns); the log spans [origin, end]. O(times + intervals).
ArrivalFit fit_arrivals(const std::vector<std::int64_t>& times, std::int64_t origin, std::int64_t end,
                        std::int64_t interval);

struct FleetFit {
  bool from_workers = false;  // a worker column: counted; else inferred from concurrency
  int count = 1, slots = 1;
  std::string why;
  std::vector<double> active;  // per interval: workers with an execution overlapping it
  std::vector<double> busy;    // per interval: mean executions in progress
  // The execution at which the most ran at once (one worker's, with a worker column): an index
  // into the log's rows, so that a count or slots beyond brokersim's limits names its line.
  std::size_t peak_row = 0;
  int peak = 0;                // that most
  // Started jobs without a finish time (failed without one, or running when the log was taken):
  // left out of the slots and the busy series, their workers still counted.
  std::size_t unfinished = 0, failed_unfinished = 0;
};

// The executions of `rows` (indices into log.rows) over [origin, end] cut at `interval`:
// O(executions log executions + intervals), as each execution adds its whole intervals to a
// difference array instead of walking them.
FleetFit fit_fleet(const JobLog& log, const std::vector<std::size_t>& rows, std::int64_t origin, std::int64_t end,
                   std::int64_t interval);

}  // namespace brokersim::fit
