// plan's per-window target names: windows.K.METRIC, the figure METRIC (as in run --json's
// `windows` list: fraction.expired_before_start, wait_ms.sojourn.p99, throughput_per_s, ...) of
// window K (from 0) of every replication, checked against the scenario's windows before anything runs.
#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace brokersim {

// True for a name that starts with "windows.".
bool is_window_name(const std::string& name);

// Checks windows.K.METRIC against every point's scenario (a ScenarioError naming --target: no
// observe.window_ms, no fixed span to count windows in, K out of range, an unknown METRIC with a
// did-you-mean).
void check_window_name(const std::string& name, const std::vector<Scenario>& points);

// Whether a metric name is a window's percentile (windows.K.wait_ms.STAGE.p50/p95/p99) or a
// window aggregate of one (window_max. / window_min.wait_ms.STAGE.pNN): figures that rest on the
// window's samples and are missing below window_min_samples (models/ledger/windows.hpp).
bool is_window_percentile(const std::string& name);

// What plan says when a target names a window percentile: the minimum samples, and that a window
// below it has no such percentile and is left out of window_max / window_min.
std::string window_percentile_rule();

// The windows a scenario's measured span has: ceil((stop.time_ms - warmup_ms) / window_ms), at
// least 1; 0 when it cannot be known before the run (no observe.window_ms or stop.time_ms, or
// warmup_ms "auto").
std::size_t window_count(const Scenario& s);

}  // namespace brokersim
