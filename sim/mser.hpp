// MSER-5 (White 1997; White, Cobb and Spratt 2000): where to truncate the start of an output
// series so that what remains is as close to steady state as the data can tell.
//
// The series is cut into batches of 5 observations (batch means damp the noise that makes the
// plain MSER statistic jumpy); for each candidate truncation d (in batches) MSER(d) is the
// variance of the remaining batch means divided by the number remaining, i.e. the squared
// standard error of their mean. Truncating the transient lowers it (the biased values go), and
// truncating steady data raises it again (fewer values), so its minimum marks the warm-up.
//
// MSER is unreliable at the very end of a series: with two or three batch means left, their
// variance can be near 0 by chance and the statistic dips (Hoad, Robinson and Davies 2010 note
// the same). So the last tenth of the batches (at least 2 kept) is never a candidate. When the
// minimum over the rest falls in the second half of the series, the statistic prefers keeping
// only a short tail: the series still trends at its end and no truncation makes it stationary.
// That is reported (steady = false), not hidden, and the truncation is then the best one within
// the first half (White et al.'s rule is to distrust such a run, which the caller says).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace sim {

struct MserResult {
  std::size_t truncate = 0;  // observations to discard (a multiple of the batch size)
  bool steady = true;        // the minimum lies in the first half of the batches
  std::size_t batches = 0;   // full batches in the series (a partial last batch is dropped)
};

// `batch` = 5 for MSER-5. Fewer than 2 full batches: nothing to decide (truncate 0, steady false
// when the series is not empty, as nothing shows a steady state).
inline MserResult mser(const std::vector<double>& series, std::size_t batch = 5) {
  MserResult out;
  if (batch == 0) batch = 1;
  const std::size_t k = series.size() / batch;
  out.batches = k;
  if (k < 2) {
    out.steady = series.empty();
    return out;
  }
  std::vector<double> z(k);
  for (std::size_t i = 0; i < k; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < batch; ++j) s += series[i * batch + j];
    z[i] = s / static_cast<double>(batch);
  }
  // Suffix sums give every MSER(d) in one pass: sum of squares about the mean of z[d..k).
  std::vector<double> sum(k + 1, 0.0), sumsq(k + 1, 0.0);
  for (std::size_t i = k; i-- > 0;) {
    sum[i] = sum[i + 1] + z[i];
    sumsq[i] = sumsq[i + 1] + z[i] * z[i];
  }
  const std::size_t keep = std::max<std::size_t>(2, k / 10);
  const auto stat = [&](std::size_t d) {
    const double n = static_cast<double>(k - d);
    const double ss = std::max(0.0, sumsq[d] - sum[d] * sum[d] / n);
    return ss / (n * n);
  };
  std::size_t best = 0, best_first_half = 0;
  for (std::size_t d = 1; d + keep <= k; ++d) {
    if (stat(d) < stat(best)) best = d;
    if (2 * d < k && stat(d) < stat(best_first_half)) best_first_half = d;
  }
  out.steady = 2 * best < k;
  out.truncate = best_first_half * batch;
  return out;
}

}  // namespace sim
