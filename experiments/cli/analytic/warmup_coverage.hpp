// `analytic --coverage SEEDS --warmup`: does warmup_ms "auto" leave figures whose intervals cover
// the steady state? Two start-ups whose steady state is exact (Erlang C), each seed running the
// same replications under three warm-up rules: a fixed warm-up long past the transient (the
// reference), MSER-5 on each replication's own series (the per-run rule), and MSER-5 on
// the average of the pilot replications, one cut for all (experiments/cli/replication/warmup.hpp).
#pragma once

#include <cstdint>
#include <iosfwd>

namespace brokersim {

// `replications` fixed replications per seed, seeds 1..seeds, seeds run on `threads` threads
// (the table is the same for any count). Returns the lowest coverage of the pilot rule.
double print_warmup_coverage(std::ostream& out, std::uint64_t seeds, int replications, unsigned threads);

}  // namespace brokersim
