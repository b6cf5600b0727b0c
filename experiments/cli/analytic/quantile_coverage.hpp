// `analytic --coverage SEEDS --quantiles`: how often the 95% intervals of the queue wait's p50,
// p95 and p99 cover the exact steady-state quantile, on M/M/1 at rho 0.95 and M/M/8+D at rho
// 0.95 (exact laws: models/analytic/mmcd.hpp), after a warm-up of many relaxation times. Each seed runs R fixed replications and judges,
// from the same runs, the interval brokersim printed before (mean of per-run quantiles +-
// Student t), the expected per-run quantile's (the same + quantization) and the pooled
// steady-state quantile's (sectioning; experiments/cli/replication/sectioning.hpp).
#pragma once

#include <cstdint>
#include <iosfwd>

namespace brokersim {

// Seeds 1..seeds, runs of about `jobs` jobs after the warm-up. Returns the lowest
// coverage of the pooled interval.
double print_quantile_coverage(std::ostream& out, std::uint64_t seeds, double jobs, int replications);

}  // namespace brokersim
