// The windows of observe.window_ms, from the warm-up's end: each tallies the jobs created in it
// (outcomes, waits), whenever their outcome came.
#pragma once

#include <vector>

#include "models/job.hpp"
#include "models/results.hpp"

namespace brokersim {

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
