#include "experiments/cli/fit/arrivals.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <array>
#include <queue>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>

#include <boost/math/special_functions/gamma.hpp>

#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/text.hpp"
#include "models/scenario.hpp"

namespace brokersim::fit {

namespace {

constexpr std::int64_t kMs = 1'000'000, kS = 1000 * kMs, kMin = 60 * kS, kH = 60 * kMin, kD = 24 * kH;
constexpr std::int64_t kLadder[] = {1 * kMs,  2 * kMs,  5 * kMs,   10 * kMs,  20 * kMs,  50 * kMs, 100 * kMs,
                                    200 * kMs, 500 * kMs, kS,       2 * kS,    5 * kS,    10 * kS,  15 * kS,
                                    30 * kS,  kMin,     2 * kMin,  5 * kMin,  10 * kMin, 15 * kMin, 30 * kMin,
                                    kH,       2 * kH,   3 * kH,    6 * kH,    12 * kH,   kD,        2 * kD,
                                    7 * kD};

std::int64_t intervals_in(std::int64_t span, std::int64_t interval) { return span / interval + 1; }

// A duration as the options write it, rounded up to whole ms when it is not one.
std::string duration_text(std::int64_t ns) {
  for (const std::int64_t step : kLadder)
    if (step >= ns) return format_interval(step);
  return format_interval((ns + kMs - 1) / kMs * kMs);
}

// The exact (Garwood) 95% interval of a Poisson count, per unit of exposure: chi-square quantiles
// through the regularized incomplete gamma. Memoised by count: a million short intervals hold few
// distinct counts.
class PoissonInterval {
 public:
  std::pair<double, double> operator()(std::size_t count) {
    const auto it = memo_.find(count);
    if (it != memo_.end()) return it->second;
    const double c = static_cast<double>(count);
    const std::pair<double, double> v{count == 0 ? 0.0 : boost::math::gamma_p_inv(c, 0.025),
                                      boost::math::gamma_p_inv(c + 1, 0.975)};
    memo_.emplace(count, v);
    return v;
  }

 private:
  std::unordered_map<std::size_t, std::pair<double, double>> memo_;
};

void check_count(std::int64_t span, std::int64_t interval) {
  if (interval <= 0 || interval_count(span, interval) > kMaxIntervals)
    throw ScenarioError("--interval", "an interval that cuts the log's span into at most " + grouped(kMaxIntervals) + " intervals",
                        format_interval(interval) + ": " + grouped(interval > 0 ? interval_count(span, interval) : 0) + " intervals");
}

}  // namespace

std::int64_t interval_count(std::int64_t span, std::int64_t interval) {
  if (span <= 0) return 1;
  return std::max<std::int64_t>(1, span / interval + (span % interval != 0));
}

void check_interval_count(std::int64_t span, std::int64_t interval, std::size_t queues, const std::string& given) {
  const std::int64_t q = static_cast<std::int64_t>(std::max<std::size_t>(queues, 1));
  const std::int64_t each = kMaxIntervals / q;
  const std::int64_t count = interval_count(span, interval);
  if (count <= each) return;
  // The shortest interval within the limit: ceil(span / each).
  const std::int64_t shortest = span / each + (span % each != 0);
  throw ScenarioError("--interval",
                      "an interval that cuts the log's span (" + sim::format_ms(span) + " ms) into at most " +
                          grouped(kMaxIntervals) + " intervals" +
                          (q > 1 ? " over its " + std::to_string(q) + " queues (" + grouped(each) + " each)" : "") +
                          ", so " + duration_text(shortest) + " or longer",
                      loader::quoted(given) + ": " + grouped(count) + " intervals" + (q > 1 ? " per queue" : ""));
}

std::int64_t default_interval(std::int64_t span, std::size_t arrivals, std::string& why) {
  for (const std::int64_t i : kLadder) {
    const std::int64_t k = intervals_in(span, i);
    if (k <= 200 && static_cast<double>(arrivals) / static_cast<double>(k) >= 100) {
      why = "the shortest that leaves at most 200 intervals of 100 arrivals or more on average";
      return i;
    }
  }
  std::int64_t best = kLadder[0];
  for (const std::int64_t i : kLadder)
    if (i <= std::max<std::int64_t>(span, 1)) best = i;
  why = "too few arrivals for 100 per interval: the longest interval within the log's span";
  return best;
}

std::int64_t parse_interval(const std::string& text) {
  static constexpr std::pair<std::string_view, std::int64_t> kUnits[] = {
      {"ms", kMs}, {"s", kS}, {"min", kMin}, {"h", kH}, {"d", kD}};
  const std::string expected = "a duration with a unit: 500ms, 10s, 5min, 1h, 1d (at least 1 ms)";
  std::size_t split = 0;
  while (split < text.size() && ((text[split] >= '0' && text[split] <= '9') || text[split] == '.')) ++split;
  double x = 0;
  const auto r = std::from_chars(text.data(), text.data() + split, x);
  if (split > 0 && r.ec == std::errc::result_out_of_range && r.ptr == text.data() + split)
    throw ScenarioError("--interval", expected + " and at most 365d", loader::quoted(text));  // 400 digits
  if (split == 0 || r.ec != std::errc() || r.ptr != text.data() + split) throw ScenarioError("--interval", expected, loader::quoted(text));
  const std::string_view unit = std::string_view(text).substr(split);
  for (const auto& [name, ns] : kUnits) {
    if (unit != name) continue;
    const double v = x * static_cast<double>(ns);
    if (!(v >= static_cast<double>(kMs)) || v > 365.0 * static_cast<double>(kD)) throw ScenarioError("--interval", expected + " and at most 365d", loader::quoted(text));
    return std::llround(v);
  }
  throw ScenarioError("--interval", expected, loader::quoted(text));
}

std::string format_interval(std::int64_t ns) {
  static constexpr std::pair<const char*, std::int64_t> kUnits[] = {{"d", kD}, {"h", kH}, {"min", kMin}, {"s", kS}, {"ms", kMs}};
  for (const auto& [name, unit] : kUnits)
    if (ns % unit == 0) return std::to_string(ns / unit) + name;
  return sim::format_ms(ns) + "ms";
}

ArrivalFit fit_arrivals(const std::vector<std::int64_t>& times, std::int64_t origin, std::int64_t end,
                        std::int64_t interval) {
  ArrivalFit fit;
  fit.n = times.size();
  fit.interval = interval;
  const std::int64_t span = std::max<std::int64_t>(end - origin, 0);
  check_count(span, interval);
  if (!std::is_sorted(times.begin(), times.end())) throw std::invalid_argument("fit_arrivals: times not sorted");
  const std::int64_t k = intervals_in(span, interval);
  constexpr int kSub = 10;
  std::vector<std::size_t> counts(static_cast<std::size_t>(k), 0);
  // Dispersion over full intervals only (the last, partial one has unequal sub-intervals), each
  // interval's ten sub-counts gathered while the sorted times are in it: no array of 10 k counts.
  const std::int64_t sub_width = interval / kSub;
  const bool dispersion = sub_width > 0 && interval % kSub == 0;
  double stat = 0, dof = 0;
  std::int64_t current = -1;
  std::array<std::size_t, kSub> sub{};
  const auto close_interval = [&] {
    if (current < 0 || (current + 1) * interval > span) return;
    const double c = static_cast<double>(counts[static_cast<std::size_t>(current)]);
    if (c < 2) return;
    const double m = c / kSub;
    for (int j = 0; j < kSub; ++j) {
      const double d = static_cast<double>(sub[static_cast<std::size_t>(j)]) - m;
      stat += d * d / m;
    }
    dof += kSub - 1;
  };
  for (const std::int64_t t : times) {
    const std::int64_t off = t - origin;
    const std::int64_t i = std::clamp<std::int64_t>(off / interval, 0, k - 1);
    ++counts[static_cast<std::size_t>(i)];
    if (!dispersion) continue;
    if (i != current) {
      close_interval();
      current = i;
      sub.fill(0);
    }
    const std::int64_t j = std::clamp<std::int64_t>((off - i * interval) / sub_width, 0, kSub - 1);
    ++sub[static_cast<std::size_t>(j)];
  }
  if (dispersion) close_interval();
  fit.steps.reserve(static_cast<std::size_t>(k));
  for (std::int64_t i = 0; i < k; ++i) {
    RateStep s;
    s.from_ms = sim::to_ms(i * interval);
    s.count = counts[static_cast<std::size_t>(i)];
    // The last interval ends with the log; a zero-length one (the span a whole number of
    // intervals) holds only the final arrival: fold it into the one before.
    const std::int64_t to = std::min((i + 1) * interval, span);
    s.exposure_s = sim::ns_to_s(static_cast<double>(to - i * interval));
    if (s.exposure_s <= 0) {
      if (!fit.steps.empty()) fit.steps.back().count += s.count;
      continue;
    }
    fit.steps.push_back(s);
  }
  counts = {};
  if (fit.steps.empty()) {  // a single instant: one arrival or several at once
    RateStep s;
    s.count = times.size();
    s.exposure_s = sim::ns_to_s(static_cast<double>(interval));
    fit.steps.push_back(s);
  }
  PoissonInterval garwood;
  for (auto& s : fit.steps) {
    s.rate_per_s = static_cast<double>(s.count) / s.exposure_s;
    const auto [lo, hi] = garwood(s.count);
    s.lo = lo / s.exposure_s;
    s.hi = hi / s.exposure_s;
  }
  for (const auto& s : fit.steps) {
    if (!fit.segments.empty()) {
      RateStep& seg = fit.segments.back();
      const double total = static_cast<double>(seg.count + s.count);
      const double p = s.exposure_s / (seg.exposure_s + s.exposure_s);
      const double sd = std::sqrt(total * p * (1 - p));
      const double z = sd > 0 ? (static_cast<double>(s.count) - total * p) / sd : 0.0;
      if (std::fabs(z) <= 3.2905) {
        seg.count += s.count;
        seg.exposure_s += s.exposure_s;
        continue;
      }
    }
    fit.segments.push_back(s);
  }
  for (auto& s : fit.segments) {
    s.rate_per_s = static_cast<double>(s.count) / s.exposure_s;
    const auto [lo, hi] = garwood(s.count);
    s.lo = lo / s.exposure_s;
    s.hi = hi / s.exposure_s;
  }
  char buf[400];
  if (dof == 0) {
    fit.tested = false;
    fit.poisson = true;
    fit.verdict = "too few arrivals in whole intervals to test whether they are Poisson (the test needs at least "
                  "one whole interval with 2 or more)";
    return fit;
  }
  fit.tested = true;
  fit.dispersion = stat / dof;
  fit.dof = dof;
  const double upper = boost::math::gamma_q(dof / 2, stat / 2), lower = boost::math::gamma_p(dof / 2, stat / 2);
  fit.p_value = std::min(1.0, 2 * std::min(upper, lower));
  fit.poisson = fit.p_value >= 0.01;
  if (fit.poisson) {
    std::snprintf(buf, sizeof buf,
                  "Poisson within each interval: index of dispersion %.3f (1 expected), chi-square %.0f on %.0f "
                  "degrees of freedom, p = %.2g",
                  fit.dispersion, stat, dof, fit.p_value);
  } else if (upper < lower) {
    std::snprintf(buf, sizeof buf,
                  "NOT Poisson: arrivals come in bursts (index of dispersion %.3f, 1 expected; chi-square %.0f on "
                  "%.0f degrees of freedom, p = %.2g), or the rate changes within an interval (try a shorter "
                  "--interval)",
                  fit.dispersion, stat, dof, fit.p_value);
  } else {
    std::snprintf(buf, sizeof buf,
                  "NOT Poisson: arrivals are more regular than Poisson (index of dispersion %.3f, 1 expected; "
                  "chi-square %.0f on %.0f degrees of freedom, p = %.2g), as from a timer or a rate limiter",
                  fit.dispersion, stat, dof, fit.p_value);
  }
  fit.verdict = buf;
  return fit;
}

FleetFit fit_fleet(const JobLog& log, const std::vector<std::size_t>& rows, std::int64_t origin, std::int64_t end,
                   std::int64_t interval) {
  FleetFit fleet;
  const std::int64_t span = std::max<std::int64_t>(end - origin, 0);
  check_count(span, interval);
  const std::int64_t k = intervals_in(span, interval);
  const auto ku = static_cast<std::size_t>(k);
  fleet.active.assign(ku, 0.0);
  fleet.busy.assign(ku, 0.0);
  // Executions in order of start, by worker when there is a worker column: copied out of the rows
  // so that sorting and the passes below read memory in order (10 million rows: 3x faster than
  // sorting indices into the rows).
  struct Execution {
    std::uint32_t worker;
    std::uint32_t row;               // index into log.rows (at most kMaxRows)
    std::int64_t started, finished;
  };
  std::vector<Execution> order;
  order.reserve(rows.size());
  // Only executions with a finish time: a job started and never finished in the log (failed
  // without a finish time, or still running) would count as running until the log's end, and
  // every such job on one worker as one more slot (a fleet of 8 slots per pod came out as 18).
  // Its worker still counts as one of the fleet.
  std::vector<char> worker_started(log.has_worker() ? log.workers.size() : 1, 0);
  std::size_t workers_started = 0;
  for (std::size_t r : rows) {
    const JobRow& row = log.rows[r];
    if (row.started == kNoTime) continue;
    const std::uint32_t w = log.has_worker() ? row.worker : 0u;
    if (!worker_started[w]) {
      worker_started[w] = 1;
      ++workers_started;
    }
    if (row.finished == kNoTime) {
      ++fleet.unfinished;
      if (row.outcome == Outcome::Failed) ++fleet.failed_unfinished;
      continue;
    }
    order.push_back({w, static_cast<std::uint32_t>(r), row.started, row.finished});
  }
  std::sort(order.begin(), order.end(), [](const Execution& x, const Execution& y) {
    return x.worker != y.worker ? x.worker < y.worker : x.started < y.started;
  });
  const auto interval_of = [&](std::int64_t t) {
    return static_cast<std::size_t>(std::clamp<std::int64_t>((t - origin) / interval, 0, k - 1));
  };
  // Whole intervals an execution (or a worker) covers are counted in difference arrays, summed
  // once at the end: each execution costs O(1), however many intervals it spans.
  std::vector<std::int64_t> whole_busy(ku + 1, 0), whole_active(ku + 1, 0);
  const double width = static_cast<double>(interval);
  // Busy executions: each execution's overlap with each interval it spans; the first and last
  // pieces as fractions, the whole intervals between them as 1 each.
  for (const Execution& e : order) {
    const std::int64_t s = std::max(e.started, origin), f = std::min(e.finished, origin + k * interval);
    if (f <= s) continue;
    const std::size_t a = interval_of(s);
    const std::size_t b = static_cast<std::size_t>((f - origin) / interval);  // <= k
    if (a == b) {
      fleet.busy[a] += static_cast<double>(f - s) / width;
      continue;
    }
    const std::int64_t a_end = origin + static_cast<std::int64_t>(a + 1) * interval;
    fleet.busy[a] += static_cast<double>(a_end - s) / width;
    ++whole_busy[a + 1];
    --whole_busy[b];
    const std::int64_t b_start = origin + static_cast<std::int64_t>(b) * interval;
    if (b < ku && f > b_start) fleet.busy[b] += static_cast<double>(f - b_start) / width;
  }
  // Most executions in progress at once, per worker (or overall without a worker column).
  int most = 0;
  std::size_t workers_seen = 0;
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> running;
  std::size_t last_interval_marked = static_cast<std::size_t>(-1);
  for (std::size_t idx = 0; idx < order.size(); ++idx) {
    const Execution& e = order[idx];
    if (idx == 0 || order[idx - 1].worker != e.worker) {
      running = {};
      ++workers_seen;
      last_interval_marked = static_cast<std::size_t>(-1);
    }
    while (!running.empty() && running.top() <= e.started) running.pop();
    running.push(e.finished);
    if (static_cast<int>(running.size()) > most) {
      most = static_cast<int>(running.size());
      fleet.peak_row = e.row;
    }
    if (log.has_worker()) {
      // Busy over [started, finished): a job finishing at an interval's first instant is not in it.
      // The worker's intervals not yet marked, [max(a, last + 1), b], each once.
      const std::size_t a = interval_of(e.started), b = interval_of(std::max(e.started, e.finished - 1));
      const std::size_t from = std::max(a, last_interval_marked + 1);
      if (from <= b) {
        ++whole_active[from];
        --whole_active[b + 1];
      }
      last_interval_marked = std::max(last_interval_marked + 1, b + 1) - 1;
    }
  }
  std::int64_t busy_run = 0, active_run = 0;
  for (std::size_t i = 0; i < ku; ++i) {
    busy_run += whole_busy[i];
    active_run += whole_active[i];
    fleet.busy[i] += static_cast<double>(busy_run);
    fleet.active[i] = static_cast<double>(active_run);
  }
  fleet.peak = most;
  const int most_per_worker = most;
  if (log.has_worker()) {
    fleet.from_workers = true;
    (void)workers_seen;
    fleet.count = static_cast<int>(std::max<std::size_t>(1, workers_started));
    fleet.slots = std::max(1, most_per_worker);
    fleet.why = std::to_string(workers_started) + " distinct workers ran jobs (at most " +
                std::to_string(static_cast<long long>(*std::max_element(fleet.active.begin(), fleet.active.end()))) +
                " in one interval), each running up to " + std::to_string(fleet.slots) +
                " at once: consumers count " + std::to_string(fleet.count) + ", slots " + std::to_string(fleet.slots);
    if (fleet.unfinished > 0)
      fleet.why += " (" + std::to_string(fleet.unfinished) + " started jobs without a finish time left out of the slots" +
                   (fleet.failed_unfinished > 0 ? ", " + std::to_string(fleet.failed_unfinished) + " of them failed" : "") + ")";
  } else {
    fleet.count = std::max(1, most);
    fleet.slots = 1;
    fleet.why = "no worker column: " + std::to_string(fleet.count) +
                " one-slot consumers, the most executions in progress at once (a lower bound on the fleet)";
    if (fleet.unfinished > 0)
      fleet.why += " (" + std::to_string(fleet.unfinished) + " started jobs without a finish time left out" +
                   (fleet.failed_unfinished > 0 ? ", " + std::to_string(fleet.failed_unfinished) + " of them failed" : "") + ")";
  }
  return fleet;
}

}  // namespace brokersim::fit
