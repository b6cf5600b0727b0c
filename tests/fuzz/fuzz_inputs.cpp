// libFuzzer target for everything brokersim reads from users: scenario files, --set
// assignments, --vary lists, trace CSV files, plan's --target and --cost expressions (parsed,
// then evaluated with every name 1), the shard metadata `merge` reads and the files `import`
// reads (the scenario it writes must load: a ScenarioError there is a finding). The first byte
// picks the reader (modulo 8); the rest is the input. Any outcome but success or a ScenarioError (a clear message naming the key) is a
// finding: another exception, a crash, a sanitizer report, or a hang.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "experiments/cli/import/common.hpp"
#include "experiments/cli/plan/expression.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/shards.hpp"
#include "models/simulation.hpp"

namespace {

const char* kBase = R"({"stop": {"time_ms": 2000}, "broker": {"queues": {"work": {"message_ttl_ms": 600,
  "dead_letter_to": "dlq"}, "dlq": {}}}, "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}},
  "deadline_ms": 600, "service_ms": {"exp": {"mean": 50}}}], "consumers": [{"queue": "work", "count": 2, "prefetch": 2}]})";

// Valid scenarios are simulated too, within small limits so that one input stays fast.
void simulate_bounded(brokersim::Scenario s) {
  s.limits.max_events = 200'000;
  s.limits.max_in_system = 50'000;
  (void)brokersim::simulate(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    const auto one = [](const std::string&) { return 1.0; };
    switch (data[0] % 8) {
      case 0: simulate_bounded(brokersim::load_scenario(brokersim::parse_json_text(text, "fuzz.json"), "/nonexistent")); break;
      case 1: {
        nlohmann::json doc = brokersim::parse_json_text(kBase, "base");
        brokersim::apply_set(doc, text);
        simulate_bounded(brokersim::load_scenario(doc, "/nonexistent"));
        break;
      }
      case 2: (void)brokersim::parse_vary(text); break;
      case 3: (void)brokersim::parse_trace_text(text, "fuzz.csv", "producers.0.arrivals.trace_csv"); break;
      case 4: {
        const brokersim::Target t = brokersim::parse_target(text);
        (void)t.lhs->eval(one);
        (void)t.rhs->eval(one);
        break;
      }
      case 5: (void)brokersim::parse_cost(text)->eval(one); break;
      case 6: (void)brokersim::read_shard_meta("fuzz.csv.meta.json", text); break;
      case 7: {
        const auto imported = brokersim::import::import_document(brokersim::parse_json_text(text, "fuzz.json"), "fuzz.json");
        const auto scenario = brokersim::import::scenario_of(imported, "fuzz.json");
        brokersim::Scenario loaded;
        try {
          loaded = brokersim::load_scenario(nlohmann::json::parse(scenario.dump()), "/nonexistent");
        } catch (const brokersim::ScenarioError& e) {
          std::fprintf(stderr, "import wrote a scenario that does not load: %s\n", e.what());
          std::abort();
        }
        simulate_bounded(loaded);
        break;
      }
    }
  } catch (const brokersim::ScenarioError&) {
    // The expected answer to bad input.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
