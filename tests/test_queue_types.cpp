// One RabbitMQ broker with queues of both types (issue 24): broker.queues.NAME.type, the broker
// kind's type by default, each queue following its own type's rules in the same run. Exact
// times, zero latencies.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;
using json = nlohmann::json;

namespace {

// A classic broker with two quorum queues. c (classic) dead-letters three messages at 100 into qt
// (quorum, max_length 1, reject-publish); q (quorum, at-least-once) dead-letters two, at 100 and
// 110, into ct (classic, max_length 1, reject-publish). qt and ct are read from 500 on.
constexpr const char* kMixed = R"({
  "stop": {"time_ms": 5000},
  "broker": {"kind": "rabbitmq-classic", "dead_letter_confirm_timeout_ms": 1000, "queues": {
    "c": {"message_ttl_ms": 100, "dead_letter_to": "qt"},
    "qt": {"type": "quorum", "max_length": 1, "overflow": "reject-publish"},
    "q": {"type": "quorum", "message_ttl_ms": 100, "dead_letter_to": "ct",
          "dead_letter_strategy": "at-least-once", "overflow": "reject-publish"},
    "ct": {"max_length": 1, "overflow": "reject-publish"}}},
  "producers": [
    {"queue": "c", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 10},
    {"queue": "q", "arrivals": {"at_ms": [0, 10]}, "service_ms": 10}],
  "consumers": [{"queue": "qt", "prefetch": 1, "start_ms": 500}, {"queue": "ct", "prefetch": 1, "start_ms": 500}]
})";

// The delivery times of the jobs that ended in `queue`, in trace order.
std::vector<double> delivered_in(const brokersim::test::Run& run, const std::string& queue) {
  std::vector<double> times;
  for (const auto& row : run.trace) {
    if (row["queue"] == queue && !row.empty("delivered_ms")) times.push_back(row.ms("delivered_ms"));
  }
  return times;
}

}  // namespace

TEST_CASE("mixed queue types - a classic queue dead-letters into a quorum queue by the quorum target's rule") {
  // c's three expire at 100; a quorum target never refuses a dead letter (at-most-once: an
  // untracked enqueue), so all three get into qt past its max_length 1 and are read from 500.
  auto run = run_scenario(kMixed);
  CHECK(run.queue("c").dl(brokersim::DeathReason::Expired) == 3);
  CHECK(run.queue("qt").delivered == 3);
  CHECK(delivered_in(run, "qt") == std::vector<double>{500, 510, 520});
  CHECK(run.outcome(Outcome::Lost) == 0);
  // qt typed classic: the classic target refuses the second and third (dead-letter republishing
  // has no confirms: lost).
  auto classic = run_scenario(kMixed, {"broker.queues.qt.type=classic"});
  CHECK(classic.queue("qt").delivered == 1);
  CHECK(classic.outcome(Outcome::Lost) == 2);
}

TEST_CASE("mixed queue types - a quorum queue dead-letters at least once into a classic queue, which refuses when full") {
  // q's first dead letter (100) gets into ct (ready 1 = its limit); the second (110) is refused by
  // the full classic target (reject-publish: a negative confirm) and stays with q's worker, which
  // retries it when its 1000 ms timer fires, at 1110: ct's reader took the first at 500.
  auto run = run_scenario(kMixed);
  CHECK(run.queue("ct").delivered == 2);
  CHECK(delivered_in(run, "ct") == std::vector<double>{500, 1110});
  CHECK(run.queue("q").dl(brokersim::DeathReason::Expired) == 2);
  CHECK(run.outcome(Outcome::Lost) == 0);
  // Stopped before the retry, the second is still held by q.
  auto early = run_scenario(kMixed, {R"(stop={"time_ms": 1100, "follow_ms": 0})"});
  CHECK(early.queue("ct").delivered == 1);
  CHECK(early.queue("q").dl(brokersim::DeathReason::Expired) == 1);
  // at-least-once needs a quorum source: q typed classic dead-letters at most once, and the full
  // classic target loses the second.
  auto from_classic = run_scenario(
      kMixed, {R"(broker.queues.q={"type": "classic", "message_ttl_ms": 100, "dead_letter_to": "ct", "overflow": "reject-publish"})"});
  CHECK(from_classic.queue("ct").delivered == 1);
  CHECK(from_classic.outcome(Outcome::Lost) == 1);
  // The same broker as rabbitmq-quorum with c and ct typed classic: the same run.
  auto as_quorum = run_scenario(kMixed, {"broker.kind=rabbitmq-quorum", "broker.queues.c.type=classic",
                                         "broker.queues.ct.type=classic", "broker.queues.qt.type=null",
                                         "broker.queues.q.type=null"});
  CHECK(delivered_in(as_quorum, "qt") == delivered_in(run, "qt"));
  CHECK(delivered_in(as_quorum, "ct") == delivered_in(run, "ct"));
  CHECK(as_quorum.outcome(Outcome::Lost) == 0);
}

TEST_CASE("mixed queue types - each queue keeps its own type's TTL 0 rule") {
  // One classic and one quorum queue on one broker, each with TTL 0 and a consumer with
  // prefetch 0 attaching at 100: the classic queue discards a TTL-0 message no consumer took at
  // once; the quorum queue keeps it 1 ms (expired_in_queue at 1, then dropped either way).
  constexpr const char* kTtl0 = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "rabbitmq-classic", "queues": {
      "a": {"message_ttl_ms": 0}, "b": {"type": "quorum", "message_ttl_ms": 0}}},
    "producers": [{"queue": "a", "arrivals": {"at_ms": [0]}, "service_ms": 10},
                  {"queue": "b", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
    "consumers": []
  })";
  auto run = run_scenario(kTtl0);
  REQUIRE(run.trace.size() == 2);
  for (const auto& row : run.trace) {
    CHECK(row["outcome"] == "expired_in_queue");
    CHECK(row.ms("ended_ms") == (row["producer"] == "1" ? 1 : 0));  // producer 1 publishes to b
  }
}

TEST_CASE("queue type key - validated per queue, refused on other broker kinds, the quorum keys by the queue's type") {
  brokersim::test::ScratchDir d("brokersim-qtype");
  const std::string file = d.write("m.json", kMixed);
  const auto error = [&](const std::vector<std::string>& sets) {
    std::vector<std::string> args = {"run", file};
    for (const auto& s : sets) {
      args.emplace_back("--set");
      args.push_back(s);
    }
    const auto r = run_cli(args);
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(run_cli({"run", file}).status == 0);
  CHECK(error({"broker.queues.qt.type=stream"}).find(
            "broker.queues.qt.type: expected one of \"classic\", \"quorum\", got \"stream\"") != std::string::npos);
  CHECK(error({"broker.queues.qt.type=1"}).find("broker.queues.qt.type: expected one of") != std::string::npos);
  // A quorum key on a queue typed classic names the queue's type.
  CHECK(error({"broker.queues.ct.type=classic", "broker.queues.ct.delivery_limit=3"})
            .find("broker.queues.ct.delivery_limit: this key belongs to quorum queues; broker.queues.ct.type is "
                  "\"classic\" (set it to \"quorum\" or drop this key)") != std::string::npos);
  CHECK(error({"broker.queues.q.type=classic"})
            .find("broker.queues.q.dead_letter_strategy: this key belongs to quorum queues; broker.queues.q.type is "
                  "\"classic\"") != std::string::npos);
  // On rabbitmq-quorum, a queue typed classic: the same.
  CHECK(error({"broker.kind=rabbitmq-quorum", "broker.queues.q.type=classic"})
            .find("broker.queues.q.dead_letter_strategy: this key belongs to quorum queues; broker.queues.q.type is "
                  "\"classic\"") != std::string::npos);
  // What only classic queues take, on a queue typed quorum (on either kind).
  CHECK(error({"broker.queues.qt.overflow=reject-publish-dlx"})
            .find("broker.queues.qt.overflow: expected \"drop-head\" or \"reject-publish\" (quorum queues do not "
                  "support reject-publish-dlx)") != std::string::npos);
  // A classic broker without a quorum queue still refuses the quorum broker key, naming its kind.
  CHECK(error({R"(broker.queues={"ct": {}})", R"(producers=[{"queue": "ct", "arrivals": {"at_ms": [0]}, "service_ms": 1}])",
               R"(consumers=[{"queue": "ct"}])"})
            .find("broker.dead_letter_confirm_timeout_ms: this key belongs to broker kind \"rabbitmq-quorum\"") !=
        std::string::npos);
  // Service Bus and SQS have no queue types.
  for (const char* kind : {"azure-servicebus", "amazon-sqs"}) {
    CAPTURE(kind);
    const std::string err = error({std::string("broker={\"kind\": \"") + kind + "\", \"queues\": {\"c\": {\"type\": \"quorum\"}}}",
                                   R"(producers=[{"queue": "c", "arrivals": {"at_ms": [0]}, "service_ms": 1}])",
                                   R"(consumers=[{"queue": "c"}])"});
    CHECK(err.find("broker.queues.c.type: this key belongs to broker kinds \"rabbitmq-classic\", \"rabbitmq-quorum\"") !=
          std::string::npos);
  }
}

TEST_CASE("queue type key - every queue typed as its kind's type gives byte-identical run --json") {
  brokersim::test::ScratchDir d("brokersim-qtype-same");
  const std::string root = BROKERSIM_SOURCE_DIR;
  for (const std::string name : {"experiments/scenarios/scenario-format-example.json", "experiments/scenarios/mm10-prefetch1.json",
                                 "experiments/seeds/003-hol-blocking-quorum.json"}) {
    CAPTURE(name);
    json doc = json::parse(brokersim::test::read_file(root + "/" + name));
    for (const char* kind : {"rabbitmq-classic", "rabbitmq-quorum"}) {
      CAPTURE(kind);
      doc["broker"]["kind"] = kind;
      // Keys of quorum queues only: dropped, so that the document loads as either kind.
      for (auto& q : doc["broker"]["queues"]) {
        q.erase("delivery_limit");
        q.erase("dead_letter_strategy");
        q.erase("type");
      }
      doc["broker"].erase("dead_letter_confirm_timeout_ms");
      // One file, rewritten: the same path in both runs.
      const std::string file = d.write("s.json", doc.dump());
      const auto a = run_cli({"run", file, "--json", "--set", "stop.time_ms=20000"});
      json typed_doc = doc;
      for (auto& q : typed_doc["broker"]["queues"]) q["type"] = std::string(kind) == "rabbitmq-quorum" ? "quorum" : "classic";
      d.write("s.json", typed_doc.dump());
      const auto b = run_cli({"run", file, "--json", "--set", "stop.time_ms=20000"});
      REQUIRE(a.status == 0);
      CHECK(b.status == 0);
      CHECK(a.out == b.out);
      CHECK(a.err == b.err);
    }
  }
}
