#include "models/ledger/replica_book.hpp"

namespace brokersim {

void ReplicaBook::warmup(Time now) {
  for (std::size_t g = 0; g < tw_.size(); ++g) {
    tw_[g].reset(now);
    at_least_one_[g].reset(now);
    peak_[g] = replicas_[g];
  }
  peak_total_ = total_;
}

std::vector<GroupFleetResult> ReplicaBook::finish(Time now, double measured_s, const std::vector<ConsumerSpec>& groups) const {
  std::vector<GroupFleetResult> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    GroupFleetResult fr;
    fr.consumer_seconds = tw_[g].area(now) / sim::kNsPerSF;
    fr.slot_seconds = fr.consumer_seconds * groups[g].slots;
    fr.at_least_one_seconds = at_least_one_[g].area(now) / sim::kNsPerSF;
    fr.mean_replicas = measured_s > 0 ? fr.consumer_seconds / measured_s : replicas_[g];
    fr.peak_replicas = peak_[g];
    out.push_back(fr);
  }
  return out;
}

}  // namespace brokersim
