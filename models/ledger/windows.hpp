// The windows of observe.window_ms, from the warm-up's end: each tallies the jobs created in it
// (outcomes, waits), whenever their outcome came.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "models/job.hpp"
#include "models/results.hpp"

namespace brokersim {

// The fewest samples a window's percentile pQ is computed from: ceil(1 / (1 - Q)), the least n
// whose pQ is not simply the sample's largest value (2 for p50, 20 for p95, 100 for p99). An
// hour of 41 jobs has no p99 of its own: its "p99" would be its slowest job. Below the minimum
// run --json gives the window's percentile as null, and window_max / window_min leave that window
// out of that percentile (docs/outcomes.md, "Windows").
constexpr std::uint64_t window_min_samples(double q) {
  const double n = 1.0 / (1.0 - q);
  const auto whole = static_cast<std::uint64_t>(n);
  return static_cast<double>(whole) + 1e-9 < n ? whole + 1 : whole;
}
static_assert(window_min_samples(0.50) == 2 && window_min_samples(0.95) == 20 && window_min_samples(0.99) == 100);

class Windows {
 public:
  Windows(Time width, Time warmup) : width_(width), warmup_(warmup) {}

  bool on() const { return width_ != 0; }
  // The window a job was created in; nullptr without windows or for a warm-up job.
  WindowResult* of(const Job& job) {
    if (width_ == 0 || !job.counted) [[likely]] return nullptr;
    return at(job.created);
  }
  void job_created(const Job& job) {
    if (WindowResult* win = of(job)) ++win->generated;
  }
  // A counted job's final outcome (out of line: a run without windows pays one test, not the code).
  void outcome(const Job& job, Outcome o);
  // Every window of the measured span, empty ones included; a job created at the very end of
  // the run (a window of length 0) joins the last full window.
  std::vector<WindowResult> finish(Time now);

 private:
  WindowResult* at(Time created);

  Time width_;  // 0 = no windows
  Time warmup_;
  std::vector<WindowResult> windows_;
};

}  // namespace brokersim
