// Quorum-queue dead-lettering into a target that cannot take the message (issue 21, items 10
// and 11): the at-least-once worker's retry timer (rabbit_fifo_dlx_worker, every
// dead_letter_worker_publisher_confirm_timeout, 180 s by default) and a full reject-publish quorum
// target, which only stops enqueuers after it has gone over its limit. Exact times, zero latencies.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using brokersim::test::run_scenario;

namespace {

// One message expiring at 6000 into dlq, which x-expires deleted on the 5000 tick and a declare
// re-creates at 20000; dlq's reader attaches at 21000 (its consumer keeps dlq from expiring again).
constexpr const char* kDeletedTarget = R"({
  "stop": {"time_ms": 400000},
  "broker": {"kind": "rabbitmq-quorum", "version": "3.13", "queues": {
    "q": {"dead_letter_to": "dlq", "dead_letter_strategy": "at-least-once", "overflow": "reject-publish"},
    "dlq": {"expires_ms": 1000, "declare_at_ms": [20000]}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "expiration_ms": 6000, "service_ms": 10}],
  "consumers": [{"queue": "dlq", "prefetch": 1, "start_ms": 21000}]
})";

// Four messages expiring at 100, 110, 120 and 130 into dlq (max_length 1, reject-publish), read
// from 500 on; three more published into q at 200 (max_length 4, reject-publish).
constexpr const char* kFullTarget = R"({
  "stop": {"time_ms": 400000},
  "broker": {"kind": "rabbitmq-quorum", "version": "3.13", "queues": {
    "q": {"dead_letter_to": "dlq", "dead_letter_strategy": "at-least-once",
          "overflow": "reject-publish", "max_length": 4},
    "dlq": {"max_length": 1, "overflow": "reject-publish"}}},
  "producers": [
    {"queue": "q", "arrivals": {"at_ms": [0, 10, 20, 30]}, "expiration_ms": 100, "service_ms": 10},
    {"queue": "q", "arrivals": {"at_ms": [200, 200, 200]}, "service_ms": 10}],
  "consumers": [{"queue": "dlq", "prefetch": 1, "start_ms": 500}]
})";

// Producers into a queue of max_length 2 with reject-publish, read from 500 on (10 ms jobs).
constexpr const char* kPublishers = R"({
  "stop": {"time_ms": 2000},
  "broker": {"kind": "rabbitmq-quorum", "version": "3.13", "queues": {
    "q": {"max_length": 2, "overflow": "reject-publish"}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 10, 20, 30, 505, 515]}, "service_ms": 10}],
  "consumers": [{"queue": "q", "prefetch": 1, "start_ms": 500}]
})";

}  // namespace

TEST_CASE("quorum reject-publish stops a producer only once over max_length, and lets it go at 80%") {
  // The producer registers at 0; the publish at 20 takes q to 3 > 2 and the queue tells it to
  // stop, so the one at 30 is refused (RabbitMQ 3.10.8 took 3 of 4 the same way, real-broker case
  // qdlx-publish-over-limit). Reading starts at 500: q is at 2 then, not over but above 80% of 2
  // (1), so the publish at 505 is still refused; the delivery at 510 takes q to 1 and the queue
  // says go, so the publish at 515 gets in.
  auto run = run_scenario(kPublishers);
  const auto outcome = [&](std::size_t i) -> std::string { return run.trace.at(i)["outcome"]; };
  CHECK(outcome(2) != "rejected_at_publish");
  CHECK(outcome(3) == "rejected_at_publish");
  CHECK(outcome(4) == "rejected_at_publish");
  CHECK(outcome(5) != "rejected_at_publish");
  CHECK(run.queue("q").delivered == 4);
  // Publishes of one instant all get in before the notice reaches the producer.
  auto batch = run_scenario(kPublishers, {"producers.0.arrivals.at_ms=[0, 0, 0, 0]"});
  CHECK(batch.queue("q").delivered == 4);
  CHECK(batch.result.outcomes[static_cast<int>(brokersim::Outcome::RejectedAtPublish)] == 0);
  // A classic queue refuses the publish that would exceed the limit and takes the next one as
  // soon as there is room: 20 and 30 refused, 505 (q at 1 after the delivery at 500) taken.
  auto classic = run_scenario(kPublishers, {"broker.kind=rabbitmq-classic"});
  const auto classic_outcome = [&](std::size_t i) -> std::string { return classic.trace.at(i)["outcome"]; };
  CHECK(classic_outcome(2) == "rejected_at_publish");
  CHECK(classic_outcome(3) == "rejected_at_publish");
  CHECK(classic_outcome(4) != "rejected_at_publish");
  CHECK(classic_outcome(5) != "rejected_at_publish");
}

TEST_CASE("quorum at-least-once into a deleted and re-declared target - the worker retries on its 180 s timer") {
  // Dead-lettered at 6000 while dlq does not exist: nothing is published, and the worker's timer,
  // armed at 6000, republishes it at 186000 (dlq re-declared at 20000 does not release it).
  auto run = run_scenario(kDeletedTarget);
  CHECK(run.trace.at(0).ms("delivered_ms") == 186000);
  CHECK(run.trace.at(0)["queue"] == "dlq");
  CHECK(run.queue("dlq").delivered == 1);
  CHECK(run.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 0);
  // 3.13 and 4.2 share the rule.
  CHECK(run_scenario(kDeletedTarget, {"broker.version=4.2"}).trace.at(0).ms("delivered_ms") == 186000);
  // The period is the worker's: a 30 s timer fires at 36000, when dlq is back.
  CHECK(run_scenario(kDeletedTarget, {"broker.dead_letter_confirm_timeout_ms=30000"}).trace.at(0).ms("delivered_ms") ==
        36000);
  // A 10 s timer fires at 16000 (dlq still gone: the message stays) and again at 26000.
  CHECK(run_scenario(kDeletedTarget, {"broker.dead_letter_confirm_timeout_ms=10000"}).trace.at(0).ms("delivered_ms") ==
        26000);
  // Stopped before the timer fires and not followed past the stop, it is still held in q (followed,
  // it is delivered at 186000: the next test case).
  auto early = run_scenario(kDeletedTarget, {R"(stop={"time_ms": 185000, "follow_ms": 0})"});
  CHECK(early.trace.at(0).empty("delivered_ms"));
  CHECK(early.queue("dlq").delivered == 0);
  CHECK(early.queue("q").dl(brokersim::DeathReason::Expired) == 0);  // not yet into dlq
}

TEST_CASE("quorum at-least-once dead letter held for a read queue is followed past the stop - as a real node delivers it") {
  // Issue 43, item 9: a run stopped at 100 s used to end while the worker still held the dead
  // letter, calling the job expired_in_queue; the real 3.10.8 node delivers it on the worker's
  // timer (experiments/real-broker, qdlx-deleted-target: 26 010 ms against brokersim's 26 000 with
  // a 10 s timer). Held for dlq, which a consumer reads, the letter is still in the system: the run
  // follows it (stop.follow_ms, by default as long again as the span) to its delivery at 186 000.
  auto run = run_scenario(kDeletedTarget, {R"(stop={"time_ms": 100000})"});
  CHECK(run.trace.at(0).ms("delivered_ms") == 186000);
  CHECK(run.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(run.queue("dlq").delivered == 1);
  // The same job, the same outcome, whatever the stop: as in the 400 s run.
  CHECK(run_scenario(kDeletedTarget).trace.at(0)["outcome"] == "completed_on_time");
  // Not followed (follow_ms 0): still in the system at the end, never expired_in_queue.
  auto cut = run_scenario(kDeletedTarget, {R"(stop={"time_ms": 100000, "follow_ms": 0})"});
  CHECK(cut.trace.at(0)["outcome"] == "in_system");
  // Held for a queue nobody reads, the letter rests decided: the run ends at its stop.
  auto unread = run_scenario(kDeletedTarget, {R"(stop={"time_ms": 100000})", "consumers.0.queue=q", "consumers.0.start_ms=1000000"});
  CHECK(unread.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(unread.queue("dlq").delivered == 0);
}

TEST_CASE("quorum reject-publish target takes dead letters past its limit - the worker is stopped only after") {
  // at-least-once: A (100) registers the worker at an empty dlq and gets in; B (110) gets in too
  // (1 is not over a limit of 1) and puts dlq over it; C (120) and D (130) find the worker
  // stopped and stay in q, counting toward q's max_length 4: the three published at 200 all get in
  // (their producer is an enqueuer too, stopped only once q is over its limit: 2 held + 3 = 5, as
  // the real broker took them in the qdlx-full-target-alo case). Reading dlq empties it by 510 (below 80% of 1: go again), and the timer
  // armed at 120 republishes C at 180120; D, published at 130, is not a period old then and goes
  // at the next firing, 360120.
  auto run = run_scenario(kFullTarget);
  CHECK(run.queue("dlq").delivered == 4);
  CHECK(run.trace.at(0).ms("delivered_ms") == 500);
  CHECK(run.trace.at(1).ms("delivered_ms") == 510);
  CHECK(run.trace.at(2).ms("delivered_ms") == 180120);
  CHECK(run.trace.at(3).ms("delivered_ms") == 360120);
  CHECK(run.trace.at(5)["outcome"] == "in_system");
  CHECK(run.trace.at(6)["outcome"] == "in_system");
  CHECK(run.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 0);
  // A 1 s period: C at 1120, D at 2120.
  auto fast = run_scenario(kFullTarget, {"broker.dead_letter_confirm_timeout_ms=1000"});
  CHECK(fast.trace.at(2).ms("delivered_ms") == 1120);
  CHECK(fast.trace.at(3).ms("delivered_ms") == 2120);
  // dlq never read: it stays over its limit, the worker stays stopped and C, D stay in q.
  auto unread = run_scenario(kFullTarget, {"consumers.0.start_ms=390000", R"(stop={"time_ms": 389000, "follow_ms": 0})"});
  CHECK(unread.trace.at(2).empty("delivered_ms"));
  CHECK(unread.queue("dlq").delivered == 0);
  CHECK(unread.queue("q").dl(brokersim::DeathReason::Expired) == 2);  // A and B only
  CHECK(unread.trace.at(6)["outcome"] == "in_system");  // past q's limit, as above
  // Dead letters of one instant are one batch: all four expiring at 100 get in before the
  // reject_publish notice reaches the worker.
  auto batch = run_scenario(kFullTarget, {"producers.0.arrivals.at_ms=[0, 0, 0, 0]"});
  CHECK(batch.queue("dlq").delivered == 4);
  CHECK(batch.trace.at(3).ms("delivered_ms") == 530);
  CHECK(batch.trace.at(6)["outcome"] == "in_system");  // nothing held in q: all three published at 200 fit
  // at-most-once (and at-least-once falling back to it with drop-head): an untracked enqueue the
  // target never refuses; all four get in past the limit at once.
  for (const char* set : {"broker.queues.q.dead_letter_strategy=at-most-once", "broker.queues.q.overflow=drop-head"}) {
    CAPTURE(set);
    auto most = run_scenario(kFullTarget, {set});
    CHECK(most.queue("dlq").delivered == 4);
    CHECK(most.trace.at(3).ms("delivered_ms") == 530);
    CHECK(most.result.outcomes[static_cast<int>(brokersim::Outcome::Lost)] == 0);
  }
}

TEST_CASE("quorum dead-letter worker key - dead_letter_confirm_timeout_ms is validated and quorum-only") {
  brokersim::test::ScratchDir d("brokersim-quorum-dlx");
  const std::string file = d.write("q.json", kFullTarget);
  const auto error = [&](const std::string& set) {
    const auto r = brokersim::test::run_cli({"run", file, "--set", set});
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(error("broker.dead_letter_confirm_timeout_ms=0").find("broker.dead_letter_confirm_timeout_ms: expected") !=
        std::string::npos);
  CHECK(error("broker.dead_letter_confirm_timeout_ms=\"3 min\"").find("broker.dead_letter_confirm_timeout_ms: expected") !=
        std::string::npos);
  // A classic broker names the kind the key belongs to; a near miss gets a suggestion.
  CHECK(error(R"(broker={"kind": "rabbitmq-classic", "dead_letter_confirm_timeout_ms": 1000, "queues": {"q": {}, "dlq": {}}})")
            .find("belongs to broker kind \"rabbitmq-quorum\"") != std::string::npos);
  CHECK(error("broker.dead_letter_confirm_timeout=1000").find("dead_letter_confirm_timeout_ms") != std::string::npos);
  CHECK(brokersim::test::run_cli({"run", file, "--set", "broker.dead_letter_confirm_timeout_ms=0.5"}).status == 0);
}
