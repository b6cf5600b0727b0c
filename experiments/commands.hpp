// The brokersim command line, callable in-process (tests) as well as from main().
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace brokersim {

// Exit statuses: 0 success; 1 internal error (a bug); 2 invalid input (scenario, option, file);
// 3 a run stopped early at a limit (limits.max_in_system, limits.max_events, a zero-time loop).
int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

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
