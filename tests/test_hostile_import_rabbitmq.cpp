// Issue 38 (third hostile round): a RabbitMQ definitions file can make a reader recurse, backtrack
// or name queues without bound. Each case here crashed or hung before: policy patterns are matched
// by RE2 in time linear in the name, topic bindings by dynamic programming, dead-letter routes by a
// worklist, and the queue limit is checked as queues are read. The cases also pin the answers
// (which policy applies, which queue a dead letter reaches), so a bounded reader is still right.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace {

using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using nlohmann::json;

struct HostileImport {
  int status;
  std::string err;
  json scenario;  // null on failure
};

HostileImport import_doc(const json& doc) {
  ScratchDir dir("brokersim-hostile-rabbit");
  const std::string in = dir.write("definitions.json", doc.dump());
  const auto r = run_cli({"import", in});
  return {r.status, r.err, r.status == 0 ? json::parse(r.out) : json()};
}

json definitions(const json& queues, const json& policies = json::array(), const json& exchanges = json::array(),
                 const json& bindings = json::array()) {
  return {{"rabbit_version", "3.13.7"}, {"queues", queues},       {"policies", policies},
          {"exchanges", exchanges},     {"bindings", bindings}};
}

json hostile_queue(const std::string& name, const json& args = json::object()) {
  return {{"name", name}, {"vhost", "/"}, {"durable", true}, {"auto_delete", false}, {"arguments", args}};
}

json ttl_policy(const std::string& pattern) {
  return {{"vhost", "/"}, {"name", "p"}, {"pattern", pattern}, {"apply-to", "queues"}, {"priority", 0},
          {"definition", {{"message-ttl", 1000}}}};
}

bool has_ttl(const HostileImport& i, const std::string& queue) {
  return i.scenario.at("broker").at("queues").at(queue).contains("message_ttl_ms");
}

// Where a dead letter with `key` from queue "work" lands through topic exchange "t" bound with
// `binding` to queue "hit": "hit", or "" when the binding does not match.
std::string topic_target(const std::string& binding, const std::string& key) {
  const json queues = json::array({hostile_queue("work", {{"x-dead-letter-exchange", "t"}, {"x-dead-letter-routing-key", key}}),
                       hostile_queue("hit")});
  const json exchanges = json::array({{{"name", "t"}, {"vhost", "/"}, {"type", "topic"}}});
  const json bindings = json::array({{{"source", "t"}, {"vhost", "/"}, {"destination", "hit"}, {"destination_type", "queue"},
                                       {"routing_key", binding}}});
  const auto i = import_doc(definitions(queues, json::array(), exchanges, bindings));
  REQUIRE_MESSAGE(i.status == 0, i.err);
  const json& work = i.scenario.at("broker").at("queues").at("work");
  return work.contains("dead_letter_to") ? work["dead_letter_to"].get<std::string>() : "";
}

std::string dotted(const std::string& word, int n) {
  std::string out;
  for (int k = 0; k < n; ++k) out += (k ? "." : "") + word;
  return out;
}

}  // namespace

TEST_SUITE("hostile") {
  TEST_CASE("hostile import: a queue name longer than AMQP's 255 bytes is refused and not matched") {
    const auto i = import_doc(definitions(json::array({hostile_queue(std::string(200'000, 'x'))}), json::array({ttl_policy("^.*$")})));
    CHECK(i.status == 2);
    CHECK(i.err.find("queues[0].name: expected a queue name of at most 255 bytes") != std::string::npos);
    CHECK(i.err.find("200000 bytes") != std::string::npos);
    // 255 bytes is a name a broker can have: matched and imported.
    const auto ok = import_doc(definitions(json::array({hostile_queue(std::string(255, 'x'))}), json::array({ttl_policy("^.*$")})));
    REQUIRE_MESSAGE(ok.status == 0, ok.err);
  }

  TEST_CASE("hostile import: a policy pattern of 30000 nested groups compiles and matches") {
    const std::string nested = std::string(30'000, '(') + "a" + std::string(30'000, ')');
    const auto i = import_doc(definitions(json::array({hostile_queue("a"), hostile_queue("b")}), json::array({ttl_policy(nested)})));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(has_ttl(i, "a"));
    CHECK_FALSE(has_ttl(i, "b"));
    // A pattern past the bound is an error naming it, not a compile that may exhaust the stack.
    const std::string deeper = std::string(40'000, '(') + "a" + std::string(40'000, ')');
    const auto big = import_doc(definitions(json::array({hostile_queue("a")}), json::array({ttl_policy(deeper)})));
    CHECK(big.status == 2);
    CHECK(big.err.find("policies[0].pattern: expected a regular expression of at most 65536 bytes") != std::string::npos);
  }

  TEST_CASE("hostile import: ^(a+)+$ against 40 a's and '!' answers (no backtracking) and is right") {
    const std::string bad = std::string(40, 'a') + "!";
    const auto i = import_doc(definitions(json::array({hostile_queue(bad), hostile_queue(std::string(40, 'a'))}), json::array({ttl_policy("^(a+)+$")})));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK_FALSE(has_ttl(i, bad));
    CHECK(has_ttl(i, std::string(40, 'a')));
  }

  TEST_CASE("hostile import: a pattern only a backtracking engine can match is an error naming the policy") {
    for (const std::string pattern : {"^(a)\\1$", "^(?!tmp)", "(?<=x)y"}) {
      const auto i = import_doc(definitions(json::array({hostile_queue("a")}), json::array({ttl_policy(pattern)})));
      CHECK(i.status == 2);
      CHECK_MESSAGE(i.err.find("policies[0].pattern: expected a regular expression brokersim can match in linear time") !=
                        std::string::npos,
                    i.err);
      CHECK(i.err.find("policy \"p\"") != std::string::npos);
    }
  }

  TEST_CASE("hostile import: PCRE patterns people write still match as RabbitMQ matches them") {
    // Searched, not anchored; classes, alternation, escapes.
    const json queues = json::array({hostile_queue("orders.eu"), hostile_queue("ordersXeu"), hostile_queue("tmp-1"), hostile_queue("emails")});
    const auto i = import_doc(definitions(queues, json::array({ttl_policy("^orders\\.(eu|us)$|^tmp-\\d+")})));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    const auto name = [&](const std::string& raw) {
      // '.' is not allowed in a brokersim queue name: the importer renames it with '_'.
      return raw == "orders.eu" ? std::string("orders_eu") : raw;
    };
    CHECK(has_ttl(i, name("orders.eu")));
    CHECK_FALSE(has_ttl(i, "ordersXeu"));
    CHECK(has_ttl(i, "tmp-1"));
    CHECK_FALSE(has_ttl(i, "emails"));
  }

  TEST_CASE("hostile import: topic matching word by word as rabbit_exchange_type_topic matches") {
    CHECK(topic_target("#", "") == "hit");
    CHECK(topic_target("*", "") == "");
    CHECK(topic_target("a.#", "a") == "hit");
    CHECK(topic_target("#.a", "a") == "hit");
    CHECK(topic_target("a.*.c", "a.b.c") == "hit");
    CHECK(topic_target("a.*", "a.b.c") == "");
    CHECK(topic_target("a.#.c", "a.b.d.c") == "hit");
    CHECK(topic_target("#.#", "") == "hit");
    CHECK(topic_target("*.#.*", "a") == "");
    CHECK(topic_target("*.#.*", "a.b") == "hit");
  }

  TEST_CASE("hostile import: a binding of 25 '#' words and zzz against a 60-word key answers") {
    const std::string binding = dotted("#", 25) + ".zzz";
    CHECK(topic_target(binding, dotted("w", 60)) == "");
    CHECK(topic_target(binding, dotted("w", 59) + ".zzz") == "hit");
  }

  TEST_CASE("hostile import: a dead-letter exchange reaching its queue through 20000 exchange-to-exchange bindings") {
    constexpr int n = 20'000;
    json exchanges = json::array(), bindings = json::array();
    for (int k = 0; k <= n; ++k) exchanges.push_back({{"name", "x" + std::to_string(k)}, {"vhost", "/"}, {"type", "fanout"}});
    for (int k = 0; k < n; ++k)
      bindings.push_back({{"source", "x" + std::to_string(k)}, {"vhost", "/"}, {"destination", "x" + std::to_string(k + 1)},
                          {"destination_type", "exchange"}, {"routing_key", ""}});
    bindings.push_back({{"source", "x" + std::to_string(n)}, {"vhost", "/"}, {"destination", "dlq"},
                        {"destination_type", "queue"}, {"routing_key", ""}});
    // A cycle back to the start as well: visited once.
    bindings.push_back({{"source", "x" + std::to_string(n)}, {"vhost", "/"}, {"destination", "x0"},
                        {"destination_type", "exchange"}, {"routing_key", ""}});
    const json queues = json::array({hostile_queue("work", {{"x-dead-letter-exchange", "x0"}}), hostile_queue("dlq")});
    const auto i = import_doc(definitions(queues, json::array(), exchanges, bindings));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"]["queues"]["work"]["dead_letter_to"] == "dlq");
  }

  TEST_CASE("hostile import: 20000 queues of one name are refused at the 65th") {
    json queues = json::array();
    for (int k = 0; k < 20'000; ++k) queues.push_back(hostile_queue("same"));
    const auto i = import_doc(definitions(queues));
    CHECK(i.status == 2);
    CHECK(i.err.find("queues: expected at most 64 classic and quorum queues (brokersim's limit), got \"a 65th at queues[64]") !=
          std::string::npos);
    // 64 of one name: each named apart.
    queues.erase(queues.begin() + 64, queues.end());
    const auto ok = import_doc(definitions(queues));
    REQUIRE_MESSAGE(ok.status == 0, ok.err);
    CHECK(ok.scenario["broker"]["queues"].contains("same_64"));
  }

  TEST_CASE("hostile import: a routing key past AMQP's 255 bytes is refused with its path") {
    const json queues = json::array({hostile_queue("work", {{"x-dead-letter-exchange", "t"}, {"x-dead-letter-routing-key", std::string(300, 'k')}})});
    const auto i = import_doc(definitions(queues));
    CHECK(i.status == 2);
    CHECK(i.err.find("queues[0].arguments.x-dead-letter-routing-key: expected a routing key of at most 255 bytes") !=
          std::string::npos);
  }
}
