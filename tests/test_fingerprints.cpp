// Regression fingerprints of the example scenarios (as OMNeT++ keeps per example): the number of
// events and a hash of the JSON summary. Any change to what the simulator does to these
// scenarios shows up here. When a change is intended, regenerate the file and commit it with the
// change that explains it:
//   BROKERSIM_UPDATE_FINGERPRINTS=1 ./build/tests/brokersim_tests -tc='example scenario fingerprints'
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/rng.hpp"
#include "tests/test_util.hpp"

namespace {

const std::string kFile = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/fingerprints.json";

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

}  // namespace

TEST_CASE("example scenario fingerprints") {
  std::ifstream in(kFile);
  REQUIRE(in.good());
  nlohmann::ordered_json prints = nlohmann::ordered_json::parse(in);
  const bool update = std::getenv("BROKERSIM_UPDATE_FINGERPRINTS") != nullptr;
  REQUIRE(prints.size() >= 3);
  for (auto& [file_, entry_] : prints.items()) {
    auto& file = file_;  // not the binding: clang 14 cannot capture one in a check's lambda
    auto& entry = entry_;
    CAPTURE(file);
    std::ifstream scenario(std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/" + file);
    REQUIRE(scenario.good());
    std::stringstream text;
    text << scenario.rdbuf();
    std::vector<std::string> sets;
    for (const auto& s : entry["sets"]) sets.push_back(s.get<std::string>());
    const auto run = brokersim::test::run_scenario(text.str(), sets);
    const std::uint64_t events = run.result.events;
    const std::string hash = hex(sim::fnv1a(run.json().dump()));
    if (update) {
      entry["events"] = events;
      entry["json_fnv1a"] = hash;
      continue;
    }
    CHECK(entry["events"].get<std::uint64_t>() == events);
    CHECK(entry["json_fnv1a"].get<std::string>() == hash);
  }
  if (update) std::ofstream(kFile) << prints.dump(2) << '\n';
}
