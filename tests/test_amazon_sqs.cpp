// Amazon SQS standard queues (broker.kind "amazon-sqs"): the test vectors 41-44 of docs/semantics.md
// part 2, then one small case per rule of section 6 (and of models/brokers/amazon_sqs.hpp) with
// exact times from the trace. Zero latencies unless a case needs them. The trace's redeliveries
// column is ReceiveCount - 1 in the job's current queue's history.
#include <doctest/doctest.h>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::DeathReason;
using brokersim::Outcome;
using brokersim::Wait;
using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

// One job, a consumer whose every execution fails (so it never deletes the message): it comes
// back each time its 30 s visibility lapses.
// follow_ms 0: the state at the stop (a job that is never deleted would be followed to the horizon).
constexpr const char* kNeverDeleted = R"({
  "stop": {"time_ms": 45000, "follow_ms": 0},
  "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 30000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000}],
  "consumers": [{"queue": "q", "prefetch": 1, "failure_probability": 1}]
})";

}  // namespace

TEST_CASE("vector 41: visibility lapse - received at 0 and not deleted, received again at 30 s with ReceiveCount 2") {
  auto before = run_scenario(kNeverDeleted, {"stop.time_ms=29999"});
  CHECK(before.trace.at(0).ms("delivered_ms") == 0);
  CHECK(before.trace.at(0)["redeliveries"] == "0");
  CHECK(before.trace.at(0)["outcome"] == "in_system");  // failed, but still in flight: it comes back
  auto run = run_scenario(kNeverDeleted);
  CHECK(run.trace.at(0).ms("delivered_ms") == 30000);
  CHECK(run.trace.at(0)["redeliveries"] == "1");  // ReceiveCount 2
  CHECK(run.trace.at(0).ms("finished_ms") == 31000);
  CHECK(run.result.duplicate_executions == 1);  // the failed execution ran again
  // The failed execution left it invisible, not visible: the queue held it in flight, none ready.
  CHECK(run.queue("q").max_ready == 1);
}

TEST_CASE("vector 41: a visibility lapse while the client still holds the message is a duplicate execution") {
  // Consumer 0 (prefetch 2) takes A and B at 0; B waits in its buffer and starts at 20 s. Its
  // visibility lapses at 30 s while it executes there; consumer 1 (attached at 1 s) receives it
  // and both run it. Consumer 0's delete at 40 s carries a stale receipt handle: it succeeds but
  // deletes nothing. Consumer 1's deletes it at 50 s.
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 20000}],
    "consumers": [{"queue": "q", "prefetch": 2}, {"queue": "q", "start_ms": 1000}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace.at(0).ms("ended_ms") == 20000);
  const auto& b = run.trace.at(1);
  CHECK(b["outcome"] == "completed_on_time");
  CHECK(b["consumer"] == "1");
  CHECK(b.ms("delivered_ms") == 30000);
  CHECK(b.ms("ended_ms") == 50000);
  CHECK(b["redeliveries"] == "1");
  CHECK(run.result.duplicate_executions == 1);
  CHECK(run.outcome(Outcome::CompletedOnTime) == 2);
  CHECK(run.result.generated == 2);  // the duplicate is no job of its own
  // Alone, with prefetch 1, the consumer has no room for the returned message (its stale copy
  // holds it); nobody receives it again, so its receipt handle is still the latest and its delete
  // at 40 s removes the message: one execution, no duplicate.
  const char* alone = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 40000}],
    "consumers": [{"queue": "q", "prefetch": 1}]
  })";
  auto one = run_scenario(alone);
  CHECK(one.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(one.trace.at(0).ms("ended_ms") == 40000);
  CHECK(one.trace.at(0)["redeliveries"] == "0");
  CHECK(one.result.duplicate_executions == 0);
  CHECK(one.queue("q").max_ready == 1);  // it was visible from 30 s to 40 s
}

TEST_CASE("vector 41: time in the client buffer counts - a buffered message past its visibility is received again") {
  // A buffered client (prefetch 2, one slot): B waits in the buffer from 0 and starts at 18 s; its
  // visibility lapses at 30 s while it executes, and the same client, which has room again, gets
  // it back into its buffer at once: B runs twice (18-36 s, then 36-54 s).
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 18000}],
    "consumers": [{"queue": "q", "prefetch": 2}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace.at(0).ms("ended_ms") == 18000);
  const auto& b = run.trace.at(1);
  CHECK(b.ms("delivered_ms") == 30000);
  CHECK(b.ms("started_ms") == 36000);
  CHECK(b.ms("ended_ms") == 54000);
  CHECK(b["redeliveries"] == "1");
  CHECK(run.result.duplicate_executions == 1);
  // With a visibility of 45 s it is deleted at 36 s, in time.
  auto longer = run_scenario(text, {"broker.queues.q.visibility_timeout_ms=45000"});
  CHECK(longer.trace.at(1).ms("ended_ms") == 36000);
  CHECK(longer.result.duplicate_executions == 0);
}

TEST_CASE("vector 42: redrive - max_receive_count 3, the 4th receive moves the message to the dead-letter queue") {
  const std::vector<std::string> redrive = {"stop.time_ms=200000", R"(broker.queues={"q": {"visibility_timeout_ms": 30000,
      "dead_letter_to": "dlq", "max_receive_count": 3}, "dlq": {}})"};
  auto run = run_scenario(kNeverDeleted, redrive);
  const auto& a = run.trace.at(0);
  CHECK(a["outcome"] == "dead_lettered");
  CHECK(a["redeliveries"] == "2");         // received at 0, 30 s and 60 s: 3 receives
  CHECK(a.ms("delivered_ms") == 60000);
  CHECK(a.ms("ended_ms") == 90000);        // the 4th receive attempt
  CHECK(a["queue"] == "dlq");
  CHECK(run.queue("q").dl(DeathReason::MaxReceiveCount) == 1);
  CHECK(run.queue("dlq").published == 1);
  CHECK(run.json()["queues"]["q"]["dead_lettered_by_reason"]["max_receive_count"] == 1);
  CHECK(run.result.duplicate_executions == 2);
  // A consumer of the dead-letter queue receives it there (the trace counts redeliveries across
  // queues: the first receive in the dead-letter queue is not one).
  auto read = run_scenario(kNeverDeleted, {redrive[0], redrive[1],
      R"(consumers=[{"queue": "q", "prefetch": 1, "failure_probability": 1}, {"queue": "dlq"}])"});
  CHECK(read.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(read.trace.at(0).ms("delivered_ms") == 90000);
  CHECK(read.trace.at(0)["redeliveries"] == "2");
  CHECK(read.trace.at(0).ms("ended_ms") == 91000);
}

TEST_CASE("vector 43: retention across the dead-letter queue (standard) counts from the original enqueue") {
  // One day in the source (receives at 0 and 12 h, redriven at the 3rd attempt, at 24 h), then
  // the dead-letter queue with 4 days' retention deletes it 3 days later, at 4 days.
  const char* text = R"({
    "stop": {"time_ms": 400000000},
    "broker": {"kind": "amazon-sqs", "queues": {
      "q": {"visibility_timeout_ms": 43200000, "retention_ms": 345600000, "dead_letter_to": "dlq", "max_receive_count": 2},
      "dlq": {"retention_ms": 345600000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 1, "failure_probability": 1}]
  })";
  // The job is decided once, dead-lettered by the redrive at 24 h; the deletion in the dead-letter
  // queue nobody reads is that queue's message figure (docs/outcomes.md, issue 43): its expired
  // count, and its ready level until 4 days.
  auto run = run_scenario(text, {"observe={\"every_ms\": 1000000}"});
  CHECK(run.queue("q").dl(DeathReason::MaxReceiveCount) == 1);
  CHECK(run.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(run.trace.at(0).ms("ended_ms") == 86400000);
  CHECK(run.queue("dlq").expired == 1);
  CHECK(run.series.at(345).at("dlq.ready") == 1);  // at 345,000,000 ms
  CHECK(run.series.at(346).at("dlq.ready") == 0);  // deleted at 345,600,000 ms
  // A dead-letter retention of 1 day is already over when the message arrives (at 24 h): deleted
  // at once.
  auto short_dlq = run_scenario(text, {"broker.queues.dlq.retention_ms=86400000", "observe={\"every_ms\": 1000000}"});
  CHECK(short_dlq.trace.at(0)["outcome"] == "dead_lettered");
  CHECK(short_dlq.queue("dlq").expired == 1);
  CHECK(short_dlq.series.at(87).at("dlq.ready") == 0);
  // FIFO queues (which reset the timestamp on redrive) are not simulated.
}

TEST_CASE("vector 44: delay - a queue delay of 45 s hides a new message for 45 s, as does a producer's publish delay") {
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"delay_ms": 45000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
    "consumers": [{"queue": "q"}],
    "observe": {"every_ms": 1000}
  })";
  auto run = run_scenario(text);
  CHECK(run.trace.at(0).ms("published_ms") == 0);
  CHECK(run.trace.at(0).ms("delivered_ms") == 45000);
  CHECK(run.series.at(44).at("q.ready") == 0);  // delayed messages are not visible
  // A per-message timer stands as the producer's publish_delay_ms (docs/scenario.md).
  auto timer = run_scenario(text, {"broker.queues.q.delay_ms=0", "producers.0.publish_delay_ms=45000"});
  CHECK(timer.trace.at(0).ms("delivered_ms") == 45000);
  // Retention runs during the delay: a 60 s retention and a 15 min delay delete it unseen.
  auto deleted = run_scenario(text, {"broker.queues.q.delay_ms=900000", "broker.queues.q.retention_ms=60000",
                                     "stop.time_ms=1000000"});
  CHECK(deleted.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(deleted.trace.at(0).ms("ended_ms") == 60000);
}

TEST_CASE("amazon-sqs retention deletes a stored message retention_ms after its enqueue - expired_in_queue") {
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"retention_ms": 60000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 10000]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "start_ms": 65000}]
  })";
  auto run = run_scenario(text);
  CHECK(run.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(run.trace.at(0).ms("ended_ms") == 60000);
  CHECK(run.trace.at(1)["outcome"] == "completed_on_time");
  CHECK(run.trace.at(1).ms("delivered_ms") == 65000);
  // An in-flight message past its retention: the client's delete still wins...
  const char* held = R"({
    "stop": {"time_ms": 200000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"retention_ms": 60000, "visibility_timeout_ms": 90000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 80000}],
    "consumers": [{"queue": "q"}]
  })";
  auto wins = run_scenario(held);
  CHECK(wins.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(wins.trace.at(0).ms("ended_ms") == 80000);
  // ... and a failed one is deleted when its visibility lapses, instead of coming back.
  auto lapsed = run_scenario(held, {"consumers.0.failure_probability=1"});
  CHECK(lapsed.trace.at(0)["outcome"] == "expired_in_queue");
  CHECK(lapsed.trace.at(0).ms("ended_ms") == 90000);
}

TEST_CASE("amazon-sqs receives - prefetch 0 is a receive per free slot and a batch shares one response") {
  const char* text = R"({
    "stop": {"time_ms": 10000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "slots": 2, "prefetch": 0}]
  })";
  auto run = run_scenario(text);
  const double expected[] = {0, 0, 100, 100, 200};
  for (int i = 0; i < 5; ++i) CHECK(run.trace.at(i).ms("delivered_ms") == expected[i]);
  CHECK(run.result.wait(Wait::Local).max() == 0);  // no buffer
  // Four messages waiting when a client with room for 10 attaches, batch_size 2 and a random
  // delivery latency: messages 0 and 1 arrive in one response, 2 and 3 in another.
  const char* batch = R"({
    "stop": {"time_ms": 10000},
    "broker": {"kind": "amazon-sqs", "delivery_latency_ms": {"uniform": {"min": 1, "max": 100}}, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "service_ms": 1}],
    "consumers": [{"queue": "q", "prefetch": 10, "batch_size": 2, "start_ms": 1000}]
  })";
  auto b = run_scenario(batch);
  CHECK(b.trace.at(0).ms("received_ms") == b.trace.at(1).ms("received_ms"));
  CHECK(b.trace.at(2).ms("received_ms") == b.trace.at(3).ms("received_ms"));
  CHECK(b.trace.at(0).ms("received_ms") != b.trace.at(2).ms("received_ms"));
  auto single = run_scenario(batch, {"consumers.0.batch_size=1"});
  CHECK(single.trace.at(0).ms("received_ms") != single.trace.at(1).ms("received_ms"));
}

TEST_CASE("amazon-sqs a consumer crash leaves its in-flight messages invisible until their visibility lapses") {
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000}],
    "consumers": [{"queue": "q"}],
    "faults": [{"at_ms": 500, "consumer": 0, "crash": true, "restart_after_ms": 100}]
  })";
  auto run = run_scenario(text);
  const auto& a = run.trace.at(0);
  CHECK(a.ms("delivered_ms") == 30000);  // not at the restart (600 ms)
  CHECK(a["redeliveries"] == "1");
  CHECK(a.ms("ended_ms") == 31000);
  CHECK(a["outcome"] == "completed_on_time");
}

TEST_CASE("amazon-sqs on_expired requeue is ChangeMessageVisibility 0 - visible at once, and counts toward redrive") {
  // The consumer is stalled until 100 ms and finds the job past its 50 ms deadline; each
  // visibility change takes 10 ms to arrive; the 4th receive attempt (at 130) redrives it.
  const char* text = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "amazon-sqs", "ack_latency_ms": 10,
               "queues": {"q": {"dead_letter_to": "dlq", "max_receive_count": 3}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "deadline_ms": 50, "service_ms": 1}],
    "consumers": [{"queue": "q", "on_expired": "requeue"}],
    "faults": [{"at_ms": 0, "consumer": 0, "stall_ms": 100}]
  })";
  auto run = run_scenario(text);
  const auto& a = run.trace.at(0);
  CHECK(a["outcome"] == "dead_lettered");
  CHECK(a.ms("delivered_ms") == 120);
  CHECK(a.ms("ended_ms") == 130);
  CHECK(run.queue("q").dl(DeathReason::MaxReceiveCount) == 1);
  // on_expired ack deletes it: expired_before_start, once.
  auto ack = run_scenario(text, {"consumers.0.on_expired=ack"});
  CHECK(ack.trace.at(0)["outcome"] == "expired_before_start");
  CHECK(ack.trace.at(0).ms("ended_ms") == 100);
}

TEST_CASE("amazon-sqs broker_down - sends are refused and receives wait, the visibility clock keeps running") {
  const char* text = R"({
    "stop": {"time_ms": 100000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 5000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1500, 3000]}, "service_ms": 2000}],
    "consumers": [{"queue": "q", "count": 2}],
    "faults": [{"at_ms": 1000, "broker_down_ms": 1000}]
  })";
  auto run = run_scenario(text);
  // The delete of job 0 at 2000 arrives as the outage ends: brokersim's BrokerUp runs first.
  CHECK(run.trace.at(0)["outcome"] == "completed_on_time");
  CHECK(run.trace.at(1)["outcome"] == "rejected_at_publish");
  CHECK(run.trace.at(2).ms("delivered_ms") == 3000);
  // A delete during the outage fails: the message comes back when its visibility lapses (5 s).
  auto failed = run_scenario(text, {R"(faults=[{"at_ms": 1000, "broker_down_ms": 1500}])"});
  CHECK(failed.trace.at(0).ms("delivered_ms") == 5000);
  CHECK(failed.trace.at(0)["redeliveries"] == "1");
  CHECK(failed.result.duplicate_executions == 1);
}

TEST_CASE("amazon-sqs keys are validated - SQS ranges, the redrive pair, and the common keys it has no counterpart for") {
  const char* ok = R"({
    "stop": {"time_ms": 1000},
    "broker": {"kind": "amazon-sqs", "queues": {"q": {"dead_letter_to": "dlq", "max_receive_count": 5}, "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}],
    "consumers": [{"queue": "q"}]
  })";
  CHECK(load_error(ok) == "(no error)");
  const std::pair<std::string, std::string> cases[] = {
      {"broker.queues.q.visibility_timeout_ms=43200001",
       "broker.queues.q.visibility_timeout_ms: expected a duration from 0 to 43200000 ms (12 h), got 43200001"},
      {"broker.queues.q.retention_ms=59999",
       "broker.queues.q.retention_ms: expected a duration from 60000 to 1209600000 ms (60 s to 14 days), got 59999"},
      {"broker.queues.q.delay_ms=-1", "broker.queues.q.delay_ms: expected a duration from 0 to 900000 ms (15 min), got -1"},
      {"broker.queues.q.max_receive_count=0",
       "broker.queues.q.max_receive_count: expected an integer from 1 to 1000 or null, got 0"},
      {"broker.queues.q.max_receive_count=null",
       "broker.queues.q.max_receive_count: expected an integer from 1 to 1000 with dead_letter_to (amazon-sqs redrives "
       "after max_receive_count receives), got null"},
      {"broker.queues.q.dead_letter_to=null",
       "broker.queues.q.dead_letter_to: expected the name of the dead-letter queue with max_receive_count, got null"},
      {"broker.queues.q.dead_letter_to=q",
       "broker.queues.q.dead_letter_to: expected another queue (a dead-letter queue cannot be its own source), got \"q\""},
      {"consumers.0.batch_size=11", "consumers.0.batch_size: expected an integer between 1 and 10, got 11"},
      {"consumers.0.on_expired=reject",
       "consumers.0.on_expired: expected \"ack\" or \"requeue\" on broker kind \"amazon-sqs\" (SQS has no reject: a message "
       "reaches the dead-letter queue only by redrive, after max_receive_count receives), got \"reject\""},
      {"consumers.0.priority=1", "consumers.0.priority: expected 0 on broker kind \"amazon-sqs\" (SQS has no consumer priorities), got 1"},
      {"producers.0.expiration_ms=100",
       "producers.0.expiration_ms: expected null on broker kind \"amazon-sqs\" (SQS has no per-message TTL; use "
       "broker.queues.NAME.retention_ms), got 100"},
      {"broker.queues.q.message_ttl_ms=100",
       "broker.queues.q.message_ttl_ms: this key belongs to broker kinds \"rabbitmq-classic\", \"rabbitmq-quorum\"; broker "
       "kind \"amazon-sqs\" has no such key"},
      {"broker.version=4.2",
       "broker.version: this key belongs to broker kinds \"rabbitmq-classic\", \"rabbitmq-quorum\"; broker kind "
       "\"amazon-sqs\" has no such key"},
      {"broker.queues.q.lock_duration_ms=1000",
       "broker.queues.q.lock_duration_ms: this key belongs to broker kind \"azure-servicebus\"; broker kind \"amazon-sqs\" "
       "has no such key"},
  };
  for (const auto& [set_, error_] : cases) {
    const auto& set = set_;  // not the binding: clang 14 cannot capture one in a check's lambda
    const auto& error = error_;
    CAPTURE(set);
    CHECK(load_error(ok, {set}) == error);
  }
  CHECK(load_error(ok, {"consumers.0.batch_size=10", "broker.queues.q.visibility_timeout_ms=0"}) == "(no error)");
}

TEST_CASE("amazon-sqs random scenarios keep every job in exactly one outcome") {
  // Short visibility timeouts, failures, crashes, outages, redrive and retention together: the
  // run's own end check (outcomes add up to the jobs generated) and the ghosts' bookkeeping.
  for (int seed = 1; seed <= 24; ++seed) {
    CAPTURE(seed);
    const std::string text = R"({
      "seed": )" + std::to_string(seed) + R"(,
      "stop": {"jobs": 400},
      "broker": {"kind": "amazon-sqs", "delivery_latency_ms": {"exp": {"mean": 5}}, "ack_latency_ms": 2,
        "queues": {"q": {"visibility_timeout_ms": )" + std::to_string(50 * (seed % 5) + 20) + R"(, "retention_ms": 60000,
                         "delay_ms": )" + std::to_string(seed % 3 * 10) + R"(, "dead_letter_to": "dlq", "max_receive_count": )" +
                           std::to_string(seed % 4 + 1) + R"(},
                   "dlq": {"retention_ms": 60000}}},
      "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 200}}, "deadline_ms": {"exp": {"mean": 300}},
                     "service_ms": {"exp": {"mean": 40}}}],
      "consumers": [{"queue": "q", "count": 3, "prefetch": )" + std::to_string(seed % 6) + R"(, "slots": 2,
                     "batch_size": )" + std::to_string(seed % 10 + 1) + R"(, "failure_probability": 0.2,
                     "on_expired": ")" + (seed % 2 ? "ack" : "requeue") + R"("},
                    {"queue": "dlq", "start_ms": 1000}],
      "faults": [{"at_ms": 300, "consumer": 1, "crash": true, "restart_after_ms": 200},
                 {"at_ms": 700, "broker_down_ms": 150}]
    })";
    auto run = run_scenario(text);
    std::uint64_t sum = 0;
    for (std::uint64_t n : run.result.outcomes) sum += n;
    CHECK(run.result.generated == 400);
    CHECK(sum == 400);
    CHECK(run.trace.size() == 400);
    CHECK(run.result.stop_reason == brokersim::StopReason::Jobs);
  }
}
