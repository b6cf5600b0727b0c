// The documentation against the program: the command synopses (README "Command line", `brokersim
// --help`, each command's --help), the scenario keys the loader accepts (docs/scenario.md), the keys
// of `run --json` and the stop reasons (docs/outcomes.md), and the README's worked scenario. Each
// check reads what the program itself says, so a new option, key or output cannot go undocumented.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;

const std::string kSource = BROKERSIM_SOURCE_DIR;

using brokersim::test::lines_of;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// Words joined by single spaces: line breaks and indentation are layout, not content.
std::string squeeze(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

// Synopsis entries by command: an entry starts at a line beginning "brokersim " and continues over
// the indented lines after it. The command is the second word (`--help` for the top-level entry).
using Synopses = std::map<std::string, std::vector<std::string>>;
Synopses synopses(const std::vector<std::string>& block) {
  Synopses out;
  std::string command, entry;
  const auto flush = [&] {
    if (!command.empty()) out[command].push_back(squeeze(entry));
    command.clear();
    entry.clear();
  };
  for (const auto& raw : block) {
    const std::string line = trim(raw);
    if (line.rfind("brokersim ", 0) == 0) {
      flush();
      std::istringstream words(line);
      std::string first;
      words >> first >> command;
    }
    entry += " " + line;
  }
  flush();
  return out;
}

// The lines after "usage:" up to the first blank line, as every --help prints them.
std::vector<std::string> usage_block(const std::string& help) {
  const auto lines = lines_of(help);
  const auto start = std::find(lines.begin(), lines.end(), "usage:");
  REQUIRE_MESSAGE(start != lines.end(), "no \"usage:\" line in:\n" << help);
  std::vector<std::string> block;
  for (auto it = start + 1; it != lines.end() && !trim(*it).empty(); ++it) block.push_back(*it);
  return block;
}

// The first fenced block under README's "## Command line".
std::vector<std::string> readme_command_block() {
  const auto lines = lines_of(read_file(kSource + "/README.md"));
  auto it = std::find(lines.begin(), lines.end(), "## Command line");
  REQUIRE_MESSAGE(it != lines.end(), "README.md has no \"## Command line\" section");
  it = std::find_if(it, lines.end(), [](const std::string& l) { return l.rfind("```", 0) == 0; });
  REQUIRE(it != lines.end());
  std::vector<std::string> block;
  for (++it; it != lines.end() && it->rfind("```", 0) != 0; ++it) block.push_back(*it);
  return block;
}

// Long options named in a text: "--name" tokens.
std::set<std::string> options_in(const std::string& text) {
  std::set<std::string> out;
  static const std::regex option(R"((^|[\s\[|])--([a-z][a-z0-9-]*))");
  for (std::sregex_iterator it(text.begin(), text.end(), option), end; it != end; ++it) out.insert((*it)[2]);
  return out;
}

// Options a command's --help lists (boost indents them by two spaces: "  --json", "  -h [ --help ]").
// Positional arguments are options to boost but appear in the synopsis by their placeholder.
std::set<std::string> options_listed(const std::string& help) {
  std::set<std::string> out;
  static const std::regex option(R"(^  (?:-[A-Za-z] \[ )?--([a-z][a-z0-9-]*))");
  for (const auto& line : lines_of(help)) {
    std::smatch m;
    if (std::regex_search(line, m, option)) out.insert(m[1]);
  }
  for (const char* positional : {"help", "scenario", "shards"}) out.erase(positional);
  return out;
}

void check_synopsis(const std::string& command) {
  const Synopses readme = synopses(readme_command_block());
  const Synopses top = synopses(usage_block(run_cli({"--help"}).out));
  REQUIRE_MESSAGE(readme.count(command), "README \"Command line\" has no synopsis of " << command);
  const auto help = run_cli({command, "--help"});
  REQUIRE(help.status == 0);
  const Synopses own = synopses(usage_block(help.out));
  CHECK(readme.at(command) == own.at(command));
  REQUIRE_MESSAGE(top.count(command), "brokersim --help has no synopsis of " << command);
  CHECK(top.at(command) == own.at(command));
  CHECK_MESSAGE(own.size() == 1, command << " --help shows synopses of other commands");

  std::string all;
  for (const auto& entry : own.at(command)) all += entry + "\n";
  CHECK(options_in(all) == options_listed(help.out));
}

std::set<std::string> backticked(const std::string& text) {
  std::set<std::string> out;
  static const std::regex code("`([^`\n]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), code), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

// A scenario the loader accepts; `zzz_not_a_key` is then planted in one object at a time.
nlohmann::json full_scenario() {
  return nlohmann::json::parse(R"({
    "name": "docs", "stop": {"time_ms": 1000}, "observe": {"every_ms": 100}, "limits": {},
    "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}],
    "consumers": [{"queue": "work"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 1}]})");
}

// The keys the loader accepts in the object at `pointer` of `doc`, as its unknown-key error lists them.
std::vector<std::string> accepted_keys(nlohmann::json doc, const std::string& pointer) {
  doc[nlohmann::json::json_pointer(pointer)]["zzz_not_a_key"] = 1;
  try {
    brokersim::load_scenario(doc, ".");
  } catch (const brokersim::ScenarioError& e) {
    const std::string what = e.what();
    const std::string marker = "unknown key (allowed: ";
    const auto at = what.find(marker);
    REQUIRE_MESSAGE(at != std::string::npos, pointer << ": " << what);
    std::vector<std::string> keys;
    std::istringstream list(what.substr(at + marker.size(), what.rfind(')') - at - marker.size()));
    for (std::string key; std::getline(list, key, ',');) keys.push_back(trim(key));
    return keys;
  }
  FAIL("an unknown key at " << pointer << " was accepted");
  return {};
}

}  // namespace

TEST_CASE("synopsis of run agrees in README and both helps") { check_synopsis("run"); }
TEST_CASE("synopsis of sweep agrees in README and both helps") { check_synopsis("sweep"); }
TEST_CASE("synopsis of merge agrees in README and both helps") { check_synopsis("merge"); }
TEST_CASE("synopsis of plan agrees in README and both helps") { check_synopsis("plan"); }
TEST_CASE("synopsis of analytic agrees in README and both helps") { check_synopsis("analytic"); }
TEST_CASE("synopsis of metrics agrees in README and both helps") { check_synopsis("metrics"); }
TEST_CASE("synopsis of fit agrees in README and both helps") { check_synopsis("fit"); }
TEST_CASE("synopsis of import agrees in README and both helps") { check_synopsis("import"); }

TEST_CASE("README and brokersim --help list the same commands") {
  const Synopses readme = synopses(readme_command_block());
  const Synopses top = synopses(usage_block(run_cli({"--help"}).out));
  CHECK(readme.at("--help") == top.at("--help"));
  // Keys, not bindings: clang 14 cannot capture a structured binding in a check's lambda.
  for (const auto& entry : top) CHECK_MESSAGE(readme.count(entry.first), "README lacks " << entry.first);
  for (const auto& entry : readme)
    CHECK_MESSAGE(top.count(entry.first), "README documents " << entry.first << " but brokersim --help does not list it");
}

TEST_CASE("docs/scenario.md names every key the loader accepts") {
  const std::set<std::string> documented = backticked(read_file(kSource + "/docs/scenario.md"));
  REQUIRE(!documented.empty());
  const auto has = [&](const std::string& key) {
    // A key counts as documented when it is code on its own or the last step of a documented path.
    return std::any_of(documented.begin(), documented.end(), [&](const std::string& d) {
      return d == key || d.ends_with("." + key) || d.ends_with("[]." + key) || d.rfind(key + " ", 0) == 0 ||
             d.rfind("{\"" + key + "\"", 0) == 0;
    });
  };
  for (const char* pointer : {"", "/stop", "/broker", "/broker/queues/work", "/producers/0", "/producers/0/arrivals",
                              "/consumers/0", "/faults/0", "/observe", "/limits", "/producers/0/service_ms"}) {
    nlohmann::json doc = full_scenario();
    if (std::string(pointer) == "/producers/0/service_ms") doc["producers"][0]["service_ms"] = {{"exp", {{"mean", 1}}}};
    for (const auto& key : accepted_keys(doc, pointer))
      CHECK_MESSAGE(has(key), "docs/scenario.md does not document `" << key << "` (in " << (*pointer ? std::string(pointer) : std::string("/")) << ")");
  }
}

TEST_CASE("docs/outcomes.md names every key of run --json and every stop reason") {
  const std::string doc = read_file(kSource + "/docs/outcomes.md");
  const std::set<std::string> documented = backticked(doc);
  // An autoscaled group too, for the keys only a changing fleet has (offered_load.NAME.mean_slots).
  nlohmann::json j;
  for (const char* autoscale : {"null", R"({"target_per_replica": 5, "max": 6})"}) {
    const auto r = run_cli({"run", kSource + "/experiments/scenarios/capacity-baseline.json", "--json", "--set",
                            "stop.time_ms=20000", "--set", "warmup_ms=1000", "--set",
                            std::string("consumers.0.autoscale=") + autoscale});
    REQUIRE(r.status == 0);
    j.merge_patch(nlohmann::json::parse(r.out));
  }
  // Every leaf, by its path with queue names written NAME, as the document writes it.
  std::vector<std::string> paths;
  const std::function<void(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& v,
                                                                                 const std::string& path) {
    if (!v.is_object()) {
      paths.push_back(path);
      return;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string step = path == "queues" || path == "offered_load" ? "NAME" : path == "fleet.groups" ? "G" : it.key();
      walk(it.value(), path.empty() ? step : path + "." + step);
    }
  };
  walk(j, "");
  for (const auto& path : paths) {
    // Waits share their fields: `wait_ms.STAGE.p95` documents wait_ms.queue.p95 and the others.
    static const std::regex stage(R"(^wait_ms\.[a-z_]+\.)");
    static const std::regex outcome(R"(^(outcomes|fraction)\.)");
    const std::string generic = std::regex_replace(path, stage, "wait_ms.STAGE.");
    // `fleet.groups.G.consumer_seconds`, `.slot_seconds`: a sibling written as its last step.
    const std::string parent = path.substr(0, path.rfind('.') + 1);
    const bool sibling = path.find('.') != std::string::npos && documented.count(path.substr(path.rfind('.'))) &&
                         std::any_of(documented.begin(), documented.end(),
                                     [&](const std::string& d) { return d.rfind(parent, 0) == 0; });
    const bool ok = documented.count(path) || documented.count(generic) || sibling ||
                    (std::regex_search(path, outcome) && documented.count(path.substr(path.find('.') + 1)));
    CHECK_MESSAGE(ok, "docs/outcomes.md does not document `" << path << "`");
  }
  // Every stop reason, by the name the program writes.
  for (brokersim::StopReason reason : brokersim::kStopReasons) {
    const std::string name(brokersim::stop_reason_name(reason));
    CHECK_MESSAGE(documented.count(name), "docs/outcomes.md does not document stop_reason `" << name << "`");
  }
}

TEST_CASE("docs/outcomes.md names every column of the trace") {
  const std::set<std::string> documented = backticked(read_file(kSource + "/docs/outcomes.md"));
  for (const auto& column : brokersim::test::split_csv_line(brokersim::kTraceHeader))
    CHECK_MESSAGE(documented.count(column), "docs/outcomes.md does not document the trace column `" << column << "`");
}

TEST_CASE("README worked scenario is the file it is named after and runs") {
  const std::string readme = read_file(kSource + "/README.md");
  const std::string file = kSource + "/experiments/scenarios/scenario-format-example.json";
  const std::string text = read_file(file);
  REQUIRE(!text.empty());
  CHECK(readme.find("```json\n" + text + "```\n") != std::string::npos);
  CHECK(nlohmann::json::parse(text).at("name") == "scenario-format-example");
  const auto r = run_cli({"run", file, "--json"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["outcomes"]["generated"].get<int>() > 0);
  CHECK(j["run"]["stop_reason"] == "time");
}

// The README's worked example shows the whole text a planner reads, and interprets its figures:
// a change to the model or the report must show there too, or the README describes another program.
TEST_CASE("README worked example shows what run prints today, word for word") {
  const std::string readme = read_file(kSource + "/README.md");
  const auto r = run_cli({"run", kSource + "/experiments/scenarios/capacity-baseline.json"});
  REQUIRE(r.status == 0);
  REQUIRE(!r.out.empty());
  CHECK_MESSAGE(readme.find("$ ./build/experiments/brokersim run experiments/scenarios/capacity-baseline.json\n" + r.out +
                            "```\n") != std::string::npos,
                "README.md \"Worked example\" should show:\n" << r.out);
}

// One package list, named word for word by the README's install command and by .ci/run (a reader
// sees what is installed), holding every package a find_package or a test needs.
TEST_CASE("README install command and .ci/run install the one package list") {
  const std::string readme = read_file(kSource + "/README.md");
  const std::string ci = read_file(kSource + "/.ci/run");
  const std::vector<std::string> needed{"cmake", "g++", "libboost-program-options-dev", "libboost-dev", "libeigen3-dev",
                                        "nlohmann-json3-dev", "libbenchmark-dev", "doctest-dev", "libre2-dev", "clang",
                                        "libclang-rt-14-dev", "python3-matplotlib", "python3-pandas",
                                        "jupyter-nbconvert", "python3-ipykernel"};
  const auto words = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  // The install command is the README's first sh block.
  const auto block = readme.find("```sh\n");
  REQUIRE(block != std::string::npos);
  const std::string block_text = readme.substr(block, readme.find("```\n", block + 6) - block);
  const auto apt = block_text.find("apt-get install -y ");
  REQUIRE(apt != std::string::npos);
  const auto from = apt + std::string("apt-get install -y ").size();
  CHECK(words(block_text.substr(from, block_text.find("&&", from) - from)) == needed);
  const auto list = ci.find("packages=(");
  REQUIRE(list != std::string::npos);
  const auto open = list + std::string("packages=(").size();
  CHECK(words(ci.substr(open, ci.find(')', open) - open)) == needed);
}

TEST_CASE("docs/outcomes.md names the amazon-sqs receive sizes of run --json") {
  const std::set<std::string> documented = backticked(read_file(kSource + "/docs/outcomes.md"));
  const auto r = run_cli({"run", kSource + "/experiments/scenarios/cross-broker.json", "--json", "--set",
                          "broker.kind=amazon-sqs", "--set", "stop.time_ms=60000"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.contains("receives"));
  for (auto it = j["receives"].begin(); it != j["receives"].end(); ++it) {
    const std::string path = "receives." + it.key() + (it.value().is_object() ? ".N" : "");
    CHECK_MESSAGE(documented.count(path), "docs/outcomes.md does not document `" << path << "`");
  }
  CHECK(j["receives"]["by_size"].size() == 10);
}
