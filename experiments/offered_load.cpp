#include "experiments/offered_load.hpp"

#include <algorithm>
#include <cstdio>

#include "experiments/text.hpp"

namespace brokersim {

namespace {

struct Rate {
  double mean = 0, peak = 0, peak_from_ms = 0;
  bool scheduled = false;
};

// Span a list of arrival times covers: to stop.time_ms when given, else to the last arrival.
double span_ms(const Scenario& s, double last_ms) {
  return s.stop_time ? sim::to_ms(*s.stop_time) : last_ms;
}

Rate arrival_rate(const Scenario& s, const ArrivalSpec& a) {
  Rate r;
  switch (a.kind) {
    case ArrivalSpec::Kind::Poisson: r.mean = a.rate_per_s; break;
    case ArrivalSpec::Kind::Periodic: r.mean = a.every > 0 ? sim::kNsPerSF / static_cast<double>(a.every) : 0.0; break;
    case ArrivalSpec::Kind::AtTimes: {
      const double span = a.at.empty() ? 0.0 : span_ms(s, sim::to_ms(a.at.back()));
      r.mean = span > 0 ? 1000.0 * static_cast<double>(a.at.size()) / span : 0.0;
      break;
    }
    case ArrivalSpec::Kind::Trace: {
      const double span = a.trace.empty() ? 0.0 : span_ms(s, sim::to_ms(a.trace.back().publish));
      r.mean = span > 0 ? 1000.0 * static_cast<double>(a.trace.size()) / span : 0.0;
      break;
    }
    case ArrivalSpec::Kind::RateSchedule: {
      r.scheduled = true;
      const double end = s.stop_time ? sim::to_ms(*s.stop_time) : 0.0;
      double area = 0;
      for (std::size_t i = 0; i < a.schedule.size(); ++i) {
        const double from = sim::to_ms(a.schedule[i].from);
        const double to = i + 1 < a.schedule.size() ? sim::to_ms(a.schedule[i + 1].from) : end;
        if (a.schedule[i].linear) {
          // A ramp: the trapezoid, cut where the run ends inside it.
          const double r0 = a.schedule[i].rate_per_s, r1 = a.schedule[i + 1].rate_per_s;
          const double cut = end > from && end < to ? end : to;
          const double r_cut = r0 + (r1 - r0) * (cut - from) / (to - from);
          if (cut > from) area += (r0 + r_cut) / 2 * (cut - from);
        } else if (to > from) {
          area += a.schedule[i].rate_per_s * (to - from);
        }
        if (a.schedule[i].rate_per_s > r.peak) {
          r.peak = a.schedule[i].rate_per_s;
          r.peak_from_ms = from;
        }
      }
      r.mean = end > 0 ? area / end : r.peak;
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

std::vector<QueueLoad> offered_load(const Scenario& s) {
  std::vector<QueueLoad> loads;
  for (std::size_t q = 0; q < s.broker.queues.size(); ++q) {
    QueueLoad l;
    l.queue = static_cast<int>(q);
    double work = 0;  // sum of rate x service
    bool fed = false;
    for (const auto& p : s.producers) {
      if (p.queue != l.queue) continue;
      fed = true;
      const Rate r = arrival_rate(s, p.arrivals);
      const double service = mean_service_ms(p);
      l.rate_per_s += r.mean;
      l.peak_rate_per_s += r.peak;
      if (r.scheduled) {
        l.scheduled = true;
        l.peak_from_ms = r.peak_from_ms;
      }
      work += r.mean * service;
    }
    if (!fed) continue;
    l.mean_service_ms = l.rate_per_s > 0 ? work / l.rate_per_s : 0.0;
    for (const auto& c : s.consumers)
      if (c.queue == l.queue) l.slots += c.count * c.slots;
    loads.push_back(l);
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
  for (const QueueLoad& l : offered_load(s)) {
    const std::string name = "broker.queues." + s.broker.queues[l.queue].name;
    if (l.slots == 0) {
      out.push_back(name + ": producers publish to it but no consumer reads it");
      continue;
    }
    // A schedule's mean includes its peak; warn only when even the average swamps the fleet.
    if (l.utilization() > 1.5)
      out.push_back(name + ": the offered load is " + fmt("%.2f", l.erlangs()) + " erlangs on " +
                    std::to_string(l.slots) + " slots (" + fmt("%.0f", 100 * l.utilization()) +
                    "% utilisation) for the whole run: the queue grows without bound; check rate_per_s and service_ms");
  }
  return out;
}

}  // namespace brokersim
