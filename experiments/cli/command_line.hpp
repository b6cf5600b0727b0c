// The brokersim command line, callable in-process (tests) as well as from main().
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace brokersim {

// Exit statuses: 0 success; 1 internal error (a bug); 2 invalid input (scenario, option, file) or
// an output that cannot be written; 3 a run stopped early at a limit (limits.max_in_system,
// limits.max_events, a zero-time loop) or measured nothing (it ended before warmup_ms, or no job
// was created after it); 4 (analytic) the scenario fits no exact model; 5 (plan) no setting in the
// grid meets every target.
int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace brokersim
