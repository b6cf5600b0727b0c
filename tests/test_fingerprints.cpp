// Regression fingerprints of every example scenario (experiments/scenarios/) and every seed
// scenario (experiments/seeds/), as OMNeT++ keeps per example, in
// experiments/scenarios/fingerprints.json (seeds keyed "../seeds/NAME.json"), three per run:
//  - events: the number of events the run reports;
//  - json_fnv1a: a hash of its JSON summary (what it tells);
//  - stream_fnv1a: a hash of the event stream the kernel popped (what it did): FNV-1a over each
//    event's time, kind and target, in order (sim/simulator.hpp), of the same run without a
//    trace or time series. It changes with any change to what happens or in what order, even
//    one the summary does not show. The kernel computes it only in a run that asks for it.
// A build on the plain event set (-DBROKERSIM_REFERENCE_EVENT_SET=ON) must give the same
// streams. Every example and seed file must have an entry: one without fails the test. When a
// change is intended, regenerate the file (new files get an entry with no --set) and commit it
// with the change that explains it:
//   BROKERSIM_UPDATE_FINGERPRINTS=1 ./build/tests/brokersim_tests -tc='example scenario fingerprints'
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/rng.hpp"
#include "tests/test_util.hpp"

namespace test_fingerprints {

const std::string kDir = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/";
const std::string kFile = kDir + "fingerprints.json";

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

// The keys every example and seed scenario must have, sorted: NAME.json for an example,
// ../seeds/NAME.json for a seed (the fingerprints and the expected outcomes are not scenarios).
std::vector<std::string> scenario_keys() {
  std::vector<std::string> keys;
  const auto add = [&keys](const std::string& dir, const std::string& prefix, const std::string& not_one) {
    for (const auto& f : std::filesystem::directory_iterator(dir)) {
      const std::string name = f.path().filename().string();
      if (f.path().extension() == ".json" && name != not_one) keys.push_back(prefix + name);
    }
  };
  add(kDir, "", "fingerprints.json");
  add(kDir + "../seeds", "../seeds/", "expected.json");
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace test_fingerprints

TEST_CASE("example scenario fingerprints") {
  std::ifstream in(test_fingerprints::kFile);
  REQUIRE(in.good());
  nlohmann::ordered_json prints = nlohmann::ordered_json::parse(in);
  const bool update = std::getenv("BROKERSIM_UPDATE_FINGERPRINTS") != nullptr;
  const std::vector<std::string> keys = test_fingerprints::scenario_keys();
  REQUIRE(keys.size() > 40);
  for (const std::string& key : keys) {
    CAPTURE(key);
    const bool listed = prints.contains(key);
    if (update && !listed) prints[key] = {{"sets", nlohmann::ordered_json::array()}};
    CHECK_MESSAGE((update || listed), "no fingerprint for " << key << ": regenerate fingerprints.json");
  }
  for (auto& [file_, entry_] : prints.items()) {
    auto& file = file_;  // not the binding: clang 14 cannot capture one in a check's lambda
    auto& entry = entry_;
    CAPTURE(file);
    std::ifstream scenario(test_fingerprints::kDir + file);
    REQUIRE(scenario.good());
    std::stringstream text;
    text << scenario.rdbuf();
    std::vector<std::string> sets;
    for (const auto& s : entry["sets"]) sets.push_back(s.get<std::string>());
    const auto run = brokersim::test::run_scenario(text.str(), sets);
    const std::uint64_t events = run.result.events;
    const std::string hash = test_fingerprints::hex(sim::fnv1a(run.json().dump()));
    std::uint64_t stream_hash = 0;
    const brokersim::RunResult plain = brokersim::simulate(run.scenario, {}, stream_hash);
    CHECK(plain.events == events);
    const std::string stream = test_fingerprints::hex(stream_hash);
    if (update) {
      entry["events"] = events;
      entry["json_fnv1a"] = hash;
      entry["stream_fnv1a"] = stream;
      continue;
    }
    CHECK(entry["events"].get<std::uint64_t>() == events);
    CHECK(entry["json_fnv1a"].get<std::string>() == hash);
    REQUIRE(entry.contains("stream_fnv1a"));
    CHECK(entry["stream_fnv1a"].get<std::string>() == stream);
  }
  if (update) std::ofstream(test_fingerprints::kFile) << prints.dump(2) << '\n';
}
