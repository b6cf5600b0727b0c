// `brokersim fit`: a scenario fitted from a job log, and (--check) that scenario's workload run
// through the user's broker and fleet against the log's waits. docs/fit.md describes it.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace brokersim {

// Exit status: 0; 2 a bad log, option or output (nothing written); 3 --check gave no verdict, as a
// replication stopped at a limit (the report says which and how to raise it; the outputs are
// written); 6 --check ran and the model does not match the log (the report says where; the
// outputs are written).
int cmd_fit(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace brokersim
