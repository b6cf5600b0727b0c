// Answers with a stated precision: the sequential replication rule shared by run, sweep, plan
// and analytic --validate.
//
// The rule. A point (one scenario) runs replications 0, 1, ..., in rounds: first
// max(3, --replications), then each round adds half as many again (3, 4, 6, 9, 13, 19, ...) up to
// --max-replications. After each round the point's own replications decide whether it is done;
// nothing another point did enters the decision, and replication r always draws the streams of
// (seed, r). So a point's rounds, and therefore its numbers, are the same for any thread count or
// shard split, and a point that stopped at R replications reports exactly what a fixed
// `--replications R` run of it reports.
//
// A metric is precise when the 95% Student-t half-width of its replication mean is at most
// REL x |mean|, or at most ABS (--precision-abs): the absolute floor is what lets a fraction
// near 0 (0 stale jobs in most replications) stop at all, since no relative precision can be
// reached around a mean of 0.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "experiments/replication/pool.hpp"
#include "models/scenario.hpp"

namespace brokersim {

struct PrecisionRule {
  double rel = 0.05;                      // --precision REL
  double abs = 0.001;                     // --precision-abs
  std::uint64_t first = 3;                // the first round: max(3, --replications)
  std::uint64_t max_replications = 100;   // --max-replications
  std::vector<std::string> metrics;       // --precision-metric (empty: the command's default)
};

inline constexpr std::uint64_t kMinSequentialReplications = 3;
inline constexpr std::uint64_t kMaxSequentialReplications = 100'000;

// The replication count after a round that ended at n: n + max(1, n / 2), at most the maximum.
std::uint64_t next_round(const PrecisionRule& rule, std::uint64_t n);

// Half-width within REL of the mean, or within the absolute floor. NaN (one replication) is not.
bool is_precise(const PrecisionRule& rule, double mean, double half_width);

// The options, added to a command's description: --precision, --precision-abs,
// --max-replications, and (with_metric) --precision-metric.
void add_precision_options(boost::program_options::options_description& opts, bool with_metric);

// nullopt without --precision (then any of the others is an error naming it, exit status 2).
// `replications`: the command's --replications value, the first round when larger than 3.
std::optional<PrecisionRule> read_precision_options(const boost::program_options::variables_map& vm,
                                                    std::uint64_t replications);

// Goodput and the stale fractions (expired in the queue, in transit, before start): what a
// capacity question is usually about.
std::vector<std::string> default_precision_metrics();

// The column of each metric the rule checks: rule.metrics, or the defaults; a name that is not a
// metric is an error naming --precision-metric.
std::vector<std::size_t> precision_metric_columns(const PrecisionRule& rule, const std::vector<std::string>& names);

// The sequential driver over several points at once. `decide(i, rows)` says whether point i is
// done after a round (rows: its replications so far, in order); `done(i, rows, incomplete)` is
// called once per point when it stops (incomplete: how many of its replications stopped at a
// limit or measured nothing), serialised, in the order points finish within a round (in index
// order within one round). Returns the replications run in all.
using PointDecision = std::function<bool(std::size_t, const std::vector<std::vector<double>>&)>;
using PointFinished = std::function<void(std::size_t, const std::vector<std::vector<double>>&, std::size_t)>;
std::uint64_t run_sequential(const std::vector<const Scenario*>& points, const PrecisionRule& rule, unsigned threads,
                             const std::vector<std::string>& names, const PointDecision& decide,
                             const PointFinished& done, TaskRunStats* stats);

}  // namespace brokersim
