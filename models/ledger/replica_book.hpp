// The replicas of each consumer group over time (what the fleet costs): a replica counts from
// its request (start_ms, or the autoscaler's decision, so its start latency is paid) until its
// connection closes after it left.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "models/job.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"
#include "sim/stats.hpp"

namespace brokersim {

class ReplicaBook {
 public:
  explicit ReplicaBook(std::size_t groups)
      : replicas_(groups, 0), peak_(groups, 0), tw_(groups, sim::TimeWeighted(0)), at_least_one_(groups, sim::TimeWeighted(0)) {
    for (auto& tw : at_least_one_) tw.set(0, 1);
  }

  // A replica of a group comes into being (requested) or is gone (left, connection closed).
  void changed(int group, Time now, int delta) {
    const auto g = static_cast<std::size_t>(group);
    replicas_[g] += delta;
    tw_[g].set(now, replicas_[g]);
    at_least_one_[g].set(now, std::max(1, replicas_[g]));
    peak_[g] = std::max(peak_[g], replicas_[g]);
    total_ += delta;
    peak_total_ = std::max(peak_total_, total_);
  }
  int replicas(int group) const { return replicas_[static_cast<std::size_t>(group)]; }

  void warmup(Time now);
  // Per group, over the measured span of measured_s seconds.
  std::vector<GroupFleetResult> finish(Time now, double measured_s, const std::vector<ConsumerSpec>& groups) const;
  // The most replicas of all groups at once after the warm-up (not the sum of the groups' peaks,
  // which may come at different times).
  int peak_total() const { return peak_total_; }

 private:
  std::vector<int> replicas_, peak_;
  std::vector<sim::TimeWeighted> tw_;
  std::vector<sim::TimeWeighted> at_least_one_;  // the replicas, counted as one while there are none
  int total_ = 0, peak_total_ = 0;
};

}  // namespace brokersim
