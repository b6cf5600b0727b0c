// What the documents claim, against what the program does (test_docs_claims.cpp has the exit
// statuses).
//
// JSON keys: every key named in the first column of the key tables of docs/outcomes.md "##
// `run --json`", experiments/sweeps/README.md "### `plan --json`" and "### `results.csv.meta.json`"
// must be one the program emits (in some run of a few that between them emit every conditional
// key); for plan and the metadata, every plain `word` in the meaning of a key whose value is an
// object (or a list of objects) must be one of its keys.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/docs_test_util.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::lines_of;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using brokersim::test::docs::cells;
using brokersim::test::docs::kSmall;

const std::string kSource = BROKERSIM_SOURCE_DIR;

}  // namespace

namespace {

// The first-column names of the key table under `heading` (up to the next heading of its level or
// higher), each with the backticked words of its meaning. A name starting with "." replaces the
// last step of the name before it in the cell (`fleet.groups.G.consumer_seconds`, `.slot_seconds`).
std::vector<std::pair<std::string, std::vector<std::string>>> key_table(const std::string& file, const std::string& heading) {
  const auto lines = lines_of(read_file(kSource + "/" + file));
  const auto start = std::find(lines.begin(), lines.end(), heading);
  REQUIRE_MESSAGE(start != lines.end(), file << " has no heading " << heading);
  const std::string level = heading.substr(0, heading.find(' ') + 1);
  static const std::regex code("`([^`]+)`");
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  bool key_table = false;  // in a table whose first column is headed "key"
  for (auto it = start + 1; it != lines.end(); ++it) {
    if (it->rfind("#", 0) == 0 && it->find(' ') <= level.size() - 1) break;
    if (it->rfind("|", 0) != 0) {
      key_table = false;
      continue;
    }
    const auto c = cells(*it);
    if (c.size() < 2 || c[0].rfind("---", 0) == 0) continue;
    if (c[0] == "key") key_table = true;
    if (c[0] == "key" || !key_table) continue;
    std::vector<std::string> meaning;
    for (std::sregex_iterator m(c[1].begin(), c[1].end(), code), end; m != end; ++m) meaning.push_back((*m)[1]);
    // The names are what comes before a parenthesis ("(*ext.*, only with `observe.window_ms`)").
    const std::string names = c[0].substr(0, c[0].find(" ("));
    std::string last;
    for (std::sregex_iterator m(names.begin(), names.end(), code), end; m != end; ++m) {
      std::string name = (*m)[1];
      if (name.rfind(".", 0) == 0 && !last.empty()) name = last.substr(0, last.rfind('.')) + name;
      out.emplace_back(name, meaning);
      last = name;
    }
  }
  REQUIRE_MESSAGE(out.size() >= 10, file << " " << heading << ": too few keys parsed");
  return out;
}

// Every node of a JSON value by its dotted path (lists are not entered; `tried[].x` is handled
// by the caller).
void paths_of(const nlohmann::json& v, const std::string& path, std::map<std::string, const nlohmann::json*>& out) {
  if (!path.empty()) out[path] = &v;
  if (!v.is_object()) return;
  for (auto it = v.begin(); it != v.end(); ++it) paths_of(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
}

// A documented name as a pattern: NAME a queue, STAGE a wait, OUTCOME an outcome, G a group, N a
// number (receives.by_size.N);
// "window_min...." the names under window_min.
std::regex name_pattern(std::string name) {
  bool prefix = false;
  while (name.size() > 1 && name.back() == '.') {
    name.pop_back();
    prefix = true;
  }
  std::string re;
  std::istringstream steps(name);
  std::string step;
  while (std::getline(steps, step, '.')) {
    if (!re.empty()) re += R"(\.)";
    if (step == "NAME" || step == "STAGE" || step == "OUTCOME" || step == "G" || step == "N") re += R"([^.]+)";
    else re += std::regex_replace(step, std::regex(R"([\[\]().*+?^$|])"), R"(\$&)");
  }
  return std::regex("^" + re + (prefix ? R"((\..+)?$)" : "$"));
}

// The keys of an object, or of the objects in a list.
std::set<std::string> keys_of(const nlohmann::json& v) {
  std::set<std::string> out;
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it) out.insert(it.key());
  if (v.is_array())
    for (const auto& e : v)
      if (e.is_object())
        for (auto it = e.begin(); it != e.end(); ++it) out.insert(it.key());
  return out;
}

// Checks a key table against outputs: every name is emitted by one of them, and for an object
// (or list of objects) value every plain backticked word of its meaning is one of its keys.
void check_table(const std::vector<std::pair<std::string, std::vector<std::string>>>& table,
                 const std::vector<nlohmann::json>& outputs, bool check_meaning) {
  static const std::regex plain("^[a-z][a-z0-9_]*$");
  for (const auto& [name_, meaning_] : table) {
    const auto& name = name_;  // not the binding: clang 14 cannot capture one in a check's lambda
    const auto& meaning = meaning_;
    CAPTURE(name);
    // `tried[].x`: the key x of some element of tried.
    const auto list = name.find("[].");
    const std::regex pattern = name_pattern(list == std::string::npos ? name : name.substr(list + 3));
    std::vector<nlohmann::json> values;
    for (const auto& o : outputs) {
      std::vector<nlohmann::json> scopes{o};
      if (list != std::string::npos) {
        scopes.clear();
        if (o.contains(name.substr(0, list)))
          for (const auto& e : o[name.substr(0, list)]) scopes.push_back(e);
      }
      for (const auto& scope : scopes) {
        std::map<std::string, const nlohmann::json*> paths;
        paths_of(scope, "", paths);
        for (const auto& [p, value] : paths)
          if (std::regex_match(p, pattern)) values.push_back(*value);
      }
    }
    CHECK_MESSAGE(!values.empty(), "the documents name `" << name << "` but no output has it");
    if (!check_meaning) continue;
    std::set<std::string> sub;
    for (const auto& v : values)
      for (const auto& k : keys_of(v)) sub.insert(k);
    if (sub.empty()) continue;  // a plain value: its meaning names other things
    for (const auto& word : meaning)
      if (std::regex_match(word, plain))
        CHECK_MESSAGE(sub.count(word), "the documents say `" << name << "` has `" << word << "`, the program does not emit it");
  }
}

nlohmann::json json_of(const std::vector<std::string>& args, int expected = 0) {
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == expected);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("docs: every key docs/outcomes.md names for run --json is one the program emits") {
  const std::string baseline = kSource + "/experiments/scenarios/capacity-baseline.json";
  const std::vector<std::string> quick{"--json", "--set", "stop.time_ms=20000", "--set", "warmup_ms=1000"};
  std::vector<nlohmann::json> outputs;
  const auto run = [&](const std::string& scenario, std::vector<std::string> sets) {
    std::vector<std::string> args{"run", scenario};
    args.insert(args.end(), quick.begin(), quick.end());
    for (const auto& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    outputs.push_back(json_of(args));
  };
  // Windows, a group that leaves (fleet), an autoscaled one (offered_load mean_slots), warmup "auto".
  run(baseline, {"observe.window_ms=5000", "consumers.0.stop_ms=15000"});
  run(baseline, {R"(consumers.0.autoscale={"target_per_replica": 5, "max": 6})"});
  run(baseline, {R"(warmup_ms="auto")", R"(producers.0.volume={"multiplier": 1.1})"});
  // Fitted parameters redrawn each run (producers.N.service_mean_ms).
  run(baseline, {R"(producers.0.fitted={"service_times": 500})", "parameter_uncertainty=true"});
  // A group its platform bills per request and GB-second (billing), and Azure Functions' plans.
  run(kSource + "/experiments/scenarios/lambda-sqs-batch.json", {});
  for (const char* plan : {"\"flex-consumption\"", "\"premium\""})
    run(kSource + "/experiments/scenarios/functions-servicebus.json", {std::string("consumers.0.framework.hosting_plan=") + plan});
  // A group reading several queues (jobs_by_queue).
  run(kSource + "/experiments/scenarios/celery-two-queues.json", {});
  // A pool process killed (duplicate_executions_by_cause.worker_lost) and Celery's producer side.
  run(kSource + "/experiments/scenarios/celery-early-acks.json", {R"(faults=[{"at_ms": 5000, "consumer": 0, "kill_process": true}])"});
  // Each broker kind's dead-letter reasons.
  ScratchDir dir("docs-claims");
  for (const char* kind : {"rabbitmq-quorum", "azure-servicebus", "amazon-sqs"}) {
    nlohmann::json doc = nlohmann::json::parse(kSmall);
    doc["broker"]["kind"] = kind;
    run(dir.write(std::string(kind) + ".json", doc.dump()), {});
  }
  // Whole days resampled (producers.N.day).
  dir.write("days.csv", "publish_ms\n1000\n86401000\n");
  run(dir.write("days.json", R"({"broker": {"queues": {"q": {}}}, "consumers": [{"queue": "q"}],
    "producers": [{"queue": "q", "arrivals": {"days_csv": "days.csv"}, "service_ms": 10}]})"), {});
  check_table(key_table("docs/outcomes.md", "## `run --json`"), outputs, false);
}

TEST_CASE("docs: every key experiments/sweeps/README.md names for plan --json is one the program emits") {
  ScratchDir dir("docs-claims");
  const std::string small = dir.write("small.json", kSmall);
  nlohmann::json scaled = nlohmann::json::parse(kSmall);
  scaled["consumers"][0]["autoscale"] = {{"target_per_replica", 5}, {"min", 1}, {"max", 4}};
  const std::string autoscaled = dir.write("scaled.json", scaled.dump());
  const std::vector<nlohmann::json> outputs{
      // One replication: a caveat; an autoscaled fleet: slots_min / slots_max.
      json_of({"plan", autoscaled, "--vary", "consumers.0.autoscale.max=4,5", "--target", "throughput_per_s>0",
               "--replications", "1", "--json"}),
      // Nothing meets the target: closest and reason (exit 5).
      json_of({"plan", small, "--vary", "consumers.0.count=1,2", "--target", "fraction.completed_on_time>=0.99",
               "--replications", "1", "--json"}, 5),
      json_of({"plan", small, "--vary", "consumers.0.count=3,4", "--target", "fraction.completed_on_time>=0.99",
               "--precision", "0.5", "--max-replications", "4", "--json"})};
  check_table(key_table("experiments/sweeps/README.md", "### `plan --json`"), outputs, true);
}

TEST_CASE("docs: every key experiments/sweeps/README.md names for the sweep metadata is one sweep writes") {
  ScratchDir dir("docs-claims");
  const std::string small = dir.write("small.json", kSmall);
  REQUIRE(run_cli({"sweep", small, "--vary", "consumers.0.count=3,4", "--set", "seed=2", "--out", dir.path("a.csv")}).status == 0);
  REQUIRE(run_cli({"sweep", small, "--vary", "consumers.0.count=3,4", "--precision", "0.5", "--max-replications", "4",
                   "--out", dir.path("b.csv")}).status == 0);
  const std::vector<nlohmann::json> outputs{nlohmann::json::parse(read_file(dir.path("a.csv.meta.json"))),
                                            nlohmann::json::parse(read_file(dir.path("b.csv.meta.json")))};
  check_table(key_table("experiments/sweeps/README.md", "### `results.csv.meta.json`"), outputs, true);
}
