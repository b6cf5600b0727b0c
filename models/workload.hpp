// Producers: when jobs are created, and what each job carries (service demand, deadline, TTL).
// Each attribute has its own random stream, so changing one (a tighter deadline, say) leaves
// the arrival times and service demands of every job exactly as they were.
#pragma once

#include <cstdint>
#include <memory>

#include "models/scenario.hpp"
#include "sim/rng.hpp"

namespace brokersim {

class Producer {
 public:
  Producer(const ProducerSpec& spec, int index, std::uint64_t seed, std::uint64_t replication);

  const ProducerSpec& spec() const { return *spec_; }

  // Creation time of the next job (kNever when the workload is exhausted). Call once per job.
  Time next_arrival();

  struct JobDraw {
    Time service;
    Time deadline;       // relative to creation; kNever = none (may be <= 0 from a trace)
    Time publish_delay;
    Time message_ttl;    // fixed per-message TTL, -1 = none or computed at publish
  };
  // Attributes of the job whose arrival next_arrival() just returned.
  JobDraw draw();
  // Its creation -> its ETA (spec().countdown, which the caller checked is given): apart from
  // draw(), so that producers without one pay nothing for it.
  Time draw_countdown() { return sim::round_ns(spec_->countdown->sample(countdown_rng_)); }

  Time clock_offset() const { return clock_offset_; }
  // This run's volume multiplier (ProducerSpec::volume_*): what every arrival rate is scaled by.
  double volume() const { return volume_; }
  // The day of a days_csv trace this run replays (0 otherwise).
  std::size_t day() const { return day_; }
  // This run's service-time distribution (ns): the fitted one redrawn under parameter_uncertainty.
  const Distribution& service() const { return *service_; }
  sim::Rng& size_rng() { return size_rng_; }

 private:
  Time ramp_arrival(const ArrivalSpec::Step& from, const ArrivalSpec::Step& to, Time t);

  const ProducerSpec* spec_;
  // Points at spec_->service, or at this run's redraw (on the heap: a Producer may be moved).
  const Distribution* service_;
  std::unique_ptr<const Distribution> redrawn_service_;
  sim::Rng arrival_rng_, service_rng_, deadline_rng_, ttl_rng_, delay_rng_, size_rng_, countdown_rng_;
  Time clock_offset_ = 0;
  double volume_ = 1;
  Time last_ = 0;           // last creation time
  std::size_t cursor_ = 0;  // at_ms / trace / rate_schedule position
  // A trace's rows this run replays, [cursor_, trace_end_), shifted back by trace_offset_ (days_csv:
  // the day this run drew).
  std::size_t trace_end_ = 0;
  Time trace_offset_ = 0;
  std::size_t day_ = 0;
  bool started_ = false;
};

}  // namespace brokersim
