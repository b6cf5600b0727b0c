// Consumer groups whose size changes: groups that leave (consumers[].stop_ms) and groups an
// autoscaler sizes (consumers[].autoscale). A replica is a member consumer (World::consumers,
// numbered across groups; an autoscaled group has `max` members) that attaches (Ev::ReplicaUp,
// after its start latency) and leaves (Consumer::leave); the fleet only decides which and when.
// A scenario with neither has no fleet events at all.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/autoscaler.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

namespace brokersim {

struct World;

class Fleet {
 public:
  explicit Fleet(World& w);
  void start();                         // the groups' stop_ms and first syncs
  void on_event(const sim::Event& ev);  // Ev::Leave, Ev::ReplicaUp, Ev::Scale

  // The autoscaler's replica count of a group (its spec.replicas), for the time series; a fixed
  // group's count.
  int wanted(int group) const { return groups_[static_cast<std::size_t>(group)].wanted; }

 private:
  struct Group {
    int first = 0, members = 0;   // its consumers: [first, first + members)
    std::optional<Autoscaler> hpa;
    std::optional<sim::Rng> start_rng;
    int wanted = 0;               // what the HPA set (or the fixed count)
    bool stopped = false;
    std::uint64_t publishes_at_sync = 0;
    Time last_sync = 0;
  };
  void leave_group(int g);
  void sync(int g);
  double metric(int g);
  void realize(int g);            // bring the group's replicas to `wanted`

  World& w_;
  std::vector<Group> groups_;
};

}  // namespace brokersim
