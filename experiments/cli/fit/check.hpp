// `brokersim fit --check SCENARIO.json`: the fitted workload run through the user's own broker and
// fleet, and the simulated waits (enqueue to start) compared with the log's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace brokersim::fit {

// One queue of the log, as the check needs it.
struct CheckQueue {
  std::string log_name;                 // "" when the log has no queue column
  nlohmann::ordered_json arrivals;      // the fitted arrivals ({"rate_schedule": [...]})
  nlohmann::ordered_json service;       // the chosen service-time distribution
  bool replay = false;                  // replay the log's own arrival times instead (not Poisson)
  std::vector<std::int64_t> arrivals_ns;  // sorted, from the log's origin (for replay)
  std::vector<double> log_waits_ms;     // started - enqueued of the log's started jobs, sorted
};

struct CheckOptions {
  std::string scenario_path;
  std::size_t replications = 10;
  std::optional<std::uint64_t> seed;
  double span_ms = 0;                   // the log's span
  std::size_t jobs = 0;                 // the log's jobs: each run stops once as many were created and settled
  // --check-tolerance: a figure outside its interval by less than the larger of tol_rel x the
  // log's value and tol_abs_ms "differs slightly" (exit status 0), beyond it "does not match".
  double tol_rel = 0.10, tol_abs_ms = 20;
};

// "10%", "50ms", "2s", "10%,20ms" (the larger of the two applies); "0" for none. ScenarioError naming
// --check-tolerance otherwise.
void parse_check_tolerance(const std::string& text, double& rel, double& abs_ms);
// "10% or 20 ms, the larger"
std::string describe_tolerance(double rel, double abs_ms);

// A figure's verdict, in three words.
enum class Verdict : std::uint8_t { Matches, DiffersSlightly, DoesNotMatch };
const char* verdict_words(Verdict v);  // "matches", "differs slightly", "does not match"

// A wait statistic: the log's value against the replications'.
struct CheckMetric {
  std::string name;                     // "mean", "p50", "p95", "p99"
  double log = 0;
  double sim_mean = 0, ci_lo = 0, ci_hi = 0;  // 95% interval of the simulated mean
  double pi_lo = 0, pi_hi = 0;          // 95% prediction interval of one more replication
  bool match = true;                    // log within the prediction interval
  // log - simulated mean, with its 95% interval (the prediction interval's half-width around it:
  // the log is one more run if the model is right, so 0 lies inside when it matches).
  double diff = 0, diff_lo = 0, diff_hi = 0;
  double tolerance = 0;                 // ms: the larger of tol_rel x |log| and tol_abs_ms
  Verdict verdict = Verdict::Matches;
};

struct CheckQueueResult {
  std::string log_name, scenario_queue;
  std::size_t log_n = 0;
  double sim_n = 0;                     // started jobs per replication, mean
  std::vector<CheckMetric> metrics;
  // Two-sample Kolmogorov-Smirnov distance, log vs each replication, and between replications
  // (what the distance is when the model is right).
  double ks_log_mean = 0, ks_log_min = 0, ks_log_max = 0, ks_sim_median = 0, ks_sim_p95 = 0;
  bool ks_match = true;
  // The distance with each wait allowed to move by the tolerance (the largest gap between the
  // log's distribution and the run's shifted by up to the tolerance either way), mean over runs.
  double ks_log_tolerant = 0;
  Verdict ks_verdict = Verdict::Matches;
  std::vector<std::string> mismatches;  // plain sentences: the figures that do not match
  std::vector<std::string> slight;      // those that differ slightly
};

struct CheckResult {
  std::vector<CheckQueueResult> queues;
  std::size_t replications = 0;
  bool match = true;                    // no figure "does not match" (exit status 6 otherwise)
  Verdict verdict = Verdict::Matches;   // the worst figure's
  double tol_rel = 0.10, tol_abs_ms = 20;
  // The figure farthest outside its interval in units of its tolerance (the first to fail as the
  // model departs from the log): "p99 wait (queue "work"): ...". Empty when all match.
  std::string fails_first;
  // Not empty when a replication stopped at a limit (limits.max_events, limits.max_in_system,
  // zero_time_loop) rather than once the log's jobs were created and settled: its waits cover part
  // of the span, so there is no verdict (exit status 3). Says which limit, after how many of the
  // log's jobs, and how to raise it. `queues` is then empty: no replication ran after it.
  std::string no_verdict;
  std::string stopped_by;               // the stop reason's name ("max_events")
  std::vector<std::string> notes;       // how the workload was built, runs stopped early
};

// Loads the scenario, replaces its producers by the fitted workload (one per log queue, keeping
// the rest of the producer the user wrote for that queue: deadline, TTL, delays), runs it with
// warmup 0 until as many jobs as the log has were created and settled (at most twice the log's
// span plus an hour), and compares. ScenarioError for a scenario that does not load (named as
// the user's file and producer), or a log queue the scenario does not have. A replication stopped
// at a limit ends the check with no verdict (CheckResult::no_verdict).
CheckResult run_check(const std::vector<CheckQueue>& queues, const CheckOptions& options);

void print_check(std::ostream& out, const CheckResult& result);

// Nearest-rank quantile of a sorted sample (0 for an empty one).
double sorted_quantile(const std::vector<double>& sorted, double q);

}  // namespace brokersim::fit
