#include "models/consumer.hpp"

#include <string>

namespace brokersim {

namespace {
sim::Rng stream(std::uint64_t seed, std::uint64_t rep, int group, int member, const char* what) {
  // Named by group and member, not by the global index, so adding a consumer to one group does
  // not reshuffle the numbers of every consumer after it.
  return sim::Rng(seed, rep,
                  "consumers." + std::to_string(group) + "." + std::to_string(member) + "." + what);
}
}  // namespace

Consumer::Consumer(const ConsumerSpec& spec, int index, int group, int member, std::uint64_t seed,
                   std::uint64_t replication)
    : delivery_rng(stream(seed, replication, group, member, "delivery")),
      ack_rng(stream(seed, replication, group, member, "ack")),
      failure_rng(stream(seed, replication, group, member, "failure")),
      timeout_rng(stream(seed, replication, group, member, "timeout")),
      spec_(&spec),
      index_(index) {
  sim::Rng clock_rng = stream(seed, replication, group, member, "clock");
  clock = LocalClock(sim::round_ns(spec.clock_offset.sample(clock_rng)));
}

void Consumer::track(JobPool& jobs, std::uint32_t job_index) {
  jobs[job_index].unacked_pos = static_cast<std::uint32_t>(unacked_jobs_.size());
  unacked_jobs_.push_back(job_index);
  ++unacked;
}

void Consumer::untrack(JobPool& jobs, std::uint32_t job_index) {
  const std::uint32_t pos = jobs[job_index].unacked_pos;
  const std::uint32_t last = unacked_jobs_.back();
  unacked_jobs_[pos] = last;
  jobs[last].unacked_pos = pos;
  unacked_jobs_.pop_back();
  jobs[job_index].unacked_pos = kNoIndex;
  --unacked;
}

}  // namespace brokersim
