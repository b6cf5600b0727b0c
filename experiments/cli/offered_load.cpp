#include "experiments/cli/offered_load.hpp"

#include <algorithm>
#include <cstdio>

#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

struct Rate {
  double mean = 0, peak = 0, peak_from_ms = 0;
  bool scheduled = false;
  double peak_window_ms = 0;  // arrivals at given times: their peak's window
  int peak_day = -1;
};

// The span the run measures starts at warmup_ms, as the throughput's does (run.measured_s).
double measured_from_ms(const Scenario& s) { return sim::to_ms(s.warmup); }

// Arrivals a list of times makes per second over the measured span: those at or after warmup_ms,
// over [warmup_ms, stop.time_ms] (without stop.time_ms, to the last arrival).
template <class Times>
double list_rate(const Scenario& s, std::size_t n, const Times& time_of) {
  if (n == 0) return 0.0;
  const double from = measured_from_ms(s);
  const double end = s.stop_time ? sim::to_ms(*s.stop_time) : time_of(n - 1);
  std::size_t counted = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (time_of(i) >= from) ++counted;
  return end > from ? 1000.0 * static_cast<double>(counted) / (end - from) : 0.0;
}

// The busiest window of arrivals at given times (ms, ascending) within [from, end]: the window is
// kPeakWindowMs, or the span when that is shorter (a longer window would spread the span's arrivals
// over time the run does not measure, putting the peak below the mean). A
// window starting at an arrival holds as many as any window can (slid right until its start meets
// one, it loses none), so two pointers over the arrivals find it; it is stated as starting where
// it lies wholly in the span.
struct Busiest {
  double rate_per_s = 0, from_ms = 0, window_ms = kPeakWindowMs;
  bool whole_span = false;  // the window is the span: the peak is the mean, and says nothing more
};
template <class Times>
Busiest busiest_window(double from, double end, std::size_t n, const Times& time_of) {
  Busiest b;
  if (end > from) b.window_ms = std::min(kPeakWindowMs, end - from);
  b.whole_span = end > from && b.window_ms >= end - from;
  b.from_ms = from;
  std::size_t first = 0, best = 0;
  while (first < n && time_of(first) < from) ++first;
  std::size_t last = first;
  for (std::size_t i = first; i < n && time_of(i) <= end; ++i) {
    if (last < i) last = i;
    while (last < n && time_of(last) <= end && time_of(last) < time_of(i) + b.window_ms) ++last;
    if (last - i > best) {
      best = last - i;
      b.from_ms = std::max(from, std::min(time_of(i), end - b.window_ms));
    }
  }
  b.rate_per_s = 1000.0 * static_cast<double>(best) / b.window_ms;
  return b;
}

// The end of the span the run measures: stop.time_ms, else the last of the given times.
double measured_to_ms(const Scenario& s, double last_ms) { return s.stop_time ? sim::to_ms(*s.stop_time) : last_ms; }

void take_busiest(Rate& r, const Busiest& b) {
  r.peak = b.rate_per_s;
  r.peak_from_ms = b.from_ms;
  r.peak_window_ms = b.whole_span ? 0.0 : b.window_ms;
}

// days_csv: each run replays one day at its times of day, so the peak is the busiest window of
// any day within the measured span of a run.
void busiest_day(const Scenario& s, const ArrivalSpec& a, Rate& r) {
  const double day_ms = 86'400'000.0;
  for (std::size_t d = 0; d < a.days(); ++d) {
    const std::size_t begin = a.day_starts[d], n = a.day_starts[d + 1] - begin;
    const auto time_of = [&](std::size_t i) { return sim::to_ms(a.trace[begin + i].publish) - static_cast<double>(d) * day_ms; };
    const Busiest b = busiest_window(measured_from_ms(s), measured_to_ms(s, n ? time_of(n - 1) : 0.0), n, time_of);
    if (r.peak_day < 0 || b.rate_per_s > r.peak) {
      take_busiest(r, b);
      r.peak_day = static_cast<int>(d);
    }
  }
}

Rate arrival_rate(const Scenario& s, const ArrivalSpec& a) {
  Rate r;
  switch (a.kind) {
    case ArrivalSpec::Kind::Poisson: r.mean = a.rate_per_s; break;
    case ArrivalSpec::Kind::Periodic: r.mean = a.every > 0 ? sim::kNsPerSF / static_cast<double>(a.every) : 0.0; break;
    case ArrivalSpec::Kind::AtTimes: {
      const auto time_of = [&](std::size_t i) { return sim::to_ms(a.at[i]); };
      r.mean = list_rate(s, a.at.size(), time_of);
      if (!a.at.empty())
        take_busiest(r, busiest_window(measured_from_ms(s), measured_to_ms(s, time_of(a.at.size() - 1)), a.at.size(), time_of));
      return r;
    }
    case ArrivalSpec::Kind::Trace: {
      if (a.days() > 0) {
        // days_csv: each run one of the days; the expected rate is the days' mean.
        const double day_s = 86'400.0;
        r.mean = static_cast<double>(a.trace.size()) / (static_cast<double>(a.days()) * day_s);
        busiest_day(s, a, r);
        return r;
      }
      const auto time_of = [&](std::size_t i) { return sim::to_ms(a.trace[i].publish); };
      r.mean = list_rate(s, a.trace.size(), time_of);
      if (!a.trace.empty())
        take_busiest(r, busiest_window(measured_from_ms(s), measured_to_ms(s, time_of(a.trace.size() - 1)), a.trace.size(), time_of));
      return r;
    }
    case ArrivalSpec::Kind::RateSchedule: {
      r.scheduled = true;
      // Time-weighted over [warmup_ms, stop.time_ms]; the peak is the highest step in that span.
      // Without stop.time_ms (or when it ends by the warm-up) the span is open: every step counts
      // and the mean is the peak, the load the fleet must be sized for.
      const double from_ms = measured_from_ms(s);
      const double end = s.stop_time ? sim::to_ms(*s.stop_time) : 0.0;
      const bool bounded = end > from_ms;
      double area = 0;
      for (std::size_t i = 0; i < a.schedule.size(); ++i) {
        const double step_from = sim::to_ms(a.schedule[i].from);
        const double step_to = i + 1 < a.schedule.size() ? sim::to_ms(a.schedule[i + 1].from) : end;
        const double lo = bounded ? std::max(step_from, from_ms) : step_from;
        const double hi = bounded ? std::min(step_to, end) : step_to;
        if (bounded && hi <= lo) continue;  // wholly in the warm-up or after the stop
        if (a.schedule[i].linear) {
          // A ramp: the trapezoid between where the span cuts it.
          const double r0 = a.schedule[i].rate_per_s, r1 = a.schedule[i + 1].rate_per_s;
          const auto rate_at = [&](double t) { return r0 + (r1 - r0) * (t - step_from) / (step_to - step_from); };
          if (hi > lo) area += (rate_at(lo) + rate_at(hi)) / 2 * (hi - lo);
          if (rate_at(hi) > r.peak) {
            r.peak = rate_at(hi);
            r.peak_from_ms = hi;
          }
        } else if (hi > lo) {
          area += a.schedule[i].rate_per_s * (hi - lo);
        }
        if (a.schedule[i].rate_per_s > r.peak) {
          r.peak = a.schedule[i].rate_per_s;
          r.peak_from_ms = lo;
        }
      }
      r.mean = bounded ? area / (end - from_ms) : r.peak;
      return r;
    }
  }
  r.peak = r.mean;
  return r;
}

double mean_service_ms(const ProducerSpec& p) {
  if (p.arrivals.kind == ArrivalSpec::Kind::Trace) {
    // Trace rows may carry their own service time; the others draw from service_ms.
    double sum = 0;
    for (const auto& row : p.arrivals.trace) sum += row.service ? sim::to_ms(*row.service) : p.service.mean() / sim::kNsPerMsF;
    return p.arrivals.trace.empty() ? 0.0 : sum / static_cast<double>(p.arrivals.trace.size());
  }
  return p.service.mean() / sim::kNsPerMsF;
}

}  // namespace

// Pools: the queues joined by groups reading several (union-find over queue indices): each queue's
// pool is named by one of its queues.
static std::vector<int> queue_pools(const Scenario& s) {
  std::vector<int> root(s.broker.queues.size());
  for (std::size_t q = 0; q < root.size(); ++q) root[q] = static_cast<int>(q);
  const auto find = [&](int q) {
    while (root[static_cast<std::size_t>(q)] != q) q = root[static_cast<std::size_t>(q)];
    return q;
  };
  for (const auto& c : s.consumers)
    for (int q : c.other_queues) root[static_cast<std::size_t>(find(q))] = find(c.queue);
  for (std::size_t q = 0; q < root.size(); ++q) root[q] = find(static_cast<int>(q));
  return root;
}

std::vector<QueueLoad> offered_load(const Scenario& s) {
  std::vector<QueueLoad> loads;
  for (std::size_t q = 0; q < s.broker.queues.size(); ++q) {
    QueueLoad l;
    l.queue = static_cast<int>(q);
    double work = 0;  // sum of rate x service
    double peak_excess = 0;
    bool fed = false;
    for (const auto& p : s.producers) {
      if (p.queue != l.queue) continue;
      fed = true;
      Rate r = arrival_rate(s, p.arrivals);
      // At the expected volume (producers[].volume): the multiplier times the per-run draw's mean.
      const double volume = p.volume_multiplier * (p.volume_per_run ? p.volume_per_run->mean() : 1.0);
      r.mean *= volume;
      r.peak *= volume;
      const double service = mean_service_ms(p);
      l.rate_per_s += r.mean;
      l.peak_rate_per_s += r.peak;
      // The peak's time and window: the producer whose peak stands highest above its mean.
      if ((r.scheduled || r.peak_window_ms > 0) && r.peak - r.mean >= peak_excess) {
        peak_excess = r.peak - r.mean;
        l.peak_from_ms = r.peak_from_ms;
        l.peak_day = r.peak_day;
      }
      l.scheduled = l.scheduled || r.scheduled;
      l.peak_window_ms = std::max(l.peak_window_ms, r.peak_window_ms);
      work += r.mean * service;
    }
    if (!fed) continue;
    l.mean_service_ms = l.rate_per_s > 0 ? work / l.rate_per_s : 0.0;
    for (const auto& c : s.consumers) {
      if (!c.reads(l.queue)) continue;
      // An autoscaled group counts at its ceiling (members(): autoscale.max, or count when larger).
      l.slots += c.members() * c.slots;
      if (c.autoscale) l.autoscaled = true;
    }
    loads.push_back(l);
  }
  // Each group's slots counted once in its pool.
  const std::vector<int> pool_of = queue_pools(s);
  for (QueueLoad& l : loads) {
    const int pool = pool_of[static_cast<std::size_t>(l.queue)];
    l.pool_queues = 0;
    for (const QueueLoad& m : loads) {
      if (pool_of[static_cast<std::size_t>(m.queue)] != pool) continue;
      l.pool_erlangs += m.erlangs();
      l.pool_peak_erlangs += m.peak_rate_per_s * m.mean_service_ms / 1000.0;
      ++l.pool_queues;
    }
    for (const auto& c : s.consumers)
      if (pool_of[static_cast<std::size_t>(c.queue)] == pool) l.pool_slots += c.members() * c.slots;
  }
  return loads;
}

bool reports_mean_slots(const Scenario& s, int queue) {
  for (const auto& c : s.consumers)
    if (c.reads(queue) && (c.autoscale || c.stop || c.fleet_keys)) return true;
  return false;
}

std::vector<QueueLoad> offered_load(const Scenario& s, const std::vector<GroupFleetResult>& groups) {
  std::vector<QueueLoad> loads = offered_load(s);
  const std::vector<int> pool_of = queue_pools(s);
  for (QueueLoad& l : loads) {
    for (std::size_t g = 0; g < s.consumers.size() && g < groups.size(); ++g) {
      if (s.consumers[g].reads(l.queue)) l.mean_slots += groups[g].mean_replicas * s.consumers[g].slots;
    }
    // A pool's mean slots: each of its groups once.
    const int pool = pool_of[static_cast<std::size_t>(l.queue)];
    for (std::size_t g = 0; g < s.consumers.size() && g < groups.size(); ++g)
      if (pool_of[static_cast<std::size_t>(s.consumers[g].queue)] == pool)
        l.pool_mean_slots += groups[g].mean_replicas * s.consumers[g].slots;
  }
  return loads;
}

std::vector<std::string> scenario_warnings(const Scenario& s) {
  std::vector<std::string> out;
  for (std::size_t p = 0; p < s.producers.size(); ++p) {
    const ProducerSpec& spec = s.producers[p];
    const double service = mean_service_ms(spec);
    if (spec.deadline && spec.deadline->mean() / sim::kNsPerMsF < service)
      out.push_back("producers." + std::to_string(p) + ".deadline_ms (mean " + fmt("%g", spec.deadline->mean() / sim::kNsPerMsF) +
                    " ms) is shorter than the mean service time (" + fmt("%g", service) +
                    " ms): most jobs cannot finish on time; check the units (milliseconds)");
  }
  // AWS recommends a queue visibility timeout of at least six times the function's timeout
  // (services-sqs-configure); the loader refuses one shorter than the timeout itself.
  for (const FrameworkMapping& m : s.frameworks) {
    if (m.framework != "aws-lambda") continue;
    const ConsumerSpec& c = s.consumers[static_cast<std::size_t>(m.group)];
    const QueueSpec& q = s.broker.queues[static_cast<std::size_t>(c.queue)];
    const double timeout_ms = c.exec_timeout_value.mean() / sim::kNsPerMsF;
    if (sim::to_ms(q.sqs.visibility_timeout) < 6 * timeout_ms)
      out.push_back("broker.queues." + q.name + ".visibility_timeout_ms (" + fmt("%g", sim::to_ms(q.sqs.visibility_timeout)) +
                    " ms) is less than six times consumers." + std::to_string(m.group) + ".framework.Timeout (" +
                    fmt("%g", timeout_ms / 1000) +
                    " s), as AWS recommends for a Lambda event source (services-sqs-configure): a batch that is throttled "
                    "or retried may come back while it is still being processed");
  }
  for (const QueueLoad& l : offered_load(s)) {
    const std::string name = "broker.queues." + s.broker.queues[l.queue].name;
    if (l.slots == 0) {
      out.push_back(name + ": producers publish to it but no consumer reads it");
      continue;
    }
    // A schedule's mean includes its peak; warn only when even the average swamps the fleet (an
    // autoscaled one at its ceiling: below it the autoscaler adds replicas).
    if (l.utilization() > 1.5)
      out.push_back(name + ": the offered load is " + fmt("%.2f", l.erlangs()) + " erlangs on " +
                    std::to_string(l.slots) + " slots" + (l.autoscaled ? " at autoscale.max" : "") + " (" +
                    fmt("%.0f", 100 * l.utilization()) +
                    "% utilisation) for the whole run: the queue grows without bound; check rate_per_s and service_ms");
  }
  return out;
}

}  // namespace brokersim
