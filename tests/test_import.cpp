// brokersim import (experiments/import/): each format's mapping key by key, RabbitMQ's policy
// rules (priority, apply-to, vhost, ties, operator policies, arguments against policies), dead-letter
// routing through exchanges and bindings, ISO-8601 durations, SQS's string-typed attributes,
// recognising the format from the content, every bad input's error (its entry's path, exit status
// 2, no output file), and every example importing to a scenario that loads and runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/import/common.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using nlohmann::json;
namespace fs = std::filesystem;

const std::string kExamples = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/import/examples/";

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

Imported import_file(const std::string& path) {
  const auto r = run_cli({"import", path});
  Imported i{r.status, r.out, r.err, json()};
  if (r.status == 0) i.scenario = json::parse(r.out);
  return i;
}

Imported import_text(const std::string& text, const std::string& name = "input.json") {
  ScratchDir dir("brokersim-import");
  return import_file(dir.write(name, text));
}

// The error of a bad input, checked to leave no output file behind.
std::string import_error(const std::string& text, const std::string& name = "input.json") {
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
std::string rabbit(const std::string& queues, const std::string& policies = "[]", const std::string& operator_policies = "[]",
                   const std::string& exchanges = "[]", const std::string& bindings = "[]") {
  json doc = {{"rabbit_version", "4.0.5"},           {"queues", json::parse(queues)},
              {"policies", json::parse(policies)},   {"operator_policies", json::parse(operator_policies)},
              {"exchanges", json::parse(exchanges)}, {"bindings", json::parse(bindings)}};
  return doc.dump();
}

std::string policy(const std::string& name, const std::string& pattern, const std::string& definition, int priority = 0,
                   const std::string& apply_to = "all", const std::string& vhost = "/") {
  const json p = {{"vhost", vhost},       {"name", name},         {"pattern", pattern},
                  {"apply-to", apply_to}, {"priority", priority}, {"definition", json::parse(definition)}};
  return p.dump();
}

std::string classic(const std::string& name, const std::string& args = "{}") {
  const json q = {{"name", name}, {"vhost", "/"}, {"durable", true}, {"auto_delete", false}, {"arguments", json::parse(args)}};
  return q.dump();
}

std::string quorum(const std::string& name, const std::string& args = "{}") {
  json q = json::parse(classic(name, args));
  q["arguments"]["x-queue-type"] = "quorum";
  return q.dump();
}

// "[A,B,...]" of JSON texts, built by appending (g++ 12 -Wrestrict misfires on "[" + string).
std::string arr(std::initializer_list<std::string> items) {
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1) out += ",";
    out += item;
  }
  out += "]";
  return out;
}

// The written scenario loads and runs (the run command's own exit status).
void check_runs(const Imported& i) {
  REQUIRE(i.status == 0);
  ScratchDir dir("brokersim-import-run");
  const std::string path = dir.write("imported.json", i.scenario.dump(2));
  const auto r = run_cli({"run", path, "--json", "--set", "stop.time_ms=20000"});
  CHECK_MESSAGE(r.status == 0, r.err);
  if (r.status == 0) CHECK(json::parse(r.out)["outcomes"]["generated"].get<int>() > 0);
}

}  // namespace

TEST_SUITE("import") {
  TEST_CASE("import: the RabbitMQ example, key by key") {
    const auto i = import_file(kExamples + "rabbitmq-definitions.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    const json& b = i.scenario["broker"];
    CHECK(b["kind"] == "rabbitmq-classic");  // 3 classic queues, 1 quorum, 1 stream
    CHECK(b["version"] == "3.13");
    CHECK(b["queues"].size() == 4);
    // orders: policy orders-limits (priority 10) beats ttl-all; the operator policy's TTL 300000
    // against the argument 120000: the lower; max-length 10000 (policy) against 20000 (operator).
    CHECK(i.queue("orders") == json::parse(R"({"message_ttl_ms": 120000, "max_length": 10000, "overflow": "reject-publish",
                                               "dead_letter_to": "dead-letters"})"));
    // emails and dead-letters: ttl-all merged with the operator policy, the lower of each.
    CHECK(i.queue("emails") == json::parse(R"({"message_ttl_ms": 300000, "max_length": 20000})"));
    CHECK(i.queue("dead-letters") == json::parse(R"({"message_ttl_ms": 300000, "max_length": 20000})"));
    // payments, the one quorum queue of a classic broker, is typed quorum and keeps its quorum keys.
    CHECK(i.queue("payments") == json::parse(R"({"type": "quorum", "message_ttl_ms": 300000, "max_length": 20000,
                                                 "overflow": "reject-publish", "delivery_limit": 5,
                                                 "dead_letter_strategy": "at-least-once", "dead_letter_to": "dead-letters"})"));
    CHECK(i.noted("queue \"orders\": x-max-priority 10 (not modelled)"));
    CHECK(i.noted("queue \"emails\": x-single-active-consumer true (not modelled)"));
    CHECK(i.noted("queue \"orders\": policy \"orders-limits\" key queue-version 2 (not modelled)"));
    CHECK_FALSE(i.noted("not expressible"));
    CHECK(i.noted("queue \"audit-log\": a stream (not simulated): skipped"));
    CHECK(i.noted("policy \"events-ha\" applies to exchanges: its alternate-exchange routes dead letters"));
    CHECK(i.noted("users: 1 entries (not modelled)"));
    CHECK(i.noted("PLACEHOLDER: producers.0"));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");  // the first with a dead-letter queue of its own
    check_runs(i);
  }

  TEST_CASE("import: RabbitMQ policies: the highest priority wins, one policy applies") {
    const auto i =
        import_text(rabbit(arr({classic("work")}), arr({policy("low", ".*", R"({"message-ttl": 1000, "max-length": 5})", 1),
                                                        policy("high", "^wo", R"({"message-ttl": 2000})", 7)})));
    REQUIRE(i.status == 0);
    // Only "high" applies: its TTL, and no max-length from "low" (policies do not combine).
    CHECK(i.queue("work") == json::parse(R"({"message_ttl_ms": 2000})"));
    CHECK(i.scenario["broker"]["version"] == "4.0");
  }

  TEST_CASE("import: RabbitMQ policies: apply-to, vhost and pattern") {
    const std::string policies = arr({policy("classic-only", ".*", R"({"max-length": 10})", 5, "classic_queues"),
                                      policy("quorum-only", ".*", R"({"max-length": 20})", 5, "quorum_queues"),
                                      policy("exchanges", ".*", R"({"max-length": 30})", 9, "exchanges"),
                                      policy("other-vhost", ".*", R"({"max-length": 40})", 9, "all", "staging"),
                                      policy("no-match", "^zzz", R"({"max-length": 50})", 9, "queues")});
    const auto i = import_text(rabbit(arr({classic("a"), classic("b"), quorum("q")}), policies));
    REQUIRE(i.status == 0);
    CHECK(i.queue("a") == json::parse(R"({"max_length": 10})"));
    CHECK(i.queue("q") == json::parse(R"({"max_length": 20, "type": "quorum"})"));  // the minority type, per queue
    // The pattern is searched, not anchored: "b" matches "b" and so would "xbx".
    const auto j = import_text(rabbit(arr({classic("xbx")}), arr({policy("p", "b", R"({"expires": 60000})")})));
    REQUIRE(j.status == 0);
    CHECK(j.queue("xbx") == json::parse(R"({"expires_ms": 60000})"));
  }

  TEST_CASE("import: RabbitMQ policies of equal priority: the first listed, with a note") {
    const auto i = import_text(rabbit(arr({classic("work")}), arr({policy("first", ".*", R"({"max-length": 1})", 3),
                                                                   policy("second", ".*", R"({"max-length": 2})", 3)})));
    REQUIRE(i.status == 0);
    CHECK(i.queue("work") == json::parse(R"({"max_length": 1})"));
    CHECK(i.noted("queue \"work\": policy \"first\" applied; \"second\" match with the same priority 3"));
  }

  TEST_CASE("import: RabbitMQ operator policies: the lower numeric limit, the operator's overflow") {
    const auto i = import_text(rabbit(
        arr({classic("work")}),
        arr({policy("user", ".*", R"({"message-ttl": 5000, "max-length": 100, "overflow": "drop-head"})")}),
        arr({policy("op", ".*",
                    R"({"message-ttl": 9000, "max-length": 50, "max-length-bytes": 1000, "overflow": "reject-publish"})")})));
    REQUIRE(i.status == 0);
    CHECK(i.queue("work") ==
          json::parse(R"({"message_ttl_ms": 5000, "max_length": 50, "max_length_bytes": 1000, "overflow": "reject-publish"})"));
    CHECK(i.noted("queue \"work\": max_length 50 from policy \"user\" 100 and operator policy \"op\" 50: the lower"));
  }

  TEST_CASE("import: RabbitMQ arguments against policies, classic and quorum") {
    const std::string user = policy("user", ".*", R"({"message-ttl": 5000, "expires": 900000, "overflow": "reject-publish",
                                                    "dead-letter-exchange": "", "dead-letter-routing-key": "policy-dlq", "delivery-limit": 3})");
    const std::string args = R"({"x-message-ttl": 8000, "x-expires": 600000, "x-overflow": "drop-head",
                                 "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "arg-dlq", "x-delivery-limit": 10})";
    // Classic: a policy with delivery-limit, which classic queues do not support, does not apply
    // at all (rabbit_queue_type:is_policy_applicable): the arguments alone.
    const auto c = import_text(rabbit(arr({classic("work", args), classic("arg-dlq"), classic("policy-dlq")}), arr({user})));
    REQUIRE(c.status == 0);
    CHECK(c.queue("work") ==
          json::parse(R"({"message_ttl_ms": 8000, "expires_ms": 600000, "overflow": "drop-head", "dead_letter_to": "arg-dlq"})"));
    CHECK(c.noted("queue \"work\": policy \"user\" matches but has key delivery-limit, which a classic queue does not support"));
    CHECK(c.noted("queue \"work\": delivery-limit 10 (quorum queues only"));
    // Without that key the policy applies: the lower TTL and expiry, the argument's overflow and dead-lettering.
    const std::string classic_user = policy("user", ".*", R"({"message-ttl": 5000, "expires": 900000, "overflow": "reject-publish",
                                                    "dead-letter-exchange": "", "dead-letter-routing-key": "policy-dlq"})");
    const auto c2 = import_text(rabbit(arr({classic("work", args), classic("arg-dlq"), classic("policy-dlq")}), arr({classic_user})));
    REQUIRE(c2.status == 0);
    CHECK(c2.queue("work") ==
          json::parse(R"({"message_ttl_ms": 5000, "expires_ms": 600000, "overflow": "drop-head", "dead_letter_to": "arg-dlq"})"));
    // Quorum: the same, except overflow, where the policy wins; delivery-limit the lower.
    const auto q = import_text(rabbit(arr({quorum("work", args), quorum("arg-dlq"), quorum("policy-dlq")}), arr({user})));
    REQUIRE(q.status == 0);
    CHECK(q.scenario["broker"]["kind"] == "rabbitmq-quorum");
    CHECK(q.queue("work") == json::parse(R"({"message_ttl_ms": 5000, "expires_ms": 600000, "overflow": "reject-publish",
                                             "delivery_limit": 3, "dead_letter_to": "arg-dlq"})"));
    // delivery-limit: a negative (unlimited) one loses to a limit.
    const auto d = import_text(
        rabbit(arr({quorum("work", R"({"x-delivery-limit": -1})")}), arr({policy("p", ".*", R"({"delivery-limit": 7})")})));
    REQUIRE(d.status == 0);
    CHECK(d.queue("work")["delivery_limit"] == 7);
    const auto u = import_text(rabbit(arr({quorum(
        "work", R"({"x-delivery-limit": -5, "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"})")})));
    REQUIRE(u.status == 0);
    CHECK(u.queue("work") ==
          json::parse(R"({"delivery_limit": -1, "dead_letter_strategy": "at-least-once", "overflow": "reject-publish"})"));
    // reject-publish-dlx on a quorum queue: the broker falls back to drop-head.
    const auto r = import_text(rabbit(arr({quorum("work", R"({"x-overflow": "reject-publish-dlx"})")})));
    REQUIRE(r.status == 0);
    CHECK(r.queue("work")["overflow"] == "drop-head");
    check_runs(q);
  }

  TEST_CASE("import: RabbitMQ dead-letter exchanges routed through bindings") {
    const std::string exchanges =
        R"([{"name": "dlx.topic", "vhost": "/", "type": "topic"}, {"name": "dlx.fanout", "vhost": "/", "type": "fanout"},
                                      {"name": "dlx.direct", "vhost": "/", "type": "direct"}, {"name": "hop", "vhost": "/", "type": "direct"},
                                      {"name": "hdr", "vhost": "/", "type": "headers"}])";
    const std::string bindings = R"([
      {"source": "dlx.topic", "vhost": "/", "destination": "star", "destination_type": "queue", "routing_key": "dead.*"},
      {"source": "dlx.topic", "vhost": "/", "destination": "hash", "destination_type": "queue", "routing_key": "deep.#"},
      {"source": "dlx.fanout", "vhost": "/", "destination": "fan1", "destination_type": "queue", "routing_key": ""},
      {"source": "dlx.fanout", "vhost": "/", "destination": "fan2", "destination_type": "queue", "routing_key": ""},
      {"source": "dlx.direct", "vhost": "/", "destination": "hop", "destination_type": "exchange", "routing_key": "k"},
      {"source": "hop", "vhost": "/", "destination": "via-hop", "destination_type": "queue", "routing_key": "k"}])";
    const std::string queues =
        arr({classic("t1", R"({"x-dead-letter-exchange": "dlx.topic", "x-dead-letter-routing-key": "dead.one"})"),
             classic("t2", R"({"x-dead-letter-exchange": "dlx.topic", "x-dead-letter-routing-key": "dead.one.two"})"),
             classic("t3", R"({"x-dead-letter-exchange": "dlx.topic", "x-dead-letter-routing-key": "deep"})"),
             classic("f", R"({"x-dead-letter-exchange": "dlx.fanout"})"),
             classic("d", R"({"x-dead-letter-exchange": "dlx.direct", "x-dead-letter-routing-key": "k"})"),
             classic("def", R"({"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "star"})"),
             classic("own", R"({"x-dead-letter-exchange": ""})"), classic("missing", R"({"x-dead-letter-exchange": "nowhere"})"),
             classic("h", R"({"x-dead-letter-exchange": "hdr"})"), classic("star"), classic("hash"), classic("fan1"),
             classic("fan2"), classic("via-hop")});
    const auto i = import_text(rabbit(queues, "[]", "[]", exchanges, bindings));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("t1")["dead_letter_to"] == "star");  // * is one word
    CHECK(!i.queue("t2").contains("dead_letter_to"));  // ... not two
    CHECK(i.noted("queue \"t2\": dead-letter exchange \"dlx.topic\" with routing key \"dead.one.two\" reaches no queue"));
    CHECK(i.queue("t3")["dead_letter_to"] == "hash");  // # is zero or more words
    CHECK(i.queue("f")["dead_letter_to"] == "fan1");   // fanout: both, the first named
    CHECK(i.noted("queue \"f\": dead-letter exchange \"dlx.fanout\" with routing key \"f\" reaches 2 queues"));
    CHECK(i.noted("queue \"f\": dead letters keep their original routing key"));
    CHECK(i.queue("d")["dead_letter_to"] == "via-hop");  // exchange-to-exchange binding
    CHECK(i.queue("def")["dead_letter_to"] == "star");   // default exchange: the queue named by the key
    CHECK(i.queue("own")["dead_letter_to"] == "own");    // the assumed original key: its own name, through ""
    CHECK(!i.queue("missing").contains("dead_letter_to"));
    CHECK(i.noted("queue \"missing\": dead-letter exchange \"nowhere\": exchange \"nowhere\" is not in the file"));
    CHECK(!i.queue("h").contains("dead_letter_to"));  // a headers exchange with no bindings routes nowhere
    CHECK(i.noted("queue \"h\": dead-letter exchange \"hdr\" with routing key \"h\" reaches no queue: dead letters are dropped"));
    check_runs(i);
  }

  TEST_CASE("import: RabbitMQ queues of several vhosts: policies and dead letters per vhost, names prefixed") {
    const std::string queues =
        R"([{"name": "work", "vhost": "/", "arguments": {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}},
                                   {"name": "work", "vhost": "staging", "arguments": {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}},
                                   {"name": "dlq", "vhost": "staging", "arguments": {}}])";
    const auto i = import_text(rabbit(queues, arr({policy("limit", ".*", R"({"max-length": 5})", 0, "queues", "staging")})));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("work") == json::object());  // "/" has no queue dlq: dead letters dropped
    CHECK(i.noted("queue \"work\" (vhost \"/\"): dead letters routed to \"dlq\", which is not a queue in the file (dropped)"));
    CHECK(i.queue("staging_work") == json::parse(R"({"max_length": 5, "dead_letter_to": "staging_dlq"})"));
    CHECK(i.queue("staging_dlq") == json::parse(R"({"max_length": 5})"));
    check_runs(i);
  }

  TEST_CASE("import: RabbitMQ broker.kind: the majority queue type, the first queue's on a tie, the vhost's default type - the others typed per queue") {
    auto i = import_text(rabbit(arr({classic("a"), quorum("b")})));
    REQUIRE(i.status == 0);
    CHECK(i.scenario["broker"]["kind"] == "rabbitmq-classic");
    // The queue of the other type says so (broker.queues.NAME.type).
    CHECK(i.queue("a") == json::object());
    CHECK(i.queue("b") == json::parse(R"({"type": "quorum"})"));
    check_runs(i);
    i = import_text(rabbit(arr({quorum("b"), classic("a")})));
    REQUIRE(i.status == 0);
    CHECK(i.scenario["broker"]["kind"] == "rabbitmq-quorum");
    CHECK(i.queue("a") == json::parse(R"({"type": "classic"})"));
    CHECK(i.queue("b") == json::object());
    check_runs(i);
    // Each queue's quorum keys and overflow by its own type: delivery-limit on the quorum queue of
    // a classic broker is kept; reject-publish-dlx on the classic queue of a quorum broker too.
    i = import_text(rabbit(arr({quorum("q", R"({"x-delivery-limit": 3})"), quorum("r"),
                                classic("c", R"({"x-overflow": "reject-publish-dlx", "x-delivery-limit": 2})")})));
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"]["kind"] == "rabbitmq-quorum");
    CHECK(i.queue("q") == json::parse(R"({"delivery_limit": 3})"));
    CHECK(i.queue("c") == json::parse(R"({"type": "classic", "overflow": "reject-publish-dlx"})"));
    CHECK(i.noted("queue \"c\": delivery-limit 2 (quorum queues only: a classic queue ignores it)"));
    check_runs(i);
    i = import_text(R"({"rabbit_version": "4.2.0", "vhosts": [{"name": "/", "metadata": {"default_queue_type": "quorum"}}],
                        "queues": [{"name": "a", "vhost": "/", "arguments": {"x-delivery-limit": 4}}]})");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"] ==
          json::parse(R"({"kind": "rabbitmq-quorum", "version": "4.2", "queues": {"a": {"delivery_limit": 4}}})"));
    CHECK(i.noted("queue \"a\": no x-queue-type: its vhost's default_queue_type \"quorum\""));
    check_runs(i);
  }

  TEST_CASE("import: RabbitMQ queue names brokersim cannot take are renamed, with a note") {
    const auto i = import_text(
        rabbit(arr({classic("orders.created", R"({"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "orders.dlq"})"),
                    classic("orders.dlq")})));
    REQUIRE(i.status == 0);
    CHECK(i.queue("orders_created")["dead_letter_to"] == "orders_dlq");
    CHECK(i.noted("queue \"orders.created\" is named \"orders_created\" in the scenario"));
    check_runs(i);
  }

  TEST_CASE("import: RabbitMQ bad input names the entry") {
    // Members of an unexpected type where brokersim only looks for a note (found by the fuzzer:
    // they once escaped as JSON library errors): read as absent.
    CHECK(import_text(R"({"queues": [{"name": "q", "vhost": "/", "auto_delete": "yes", "exclusive": 1, "arguments": {"x-queue-type": 7}}]})")
              .status == 2);
    CHECK(import_text(R"({"queues": [{"name": "q", "vhost": "/", "auto_delete": "yes", "exclusive": 1, "arguments": {}}]})").status == 0);
    CHECK(import_error(rabbit(arr({classic("a"), classic("b"), classic("c", R"({"x-message-ttl": "abc"})")})))
              .find("queues[2].arguments.x-message-ttl: expected a non-negative integer, got \"abc\"") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-max-length": -1})")})))
              .find("queues[0].arguments.x-max-length: expected a non-negative integer, got -1") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-expires": 0})")})))
              .find("queues[0].arguments.x-expires: expected a positive integer") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-overflow": "drop-tail"})")})))
              .find("queues[0].arguments.x-overflow: expected one of") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-queue-type": "lazy"})")})))
              .find("queues[0].arguments.x-queue-type: expected \"classic\", \"quorum\" or \"stream\"") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a")}), arr({policy("p", ".*", R"({"message-ttl": 1.5})")})))
              .find("policies[0].definition.message-ttl: expected a non-negative integer, got 1.5") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a")}), arr({policy("p", "([", "{}")})))
              .find("policies[0].pattern: expected a regular expression") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a")}), arr({policy("p", ".*", "{}", 0, "everything")})))
              .find("policies[0].apply-to: expected one of") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a")}), "[]", arr({policy("p", ".*", R"({"max-length": "x"})")})))
              .find("operator_policies[0].definition.max-length") != std::string::npos);
    CHECK(import_error(R"({"rabbit_version": "3.13.7", "queues": [{"vhost": "/"}]})")
              .find("queues[0].name: expected a string, got nothing") != std::string::npos);
    CHECK(import_error(R"({"rabbit_version": "3.13.7", "queues": []})")
              .find("queues: expected at least one classic or quorum queue") != std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a")}), "[]", "[]", "[]",
                              R"([{"source": "x", "destination": "a", "destination_type": "topic"}])"))
              .find("bindings[0].destination_type") != std::string::npos);
  }

  TEST_CASE("import: values at the brokers' own limits") {
    // RabbitMQ refuses TTLs and expiries above 10 years (rabbit_misc:check_expiry).
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-message-ttl": 315360000001})")})))
              .find("queues[0].arguments.x-message-ttl: expected a non-negative integer at most 315360000000") !=
          std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-expires": 315360000001})")})))
              .find("queues[0].arguments.x-expires: expected a positive integer (milliseconds) at most 315360000000") !=
          std::string::npos);
    const auto big = import_text(rabbit(arr({classic("a", R"({"x-message-ttl": 315360000000, "x-max-length": 1000000000000000,
                                                              "x-max-length-bytes": 9000000000000000000})")})));
    REQUIRE_MESSAGE(big.status == 0, big.err);
    CHECK(big.queue("a") ==
          json::parse(
              R"({"message_ttl_ms": 315360000000, "max_length": 1000000000000000, "max_length_bytes": 9000000000000000000})"));
    check_runs(big);
    // Service Bus: a TTL beyond brokersim's simulated time is no TTL, noted.
    const auto sb = import_text(R"({"name": "a", "defaultMessageTimeToLive": "P100000D", "autoDeleteOnIdle": "P99999D"})");
    REQUIRE_MESSAGE(sb.status == 0, sb.err);
    CHECK(sb.queue("a") == json::object());
    CHECK(sb.noted("queue \"a\": defaultMessageTimeToLive \"P100000D\" is beyond brokersim's simulated time"));
    CHECK(sb.noted("queue \"a\": autoDeleteOnIdle \"P99999D\" is beyond"));
    check_runs(sb);
  }

  TEST_CASE("import: ISO-8601 durations") {
    using brokersim::import::iso8601_ms;
    CHECK(*iso8601_ms("PT1M", "p") == 60000);
    CHECK(*iso8601_ms("PT30S", "p") == 30000);
    CHECK(*iso8601_ms("PT2M30.5S", "p") == 150500);
    CHECK(*iso8601_ms("PT0.001S", "p") == 1);
    CHECK(*iso8601_ms("P14D", "p") == 14 * 86400e3);
    CHECK(*iso8601_ms("P1DT2H", "p") == 26 * 3600e3);
    CHECK(*iso8601_ms("P1W", "p") == 7 * 86400e3);
    CHECK(*iso8601_ms("0:01:00", "p") == 60000);            // older az: Python's timedelta
    CHECK(!iso8601_ms("P10675199DT2H48M5.4775807S", "p"));  // TimeSpan.MaxValue: no limit
    CHECK(!iso8601_ms("10675199 days, 2:48:05.477581", "p"));
    for (const char* bad : {"1M", "PT", "P", "P1H", "PT1D", "PTM", "PT1.2.3S", "PT1M2", "P1DT", "abc"}) {
      bool threw = false;
      try {
        (void)iso8601_ms(bad, "queue.lockDuration");
      } catch (const brokersim::ScenarioError& e) {
        threw = std::string(e.what()).find("queue.lockDuration: expected an ISO-8601 duration") == 0;
      }
      CHECK_MESSAGE(threw, bad);
    }
  }

  TEST_CASE("import: the ARM template example, key by key") {
    const auto i = import_file(kExamples + "servicebus-arm-template.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"]["kind"] == "azure-servicebus");
    CHECK(i.queue("orders") == json::parse(R"({"lock_duration_ms": 60000, "requires_session": false, "default_ttl_ms": 1209600000,
                                               "dead_letter_on_expiration": true, "max_delivery_count": 5, "dead_letter_to": "orders-dlq"})"));
    CHECK(i.queue("orders-dlq") ==
          json::parse(R"({"lock_duration_ms": 30000, "max_delivery_count": 10, "dead_letter_on_expiration": false})"));
    CHECK(i.queue("invoices") == json::parse(R"({"lock_duration_ms": 150500, "max_delivery_count": 3, "requires_session": true,
                                                 "default_ttl_ms": 3600000, "auto_delete_on_idle_ms": 604800000})"));
    CHECK(i.noted("queue \"orders\": requiresDuplicateDetection true (not modelled)"));
    CHECK(i.noted("queue \"orders\": duplicateDetectionHistoryTimeWindow \"PT10M\" (not modelled)"));
    CHECK(i.noted("queue \"orders\": enablePartitioning false (not modelled)"));
    CHECK(i.noted("namespace sku \"Standard\""));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");
    // On a session queue, the placeholder producer draws session ids (the queue requires them).
    const auto sessions = import_text(R"({"name": "s", "requiresSession": true})");
    REQUIRE(sessions.status == 0);
    CHECK(sessions.scenario["producers"][0]["session"] == json::parse(R"({"uniform": {"min": 0, "max": 99}})"));
    check_runs(sessions);
    check_runs(i);
  }

  TEST_CASE("import: az servicebus queue show and list") {
    const auto i = import_file(kExamples + "servicebus-az-queue-show.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("orders") ==
          json::parse(R"({"lock_duration_ms": 60000, "max_delivery_count": 10, "dead_letter_on_expiration": false,
                                               "requires_session": false})"));
    CHECK(
        i.noted("queue \"orders\": read-only and state properties ignored: accessedAt, countDetails, createdAt, id, location, "
                "messageCount, name, resourceGroup, sizeInBytes, type, updatedAt"));
    CHECK(i.noted("queue \"orders\": maxSizeInMegabytes 1024 (not modelled)"));
    check_runs(i);
    const auto l =
        import_text(R"([{"name": "a", "lockDuration": "PT10S", "maxDeliveryCount": 2, "forwardDeadLetteredMessagesTo": "b"},
                                   {"name": "b", "lockDuration": "PT20S", "status": "Disabled", "forwardTo": "c"}])");
    REQUIRE_MESSAGE(l.status == 0, l.err);
    CHECK(l.queue("a") == json::parse(R"({"lock_duration_ms": 10000, "max_delivery_count": 2, "dead_letter_to": "b"})"));
    CHECK(l.queue("b") == json::parse(R"({"lock_duration_ms": 20000})"));
    CHECK(l.noted("queue \"b\": status \"Disabled\" (not modelled"));
    CHECK(l.noted("queue \"b\": forwardTo \"c\" (auto-forwarding is not modelled"));
    CHECK(l.scenario["producers"][0]["queue"] == "a");
    // Older az versions: the properties under "properties", durations as Python's timedelta.
    const auto nested = import_text(R"({"name": "old", "properties": {"lockDuration": "0:00:45", "maxDeliveryCount": 7,
                                                                      "defaultMessageTimeToLive": "10675199 days, 2:48:05.477581"}})");
    REQUIRE_MESSAGE(nested.status == 0, nested.err);
    CHECK(nested.queue("old") == json::parse(R"({"lock_duration_ms": 45000, "max_delivery_count": 7})"));
    // A forwarding target outside the file is added with the defaults.
    const auto f = import_text(R"({"name": "a", "lockDuration": "PT10S", "forwardDeadLetteredMessagesTo": "central-dlq"})");
    REQUIRE(f.status == 0);
    CHECK(f.queue("central-dlq") == json::object());
    CHECK(f.noted("queue \"central-dlq\" is not in the file: added"));
    check_runs(f);
  }

  TEST_CASE("import: Service Bus bad input names the entry") {
    CHECK(import_error(R"({"name": "a", "lockDuration": "PT6M"})")
              .find("lockDuration: expected a lock duration above 0 and at most PT5M") != std::string::npos);
    CHECK(import_error(R"({"name": "a", "lockDuration": "1 minute"})").find("lockDuration: expected an ISO-8601 duration") !=
          std::string::npos);
    CHECK(
        import_error(R"([{"name": "a", "maxDeliveryCount": 0}])").find("[0].maxDeliveryCount: expected an integer >= 1, got 0") !=
        std::string::npos);
    CHECK(import_error(R"({"name": "a", "autoDeleteOnIdle": "PT1M"})")
              .find("autoDeleteOnIdle: expected a duration of at least PT5M") != std::string::npos);
    CHECK(import_error(R"({"name": "a", "requiresSession": "maybe"})").find("requiresSession: expected true or false") !=
          std::string::npos);
    CHECK(import_error(R"({"lockDuration": "PT1M"})").find("name: expected the queue's name, got nothing") != std::string::npos);
    const std::string arm = R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
      "parameters": {"ns": {"type": "string"}, "lock": {"type": "string", "defaultValue": "PT1M"}},
      "resources": [{"type": "Microsoft.ServiceBus/namespaces/queues", "name": "ns1/ok", "properties": {"lockDuration": "[parameters('lock')]"}},
                    {"type": "Microsoft.ServiceBus/namespaces/queues", "name": "[concat(parameters('ns'), '/q')]", "properties": {}}]})";
    CHECK(import_error(arm).find("resources[1].name: expected a template expression brokersim can evaluate") !=
          std::string::npos);
    CHECK(import_error(arm).find("parameter 'ns' has no defaultValue") != std::string::npos);
    const std::string unknown_function = R"({"resources": [{"type": "Microsoft.ServiceBus/namespaces/queues", "name": "ns/q",
      "properties": {"lockDuration": "[uniqueString(resourceGroup().id)]"}}]})";
    CHECK(import_error(unknown_function).find("resources[0].properties.lockDuration: expected a template expression") !=
          std::string::npos);
  }

  TEST_CASE("import: ARM nested queue resources and template expressions") {
    const auto i = import_text(R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
      "parameters": {"ttl": {"type": "string", "defaultValue": "PT5M"}, "mdc": {"type": "int", "defaultValue": 4}},
      "variables": {"name": "[concat('or', 'ders')]"},
      "resources": [{"type": "Microsoft.ServiceBus/namespaces", "name": "ns", "resources": [
        {"type": "queues", "name": "[variables('name')]", "properties": {"defaultMessageTimeToLive": "[parameters('ttl')]",
                                                                         "maxDeliveryCount": "[parameters('mdc')]"}},
        {"type": "topics", "name": "events"}]}]})");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("orders") == json::parse(R"({"default_ttl_ms": 300000, "max_delivery_count": 4})"));
    CHECK(i.noted("resources[0].resources[1]: resource of type topics (not modelled)"));
    // Symbolic names (languageVersion 2.0): resources in an object.
    const auto sym = import_text(R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
      "languageVersion": "2.0", "resources": {"ns": {"type": "Microsoft.ServiceBus/namespaces", "name": "ns"},
        "work": {"type": "Microsoft.ServiceBus/namespaces/queues", "name": "ns/work", "properties": {"lockDuration": "PT45S"}}}})");
    REQUIRE_MESSAGE(sym.status == 0, sym.err);
    CHECK(sym.queue("work") == json::parse(R"({"lock_duration_ms": 45000})"));
  }

  TEST_CASE("import: the SQS attribute dump, string-typed, with a RedrivePolicy string") {
    const auto i = import_file(kExamples + "sqs-get-queue-attributes.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"]["kind"] == "amazon-sqs");
    CHECK(i.queue("orders") == json::parse(R"({"visibility_timeout_ms": 120000, "retention_ms": 345600000, "delay_ms": 0,
                                               "max_receive_count": 5, "dead_letter_to": "orders-dlq"})"));
    CHECK(i.queue("orders-dlq") == json::object());
    CHECK(i.noted("queue \"orders-dlq\" is not in the file: added with SQS's default attributes"));
    CHECK(i.noted("queue \"orders\": ReceiveMessageWaitTimeSeconds 20 (not modelled"));
    CHECK(i.noted("queue \"orders\": MaximumMessageSize \"262144\" (not modelled)"));
    CHECK(i.noted("queue \"orders\": read-only and state attributes ignored: ApproximateNumberOfMessages"));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");
    check_runs(i);
    const auto fifo = import_text(R"({"Attributes": {"QueueArn": "arn:aws:sqs:us-east-1:1:jobs.fifo", "FifoQueue": "true",
                                                     "ContentBasedDeduplication": "true"}})");
    REQUIRE(fifo.status == 0);
    CHECK(fifo.noted("FifoQueue true: FIFO queues are not simulated"));
    CHECK(fifo.noted("queue \"jobs.fifo\": ContentBasedDeduplication \"true\" (not modelled)"));
    CHECK(fifo.queue("jobs_fifo") == json::object());
  }

  TEST_CASE("import: SQS bad input names the entry") {
    CHECK(import_error(R"({"Attributes": {"QueueArn": "arn:aws:sqs:us-east-1:1:q", "VisibilityTimeout": "abc"}})")
              .find("Attributes.VisibilityTimeout: expected an integer number of seconds from 0 to 43200") != std::string::npos);
    CHECK(import_error(R"({"Attributes": {"VisibilityTimeout": "43201"}})").find("got \"43201\"") != std::string::npos);
    CHECK(import_error(R"({"Attributes": {"MessageRetentionPeriod": "59"}})")
              .find("Attributes.MessageRetentionPeriod: expected an integer number of seconds from 60 to 1209600") !=
          std::string::npos);
    CHECK(import_error(R"({"Attributes": {"DelaySeconds": "901"}})").find("Attributes.DelaySeconds") != std::string::npos);
    CHECK(
        import_error(
            R"({"Attributes": {"RedrivePolicy": "{\"deadLetterTargetArn\": \"arn:aws:sqs:r:1:d\", \"maxReceiveCount\": \"0\"}"}})")
            .find("Attributes.RedrivePolicy.maxReceiveCount: expected an integer from 1 to 1000, got \"0\"") !=
        std::string::npos);
    CHECK(import_error(R"({"Attributes": {"RedrivePolicy": "{\"maxReceiveCount\": 3}"}})")
              .find("Attributes.RedrivePolicy.deadLetterTargetArn: expected the dead-letter queue's ARN, got nothing") !=
          std::string::npos);
    CHECK(import_error(R"({"Attributes": {"RedrivePolicy": "{not json"}})").find("Attributes.RedrivePolicy") !=
          std::string::npos);
    CHECK(
        import_error(
            R"({"Attributes": {"QueueArn": "arn:aws:sqs:r:1:q", "RedrivePolicy": "{\"deadLetterTargetArn\": \"arn:aws:sqs:r:1:q\", \"maxReceiveCount\": 2}"}})")
            .find("expected another queue") != std::string::npos);
    CHECK(import_error(R"({"Attributes": {"FifoQueue": "yes"}})").find("Attributes.FifoQueue: expected true or false") !=
          std::string::npos);
    // A CloudFormation resource without a Type, or not an object (found by the fuzzer: the
    // missing Type once escaped as a JSON library error).
    const std::string cfn = R"({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"Q": {"Type": "AWS::SQS::Queue"}, )";
    CHECK(import_error(cfn + R"("D": {"Tupe": "AWS::SQS::Queue"}}})") == "brokersim: error: Resources.D.Type: expected a resource type, got nothing\n");
    CHECK(import_error(cfn + R"("D": 5}})") == "brokersim: error: Resources.D: expected an object (a resource), got 5\n");
  }

  TEST_CASE("import: the CloudFormation example, with Fn::GetAtt and Ref") {
    const auto i = import_file(kExamples + "sqs-cloudformation.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("orders") == json::parse(R"({"visibility_timeout_ms": 300000, "retention_ms": 1209600000, "delay_ms": 5000,
                                               "max_receive_count": 4, "dead_letter_to": "orders-dlq"})"));
    CHECK(i.queue("orders-dlq") == json::parse(R"({"retention_ms": 1209600000})"));
    CHECK(i.queue("ReportsQueue") == json::parse(R"({"visibility_timeout_ms": 60000})"));
    CHECK(i.noted("queue \"ReportsQueue\": no QueueName"));
    CHECK(i.noted("queue \"orders\": KmsMasterKeyId \"alias/aws/sqs\" (not modelled)"));
    CHECK(i.noted("queue \"orders-dlq\": RedriveAllowPolicy"));
    CHECK(i.noted("Resources.OrdersQueuePolicy: resource of type AWS::SQS::QueuePolicy (not modelled)"));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");
    check_runs(i);
    CHECK(
        import_error(R"({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": {"Ref": "Nope"}}}}})")
            .find("Resources.Q.Properties.VisibilityTimeout: expected a value, or a Ref to a parameter with a Default") !=
        std::string::npos);
    CHECK(
        import_error(
            R"({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["Missing", "Arn"]}, "maxReceiveCount": 3}}}}})")
            .find("Resources.Q.Properties.RedrivePolicy.deadLetterTargetArn: expected the Arn of an AWS::SQS::Queue of the "
                  "template") != std::string::npos);
    CHECK(
        import_error(R"({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": {"Fn::Sub": "${X}"}}}}})")
            .find("Resources.Q.Properties.DelaySeconds: expected a value brokersim can read") != std::string::npos);
    CHECK(import_error(R"({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}})")
              .find("Resources: expected at least one resource of type AWS::SQS::Queue") != std::string::npos);
  }

  TEST_CASE("import: the format comes from the content, not the file name") {
    const std::string sqs = read_file(kExamples + "sqs-get-queue-attributes.json");
    const auto i = import_text(sqs, "definitions.yaml");
    REQUIRE(i.status == 0);
    CHECK(i.scenario["broker"]["kind"] == "amazon-sqs");
    const auto r = import_text(read_file(kExamples + "rabbitmq-definitions.json"), "template.txt");
    REQUIRE(r.status == 0);
    CHECK(r.scenario["broker"]["kind"] == "rabbitmq-classic");
    CHECK(import_error(R"({"hello": 1})").find("input.json: expected a RabbitMQ definitions export") != std::string::npos);
    CHECK(import_error("[1, 2]").find("got an array of something else") != std::string::npos);
    CHECK(import_error("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n", "template.json")
              .find("a CloudFormation template in YAML: brokersim import reads JSON only; convert it first (cfn-flip") !=
          std::string::npos);
    CHECK(import_error("queues:\n  - name: a\n").find("invalid JSON") != std::string::npos);
    CHECK(import_error("").find("invalid JSON") != std::string::npos);
  }

  TEST_CASE("import: --out writes the scenario, refuses to overwrite the input, and a failure writes nothing") {
    ScratchDir dir("brokersim-import-out");
    const std::string in = dir.write("defs.json", read_file(kExamples + "rabbitmq-definitions.json"));
    const std::string out = dir.path("scenario.json");
    const auto r = run_cli({"import", in, "--out", out});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(r.out.empty());
    CHECK(r.err.find("notes (also in the scenario's \"notes\"):") != std::string::npos);
    const auto run = run_cli({"run", out, "--set", "stop.time_ms=10000"});
    CHECK_MESSAGE(run.status == 0, run.err);
    const auto same = run_cli({"import", in, "--out", in});
    CHECK(same.status == 2);
    CHECK(read_file(in) == read_file(kExamples + "rabbitmq-definitions.json"));
    // A failed import leaves an existing output as it was.
    const std::string bad = dir.write("bad.json", R"({"Attributes": {"VisibilityTimeout": "-1"}})");
    const std::string before = read_file(out);
    CHECK(run_cli({"import", bad, "--out", out}).status == 2);
    CHECK(read_file(out) == before);
    CHECK(run_cli({"import"}).status == 2);
    CHECK(run_cli({"import", dir.path("missing.json")}).status == 2);
  }

  // Each example's scenario is checked in as experiments/scenarios/import-NAME.json (with its
  // fingerprint): the importer still writes exactly it.
  TEST_CASE("import: every example's checked-in scenario is what the importer writes today") {
    std::size_t examples = 0;
    for (const auto& e : fs::directory_iterator(kExamples)) {
      CAPTURE(e.path().string());
      const auto i = import_file(e.path().string());
      REQUIRE_MESSAGE(i.status == 0, i.err);
      CHECK(i.out == read_file(std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/import-" +
                               e.path().filename().string()));
      ++examples;
    }
    CHECK(examples == 5);
  }

  TEST_CASE("import: every example imports to a scenario that loads and runs") {
    for (const auto& e : fs::directory_iterator(kExamples)) {
      CAPTURE(e.path().string());
      const auto i = import_file(e.path().string());
      REQUIRE_MESSAGE(i.status == 0, i.err);
      CHECK(i.scenario["notes"].size() >= 2);
      check_runs(i);
    }
  }
}
