// The deliveries a client holds unsettled, in no particular order: each job knows its position
// (Job::unacked_pos), so whichever one is settled leaves in O(1) (the last takes its place).
// RabbitMQ's unacked deliveries per channel, Service Bus's locked messages and SQS's in-flight
// messages per client are all such lists.
#pragma once

#include <cstdint>
#include <vector>

#include "models/job.hpp"

namespace brokersim {

inline void hold(std::vector<std::uint32_t>& held, JobPool& jobs, std::uint32_t j) {
  jobs[j].unacked_pos = static_cast<std::uint32_t>(held.size());
  held.push_back(j);
}

inline void unhold(std::vector<std::uint32_t>& held, JobPool& jobs, std::uint32_t j) {
  const std::uint32_t pos = jobs[j].unacked_pos;
  const std::uint32_t last = held.back();
  held[pos] = last;
  jobs[last].unacked_pos = pos;
  held.pop_back();
  jobs[j].unacked_pos = kNoIndex;
}

}  // namespace brokersim
