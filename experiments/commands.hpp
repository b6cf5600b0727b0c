// The brokersim command line, callable in-process (tests) as well as from main().
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace brokersim {

struct Scenario;
struct RunResult;

// Exit statuses: 0 success; 1 internal error (a bug); 2 invalid input (scenario, option, file) or
// an output that cannot be written; 3 a run stopped early at a limit (limits.max_in_system,
// limits.max_events, a zero-time loop) or measured nothing (it ended before warmup_ms, or no job
// was created after it).
int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Why a run's numbers describe nothing or only part of the run: "" when it measured normally, the
// stop_reason of a limit (max_in_system, max_events, zero_time_loop), "before_warmup" (it ended
// before warmup_ms) or "no_job_measured" (no job was created after the warm-up). Sweep rows count
// these runs, and every command warns and exits with status 3 when there is one.
std::string incomplete_run(const Scenario& scenario, const RunResult& result);

// The stderr warning for one incomplete run (without "brokersim: warning: ").
std::string incomplete_run_warning(const Scenario& scenario, const RunResult& result);

int cmd_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// Parameter sweeps, shard merging and capacity planning (experiments/sweep.cpp, plan.cpp).
int cmd_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_merge(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_metrics(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);  // plan.cpp

// Exact queueing models a scenario fits (experiments/analytic_cmd.cpp). Exit status 4: the
// scenario fits no model (the failing assumption is printed on stdout).
int cmd_analytic(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace brokersim
