// `analytic --coverage SEEDS --skew`: heavy-traffic means with few replications. On exact models
// whose run means are right-skewed (M/M/1 at rho 0.95) and on ones already covered well (M/M/8+D
// at rho 0.95, M/M/3+D), each seed runs the replications a user would run (fixed --replications,
// default 10, or --precision's two stages) and the table sets the Student-t interval beside the
// skew-aware one (Johnson's modified t, statistics.hpp), each judged on the same runs.
#pragma once

#include <cstdint>
#include <iosfwd>

namespace brokersim {

struct PrecisionRule;

// Runs of about `jobs` jobs after each model's warm-up. Returns the lowest skew-aware coverage.
double print_skew_coverage(std::ostream& out, std::uint64_t seeds, double jobs, int replications,
                           const PrecisionRule* precision, unsigned threads);

}  // namespace brokersim
