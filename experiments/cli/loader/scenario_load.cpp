// Scenario loading: the sections in document order. The rule throughout: nothing the user wrote is
// trusted, every value is checked for type, range and representability before it reaches the
// simulator, and every failure names the key path, what was expected and what was given. The
// sections live in experiments/cli/loader/ (sections.hpp), broker kinds in its broker_kinds.hpp.
#include "experiments/cli/loader/scenario_load.hpp"

#include <filesystem>

#include "experiments/cli/loader/frameworks.hpp"
#include "experiments/cli/loader/sections.hpp"

namespace brokersim {

namespace {

// parameter_uncertainty: true makes each run redraw what producers[].fitted and volume.fitted say
// was estimated (models/input_uncertainty.hpp). Refused where nothing says so: a user who asked
// for it must not get runs that silently carry no uncertainty.
void load_parameter_uncertainty(const nlohmann::json& doc, Scenario& scenario) {
  using namespace loader;
  if (!has(doc, "parameter_uncertainty")) return;
  const json& u = doc["parameter_uncertainty"];
  if (!u.is_boolean()) fail("parameter_uncertainty", "true or false", u);
  if (!u.get<bool>()) return;
  bool any = false;
  for (std::size_t i = 0; i < scenario.producers.size(); ++i) {
    ProducerSpec& p = scenario.producers[i];
    p.draw_parameters = true;
    any = any || p.fitted_service_times > 0 || p.fitted_arrivals > 0 || p.volume_fitted_days > 0;
    if (p.volume_fitted_days > 0 && p.volume_per_run->kind() != sim::Distribution::Kind::Lognormal)
      fail(join(join("producers", i), "volume.per_run"),
           "a lognormal (volume.fitted describes a lognormal spread, which parameter_uncertainty redraws)",
           doc["producers"][i]["volume"]["per_run"]);
  }
  if (!any)
    fail("parameter_uncertainty",
         "false, or a producer with fitted sizes to redraw from (producers[].fitted or producers[].volume.fitted, as fit "
         "writes them)",
         u);
}

// Runs `load` on an entry whose framework (if it has one: `mappings` grew past `mapped`) wrote
// some of its keys: an error at a key the framework wrote is not the user's, so it says which
// setting the key came from.
template <class Load>
void attributing(const std::vector<FrameworkMapping>& mappings, std::size_t mapped, const std::string& path, Load&& load) {
  try {
    load();
  } catch (const ScenarioError& e) {
    if (mappings.size() == mapped) throw;
    const std::string what = e.what();
    for (const auto& row : mappings.back().rows) {
      const std::string key = path + "." + row.key;
      if (row.key.empty() || what.compare(0, key.size(), key) != 0 ||
          (what.size() > key.size() && what[key.size()] != ':' && what[key.size()] != '.'))
        continue;
      ScenarioError attributed(what + " (set by " + path + ".framework from " +
                               (row.setting.empty() ? std::string("its fixed behaviour") : row.setting + " = " + row.value) + ")");
      attributed.path = e.path;
      throw attributed;
    }
    throw;
  }
}

}  // namespace

Scenario load_scenario(const nlohmann::json& doc, const std::string& base_dir) {
  using namespace loader;
  object_at(doc, "", "a JSON object (the scenario)");
  check_keys(doc, "",
             {"name", "seed", "stop", "warmup_ms", "broker", "producers", "consumers", "faults", "observe", "limits",
              "sweep", "notes", "parameter_uncertainty"});
  Scenario scenario;
  Context context{base_dir, {}, nullptr};
  load_run_keys(doc, scenario);
  scenario.broker = load_broker(member(doc, "broker"), context);

  const json& producers = non_empty_array(member(doc, "producers"), "producers", "a non-empty array of producers");
  for (std::size_t i = 0; i < producers.size(); ++i) {
    const std::string path = join("producers", i);
    // A producer in its framework's publish options is read as the brokersim keys they map to.
    const std::size_t mapped = scenario.producer_frameworks.size();
    const json producer =
        translate_producer_framework(producers[i], path, scenario.broker, static_cast<int>(i), scenario.producer_frameworks);
    attributing(scenario.producer_frameworks, mapped, path, [&] { scenario.producers.push_back(load_producer(producer, path, context)); });
  }

  load_parameter_uncertainty(doc, scenario);

  std::int64_t total_consumers = 0;
  if (has(doc, "consumers")) {
    const json& consumers = doc["consumers"];
    if (!consumers.is_array()) fail("consumers", "an array of consumer groups", consumers);
    for (std::size_t i = 0; i < consumers.size(); ++i) {
      const std::string path = join("consumers", i);
      // A group in its framework's own settings is read as the brokersim keys they map to.
      const std::size_t mapped = scenario.frameworks.size();
      const json group = translate_framework(consumers[i], path, scenario.broker, static_cast<int>(i), scenario.frameworks);
      attributing(scenario.frameworks, mapped, path, [&] {
        scenario.consumers.push_back(load_consumer(group, path, context, total_consumers));
        check_consumer_queues(scenario, i, path);
        check_consumer_eta(scenario, i, path);
        check_framework(scenario, i, path);
        if (scenario.frameworks.size() > mapped) scenario.consumers.back().metering = metering_of(scenario.frameworks.back().billing);
      });
    }
  }

  // A group reading several queues keeps its slots in a book of its own, after the queues'.
  int books = static_cast<int>(scenario.broker.queues.size());
  for (ConsumerSpec& c : scenario.consumers)
    if (c.reads_several()) c.slot_book = books++;
  load_closing_keys(doc, scenario, total_consumers);
  return scenario;
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& sets) {
  nlohmann::json doc = read_json_file(path);
  for (const auto& assignment : sets) apply_set(doc, assignment);
  return load_scenario(doc, std::filesystem::path(path).parent_path().string());
}

}  // namespace brokersim
