// brokersim import (experiments/cli/import/) of RabbitMQ definitions: the mapping key by key, the policy
// rules (priority, apply-to, vhost, ties, operator policies, arguments against policies), dead-letter
// routing through exchanges and bindings, vhosts, broker.kind, renamed queues and every bad input's
// error (its entry's path, exit status 2, no output file). Service Bus, SQS and the command are in
// test_import_cloud.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/cli/import/common.hpp"
#include "tests/import_test_util.hpp"
#include "tests/test_util.hpp"

using namespace import_test;

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
}
