// brokersim import against what a real RabbitMQ node exports and does (issue 39). The fixtures in
// experiments/import/real-node/rabbitmq-VERSION/ were made by make_fixtures.py on a real node
// (Debian's rabbitmq-server): its two exports (rabbitmqctl export_definitions, GET /api/definitions)
// and, per queue, what the node reported (GET /api/queues: type, arguments, the policy and operator
// policy it applied, effective_policy_definition) and where a dead letter from it actually went (one
// message rejected without requeue). The suite needs no node: it imports both exports and holds
// every queue's settings and dead-letter target to the node's.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using nlohmann::json;
namespace fs = std::filesystem;

const fs::path kRealNode = fs::path(BROKERSIM_SOURCE_DIR) / "experiments/import/real-node";

std::vector<fs::path> real_node_fixtures() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kRealNode))
    if (e.is_directory() && e.path().filename().string().rfind("rabbitmq-", 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The queue process's rule for an argument beside the effective policy value (rabbit_amqqueue_process
// for classic queues, rabbit_quorum_queue): numeric limits the lower, delivery-limit the lower unless
// one is negative; overflow the argument's on a classic queue, the policy's on a quorum queue.
json node_value(const std::string& key, const std::string& type, const json& arg, const json& policy) {
  if (arg.is_null()) return policy;
  if (policy.is_null()) return arg;
  if (key == "overflow") return type == "quorum" ? policy : arg;
  const auto a = arg.get<std::int64_t>(), p = policy.get<std::int64_t>();
  if (key == "delivery-limit" && (a < 0 || p < 0)) return std::max(a, p);
  return std::min(a, p);
}

bool any_note(const json& scenario, const std::string& a, const std::string& b) {
  for (const auto& n : scenario.at("notes")) {
    const std::string text = n.get<std::string>();
    if (text.find(a) != std::string::npos && text.find(b) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("import real node: both exports of a real RabbitMQ node give the settings and dead-letter targets the node has") {
  const auto fixtures = real_node_fixtures();
  REQUIRE_FALSE(fixtures.empty());
  for (const auto& dir : fixtures) {
    const json effective = json::parse(read_file((dir / "effective.json").string()));
    std::size_t vhosts = 0;
    {
      std::vector<std::string> seen;
      for (const auto& q : effective["queues"])
        if (std::find(seen.begin(), seen.end(), q["vhost"].get<std::string>()) == seen.end())
          seen.push_back(q["vhost"].get<std::string>());
      vhosts = seen.size();
    }
    for (const char* form : {"definitions-cli.json", "definitions-http.json"}) {
      CAPTURE(dir.filename().string());
      CAPTURE(form);
      const auto r = run_cli({"import", (dir / form).string()});
      REQUIRE_MESSAGE(r.status == 0, r.err);
      const json scenario = json::parse(r.out);
      const json& queues = scenario["broker"]["queues"];
      const std::string kind_type = scenario["broker"]["kind"] == "rabbitmq-quorum" ? "quorum" : "classic";
      std::size_t compared = 0, routes = 0;
      for (const auto& node : effective["queues"]) {
        const std::string vhost = node["vhost"], raw = node["name"], type = node["type"];
        if (type == "stream") continue;
        const std::string name = vhosts > 1 && vhost != "/" ? vhost + "_" + raw : raw;
        CAPTURE(name);
        REQUIRE(queues.contains(name));
        const json& q = queues[name];
        CHECK(q.value("type", kind_type) == type);
        const json& args = node["arguments"];
        const json policy = node["effective_policy_definition"].is_object() ? node["effective_policy_definition"] : json::object();
        for (const auto& keys : std::vector<std::pair<std::string, std::string>>{
                 {"message-ttl", "message_ttl_ms"}, {"expires", "expires_ms"},     {"max-length", "max_length"},
                 {"max-length-bytes", "max_length_bytes"}, {"overflow", "overflow"}, {"delivery-limit", "delivery_limit"}}) {
          // Not a structured binding: clang 14 cannot capture one in a check's lambda.
          const std::string& key = keys.first;
          const std::string& scenario_key = keys.second;
          if (key == "delivery-limit" && type != "quorum") continue;  // a classic queue ignores it
          CAPTURE(key);
          const json want = node_value(key, type, args.value("x-" + key, json()), policy.value(key, json()));
          if (want.is_null())
            CHECK_FALSE(q.contains(scenario_key));
          else
            CHECK(q.value(scenario_key, json()) == want);
          ++compared;
        }
        if (node.contains("dead_letters_reach")) {
          ++routes;
          const json& reach = node["dead_letters_reach"];
          if (reach.empty()) {
            CHECK_FALSE(q.contains("dead_letter_to"));
            // Dropped, or unknown where the route depends on message headers: never both.
            const bool unknown = any_note(scenario, "queue \"" + raw + "\"", "where dead letters go is unknown");
            const bool dropped = any_note(scenario, "queue \"" + raw + "\"", "dead letters are dropped");
            CHECK(unknown != dropped);
          } else {
            const std::string target = reach[0];
            CHECK(q.value("dead_letter_to", std::string()) == (vhosts > 1 && vhost != "/" ? vhost + "_" + target : target));
          }
        }
      }
      CHECK(compared > 40);
      CHECK(routes >= 8);
    }
  }
}

TEST_CASE("import real node: the policies the node applied, and skipped, are the importer's") {
  for (const auto& dir : real_node_fixtures()) {
    const json effective = json::parse(read_file((dir / "effective.json").string()));
    const auto r = run_cli({"import", (dir / "definitions-cli.json").string()});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const json scenario = json::parse(r.out);
    for (const auto& node : effective["queues"]) {
      const std::string raw = node["name"];
      CAPTURE(raw);
      // Every policy the node applied is named by the importer's notes for that queue.
      for (const char* field : {"policy", "operator_policy"})
        if (node[field].is_string())
          CHECK(any_note(scenario, "queue \"" + raw + "\"", "\"" + node[field].get<std::string>() + "\""));
    }
    // The node skipped lazy-fast on a quorum queue and limit-classic on a classic one (keys their
    // type does not support); the importer says so.
    CHECK(any_note(scenario, "queue \"qmode-quorum\": policy \"lazy-fast\" matches but has key queue-mode", "does not apply it"));
    CHECK(any_note(scenario, "queue \"dl-classic\": policy \"limit-classic\" matches but has key delivery-limit", "does not apply it"));
    // Operator policies come from the runtime parameters; none is left as "not modelled".
    CHECK_FALSE(any_note(scenario, "parameters:", "operator_policy"));
  }
}
