// The error a scenario's loading raises, or "(no error)": the one-line way the broker and client
// setting tests assert a refusal by its exact message.
#pragma once

#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace brokersim::test {

inline std::string load_error(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    (void)run_scenario(text, sets);
  } catch (const brokersim::ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace brokersim::test
