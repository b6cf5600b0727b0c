#include "models/workload.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/input_uncertainty.hpp"

namespace brokersim {

namespace {
Time to_time(double ns) { return sim::round_ns(ns); }
}  // namespace

Producer::Producer(const ProducerSpec& spec, int index, std::uint64_t seed,
                   std::uint64_t replication)
    : spec_(&spec), service_(&spec.service) {
  const std::string base = "producers." + std::to_string(index) + ".";
  arrival_rng_ = sim::Rng(seed, replication, base + "arrivals");
  service_rng_ = sim::Rng(seed, replication, base + "service");
  deadline_rng_ = sim::Rng(seed, replication, base + "deadline");
  ttl_rng_ = sim::Rng(seed, replication, base + "expiration");
  delay_rng_ = sim::Rng(seed, replication, base + "publish_delay");
  size_rng_ = sim::Rng(seed, replication, base + "message_bytes");
  countdown_rng_ = sim::Rng(seed, replication, base + "countdown");
  sim::Rng clock_rng(seed, replication, base + "clock");
  clock_offset_ = to_time(spec.clock_offset.sample(clock_rng));
  // Drawn once, first thing, from a stream of its own: whatever else the run draws, run r of
  // every setting has the same day.
  volume_ = spec.volume_multiplier;
  if (spec.volume_per_run) {
    sim::Rng day_rng(seed, replication, base + "volume");
    if (spec.draw_parameters && spec.volume_fitted_days >= 2) {
      // The spread and level fitted from so many days, redrawn: the loader made per_run lognormal.
      sim::Rng parameter_rng(seed, replication, base + "volume_parameters");
      volume_ *= predictive_day_volume(spec.volume_per_run->param_a(), spec.volume_per_run->param_b(),
                                       spec.volume_fitted_days, day_rng, parameter_rng);
    } else {
      volume_ *= std::max(0.0, spec.volume_per_run->sample(day_rng));
    }
  } else if (spec.draw_parameters && spec.fitted_arrivals > 0) {
    // One fitted span's rates: their level is known to a Poisson count's precision, m Gamma(m) / m.
    // (Fitted from several days, the days' level error above already holds it: counted once.)
    sim::Rng parameter_rng(seed, replication, base + "volume_parameters");
    const double m = static_cast<double>(spec.fitted_arrivals);
    volume_ *= Distribution::standard_gamma(m, parameter_rng) / m;
  }
  if (spec.draw_parameters && spec.fitted_service_times > 0) {
    sim::Rng parameter_rng(seed, replication, base + "service_parameters");
    redrawn_service_ = std::make_unique<const Distribution>(redraw_fitted(spec.service, spec.fitted_service_times, parameter_rng));
    service_ = redrawn_service_.get();
  }
  // As the loader bounds the multiplier: a draw far in a tail neither overflows a gap nor stops time.
  volume_ = volume_ < 1e-9 ? 0.0 : std::min(volume_, 1e6);
  trace_end_ = spec.arrivals.trace.size();
  if (spec.arrivals.days() > 0) {
    // Whole days resampled: the run's day drawn uniformly, from a stream of its own (run r of
    // every setting replays the same day).
    sim::Rng day_rng(seed, replication, base + "day");
    day_ = static_cast<std::size_t>(day_rng.below(spec.arrivals.days()));
    cursor_ = spec.arrivals.day_starts[day_];
    trace_end_ = spec.arrivals.day_starts[day_ + 1];
    trace_offset_ = static_cast<Time>(day_) * Time{86'400'000} * sim::kNsPerMs;
  }
}

Time Producer::next_arrival() {
  const ArrivalSpec& a = spec_->arrivals;
  switch (a.kind) {
    case ArrivalSpec::Kind::Poisson:
      if (volume_ <= 0) return last_ = sim::kNever;  // a day without this producer's traffic
      last_ += to_time(arrival_rng_.exponential(sim::kNsPerSF / (a.rate_per_s * volume_)));
      return last_ > sim::kHorizon ? last_ = sim::kNever : last_;
    case ArrivalSpec::Kind::Periodic:
      // The first job at time 0, then one every `every`.
      // A scaled period is rounded to the ns once, so the arrivals stay evenly spaced.
      if (volume_ <= 0) return last_ = sim::kNever;
      if (started_) {
        const double every = static_cast<double>(a.every) / volume_;
        if (every > static_cast<double>(sim::kHorizon)) return last_ = sim::kNever;
        last_ += volume_ == 1 ? a.every : to_time(every);
      }
      started_ = true;
      return last_ > sim::kHorizon ? last_ = sim::kNever : last_;
    case ArrivalSpec::Kind::AtTimes:
      if (cursor_ >= a.at.size()) return sim::kNever;
      return last_ = a.at[cursor_++];
    case ArrivalSpec::Kind::Trace:
      if (cursor_ >= trace_end_) return sim::kNever;
      return last_ = a.trace[cursor_++].publish - trace_offset_;
    case ArrivalSpec::Kind::RateSchedule: {
      // Piecewise Poisson: draw with the current rate; a draw that crosses the next step is
      // discarded and drawing restarts at the step (exact, by memorylessness).
      Time t = last_;
      for (;;) {
        while (cursor_ + 1 < a.schedule.size() && a.schedule[cursor_ + 1].from <= t) ++cursor_;
        const bool before_first = t < a.schedule[0].from;
        const double rate = before_first ? 0.0 : a.schedule[cursor_].rate_per_s * volume_;
        const Time next_step = before_first ? a.schedule[0].from
                               : cursor_ + 1 < a.schedule.size() ? a.schedule[cursor_ + 1].from
                                                                 : sim::kNever;
        if (!before_first && a.schedule[cursor_].linear) {
          const Time candidate = ramp_arrival(a.schedule[cursor_], a.schedule[cursor_ + 1], t);
          if (candidate > sim::kHorizon) return last_ = sim::kNever;
          if (candidate < next_step) return last_ = candidate;
          t = next_step;
          continue;
        }
        if (rate <= 0) {
          if (next_step == sim::kNever) return sim::kNever;
          t = next_step;
          continue;
        }
        const Time candidate = t + to_time(arrival_rng_.exponential(sim::kNsPerSF / rate));
        if (candidate > sim::kHorizon) return last_ = sim::kNever;
        if (candidate < next_step) return last_ = candidate;
        t = next_step;
      }
    }
  }
  return sim::kNever;
}

// A linear ramp from step `from` to step `to`: a non-homogeneous Poisson process of rate
// lambda(t) = a + b t from t (rates per second, t in seconds after t). The next arrival is at the
// tau where the integrated rate a tau + b tau^2 / 2 reaches a unit exponential draw E (inversion,
// as for a homogeneous process): tau = 2E / (a + sqrt(a^2 + 2bE)), the root written so that it
// holds for b = 0 and loses no precision when b is small. When the rate falls and its integral to
// zero stays below E (a^2 + 2bE < 0), no arrival comes before the rate would reach 0: kNever here,
// and the caller restarts at the next step (exact, as for the steps).
Time Producer::ramp_arrival(const ArrivalSpec::Step& from, const ArrivalSpec::Step& to, Time t) {
  const double span_s = static_cast<double>(to.from - from.from) / sim::kNsPerSF;
  const double slope = (to.rate_per_s - from.rate_per_s) * volume_ / span_s;  // per s^2
  const double a = from.rate_per_s * volume_ + slope * static_cast<double>(t - from.from) / sim::kNsPerSF;
  const double e = arrival_rng_.exponential(1.0);
  const double disc = a * a + 2.0 * slope * e;
  if (disc < 0) return sim::kNever;
  const double denominator = a + std::sqrt(disc);
  if (denominator <= 0) return sim::kNever;
  const double tau_ns = 2.0 * e / denominator * sim::kNsPerSF;
  if (tau_ns > static_cast<double>(sim::kHorizon)) return sim::kNever;
  return t + to_time(tau_ns);
}

Producer::JobDraw Producer::draw() {
  JobDraw d{};
  d.service = to_time(service_->sample(service_rng_));
  d.deadline = spec_->deadline ? to_time(spec_->deadline->sample(deadline_rng_)) : sim::kNever;
  d.publish_delay = to_time(spec_->publish_delay.sample(delay_rng_));
  d.message_ttl = spec_->expiration == ProducerSpec::Expiration::Fixed
                      ? to_time(spec_->expiration_value.sample(ttl_rng_))
                      : -1;
  if (spec_->arrivals.kind == ArrivalSpec::Kind::Trace) {
    const auto& row = spec_->arrivals.trace[cursor_ - 1];
    if (row.service) d.service = *row.service;
    if (row.deadline) d.deadline = *row.deadline;
  }
  return d;
}

}  // namespace brokersim
