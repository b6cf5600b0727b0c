#include "models/workload.hpp"

#include <cmath>
#include <string>

namespace brokersim {

namespace {
Time to_time(double ns) { return sim::round_ns(ns); }
}  // namespace

Producer::Producer(const ProducerSpec& spec, int index, std::uint64_t seed,
                   std::uint64_t replication)
    : spec_(&spec) {
  const std::string base = "producers." + std::to_string(index) + ".";
  arrival_rng_ = sim::Rng(seed, replication, base + "arrivals");
  service_rng_ = sim::Rng(seed, replication, base + "service");
  deadline_rng_ = sim::Rng(seed, replication, base + "deadline");
  ttl_rng_ = sim::Rng(seed, replication, base + "expiration");
  delay_rng_ = sim::Rng(seed, replication, base + "publish_delay");
  size_rng_ = sim::Rng(seed, replication, base + "message_bytes");
  sim::Rng clock_rng(seed, replication, base + "clock");
  clock_offset_ = to_time(spec.clock_offset.sample(clock_rng));
}

Time Producer::next_arrival() {
  const ArrivalSpec& a = spec_->arrivals;
  switch (a.kind) {
    case ArrivalSpec::Kind::Poisson:
      last_ += to_time(arrival_rng_.exponential(sim::kNsPerSF / a.rate_per_s));
      return last_ > sim::kHorizon ? last_ = sim::kNever : last_;
    case ArrivalSpec::Kind::Periodic:
      // The first job at time 0, then one every `every`.
      if (started_) last_ += a.every;
      started_ = true;
      return last_ > sim::kHorizon ? last_ = sim::kNever : last_;
    case ArrivalSpec::Kind::AtTimes:
      if (cursor_ >= a.at.size()) return sim::kNever;
      return last_ = a.at[cursor_++];
    case ArrivalSpec::Kind::Trace:
      if (cursor_ >= a.trace.size()) return sim::kNever;
      return last_ = a.trace[cursor_++].publish;
    case ArrivalSpec::Kind::RateSchedule: {
      // Piecewise Poisson: draw with the current rate; a draw that crosses the next step is
      // discarded and drawing restarts at the step (exact, by memorylessness).
      Time t = last_;
      for (;;) {
        while (cursor_ + 1 < a.schedule.size() && a.schedule[cursor_ + 1].from <= t) ++cursor_;
        const bool before_first = t < a.schedule[0].from;
        const double rate = before_first ? 0.0 : a.schedule[cursor_].rate_per_s;
        const Time next_step = before_first ? a.schedule[0].from
                               : cursor_ + 1 < a.schedule.size() ? a.schedule[cursor_ + 1].from
                                                                 : sim::kNever;
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

Producer::JobDraw Producer::draw() {
  JobDraw d{};
  d.service = to_time(spec_->service.sample(service_rng_));
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
