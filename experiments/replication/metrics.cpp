#include "experiments/replication/metrics.hpp"

#include <limits>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "experiments/replication/grid.hpp"
#include "experiments/report.hpp"

namespace brokersim {

namespace {

// Flatten numeric leaves of result_json (top-level seed and replication excluded). A window's
// percentile on too few samples is null (models/ledger/windows.hpp), and so is a window_max /
// window_min percentile no window has enough samples for: under `windows.K`, window_max and
// window_min (`nulls`) a null is the metric with no value (NaN: an empty CSV cell), so that the
// names do not depend on the run.
void flatten(const nlohmann::ordered_json& j, const std::string& prefix, bool top, std::vector<std::string>* names,
             std::vector<double>* values, bool nulls = false) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (top && (it.key() == "seed" || it.key() == "replication")) continue;
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    const auto& v = it.value();
    if (v.is_object()) {
      flatten(v, name, false, names, values, nulls || (top && (it.key() == "window_max" || it.key() == "window_min")));
    } else if (v.is_null() && nulls) {
      if (names) names->push_back(name);
      if (values) values->push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v.is_number()) {
      if (names) names->push_back(name);
      if (values) values->push_back(v.get<double>());
    }
  }
}

}  // namespace

void run_metrics(const Scenario& scenario, const RunResult& result, std::vector<std::string>* names,
                 std::vector<double>* values, bool with_windows) {
  const nlohmann::ordered_json j = result_json(scenario, result);
  flatten(j, "", true, names, values);
  if (!with_windows || !j.contains("windows")) return;
  const auto& windows = j["windows"];
  for (std::size_t k = 0; k < windows.size(); ++k) flatten(windows[k], "windows." + std::to_string(k), false, names, values, true);
}

std::vector<std::string> window_metric_names(const Scenario& scenario) {
  if (!scenario.observe_window) return {};
  RunResult r;
  for (const auto& q : scenario.broker.queues) {
    QueueResult qr;
    qr.name = q.name;
    r.queues.push_back(qr);
  }
  r.windows.emplace_back();
  std::vector<std::string> names;
  flatten(result_json(scenario, r)["windows"][0], "", false, &names, nullptr, true);
  return names;
}

std::vector<std::string> metric_names(const Scenario& scenario) {
  RunResult r;
  for (const auto& q : scenario.broker.queues) {
    QueueResult qr;
    qr.name = q.name;
    r.queues.push_back(qr);
  }
  std::vector<std::string> names;
  run_metrics(scenario, r, &names, nullptr);
  return names;
}

std::vector<std::string> metric_names(const SweepSpace& space) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (std::size_t p = 0; p < space.size(); ++p) {
    for (auto& name : metric_names(space.point_scenario(p)))
      if (seen.insert(name).second) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace brokersim
