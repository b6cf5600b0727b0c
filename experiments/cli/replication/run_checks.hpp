// Whether a run's numbers describe the run: every command warns about a run that stopped at a
// limit or measured nothing, sweeps count them per row, and plan never accepts one.
#pragma once

#include <string>

#include "models/results.hpp"
#include "models/scenario.hpp"

namespace brokersim {

// Why a run's numbers describe nothing or only part of the run: "" when it measured normally, the
// stop_reason of a limit (max_in_system, max_events, zero_time_loop), "before_warmup" (it ended
// before warmup_ms) or "no_job_measured" (no job was created after the warm-up). Sweep rows count
// these runs, and every command warns and exits with status 3 when there is one.
std::string incomplete_run(const Scenario& scenario, const RunResult& result);

// The stderr warning for one incomplete run (without "brokersim: warning: ").
std::string incomplete_run_warning(const Scenario& scenario, const RunResult& result);

}  // namespace brokersim
