#include "experiments/cli/replication/run_checks.hpp"

#include <cstdio>

namespace brokersim {

namespace {

std::string format_ms(Time t) {
  if (t % sim::kNsPerMs == 0) return std::to_string(t / sim::kNsPerMs) + " ms";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f ms", static_cast<double>(t) / static_cast<double>(sim::kNsPerMs));
  return buf;
}

}  // namespace

std::string incomplete_run(const Scenario& scenario, const RunResult& result) {
  if (stopped_by_limit(result.stop_reason)) return std::string(stop_reason_name(result.stop_reason));
  if (result.end_time < scenario.warmup) return "before_warmup";
  if (result.generated == 0) return "no_job_measured";
  return "";
}

std::string incomplete_run_warning(const Scenario& scenario, const RunResult& result) {
  const std::string why = incomplete_run(scenario, result);
  if (why == "before_warmup")
    return "the run ended at " + format_ms(result.end_time) + ", before warmup_ms (" + format_ms(scenario.warmup) +
           "): it measured nothing (every outcome is 0, the rates and utilisation mean nothing); lower warmup_ms or run longer";
  if (why == "no_job_measured")
    return "no job was created after warmup_ms (" + format_ms(scenario.warmup) +
           "): the run measured nothing, every outcome is 0";
  return "run stopped early (" + why + "): see limits in the README";
}

}  // namespace brokersim
