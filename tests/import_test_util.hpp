// What the import tests share (test_import.cpp: RabbitMQ; test_import_cloud.cpp: Service Bus, SQS
// and the command): importing a file or a text, a bad input's error, and RabbitMQ definitions built
// from their parts. A named namespace: test files are compiled several to a unit.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include "experiments/cli/import/common.hpp"
#include "tests/test_util.hpp"

namespace import_test {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using nlohmann::json;
namespace fs = std::filesystem;

inline const std::string kExamples = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/import/examples/";

struct Imported {
  int status;
  std::string out, err;
  json scenario;  // null on failure
  const json& queue(const std::string& name) const { return scenario.at("broker").at("queues").at(name); }
  bool noted(const std::string& text) const {
    if (scenario.is_null()) return false;
    const auto& notes = scenario.at("notes");
    return std::any_of(notes.begin(), notes.end(),
                       [&](const json& n) { return n.get<std::string>().find(text) != std::string::npos; }) &&
           err.find(text) != std::string::npos;
  }
};

inline Imported import_file(const std::string& path) {
  const auto r = run_cli({"import", path});
  Imported i{r.status, r.out, r.err, json()};
  if (r.status == 0) i.scenario = json::parse(r.out);
  return i;
}

inline Imported import_text(const std::string& text, const std::string& name = "input.json") {
  ScratchDir dir("brokersim-import");
  return import_file(dir.write(name, text));
}

// The error of a bad input, checked to leave no output file behind.
inline std::string import_error(const std::string& text, const std::string& name = "input.json") {
  ScratchDir dir("brokersim-import-error");
  const std::string in = dir.write(name, text);
  const std::string out = dir.path("out.json");
  const auto r = run_cli({"import", in, "--out", out});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK_MESSAGE(!fs::exists(out), "an output was left behind by a failed import");
  for (const auto& e : fs::directory_iterator(dir.dir)) CHECK_MESSAGE(e.path().filename() == name, "stray file " << e.path());
  return r.err;
}

// A definitions export around the queues, policies, exchanges and bindings given.
inline std::string rabbit(const std::string& queues, const std::string& policies = "[]", const std::string& operator_policies = "[]",
                   const std::string& exchanges = "[]", const std::string& bindings = "[]") {
  json doc = {{"rabbit_version", "4.0.5"},           {"queues", json::parse(queues)},
              {"policies", json::parse(policies)},   {"operator_policies", json::parse(operator_policies)},
              {"exchanges", json::parse(exchanges)}, {"bindings", json::parse(bindings)}};
  return doc.dump();
}

inline std::string policy(const std::string& name, const std::string& pattern, const std::string& definition, int priority = 0,
                   const std::string& apply_to = "all", const std::string& vhost = "/") {
  const json p = {{"vhost", vhost},       {"name", name},         {"pattern", pattern},
                  {"apply-to", apply_to}, {"priority", priority}, {"definition", json::parse(definition)}};
  return p.dump();
}

inline std::string classic(const std::string& name, const std::string& args = "{}") {
  const json q = {{"name", name}, {"vhost", "/"}, {"durable", true}, {"auto_delete", false}, {"arguments", json::parse(args)}};
  return q.dump();
}

inline std::string quorum(const std::string& name, const std::string& args = "{}") {
  json q = json::parse(classic(name, args));
  q["arguments"]["x-queue-type"] = "quorum";
  return q.dump();
}

// "[A,B,...]" of JSON texts, built by appending (g++ 12 -Wrestrict misfires on "[" + string).
inline std::string arr(std::initializer_list<std::string> items) {
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1) out += ",";
    out += item;
  }
  out += "]";
  return out;
}

// The written scenario loads and runs (the run command's own exit status).
inline void check_runs(const Imported& i) {
  REQUIRE(i.status == 0);
  ScratchDir dir("brokersim-import-run");
  const std::string path = dir.write("imported.json", i.scenario.dump(2));
  const auto r = run_cli({"run", path, "--json", "--set", "stop.time_ms=20000"});
  CHECK_MESSAGE(r.status == 0, r.err);
  if (r.status == 0) CHECK(json::parse(r.out)["outcomes"]["generated"].get<int>() > 0);
}

}  // namespace import_test
