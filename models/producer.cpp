#include "models/producer.hpp"

#include <algorithm>

#include "models/broker.hpp"
#include "models/world.hpp"

namespace brokersim {

void create_job(World& w, std::uint32_t p) {
  Producer& prod = w.producers[p];
  const std::uint32_t j = w.jobs.allocate();
  Job& job = w.jobs[j];
  const Producer::JobDraw d = prod.draw();
  job.id = w.ledger.created_total++;
  job.producer = static_cast<std::int32_t>(p);
  job.queue = prod.spec().queue;
  // Counted: created in the measured span; later ones (a timed run following its jobs past the
  // stop, world.hpp) only make the load those jobs meet.
  job.counted = w.now >= w.s.warmup && (!w.s.stop_time || w.now <= *w.s.stop_time);
  job.created = w.now;
  job.service = d.service;
  job.message_ttl = d.message_ttl;
  if (!prod.spec().message_bytes.is_zero())
    job.bytes = static_cast<std::uint32_t>(sim::round_ns(prod.spec().message_bytes.sample(prod.size_rng())));
  job.persistent = prod.spec().persistent;
  if (d.deadline != sim::kNever) {
    job.deadline = w.now + d.deadline;
    // The job carries its deadline in the producer's clock: that is all a consumer can see.
    job.expires_at = job.deadline + prod.clock_offset();
  }
  if (prod.spec().countdown) [[unlikely]] job.eta = w.now + prod.draw_countdown() + prod.clock_offset();
  w.ledger.job_created(job);
  w.ledger.r.peak_in_system = std::max<std::uint64_t>(w.ledger.r.peak_in_system, w.jobs.live());

  if (d.publish_delay > 0)
    w.at(w.now + d.publish_delay, Ev::Publish, j, job.gen);
  else
    publish_job(w, j);

  const auto& stop_jobs = w.s.stop_jobs;
  if (!stop_jobs || w.ledger.created_total < *stop_jobs) {
    const Time t = prod.next_arrival();
    if (t != sim::kNever && t <= w.horizon) w.at(t, Ev::Arrival, p);
  }
}

void publish_job(World& w, std::uint32_t j) {
  Job& job = w.jobs[j];
  const Producer& prod = w.producers[job.producer];
  job.published = w.now;
  const Time producer_now = w.now + prod.clock_offset();
  if (job.expires_at != sim::kNever && job.expires_at <= producer_now) {
    w.decide(job, Outcome::RejectedAtPublish);  // never publish work that is already stale
    w.leave(j);
    return;
  }
  if (prod.spec().expiration == ProducerSpec::Expiration::RemainingBudget && job.expires_at != sim::kNever)
    job.message_ttl = job.expires_at - producer_now;
  w.broker->publish(j);
}

}  // namespace brokersim
