// A Kubernetes HorizontalPodAutoscaler fed by a KEDA scaler: given the metric at a sync and the
// replica count the HPA last set, the replica count it sets now. Only the arithmetic of the
// controllers lives here (models/fleet.cpp turns counts into consumers that attach and leave),
// so the rules can be tested replica by replica.
//
// The HPA (pkg/controller/podautoscaler, external metric with an AverageValue target, which is
// what KEDA's scalers give it): desired = ceil(metric / target), unless
// |metric / (current x target) - 1| <= tolerance (no change); then the stabilization windows
// (the lowest recommendation of the scale-up window, the highest of the scale-down window, never
// past the current count), then the rate policies (selectPolicy Max: the most permissive policy;
// a period's allowance counts from the replicas at its start), then [min, max].
// KEDA: at zero replicas it activates (to one) when the metric exceeds `activation`; with
// min 0 it deactivates (to zero) once the metric has stayed at or below it for the cooldown.
// KEDA hands the HPA max(min, 1) as its own minimum.
#pragma once

#include <deque>

#include "models/scenario.hpp"

namespace brokersim {

class Autoscaler {
 public:
  explicit Autoscaler(const AutoscaleSpec& spec) : spec_(spec) {}

  // One sync at `now`: the metric's value and the replica count the HPA set last; the count it
  // sets now.
  int sync(Time now, double metric, int current);

 private:
  int hpa(Time now, double metric, int current);
  int up_limit(Time now, int current) const;
  int down_limit(Time now, int current) const;
  void changed(Time now, int from, int to);

  const AutoscaleSpec& spec_;
  struct Recommendation { Time at; int replicas; };
  std::deque<Recommendation> recommendations_;
  struct Change { Time at; int delta; };
  std::deque<Change> changes_;
  Time last_active_ = 0;
};

}  // namespace brokersim
