// What the sweep and plan tests share (test_sweep.cpp, test_sweep_plan.cpp): a small scenario where
// prefetch and count both matter, a scratch folder holding it, and a CSV column by name. A named
// namespace: test files are compiled several to a unit.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "tests/test_util.hpp"

namespace sweep_test {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::split_csv_line;

// Two slots per consumer, Poisson arrivals, a deadline: prefetch and count both matter.
inline constexpr const char* kScenario = R"({"name": "sweep-test", "seed": 11, "stop": {"jobs": 400},
  "broker": {"delivery_latency_ms": 1, "queues": {"work": {"message_ttl_ms": 400, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 40}}, "deadline_ms": 400,
                 "expiration_ms": "remaining-budget", "service_ms": {"exp": {"mean": 80}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 2, "uncertainty_ms": 20}]})";

struct SweepDir : brokersim::test::ScratchDir {
  std::string scenario;
  SweepDir() : ScratchDir("brokersim-sweep"), scenario(write("s.json", kScenario)) {}
};

using brokersim::test::lines_of;

inline std::size_t column(const std::string& header, const std::string& name) {
  const auto cols = split_csv_line(header);
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == name) return i;
  FAIL("no column " << name);
  return 0;
}

}  // namespace sweep_test
