// Trace CSV files of recorded arrivals (defined in trace_csv.cpp).
#pragma once

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace brokersim {

// The rows of a trace_csv file's text (`file` and `path` name it in errors: "PATH: FILE line N: ...").
std::vector<ArrivalSpec::TraceRow> parse_trace_text(const std::string& text, const std::string& file,
                                                    const std::string& path);

}  // namespace brokersim
