// `analytic --coverage SEEDS`: does a printed 95% interval cover the truth 95% of the time? On
// models whose values are exact, each seed runs the replication rule a user would run (Stein's
// two stages with --precision, else a fixed --replications), and the table says, per model and
// metric, in how many seeds the interval held the exact value.
#pragma once

#include <cstdint>
#include <iosfwd>

namespace brokersim {

struct PrecisionRule;

// The design: exact models only (M/M/c+D, Erlang C, Erlang A), runs of about `jobs` jobs after a
// warm-up of 500 mean service times, seeds 1..seeds. Returns the lowest measured coverage.
double print_coverage(std::ostream& out, std::uint64_t seeds, double jobs, int replications,
                      const PrecisionRule* precision);

}  // namespace brokersim
