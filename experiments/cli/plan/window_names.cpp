#include "experiments/cli/plan/window_names.hpp"

#include <algorithm>

#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/text.hpp"
#include "models/ledger/windows.hpp"

namespace brokersim {

namespace {

const char* const kPrefix = "windows.";

std::string nearest(const std::string& name, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 8);
  std::size_t best_distance = limit + 1;
  std::string best;
  for (const auto& c : candidates)
    if (const std::size_t d = edit_distance(name, c); d < best_distance) best_distance = d, best = c;
  return best;
}

}  // namespace

bool is_window_name(const std::string& name) { return name.rfind(kPrefix, 0) == 0; }

bool is_window_percentile(const std::string& name) {
  const bool windowed = is_window_name(name) || name.rfind("window_max.", 0) == 0 || name.rfind("window_min.", 0) == 0;
  if (!windowed || name.find(".wait_ms.") == std::string::npos || name.size() < 4) return false;
  const std::string tail = name.substr(name.size() - 4);
  return tail == ".p50" || tail == ".p95" || tail == ".p99";
}

std::string window_percentile_rule() {
  return "a window's p50, p95 and p99 rest on at least " + std::to_string(window_min_samples(0.50)) + ", " +
         std::to_string(window_min_samples(0.95)) + " and " + std::to_string(window_min_samples(0.99)) +
         " samples of their wait (windows.K.wait_ms.STAGE.count; windows.K.jobs: the jobs created in the window); "
         "below that the window has no such percentile (windows.K.... missing) and window_max / window_min leave it out";
}

std::size_t window_count(const Scenario& s) {
  if (!s.observe_window || *s.observe_window == 0 || !s.stop_time || s.auto_warmup) return 0;
  // As the run's windows (models/ledger/windows.cpp): from the warm-up's end to the span's.
  const Time start = std::min(s.warmup, *s.stop_time), width = *s.observe_window;
  return static_cast<std::size_t>(std::max<Time>(1, (*s.stop_time - start + width - 1) / width));
}

void check_window_name(const std::string& name, const std::vector<Scenario>& points) {
  const std::string rest = name.substr(std::string(kPrefix).size());
  const auto dot = rest.find('.');
  const std::string index = rest.substr(0, dot);
  const std::string expected = "windows.K.METRIC (K a window index from 0, METRIC a figure of run --json's windows list)";
  if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos ||
      dot == std::string::npos || dot + 1 == rest.size())
    throw ScenarioError("--target: expected " + expected + ", got " + quote(name));
  const std::size_t k = std::stoul(index);
  const std::string metric = rest.substr(dot + 1);
  std::size_t fewest = 0;
  for (std::size_t p = 0; p < points.size(); ++p) {
    const Scenario& s = points[p];
    if (!s.observe_window)
      throw ScenarioError("--target: " + quote(name) + " asks for a window, but the scenario has no observe.window_ms");
    const std::size_t n = window_count(s);
    if (n == 0)
      throw ScenarioError("--target: " + quote(name) +
                          " needs windows known before the run: stop.time_ms and a fixed warmup_ms (not \"auto\")");
    fewest = p == 0 ? n : std::min(fewest, n);
  }
  if (k >= fewest)
    throw ScenarioError("--target: expected a window index from 0 to " + std::to_string(fewest - 1) + " in " + quote(name) +
                        " (the scenario has " + std::to_string(fewest) + " window" + (fewest == 1 ? "" : "s") +
                        " of observe.window_ms from warmup_ms to stop.time_ms), got " + index);
  const std::vector<std::string> metrics = window_metric_names(points[0]);
  if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) {
    const std::string guess = nearest(metric, metrics);
    throw ScenarioError("--target: expected a per-window figure after " + quote(std::string(kPrefix) + index + ".") +
                        " (as in run --json's windows list: fraction.expired_before_start, wait_ms.sojourn.p99, "
                        "throughput_per_s, ...), got " + quote(metric) +
                        (guess.empty() ? std::string() : " (did you mean " + quote(std::string(kPrefix) + index + "." + guess) + "?)"));
  }
}

}  // namespace brokersim
