#include "models/fleet.hpp"

#include <string>

#include "models/world.hpp"

namespace brokersim {

Fleet::Fleet(World& w) : w_(w) {
  int first = 0;
  for (std::size_t g = 0; g < w.s.consumers.size(); ++g) {
    const ConsumerSpec& spec = w.s.consumers[g];
    Group group;
    group.first = first;
    group.members = spec.members();
    group.wanted = spec.count;
    if (spec.autoscale) {
      group.hpa.emplace(*spec.autoscale);
      group.start_rng.emplace(w.s.seed, w.s.replication, "consumers." + std::to_string(g) + ".autoscale.start");
    }
    first += group.members;
    groups_.push_back(std::move(group));
  }
}

void Fleet::start() {
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const ConsumerSpec& spec = w_.s.consumers[g];
    if (spec.stop) w_.at(*spec.stop, Ev::Leave, static_cast<std::uint32_t>(g));
    if (spec.autoscale) {
      groups_[g].last_sync = spec.start;
      w_.schedule_tick(spec.start, Ev::Scale, static_cast<std::uint32_t>(g));
    }
  }
}

void Fleet::on_event(const sim::Event& ev) {
  switch (static_cast<Ev>(ev.kind)) {
    case Ev::Leave: leave_group(static_cast<int>(ev.target)); break;
    case Ev::Scale: sync(static_cast<int>(ev.target)); break;
    case Ev::ReplicaUp: {
      Consumer& c = w_.consumers[ev.target];
      if (c.incarnation == ev.tag) c.connect(w_);
      break;
    }
    default: break;
  }
}

void Fleet::leave_group(int g) {
  Group& group = groups_[static_cast<std::size_t>(g)];
  group.stopped = true;
  group.wanted = 0;
  for (int m = 0; m < group.members; ++m) w_.consumers[static_cast<std::size_t>(group.first + m)].leave(w_);
}

double Fleet::metric(int g) {
  const ConsumerSpec& spec = w_.s.consumers[static_cast<std::size_t>(g)];
  const QueueBook& q = w_.ledger.queue(spec.queue);
  Group& group = groups_[static_cast<std::size_t>(g)];
  switch (spec.autoscale->metric) {
    case AutoscaleSpec::Metric::Ready: return static_cast<double>(q.ready);
    case AutoscaleSpec::Metric::ReadyUnacked: return static_cast<double>(q.ready + q.unacked);
    case AutoscaleSpec::Metric::PublishRate: {
      // Publishes per second since the previous sync (RabbitMQ's management rate, which KEDA's
      // MessageRate mode reads, is an average over recent samples too).
      const double seconds = sim::to_ms(w_.now - group.last_sync) / 1000.0;
      const double rate = seconds > 0 ? static_cast<double>(q.publishes - group.publishes_at_sync) / seconds : 0.0;
      group.publishes_at_sync = q.publishes;
      return rate;
    }
  }
  return 0;
}

void Fleet::sync(int g) {
  Group& group = groups_[static_cast<std::size_t>(g)];
  if (group.stopped) return;
  const AutoscaleSpec& spec = *w_.s.consumers[static_cast<std::size_t>(g)].autoscale;
  const double value = metric(g);
  group.last_sync = w_.now;
  group.wanted = group.hpa->sync(w_.now, value, group.wanted);
  realize(g);
  const Time next = w_.now + spec.sync;
  // A run that stops on its jobs is synced only while something else can still happen.
  if (w_.tick_worth(next)) {
    w_.schedule_tick(next, Ev::Scale, static_cast<std::uint32_t>(g));
  }
}

// Scale-up takes the lowest free members; scale-down removes replicas not yet attached first
// (their pods are still starting), then the highest-numbered attached ones. A member still
// leaving is not free: when every member is busy the shortfall waits for the next sync.
void Fleet::realize(int g) {
  Group& group = groups_[static_cast<std::size_t>(g)];
  auto member = [&](int m) -> Consumer& { return w_.consumers[static_cast<std::size_t>(group.first + m)]; };
  int current = 0;
  for (int m = 0; m < group.members; ++m)
    if (member(m).replica && !member(m).leaving) ++current;
  for (int m = 0; m < group.members && current < group.wanted; ++m) {
    Consumer& c = member(m);
    if (c.replica) continue;
    c.revive();
    c.become_replica(w_);
    const Time latency = World::sample_ns(w_.s.consumers[static_cast<std::size_t>(g)].autoscale->start_latency, *group.start_rng);
    w_.at(w_.now + latency, Ev::ReplicaUp, static_cast<std::uint32_t>(group.first + m), c.incarnation);
    ++current;
  }
  for (int pass = 0; pass < 2 && current > group.wanted; ++pass) {
    for (int m = group.members - 1; m >= 0 && current > group.wanted; --m) {
      Consumer& c = member(m);
      if (!c.replica || c.leaving || c.attached != (pass == 1)) continue;
      c.leave(w_);
      --current;
    }
  }
}

}  // namespace brokersim
