// `brokersim import FILE [--out SCENARIO.json]`: a broker's own configuration file -> a brokersim
// scenario (experiments/cli/import/common.hpp; docs/import-rabbitmq.md, import-servicebus.md,
// import-sqs.md).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace brokersim {

// Exit status: 0; 2 a bad or unrecognised file, option or output (nothing written).
int cmd_import(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace brokersim
