// warmup_ms "auto", the warm-up chosen from the data, and the one way every command runs a
// scenario: choose the warm-up (when asked), then simulate.
#pragma once

#include "models/results.hpp"
#include "models/scenario.hpp"
#include "models/simulation.hpp"

namespace brokersim {

// warmup_ms "auto": a pilot run from time 0 records the job-level series (sojourn or the stale
// indicator, per job in creation order), MSER-5 picks the truncation, and `s.warmup` becomes the
// creation time of the first job kept (0 when none is discarded); s.auto_warmup records the
// choice. No-op for a scenario without "auto" or whose choice is made. The caller then runs the
// scenario again with that warm-up: the same sample path (same streams), counted from there.
void choose_auto_warmup(Scenario& s);

// choose_auto_warmup, then simulate: every command's run goes through here.
RunResult simulate_with_warmup(Scenario& s, const RunOptions& options = {});

}  // namespace brokersim
