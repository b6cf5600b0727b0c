#include "experiments/cli/replication/metrics.hpp"

#include <limits>
#include <unordered_set>

#include "experiments/cli/replication/grid.hpp"

namespace brokersim {

std::vector<std::string> window_metric_names(const Scenario& scenario) {
  if (!scenario.observe_window) return {};
  std::vector<std::string> names;
  for (const WindowMetric& m : window_metrics()) names.push_back(m.name);
  return names;
}

std::vector<std::string> metric_names(const Scenario& scenario) { return MetricRegistry(scenario).names(); }

std::vector<std::string> metric_names(const SweepSpace& space) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (std::size_t p = 0; p < space.size(); ++p) {
    for (auto& name : metric_names(space.point_scenario(p)))
      if (seen.insert(name).second) names.push_back(std::move(name));
  }
  return names;
}

namespace {

// windows.K.NAME -> (K, NAME's index in window_metrics()), or false.
bool window_column(const std::string& name, std::size_t* window, std::size_t* metric) {
  const std::string prefix = "windows.";
  if (name.rfind(prefix, 0) != 0) return false;
  const auto dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return false;
  const std::string k = name.substr(prefix.size(), dot - prefix.size());
  if (k.size() > 9 || k.find_first_not_of("0123456789") != std::string::npos) return false;
  const std::string rest = name.substr(dot + 1);
  const auto& metrics = window_metrics();
  for (std::size_t m = 0; m < metrics.size(); ++m)
    if (metrics[m].name == rest) {
      *window = std::stoul(k);
      *metric = m;
      return true;
    }
  return false;
}

}  // namespace

PointColumns::PointColumns(const Scenario& point, const std::vector<std::string>& names,
                           const std::unordered_map<std::string, std::size_t>& column_of)
    : registry_(point), width_(names.size()) {
  column_.reserve(registry_.size());
  for (std::size_t i = 0; i < registry_.size(); ++i) {
    const auto k = column_of.find(registry_.metric(i).name);
    if (k == column_of.end())
      throw InvariantError("sweep: a run reported a metric the grid does not have: " + registry_.metric(i).name);
    column_.push_back(k->second);
  }
  if (!point.observe_window) return;
  for (std::size_t c = 0; c < names.size(); ++c) {
    WindowColumn w{c, 0, 0};
    if (window_column(names[c], &w.window, &w.metric)) windows_.push_back(w);
  }
}

void PointColumns::fill(const Scenario& run, const RunResult& result, std::vector<double>& row) const {
  row.assign(width_, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> values(registry_.size());
  registry_.values(run, result, values.data());
  for (std::size_t i = 0; i < values.size(); ++i) row[column_[i]] = values[i];
  for (const WindowColumn& w : windows_)
    if (w.window < result.windows.size()) row[w.column] = window_metrics()[w.metric].value(result.windows[w.window]);
}

}  // namespace brokersim
