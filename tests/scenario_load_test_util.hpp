// What the scenario-loading tests share (test_scenario_load.cpp, test_scenario_errors.cpp): a fresh
// folder, the smallest valid scenario and a complete one, and the error a document gives. A named
// namespace: test files are compiled several to a unit.
#pragma once

#include <atomic>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>
#include "experiments/cli/loader/broker_kinds.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "tests/test_util.hpp"

namespace scenario_load_test {

using brokersim::ScenarioError;
using nlohmann::json;
namespace fs = std::filesystem;

// A fresh folder per call, so tests do not see each other's files.
inline fs::path temp_dir() {
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() /
                       ("brokersim_scenario_load_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline constexpr double kNs = 1e6;  // ns per ms

// The smallest valid scenario; bad-input tests change one thing in it.
inline json minimal() {
  return json::parse(R"({
    "stop": {"time_ms": 60000},
    "broker": {"queues": {"work": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}}, "service_ms": 50}],
    "consumers": [{"queue": "work", "count": 4}]
  })");
}

// Every key docs/scenario.md defines for rabbitmq-classic, in use; its trace_csv is "jobs.csv".
inline json complete() {
  return json::parse(R"({
    "name": "everything",
    "seed": 7,
    "stop": {"time_ms": 60000, "jobs": 500},
    "warmup_ms": 1000,
    "broker": {
      "kind": "rabbitmq-classic",
      "version": "3.13",
      "delivery_latency_ms": 0.5,
      "ack_latency_ms": {"exp": {"mean": 0.25}},
      "queues": {
        "work": {"message_ttl_ms": 600, "dead_letter_to": "dlq", "max_length": 1000,
                 "overflow": "reject-publish-dlx", "expires_ms": 30000},
        "dlq": {"message_ttl_ms": null, "dead_letter_to": null, "max_length": null}
      }
    },
    "producers": [
      {"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}}, "deadline_ms": 600,
       "expiration_ms": "remaining-budget", "service_ms": {"exp": {"mean": 50}}},
      {"queue": "dlq", "arrivals": {"at_ms": [30, 10, 20.5]},
       "deadline_ms": {"uniform": {"min": 100, "max": 200}}, "expiration_ms": 300,
       "service_ms": {"lognormal": {"mean": 40, "cv": 0.5}},
       "publish_delay_ms": {"normal": {"mean": 2, "sd": 1}},
       "clock_offset_ms": {"normal": {"mean": -5, "sd": 3}}},
      {"queue": "work", "arrivals": {"trace_csv": "jobs.csv"}, "service_ms": {"empirical": [1, 2, 3]}},
      {"queue": "work", "arrivals": {"rate_schedule": [{"from_ms": 0, "rate_per_s": 5}, {"from_ms": 1000, "rate_per_s": 0}]},
       "service_ms": {"const": 4}, "expiration_ms": null, "deadline_ms": null},
      {"queue": "work", "arrivals": {"periodic": {"every_ms": 2.5}}, "service_ms": 1}
    ],
    "consumers": [
      {"queue": "work", "count": 4, "prefetch": 1, "slots": 2, "start_ms": 100,
       "clock_offset_ms": {"uniform": {"min": -20, "max": 20}}, "uncertainty_ms": 100,
       "admission": "check-at-receive-and-start", "min_window_ms": 10, "on_expired": "requeue",
       "exec_timeout": "remaining-budget", "failure_probability": 0.25, "priority": -3},
      {"queue": "dlq", "count": 2.0, "prefetch": 0, "admission": "none", "on_expired": "reject",
       "exec_timeout": {"const": 250}, "clock_offset_ms": -7}
    ],
    "faults": [
      {"at_ms": 0, "consumer": 0, "stall_ms": 1050},
      {"at_ms": 500, "consumer": 5, "crash": true, "restart_after_ms": 200},
      {"at_ms": 600, "consumer": 1, "crash": true},
      {"at_ms": 700, "broker_down_ms": 50},
      {"at_ms": 800, "consumer": 2, "clock_step_ms": -12.5}
    ],
    "observe": {"every_ms": 100},
    "limits": {"max_in_system": 1000, "max_events": 1e6},
    "sweep": {"consumers.0.prefetch": [1, 2, 4]}
  })");
}

inline std::string load_error(const json& doc, const std::string& base_dir = "") {
  try {
    brokersim::load_scenario(doc, base_dir);
  } catch (const ScenarioError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace scenario_load_test
