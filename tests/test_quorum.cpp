// RabbitMQ quorum queues (broker.kind "rabbitmq-quorum"): the test vectors 27-32 of docs/semantics.md
// part 2, one case each, then one small case per rule of section 2 with exact times (zero
// latencies and no expiry slack unless a case needs them). brokersim has no channels or headers:
// a consumer stands for a channel, the trace's redeliveries column for the delivery count, and the
// per-queue dead_lettered_by_reason counters for x-death.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::test::run_scenario;

namespace {

// One job, a consumer stalled until 100 ms that finds it past its 50 ms deadline and requeues it
// (a basic.nack requeue=true); every nack takes 10 ms to reach the broker, so the job comes back
// every 10 ms: deliveries at 0, 110, 120, ...
constexpr const char* kNackForever = R"({
  "stop": {"time_ms": 2000},
  "broker": {"kind": "rabbitmq-quorum", "version": "4.2", "ack_latency_ms": 10,
             "queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 1}],
  "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "requeue"}],
  "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
})";

}  // namespace

TEST_CASE("vector 27: delivery limit (4.0-4.2): 21 deliveries - the 21st nack dead-letters with reason delivery_limit") {
  auto run = run_scenario(kNackForever);
  const auto& a = run.trace.at(0);
  CHECK(a["outcome"] == "dead_lettered");
  CHECK(std::stoi(a["redeliveries"]) == 20);  // 21 deliveries: 0, 110, 120, ..., 300
  CHECK(a.ms("delivered_ms") == 300);
  CHECK(a.ms("ended_ms") == 310);             // the 21st nack arrives
  CHECK(run.queue("q").dl(DeathReason::DeliveryLimit) == 1);
  CHECK(run.queue("dlq").published == 1);
  CHECK(run.json()["queues"]["q"]["dead_lettered_by_reason"]["delivery_limit"] == 1);
  // 4.0 counts the same way.
  CHECK(run_scenario(kNackForever, {"broker.version=4.0"}).trace.at(0).ms("ended_ms") == 310);
  // 4.3: a nack does not count; the message keeps coming back (every 10 ms until the stop).
  auto v43 = run_scenario(kNackForever, {"broker.version=4.3"});
  CHECK(v43.trace.at(0)["outcome"] == "in_system");  // its nack is on its way back at the stop
  CHECK(std::stoi(v43.trace.at(0)["redeliveries"]) > 150);
  CHECK(v43.queue("q").dl(DeathReason::DeliveryLimit) == 0);
  // Without a dead-letter target the message is dropped on the 21st nack.
  auto dropped = run_scenario(kNackForever, {"broker.queues.q.dead_letter_to=null"});
  CHECK(dropped.trace.at(0)["outcome"] == "lost");
  CHECK(dropped.trace.at(0).ms("ended_ms") == 310);
}

TEST_CASE("vector 28: a returned message goes first - with delivery_limit -1 it goes to the tail") {
  // A (deadline 50), B and C in the queue; the consumer (prefetch 1, stalled until 100) has A,
  // finds it expired and nacks it (arriving at 110).
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "rabbitmq-quorum", "ack_latency_ms": 10, "queues": {"q": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [1, 2]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "on_expired": "requeue"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
  })";
  // Default limit (20): A is redelivered before B, at 110, and every 10 ms until its 21st nack.
  auto first = run_scenario(text);
  CHECK(first.trace.at(0).ms("ended_ms") == 310);
  CHECK(first.trace.at(1).ms("delivered_ms") == 310);
  CHECK(first.trace.at(2).ms("delivered_ms") == 330);
  // Limit disabled: A goes behind C. B is delivered at 110, C after B's ack (130), A after C's (150).
  auto tail = run_scenario(text, {"broker.queues.q.delivery_limit=-1", "stop.follow_ms=0"});
  CHECK(tail.trace.at(1).ms("delivered_ms") == 110);
  CHECK(tail.trace.at(2).ms("delivered_ms") == 130);
  // No limit: it keeps coming back, every 10 ms from 150 to the stop.
  CHECK(tail.trace.at(0)["outcome"] == "in_system");
  CHECK(tail.queue("q").dl(DeathReason::DeliveryLimit) == 0);
  CHECK(std::stoi(tail.trace.at(0)["redeliveries"]) == 86);  // 150, 160, ..., 1000
  // 3.13 has no default limit: the tail, too.
  auto v313 = run_scenario(text, {"broker.version=3.13"});
  CHECK(v313.trace.at(1).ms("delivered_ms") == 110);
}

TEST_CASE("vector 29: quorum TTL is head-only - an expired message behind a live head stays counted") {
  // brokersim has no message priorities, so the 4.3 per-priority scan has nothing to differ on.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 5000}, "observe": {"every_ms": 100},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [1]}, "expiration_ms": 100, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 1000}]
  })");
  CHECK(run.series.at(9).at("q.ready") == 2);  // 900 ms: B long overdue, still counted
  CHECK(run.trace.at(0).ms("delivered_ms") == 1000);
  CHECK(run.trace.at(1)["outcome"] == "expired_in_queue");
  CHECK(run.trace.at(1).ms("ended_ms") == 1000);  // right after A is fetched
  CHECK(run.trace.at(1).empty("delivered_ms"));
}

TEST_CASE("vector 30: at-least-once dead-lettering keeps refused messages in the source - drop-head falls back to at-most-once") {
  // Three messages expire at 100, 110 and 120 into dlq (max_length 1, reject-publish). A and B
  // get in (a quorum queue stops its enqueuers only once it is over its limit, after B); C finds
  // the dead-letter worker stopped and stays in q, counting toward q's max_length 3: of D, E, F, G
  // published at 200-203, F puts q over its limit (C held + D + E + F = 4; the producer is stopped
  // only once q is over, as the worker is) and G is refused. Were C not counted, G would get in. A dlq reader from 500 empties dlq, and the worker's retry
  // timer (armed at 120, every 180 s) republishes C at 180120 (tests/test_quorum_dlx.cpp).
  const char* text = R"({
    "stop": {"time_ms": 200000},
    "broker": {"kind": "rabbitmq-quorum", "queues": {
      "q": {"dead_letter_to": "dlq", "dead_letter_strategy": "at-least-once",
            "overflow": "reject-publish", "max_length": 3},
      "dlq": {"max_length": 1, "overflow": "reject-publish"}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0, 10, 20]}, "expiration_ms": 100, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [200, 201, 202, 203]}, "service_ms": 10}],
    "consumers": [{"queue": "dlq", "prefetch": 1, "start_ms": 500}]
  })";
  auto run = run_scenario(text);
  CHECK(run.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 0);
  CHECK(run.queue("dlq").delivered == 3);
  CHECK(run.queue("q").dl(DeathReason::Expired) == 3);
  CHECK(run.trace.at(2).ms("delivered_ms") == 180120);        // C, on the worker's timer
  CHECK(run.trace.at(5)["outcome"] == "in_system");            // F: C held + D + E = 3, not over
  CHECK(run.trace.at(6)["outcome"] == "rejected_at_publish");  // G: the producer was told to stop
  CHECK(run.result.duplicate_executions == 0);
  // The source deleted (x-expires, on the 5 s tick) before the worker retries: C goes with it,
  // as do D, E and F.
  auto deleted = run_scenario(text, {"broker.queues.q.expires_ms=300", "consumers.0.start_ms=6000", R"(stop={"time_ms": 8000})"});
  CHECK(deleted.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 4);
  CHECK(deleted.trace.at(2)["outcome"] == "lost");
  CHECK(deleted.trace.at(2).ms("ended_ms") == 5000);
  CHECK(deleted.queue("dlq").delivered == 2);
  // drop-head (the default): at-most-once, whose untracked publishes a quorum target never
  // refuses: all three get in past its limit at once (and D, dropped from q's head when G makes
  // it 4 > 3, follows them with reason maxlen).
  auto fallback = run_scenario(text, {"broker.queues.q.overflow=drop-head"});
  CHECK(fallback.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 0);
  CHECK(fallback.queue("dlq").delivered == 4);
  CHECK(fallback.queue("q").dl(DeathReason::Maxlen) == 1);
  CHECK(fallback.trace.at(2).ms("delivered_ms") == 520);
  // at-most-once (the default strategy) likewise.
  auto most = run_scenario(text, {"broker.queues.q.dead_letter_strategy=at-most-once"});
  CHECK(most.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 0);
  CHECK(most.trace.at(2).ms("delivered_ms") == 520);
}

TEST_CASE("vector 31: global QoS does not apply - per-consumer prefetch on a quorum queue (two consumers of 10 hold 20)") {
  // brokersim has no channels and no basic.qos global flag, so the channel error of the vector
  // cannot be asked for. The nearest observable is what a quorum queue does accept: a per-consumer
  // prefetch, each consumer holding its own window.
  auto run = run_scenario(R"({
    "stop": {"time_ms": 500}, "observe": {"every_ms": 100},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                            0, 0, 0, 0, 0]}, "service_ms": 10000}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 10}]
  })");
  CHECK(run.series.at(1).at("q.unacked") == 20);
  CHECK(run.series.at(1).at("q.ready") == 5);
}

TEST_CASE("vector 32: quorum x-expires is not renewed by declares - deleted on the first 5 s tick after the lease") {
  const char* text = R"({
    "stop": {"time_ms": 15000},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"q": {"expires_ms": 5000, "declare_every_ms": 2000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [100]}, "service_ms": 1}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace.at(0)["outcome"] == "lost");
  CHECK(run.trace.at(0).ms("ended_ms") == 10000);  // the tick at 5000 needs Ts > 0 + 5000
  CHECK(run.queue("q").deletions == 1);
  // A classic queue with the same declares is never deleted.
  auto classic = run_scenario(text, {"broker.kind=rabbitmq-classic"});
  CHECK(classic.queue("q").deletions == 0);
  // A 4000 ms lease ends before the 5000 tick.
  CHECK(run_scenario(text, {"broker.queues.q.expires_ms=4000"}).trace.at(0).ms("ended_ms") == 5000);
}

TEST_CASE("quorum TTL 0 lives 1 ms - a message with expiration 0 is delivered within the millisecond") {
  const char* text = R"({
    "stop": {"time_ms": 100},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"q": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 0, "service_ms": 1}]
  })";
  // No consumer: expired at enqueue + 1 ms (a classic queue: at once).
  auto alone = run_scenario(text);
  CHECK(alone.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(alone.trace.at(0).ms("ended_ms") == 1);
  CHECK(run_scenario(text, {"broker.kind=rabbitmq-classic"}).trace.at(0).ms("ended_ms") == 0);
  // The consumer at its prefetch limit acks at 0.5 ms: the quorum queue still delivers M (a
  // classic queue dropped it at once, vector 7); queue TTL 0 behaves the same.
  const std::vector<std::string> busy = {R"(consumers=[{"queue": "q", "prefetch": 1}])",
                                         R"(producers=[{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 0.5},
                                                      {"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 0, "service_ms": 1}])"};
  auto quick = run_scenario(text, busy);
  CHECK(quick.trace.at(1)["outcome"] == "completed_on_time");
  CHECK(quick.trace.at(1).ms("delivered_ms") == 0.5);
  auto classic = busy;
  classic.push_back("broker.kind=rabbitmq-classic");
  CHECK(run_scenario(text, classic).trace.at(1)["outcome"] == "expired_in_queue");
  auto queue_ttl = busy;
  queue_ttl.push_back("broker.queues.q.message_ttl_ms=0");
  CHECK(run_scenario(text, queue_ttl).trace.at(0)["outcome"] == "completed_on_time");
}

TEST_CASE("quorum prefetch 0 (unlimited) is capped at 2000 unacked per consumer") {
  const char* text = R"({
    "stop": {"time_ms": 100},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"periodic": {"every_ms": 0.01}}, "service_ms": 100000}],
    "consumers": [{"queue": "q", "prefetch": 0}]
  })";
  auto run = run_scenario(text);
  CHECK(run.queue("q").delivered == 2000);
  CHECK(run.queue("q").ready_at_end > 7000);
  // A classic queue delivers everything.
  auto classic = run_scenario(text, {"broker.kind=rabbitmq-classic"});
  CHECK(classic.queue("q").ready_at_end == 0);
}

TEST_CASE("quorum delivery count by version: consumer timeout counts up to 4.2 but not in 4.3 - a crash counts in 4.3") {
  // delivery_limit 0: the first counted return dead-letters. The consumer never acks; the
  // consumer timeout (60 s) closes its channel on the 120 s tick (60 000 is not past 60 000).
  const char* text = R"({
    "stop": {"time_ms": 200000},
    "broker": {"kind": "rabbitmq-quorum", "version": "4.2", "consumer_timeout_ms": 60000,
               "queues": {"q": {"dead_letter_to": "dlq", "delivery_limit": 0}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000000}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })";
  auto v42 = run_scenario(text);
  CHECK(v42.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(v42.trace.at(0).ms("ended_ms") == 120000);
  CHECK(v42.result.consumer_timeouts == 1);
  CHECK(v42.queue("q").dl(DeathReason::DeliveryLimit) == 1);
  // 4.3: the timeout returns it without counting: redelivered at once.
  auto v43 = run_scenario(text, {"broker.version=4.3"});
  CHECK(v43.trace.at(0)["outcome"] == "in_system");
  CHECK(v43.queue("q").dl(DeathReason::DeliveryLimit) == 0);
  CHECK(v43.result.consumer_timeouts >= 1);
  // 4.3: a crash (a failed delivery) counts.
  auto crash = run_scenario(text, {"broker.version=4.3", "broker.consumer_timeout_ms=null",
                                   R"(consumers=[{"queue": "q", "prefetch": 1}, {"queue": "q", "prefetch": 1, "start_ms": 10}])",
                                   R"(faults=[{"at_ms": 5, "consumer": 0, "crash": true}])"});
  CHECK(crash.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(crash.trace.at(0).ms("ended_ms") == 5);
}

TEST_CASE("quorum 4.3 consumer timeout is the queue's - per delivery - the stale copy still runs and its consumer waits") {
  // Consumer 0 is stalled until 100 s with job 0 in its buffer; its delivery (at 0) times out at
  // exactly 60 s and goes to consumer 1; consumer 0 still runs its stale copy at 100-130 s (a
  // duplicate execution) and gets nothing new until that copy is settled at 130 s, so jobs 1
  // and 2 (80 s) both wait for consumer 1 (90 s, 120 s).
  const char* text = R"({
    "stop": {"time_ms": 200000},
    "broker": {"kind": "rabbitmq-quorum", "version": "4.3", "consumer_timeout_ms": 60000, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 80000, 80000]}, "service_ms": 30000}],
    "consumers": [{"queue": "q", "prefetch": 1, "count": 2}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100000}]
  })";
  auto run = run_scenario(text);
  const auto& a = run.trace.at(0);
  CHECK(a["consumer"] == "1");
  CHECK(a.ms("delivered_ms") == 60000);
  CHECK(a.ms("finished_ms") == 90000);
  CHECK(a["outcome"] == "completed_on_time");
  CHECK(a["redeliveries"] == "1");
  CHECK(run.trace.at(1)["consumer"] == "1");
  CHECK(run.trace.at(1).ms("delivered_ms") == 90000);
  CHECK(run.trace.at(2)["consumer"] == "1");
  CHECK(run.trace.at(2).ms("delivered_ms") == 120000);
  CHECK(run.result.consumer_timeouts == 1);
  CHECK(run.result.duplicate_executions == 1);
  CHECK(run.result.outcomes[static_cast<std::size_t>(brokersim::Outcome::CompletedOnTime)] == 3);
  // Up to 4.2 the channel tick closes consumer 0's channel at 120 s instead: job 0 runs on
  // consumer 0 from 100 s, is voided at 120 s and runs again there; consumer 1 takes jobs 1, 2
  // as they come.
  auto v42 = run_scenario(text, {"broker.version=4.2"});
  CHECK(v42.trace.at(0)["consumer"] == "0");
  CHECK(v42.trace.at(0).ms("started_ms") == 120000);
  CHECK(v42.trace.at(1).ms("delivered_ms") == 80000);
  CHECK(v42.trace.at(2).ms("delivered_ms") == 110000);
  // A crash drops the stale copy with the connection: nothing is left behind.
  auto crash = run_scenario(text, {R"(faults=[{"at_ms": 0, "consumer": 0, "stall_ms": 100000}, {"at_ms": 70000, "consumer": 0, "crash": true, "restart_after_ms": 1000}])"});
  CHECK(crash.result.duplicate_executions == 0);
  CHECK(crash.trace.at(1).ms("delivered_ms") == 80000);  // consumer 0 is back at 71 s, out of timeout
  CHECK(crash.trace.at(1)["consumer"] == "0");
  CHECK(crash.trace.at(2).ms("delivered_ms") == 90000);
}

TEST_CASE("quorum loader: reject-publish-dlx is refused - delivery_limit and dead_letter_strategy are validated") {
  brokersim::test::ScratchDir d("brokersim-quorum");
  const std::string file = d.write("q.json", R"({"stop": {"time_ms": 10}, "broker": {"kind": "rabbitmq-quorum",
    "queues": {"q": {}}}, "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}]})");
  const auto error = [&](const std::string& set) {
    const auto r = brokersim::test::run_cli({"run", file, "--set", set});
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(error("broker.queues.q.overflow=reject-publish-dlx").find(
            "broker.queues.q.overflow: expected \"drop-head\" or \"reject-publish\" (quorum queues do not support "
            "reject-publish-dlx), got \"reject-publish-dlx\"") != std::string::npos);
  CHECK(error("broker.queues.q.delivery_limit=-2").find("broker.queues.q.delivery_limit: expected an integer >= 0, -1") !=
        std::string::npos);
  CHECK(error("broker.queues.q.dead_letter_strategy=twice").find("broker.queues.q.dead_letter_strategy: expected") !=
        std::string::npos);
  // A classic queue names the queue's type, which a quorum queue beside it can have.
  CHECK(error(R"(broker={"kind": "rabbitmq-classic", "queues": {"q": {"delivery_limit": 3}}})")
            .find("this key belongs to quorum queues; broker.queues.q.type is \"classic\"") != std::string::npos);
  CHECK(brokersim::test::run_cli({"run", file, "--set", "broker.queues.q.delivery_limit=-1"}).status == 0);
  // Classic outputs keep their keys: delivery_limit only for quorum queues.
  const auto classic = brokersim::test::run_cli({"run", file, "--json", "--set", "broker.kind=rabbitmq-classic"});
  CHECK(nlohmann::json::parse(classic.out)["queues"]["q"]["dead_lettered_by_reason"].size() == 3);
}

TEST_CASE("analytic on a quorum queue with prefetch 1 fits M/M/c+D - prefetch 0 and TTL 0 do not") {
  brokersim::test::ScratchDir d("brokersim-quorum-analytic");
  const std::string file = d.write("mmcd.json", R"({"name": "mmcd", "seed": 3, "stop": {"time_ms": 20000},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"work": {"message_ttl_ms": 50}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 22}}, "service_ms": {"exp": {"mean": 100}}}],
    "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 1, "admission": "none"}]})");
  const auto fit = brokersim::test::run_cli({"analytic", file, "--json"});
  REQUIRE(fit.status == 0);
  CHECK(nlohmann::json::parse(fit.out)["model"].get<std::string>().find("M/M/c+D") != std::string::npos);
  const auto p0 = brokersim::test::run_cli({"analytic", file, "--set", "consumers.0.prefetch=0"});
  CHECK(p0.status == 4);
  CHECK(p0.out.find("consumers.0.prefetch is 0, which a quorum queue caps at 2000") != std::string::npos);
  const auto ttl0 = brokersim::test::run_cli({"analytic", file, "--set", "broker.queues.work.message_ttl_ms=0"});
  CHECK(ttl0.status == 4);
  CHECK(ttl0.out.find("message_ttl_ms is 0, which a quorum queue keeps for 1 ms") != std::string::npos);
}

TEST_CASE("quorum returns are served in return order ahead of ready messages - classic restores the original order") {
  // A goes to consumer 0, B to consumer 1 (both stalled); C waits. Consumer 1 crashes at 10
  // (B returned), consumer 0 at 20 (A returned). Consumer 2 attaches at 30 and takes one at a time.
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "rabbitmq-quorum", "queues": {"q": {}}},
    "producers": [
      {"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [1]}, "service_ms": 10},
      {"queue": "q", "arrivals": {"at_ms": [2]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "count": 2, "prefetch": 1}, {"queue": "q", "prefetch": 1, "start_ms": 30}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 500}, {"at_ms": 0, "consumer": 1, "stall_ms": 500},
               {"at_ms": 10, "consumer": 1, "crash": true}, {"at_ms": 20, "consumer": 0, "crash": true}]
  })";
  auto quorum = run_scenario(text);
  CHECK(quorum.trace.at(1).ms("delivered_ms") == 30);  // B, returned first
  CHECK(quorum.trace.at(0).ms("delivered_ms") == 40);  // then A
  CHECK(quorum.trace.at(2).ms("delivered_ms") == 50);  // then the ready C
  auto classic = run_scenario(text, {"broker.kind=rabbitmq-classic"});
  CHECK(classic.trace.at(0).ms("delivered_ms") == 30);
  CHECK(classic.trace.at(1).ms("delivered_ms") == 40);
  CHECK(classic.trace.at(2).ms("delivered_ms") == 50);
  // Limit disabled: each return goes to the tail, behind C.
  auto tail = run_scenario(text, {"broker.queues.q.delivery_limit=-1"});
  CHECK(tail.trace.at(2).ms("delivered_ms") == 30);
  CHECK(tail.trace.at(1).ms("delivered_ms") == 40);
  CHECK(tail.trace.at(0).ms("delivered_ms") == 50);
}
