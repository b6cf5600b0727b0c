#include "models/autoscaler.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

namespace brokersim {

int Autoscaler::sync(Time now, double metric, int current) {
  const bool active = metric > spec_.activation;
  if (active) last_active_ = now;
  int next = current;
  if (current == 0) {
    // Scaled to zero the HPA is idle; KEDA brings the first replica.
    if (active) next = std::max(1, spec_.min);
  } else if (spec_.min == 0 && !active && now - last_active_ >= spec_.cooldown) {
    next = 0;
  } else {
    next = hpa(now, metric, current);
  }
  changed(now, current, next);
  return next;
}

int Autoscaler::hpa(Time now, double metric, int current) {
  const double target = spec_.target_per_replica;
  const double ratio = metric / (static_cast<double>(current) * target);
  // ceil of a ratio of two exact decimals: the small slack keeps 1000/100 at 10, not 11.
  const int wanted = std::abs(ratio - 1.0) <= spec_.tolerance
                         ? current
                         : static_cast<int>(std::min<double>(INT_MAX / 4, std::ceil(metric / target - 1e-9)));

  // Stabilization: a recommendation inside a window holds the count there.
  const Time longest = std::max(spec_.up.stabilization, spec_.down.stabilization);
  while (!recommendations_.empty() && recommendations_.front().at <= now - longest) recommendations_.pop_front();
  int up = wanted, down = wanted;
  for (const Recommendation& r : recommendations_) {
    if (r.at > now - spec_.up.stabilization) up = std::min(up, r.replicas);
    if (r.at > now - spec_.down.stabilization) down = std::max(down, r.replicas);
  }
  recommendations_.push_back({now, wanted});
  int next = current;
  if (next < up) next = up;
  if (next > down) next = down;

  const int hpa_min = std::max(1, spec_.min);
  if (next > current) next = std::min({next, up_limit(now, current), spec_.max});
  else if (next < current) next = std::max(next, down_limit(now, current));
  return std::clamp(next, hpa_min, std::max(hpa_min, spec_.max));
}

int Autoscaler::up_limit(Time now, int current) const {
  int added = 0, removed = 0;
  for (const Change& c : changes_)
    if (c.at > now - spec_.up.period) (c.delta > 0 ? added : removed) += std::abs(c.delta);
  const long start = static_cast<long>(current) - added + removed;
  long limit = LONG_MIN;
  if (spec_.up.percent >= 0)
    limit = std::max(limit, static_cast<long>(std::ceil(static_cast<double>(start) * (1 + spec_.up.percent / 100))));
  if (spec_.up.pods >= 0) limit = std::max(limit, start + spec_.up.pods);
  return static_cast<int>(std::clamp<long>(limit, current, INT_MAX / 4));
}

int Autoscaler::down_limit(Time now, int current) const {
  int added = 0, removed = 0;
  for (const Change& c : changes_)
    if (c.at > now - spec_.down.period) (c.delta > 0 ? added : removed) += std::abs(c.delta);
  const long start = static_cast<long>(current) + removed - added;
  long limit = LONG_MAX;
  if (spec_.down.percent >= 0)
    limit = std::min(limit, static_cast<long>(static_cast<double>(start) * (1 - spec_.down.percent / 100)));
  if (spec_.down.pods >= 0) limit = std::min(limit, start - spec_.down.pods);
  return static_cast<int>(std::clamp<long>(limit, 0, current));
}

void Autoscaler::changed(Time now, int from, int to) {
  const Time longest = std::max(spec_.up.period, spec_.down.period);
  while (!changes_.empty() && changes_.front().at <= now - longest) changes_.pop_front();
  if (to != from) changes_.push_back({now, to - from});
}

}  // namespace brokersim
