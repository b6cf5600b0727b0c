// Celery's task options and worker rules as the real framework applies them (docs/framework-celery.md):
// a task's `expires` is also its message's TTL on RabbitMQ, checked again by the worker at receipt
// and before start; the soft time limit fails an uncaught task; a killed pool process loses its
// task unless late acks and task_reject_on_worker_lost requeue it. Exact small runs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

const brokersim::test::TraceRow& celery_job(const brokersim::test::Run& run, int id) {
  for (const auto& row : run.trace)
    if (row["job"] == std::to_string(id)) return row;
  throw std::runtime_error("no job " + std::to_string(id) + " in the trace");
}

// Four tasks sent at 0 with expires 1.05 s, 900 ms each, to one worker of one process with
// prefetch 2 and late acks; deliveries take 100 ms, acks nothing.
std::string celery_expiring(const std::string& kind, const std::string& producer_framework) {
  return R"({
  "stop": {"time_ms": 10000},
  "broker": {"kind": ")" + kind + R"(", "delivery_latency_ms": 100, "queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "service_ms": 900, "framework": )" + producer_framework + R"(}],
  "consumers": [{"queue": "q", "framework": {"name": "celery", "worker_concurrency": 1, "worker_prefetch_multiplier": 2,
                                             "task_acks_late": true}}]
})";
}

// One 3 s task to one worker of one process.
std::string celery_long_task(const std::string& settings) {
  return R"({
  "stop": {"time_ms": 10000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 3000}],
  "consumers": [{"queue": "q", "framework": {"name": "celery", "worker_concurrency": 1)" + settings + R"(}}]
})";
}

// Three 1 s tasks at 0 to one worker of two processes (prefetch 2); the pool process running the
// first is killed at 500 ms.
std::string celery_killed(const std::string& settings) {
  return R"({
  "stop": {"time_ms": 10000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 1000}],
  "consumers": [{"queue": "q", "framework": {"name": "celery", "worker_concurrency": 2, "worker_prefetch_multiplier": 1)" +
         settings + R"(}}],
  "faults": [{"at_ms": 500, "consumer": 0, "kill_process": true}]
})";
}

}  // namespace

TEST_CASE("celery expires: RabbitMQ drops the expired task at the queue head, the worker drops one stale at receipt") {
  const auto run = run_scenario(celery_expiring("rabbitmq-classic", R"({"name": "celery", "expires": 1.05})"));
  REQUIRE(run.trace.size() == 4);
  // Tasks 0 and 1 are sent at once (prefetch 2); 1 waits for the process and starts at 1000 ms,
  // before it expires at 1050.
  CHECK(celery_job(run, 0)["outcome"] == "completed_on_time");
  CHECK(celery_job(run, 1).ms("started_ms") == 1000);
  CHECK(celery_job(run, 1)["outcome"] == "completed_late");
  // Task 2 is sent as task 0's ack frees the window (1000 ms), before it expires, and received at
  // 1100, after: the worker drops it there (strategy.py), not when the process is free at 1900.
  CHECK(celery_job(run, 2).ms("delivered_ms") == 1000);
  CHECK(celery_job(run, 2)["outcome"] == "expired_in_transit");
  CHECK(celery_job(run, 2).ms("ended_ms") == 1100);
  // Task 3 is at the queue's head when its message TTL ends: RabbitMQ drops it; no worker saw it.
  CHECK(celery_job(run, 3)["outcome"] == "expired_in_queue");
  CHECK(celery_job(run, 3).ms("ended_ms") == 1050);
  CHECK(celery_job(run, 3).empty("delivered_ms"));
  const auto json = run.json();
  CHECK(json["producer_frameworks"][0]["producer"] == 0);
  CHECK(json["producer_frameworks"][0]["mapping"][1]["key"] == "expiration_ms");
  CHECK(json["producer_frameworks"][0]["mapping"][1]["key_value"] == "remaining-budget");

  // The same options by hand, and the worker's checks by hand.
  const std::string hand = R"({
  "stop": {"time_ms": 10000},
  "broker": {"delivery_latency_ms": 100, "queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 0]}, "service_ms": 900, "deadline_ms": 1050,
                 "expiration_ms": "remaining-budget"}],
  "consumers": [{"queue": "q", "slots": 1, "prefetch": 2, "admission": "check-at-receive-and-start"}]
})";
  CHECK(run_scenario(hand).result.outcomes == run.result.outcomes);

  // On SQS kombu sends no message expiration: the task is not dropped in the queue; the worker
  // drops it at receipt.
  const auto sqs = run_scenario(celery_expiring("amazon-sqs", R"({"name": "celery", "expires": 1.05})"));
  CHECK(sqs.outcome(Outcome::ExpiredInQueue) == 0);
  CHECK(sqs.outcome(Outcome::CompletedOnTime) + sqs.outcome(Outcome::CompletedLate) == 2);
  CHECK(sqs.trace.size() == 4);
}

TEST_CASE("celery producer options: each refused value names its key") {
  const std::string rabbit = "rabbitmq-classic";
  CHECK(load_error(celery_expiring(rabbit, R"({"name": "celery", "expires": 0})")) ==
        "producers.0.framework.expires: expected a number of seconds from 0.001 to 1e+09, got 0");
  CHECK(load_error(celery_expiring(rabbit, R"({"name": "celery", "expire": 5})")) ==
        "producers.0.framework.expire: unknown key (did you mean \"expires\"?)");
  CHECK(load_error(celery_expiring(rabbit, R"({"name": "masstransit"})")) ==
        "producers.0.framework.name: expected one of \"celery\", got \"masstransit\"");
  CHECK(load_error(celery_expiring(rabbit, R"("celery")")) ==
        "producers.0.framework: expected an object {\"name\": FRAMEWORK, its options ...}, got \"celery\"");
  CHECK(load_error(celery_expiring("azure-servicebus", R"({"name": "celery", "expires": 5})")).find(
            "producers.0.framework.name: \"celery\" reads from broker kind") == 0);
  // A key the options set may not be given beside them.
  const std::string twice = R"({
  "stop": {"time_ms": 1000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1, "deadline_ms": 10,
                 "framework": {"name": "celery", "expires": 5}}]
})";
  CHECK(load_error(twice) ==
        "producers.0.deadline_ms: set by producers.0.framework.name \"celery\" from expires; give it there (or leave out "
        "framework)");
}

TEST_CASE("celery soft time limit: an uncaught SoftTimeLimitExceeded fails the task at the soft limit, a caught one runs on to the hard limit") {
  for (const std::string acks : {"", R"(, "task_acks_late": true)"}) {
    INFO(acks);
    const auto soft = run_scenario(celery_long_task(acks + R"(, "task_soft_time_limit": 1)"));
    REQUIRE(soft.trace.size() == 1);
    CHECK(soft.trace[0]["outcome"] == "timed_out");
    CHECK(soft.trace[0].ms("ended_ms") == 1000);
    CHECK(soft.trace[0]["redeliveries"] == "0");
    const auto both = run_scenario(celery_long_task(acks + R"(, "task_soft_time_limit": 1, "task_time_limit": 2)"));
    CHECK(both.trace[0]["outcome"] == "timed_out");
    CHECK(both.trace[0].ms("ended_ms") == 1000);
    const auto caught = run_scenario(
        celery_long_task(acks + R"(, "task_soft_time_limit": 1, "task_time_limit": 2, "task_catches_soft_time_limit": true)"));
    CHECK(caught.trace[0]["outcome"] == "timed_out");
    CHECK(caught.trace[0].ms("ended_ms") == 2000);
    CHECK(caught.trace[0]["redeliveries"] == "0");
    const auto no_hard = run_scenario(celery_long_task(acks + R"(, "task_soft_time_limit": 1, "task_catches_soft_time_limit": true)"));
    CHECK(no_hard.trace[0]["outcome"] == "completed_on_time");
    CHECK(no_hard.trace[0].ms("ended_ms") == 3000);
    // A hard limit below the soft one comes first.
    const auto hard_first = run_scenario(celery_long_task(acks + R"(, "task_soft_time_limit": 2.5, "task_time_limit": 2)"));
    CHECK(hard_first.trace[0].ms("ended_ms") == 2000);
    CHECK(hard_first.result.duplicate_executions == 0);
  }
  CHECK(load_error(celery_long_task(R"(, "task_catches_soft_time_limit": 1)")) ==
        "consumers.0.framework.task_catches_soft_time_limit: expected true or false, got 1");
  CHECK(load_error(celery_long_task(R"(, "task_soft_time_limit": -1)")) ==
        "consumers.0.framework.task_soft_time_limit: expected a number of seconds from 0.001 to 1e+09, got -1");
}

TEST_CASE("celery killed pool process: the task is lost with early acks or without task_reject_on_worker_lost, requeued with both") {
  // Early acks (the default): task 0 was acked as it started; task 2, buffered, takes the process.
  const auto early = run_scenario(celery_killed(""));
  REQUIRE(early.trace.size() == 3);
  CHECK(celery_job(early, 0)["outcome"] == "lost");
  CHECK(celery_job(early, 0).ms("ended_ms") == 500);
  CHECK(celery_job(early, 0)["redeliveries"] == "0");
  CHECK(celery_job(early, 2).ms("started_ms") == 500);
  CHECK(early.outcome(Outcome::Lost) == 1);
  CHECK(early.outcome(Outcome::CompletedOnTime) == 2);
  CHECK(early.result.duplicate_executions == 0);
  // task_reject_on_worker_lost without late acks changes nothing.
  CHECK(run_scenario(celery_killed(R"(, "task_reject_on_worker_lost": true)")).result.outcomes == early.result.outcomes);

  // Late acks: the worker acks the lost task (WorkerLostError); task 2 comes from the queue.
  const auto late = run_scenario(celery_killed(R"(, "task_acks_late": true)"));
  CHECK(celery_job(late, 0)["outcome"] == "lost");
  CHECK(celery_job(late, 0).ms("ended_ms") == 500);
  CHECK(celery_job(late, 2).ms("delivered_ms") == 500);
  CHECK(late.outcome(Outcome::Lost) == 1);
  CHECK(late.result.duplicate_executions == 0);

  // Late acks and task_reject_on_worker_lost: rejected with requeue, task 0 runs again at once
  // (back at the queue's head), task 2 when task 1 ends.
  const auto again = run_scenario(celery_killed(R"(, "task_acks_late": true, "task_reject_on_worker_lost": true)"));
  CHECK(celery_job(again, 0)["outcome"] == "completed_on_time");
  CHECK(celery_job(again, 0)["redeliveries"] == "1");
  CHECK(celery_job(again, 0).ms("started_ms") == 500);
  CHECK(celery_job(again, 0).ms("ended_ms") == 1500);
  CHECK(celery_job(again, 0)["executions"] == "2");
  CHECK(celery_job(again, 2).ms("started_ms") == 1000);
  CHECK(again.outcome(Outcome::CompletedOnTime) == 3);
  CHECK(again.result.duplicate_executions == 1);
  const auto json = again.json();
  CHECK(json["duplicate_executions_by_cause"]["worker_lost"] == 1);
  // The cause is reported only where a process can be killed.
  CHECK_FALSE(run_scenario(celery_long_task("")).json()["duplicate_executions_by_cause"].contains("worker_lost"));
}

TEST_CASE("kill_process faults: on a group that says what a lost process means, nothing when no execution runs") {
  // A group by hand: on_process_lost, the oldest execution.
  const std::string hand = R"({
  "stop": {"time_ms": 10000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 100]}, "service_ms": 1000}],
  "consumers": [{"queue": "q", "slots": 2, "on_process_lost": "requeue"}],
  "faults": [{"at_ms": 500, "consumer": 0, "kill_process": true}, {"at_ms": 5000, "consumer": 0, "kill_process": true}]
})";
  const auto run = run_scenario(hand);
  CHECK(celery_job(run, 0)["executions"] == "2");
  CHECK(celery_job(run, 0).ms("ended_ms") == 1500);
  CHECK(celery_job(run, 1)["executions"] == "1");
  CHECK(run.outcome(Outcome::CompletedOnTime) == 2);
  CHECK(run.result.duplicates_by_cause[static_cast<std::size_t>(brokersim::DuplicateCause::WorkerLost)] == 1);

  const std::string none = R"({
  "stop": {"time_ms": 1000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}],
  "consumers": [{"queue": "q", "count": 2}, {"queue": "q", "on_process_lost": "ack", "ack": "before-start"}],
  "faults": [{"at_ms": 5, "consumer": 1, "kill_process": true}]
})";
  CHECK(load_error(none) ==
        "faults.0.consumer: expected a consumer whose group runs each execution in a process of its own and says what a "
        "killed one means (consumers.0.on_process_lost, or framework \"celery\"), got consumer 1 of group 0, which has none");
  CHECK(load_error(none, {"faults.0.consumer=2"}) == "(no error)");
  CHECK(load_error(none, {"faults.0.consumer=2", "faults.0.kill_process=1"}) == "faults.0.kill_process: expected true, got 1");
  CHECK(load_error(none, {"consumers.1.on_process_lost=\"requeue\""}) ==
        "consumers.1.on_process_lost: expected \"ack\" with ack \"before-start\" (the message was settled before its "
        "execution started: nothing is left to requeue), got \"requeue\"");
  CHECK(load_error(none, {"consumers.1.on_process_lost=\"nack\""}) ==
        "consumers.1.on_process_lost: expected one of \"ack\", \"requeue\", got \"nack\"");
  CHECK(load_error(none, {"faults.0.crash=true"}) ==
        "faults.0: expected exactly one of stall_ms, crash, broker_down_ms, clock_step_ms, kill_process, got "
        "{\"at_ms\":5,\"consumer\":1,\"crash\":true,\"kill_process\":true}");
  // Set by the Celery mapping, not beside it.
  CHECK(load_error(R"({
  "stop": {"time_ms": 1000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}],
  "consumers": [{"queue": "q", "on_process_lost": "ack", "framework": {"name": "celery", "worker_concurrency": 1}}]
})") == "consumers.0.on_process_lost: set by consumers.0.framework.name \"celery\" from task_acks_late, "
        "task_reject_on_worker_lost; give it there (or leave out framework)");
}

namespace {

// A task with a 2 s countdown and three 1 s tasks, all sent at 0, to one worker of one process
// (prefetch 1, early acks).
std::string celery_countdown(const std::string& kind, const std::string& options = R"("countdown": 2)") {
  return R"({
  "stop": {"time_ms": 10000},
  "broker": {"kind": ")" + kind + R"(", "queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100, "framework": {"name": "celery", )" + options + R"(}},
                {"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 1000}],
  "consumers": [{"queue": "q", "framework": {"name": "celery", "worker_concurrency": 1, "worker_prefetch_multiplier": 1}}]
})";
}

}  // namespace

TEST_CASE("celery countdown: the worker holds the task until its ETA with its prefetch raised - on a quorum queue the task holds the window") {
  for (const std::string kind : {"rabbitmq-classic", "amazon-sqs"}) {
    INFO(kind);
    const auto run = run_scenario(celery_countdown(kind));
    REQUIRE(run.trace.size() == 4);
    // Delivered at once and held; its place in the window is given back, so task 1 comes too.
    CHECK(celery_job(run, 0).ms("delivered_ms") == 0);
    CHECK(celery_job(run, 1).ms("delivered_ms") == 0);
    CHECK(celery_job(run, 1).ms("started_ms") == 0);
    // Due at 2000 ms, it waits behind task 3, buffered since 1000, for the process.
    CHECK(celery_job(run, 3).ms("started_ms") == 2000);
    CHECK(celery_job(run, 0).ms("started_ms") == 3000);
    CHECK(run.outcome(Outcome::CompletedOnTime) == 4);
  }
  // Quorum queues: no global QoS to raise; the held task fills the window of 1 until its ETA.
  const auto quorum = run_scenario(celery_countdown("rabbitmq-quorum"));
  CHECK(celery_job(quorum, 0).ms("started_ms") == 2000);
  CHECK(celery_job(quorum, 1).ms("delivered_ms") == 2000);
  CHECK(celery_job(quorum, 3).ms("ended_ms") == 5100);
  // An expires shorter than the countdown: accepted at receipt, revoked when a process is free to
  // take it after its ETA (the check before the pool, 3000 ms); the TTL never applied, the task
  // left the queue at once.
  const auto expired = run_scenario(celery_countdown("rabbitmq-classic", R"("countdown": 2, "expires": 1)"));
  CHECK(celery_job(expired, 0)["outcome"] == "expired_before_start");
  CHECK(celery_job(expired, 0).ms("ended_ms") == 3000);
  // countdown 0 is no ETA.
  const auto none = run_scenario(celery_countdown("rabbitmq-classic", R"("countdown": 0)"));
  CHECK(celery_job(none, 0).ms("started_ms") == 0);
}

TEST_CASE("celery countdown and eta: refused values, and the consumer eta modes a queue type cannot have") {
  CHECK(load_error(celery_countdown("rabbitmq-classic", R"("eta": "2026-01-01T00:00:00")")) ==
        "producers.0.framework.eta: is a datetime, one moment for every task of the producer; give countdown, the same "
        "delay after each task's send (celery: not modelled by brokersim)");
  CHECK(load_error(celery_countdown("rabbitmq-classic", R"("countdown": -1)")) ==
        "producers.0.framework.countdown: expected a number of seconds from 0 to 1e+09, got -1");
  const std::string hand = R"({
  "stop": {"time_ms": 1000},
  "broker": {"kind": "rabbitmq-quorum", "queues": {"a": {}, "b": {}}},
  "producers": [{"queue": "a", "arrivals": {"at_ms": [0]}, "service_ms": 1, "countdown_ms": 100}],
  "consumers": [{"queue": "a", "prefetch": 1, "eta": "hold-outside-prefetch"}]
})";
  CHECK(load_error(hand) ==
        "consumers.0.eta: expected \"ignore\" or \"hold\" on a quorum queue (a basic.qos after the subscription changes no "
        "existing consumer's prefetch, and quorum queues refuse global QoS), got \"hold-outside-prefetch\"");
  CHECK(load_error(hand, {"broker.kind=\"rabbitmq-classic\"", "consumers.0.queue=[\"a\", \"b\"]"}) ==
        "consumers.0.eta: expected \"ignore\" or \"hold\" with prefetch_scope \"consumer\" (a basic.qos after the "
        "subscriptions changes no existing consumer's prefetch; global QoS does: prefetch_scope \"channel\"), got "
        "\"hold-outside-prefetch\"");
  CHECK(load_error(hand, {"broker.kind=\"rabbitmq-classic\"", "consumers.0.queue=[\"a\", \"b\"]",
                          "consumers.0.prefetch_scope=\"channel\""}) == "(no error)");
  CHECK(load_error(hand, {"broker.kind=\"azure-servicebus\""}) ==
        "consumers.0.eta: expected \"ignore\" or \"hold\" on azure-servicebus (a receiver has no prefetch count to raise), "
        "got \"hold-outside-prefetch\"");
  CHECK(load_error(hand, {"consumers.0.eta=\"later\""}) ==
        "consumers.0.eta: expected one of \"ignore\", \"hold\", \"hold-outside-prefetch\", got \"later\"");
  CHECK(load_error(hand, {"producers.0.countdown_ms=-5"}).find("producers.0.countdown_ms: expected") == 0);
  // A consumer that ignores ETAs starts the job at once.
  const auto ignoring = run_scenario(hand, {"consumers.0.eta=\"ignore\""});
  CHECK(ignoring.trace[0].ms("started_ms") == 0);
  const auto holding = run_scenario(hand, {"consumers.0.eta=\"hold\""});
  CHECK(holding.trace[0].ms("started_ms") == 100);
}

TEST_CASE("analytic names a held ETA among the assumptions a scenario fails") {
  brokersim::test::ScratchDir dir("celery-analytic");
  const std::string mmc = R"({
  "stop": {"time_ms": 1000},
  "broker": {"queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": {"exp": {"mean": 100}}, "countdown_ms": 50}],
  "consumers": [{"queue": "q", "prefetch": 1, "eta": "hold"}]
})";
  const auto held = brokersim::test::run_cli({"analytic", dir.write("held.json", mmc)});
  CHECK(held.status == 4);
  CHECK(held.out.find("producers.0.countdown_ms is set and consumers.0.eta holds the job") != std::string::npos);
  // A consumer that ignores the ETA is the plain M/M/1.
  const auto ignored = brokersim::test::run_cli({"analytic", dir.write("ignored.json", mmc), "--set", "consumers.0.eta=\"ignore\""});
  CHECK(ignored.status == 0);
}
