// The brokersim subcommands, one file each, composed from the replication library
// (experiments/cli/replication/), the plan and analytic parts and the reports; experiments/cli/command_line.cpp
// dispatches to them. Each takes the arguments after its name and returns the exit status.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace brokersim {

int cmd_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_merge(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// Exit status 5: no setting in the grid meets every target.
int cmd_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int cmd_metrics(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// Exact queueing models a scenario fits. Exit status 4: the scenario fits no model (the failing
// assumption is printed on stdout).
int cmd_analytic(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace brokersim
