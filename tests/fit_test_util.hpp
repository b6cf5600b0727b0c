// What the fit tests share: judging a fitted parameter against the truth that made its sample.
#pragma once

#include <cmath>

#include "experiments/cli/fit/mle.hpp"

namespace brokersim::test {

// The 99.9% interval from a reported 95% one: the same standard error, 3.29 instead of 1.96 of
// them. Used where one fixed-seed sample is compared with the truth.
inline bool within_999(const brokersim::fit::Estimate& e, double truth) {
  const double half = (e.hi - e.lo) / 2 * (3.2905 / 1.95996);
  return std::abs(e.value - truth) <= half;
}

}  // namespace brokersim::test
