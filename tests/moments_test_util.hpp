// A sample's mean and variance by two passes in long double: the reference the kernel tests hold
// Welford's one-pass statistics and the distributions' moments against.
#pragma once

#include <vector>

namespace brokersim::test {

struct Moments {
  double mean, var;
};

inline Moments sample_moments(const std::vector<double>& xs) {
  long double s = 0;
  for (double x : xs) s += x;
  const long double m = s / static_cast<long double>(xs.size());
  long double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  return {static_cast<double>(m), static_cast<double>(ss / static_cast<long double>(xs.size() - 1))};
}

}  // namespace brokersim::test
