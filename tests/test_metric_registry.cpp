// The metric registry against what it feeds: every metric is in run --json under its name with
// the same number, in the JSON's order, and a sweep's columns are the registry's.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "experiments/cli/metrics/registry.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "test_util.hpp"

namespace test_metric_registry {

using brokersim::test::read_file;

// Every numeric leaf of run --json (seed and replication excluded) with its dotted name; a null
// under window_max, window_min or a window is a missing figure (NaN). How sweeps read the JSON
// before the registry: what the registry must still give.
void flatten(const nlohmann::ordered_json& j, const std::string& prefix, bool top, bool nulls,
             std::vector<std::string>& names, std::vector<double>& values) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (top && (it.key() == "seed" || it.key() == "replication")) continue;
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    const auto& v = it.value();
    if (v.is_object()) {
      flatten(v, name, false, nulls || (top && (it.key() == "window_max" || it.key() == "window_min")), names, values);
    } else if (v.is_null() && nulls) {
      names.push_back(name);
      values.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v.is_number()) {
      names.push_back(name);
      values.push_back(v.get<double>());
    }
  }
}

bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

std::string example(const std::string& name) {
  return read_file(std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/" + name);
}

void check_run(const std::string& text, const std::vector<std::string>& sets) {
  const brokersim::test::Run run = brokersim::test::run_scenario(text, sets);
  const nlohmann::ordered_json j = run.json();
  std::vector<std::string> names;
  std::vector<double> values;
  flatten(j, "", true, false, names, values);

  const brokersim::MetricRegistry registry(run.scenario);
  CHECK(registry.names() == names);
  CHECK(brokersim::metric_names(run.scenario) == names);
  std::vector<double> got(registry.size());
  registry.values(run.scenario, run.result, got.data());
  REQUIRE(got.size() == values.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    CHECK_MESSAGE(same_number(got[i], values[i]), names[i] << ": " << got[i] << " against " << values[i]);

  if (!run.scenario.observe_window) return;
  REQUIRE(j["windows"].size() == run.result.windows.size());
  const auto& per_window = brokersim::window_metrics();
  for (std::size_t k = 0; k < run.result.windows.size(); ++k) {
    std::vector<std::string> wn;
    std::vector<double> wv;
    flatten(j["windows"][k], "", false, true, wn, wv);
    REQUIRE(wn.size() == per_window.size());
    for (std::size_t m = 0; m < wn.size(); ++m) {
      CHECK(per_window[m].name == wn[m]);
      CHECK(same_number(per_window[m].value(run.result.windows[k]), wv[m]));
    }
  }
  CHECK(brokersim::window_metric_names(run.scenario).size() == per_window.size());
}

}  // namespace test_metric_registry

TEST_CASE("metric registry: every metric is in run --json with the same number and order") {
  using test_metric_registry::check_run;
  using test_metric_registry::example;
  check_run(example("capacity-baseline.json"), {"stop.time_ms=20000", "warmup_ms=5000"});
  check_run(example("capacity-baseline.json"), {"stop.time_ms=20000", "warmup_ms=5000", "observe.window_ms=5000"});
  check_run(example("spike-autoscale.json"), {"stop.time_ms=600000"});
  check_run(example("cross-broker.json"), {"broker.kind=\"amazon-sqs\""});
  check_run(example("cross-broker.json"), {"broker.kind=\"rabbitmq-quorum\""});
  check_run(example("celery-early-acks.json"), {"stop.time_ms=300000"});
  check_run(example("servicebus-scale-down.json"), {});
  check_run(example("capacity-baseline.json"), {"stop.time_ms=20000", "warmup_ms=\"auto\""});
}

TEST_CASE("metric registry: every metric says its unit and what it counts under a name of its own") {
  const auto text = test_metric_registry::example("spike-autoscale.json");
  const brokersim::test::Run run = brokersim::test::run_scenario(text, {"stop.time_ms=1000", "warmup_ms=0"});
  const brokersim::MetricRegistry registry(run.scenario);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const auto& m = registry.metric(i);
    CHECK_MESSAGE(!m.unit.empty(), m.name);
    CHECK_MESSAGE(!m.counts.empty(), m.name);
    CHECK_MESSAGE(seen.insert(m.name).second, m.name);
  }
  for (const auto& m : brokersim::window_metrics()) {
    CHECK_MESSAGE(!m.unit.empty(), m.name);
    CHECK_MESSAGE(!m.counts.empty(), m.name);
  }
}

TEST_CASE("metric registry: a sweep's columns are the registry's metrics in its order") {
  brokersim::test::ScratchDir dir("metric-registry");
  const std::string path = dir.write("s.json", R"({"name": "cols", "seed": 3, "stop": {"time_ms": 2000},
    "broker": {"queues": {"work": {}, "other": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}}, "deadline_ms": 300,
                   "service_ms": {"exp": {"mean": 40}}}],
    "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 1}]})");
  const auto got = brokersim::test::run_cli({"sweep", path, "--vary", "consumers.0.prefetch=1,2", "--replications", "2",
                                             "--threads", "1"});
  REQUIRE(got.status == 0);
  const auto header = brokersim::test::split_csv_line(brokersim::test::lines_of(got.out).at(0));
  std::vector<std::string> expected{"consumers.0.prefetch", "replications"};
  const auto space = brokersim::load_sweep_space(path, {}, {"consumers.0.prefetch=1,2"}, std::nullopt);
  for (const auto& name : brokersim::MetricRegistry(space.point_scenario(0)).names()) {
    expected.push_back(name + "_mean");
    expected.push_back(name + "_ci95");
  }
  // Then the steady-state quantiles of the pooled jobs: every wait's p50, p95, p99.
  for (const char* wait : {"queue", "queue_expired", "transit", "local", "service", "sojourn"})
    for (const char* q : {"p50", "p95", "p99"}) {
      expected.push_back("wait_ms." + std::string(wait) + "." + q + "_pooled_mean");
      expected.push_back("wait_ms." + std::string(wait) + "." + q + "_pooled_ci95");
    }
  expected.push_back("incomplete_runs");
  CHECK(header == expected);
}
