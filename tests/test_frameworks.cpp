// consumers[].framework: each framework's settings, with its documented defaults, give the same
// run as the brokersim keys they map to (byte-identical run --json but for the mapping itself),
// the mapping is what docs/framework-NAME.md says, and a setting brokersim cannot honour is an error
// naming it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

// A loaded run with the group's consumer entry given as JSON text: Poisson arrivals near the
// fleet's capacity, a TTL, failures and a crash, so that prefetch, slots, the ack mode and the
// timeouts all leave their mark on the outcome.
std::string rabbitmq(const std::string& consumer, const std::string& kind = "rabbitmq-classic") {
  return R"({
  "seed": 7,
  "stop": {"time_ms": 60000},
  "broker": {"kind": ")" + kind + R"(", "delivery_latency_ms": 2, "ack_latency_ms": 1,
             "queues": {"q": {"message_ttl_ms": 3000}}},
  "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 95}}, "service_ms": {"exp": {"mean": 80}}}],
  "consumers": [)" + consumer + R"(],
  "faults": [{"at_ms": 20000, "consumer": 1, "crash": true, "restart_after_ms": 5000}]
})";
}

std::string sqs(const std::string& consumer) {
  return R"({
  "seed": 7,
  "stop": {"time_ms": 60000},
  "broker": {"kind": "amazon-sqs", "delivery_latency_ms": 15, "ack_latency_ms": 10,
             "queues": {"q": {"visibility_timeout_ms": 30000, "dead_letter_to": "dlq", "max_receive_count": 3},
                        "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 40}}, "service_ms": {"lognormal": {"mean": 400, "cv": 1.5}}}],
  "consumers": [)" + consumer + R"(],
  "faults": [{"at_ms": 20000, "consumer": 1, "crash": true, "restart_after_ms": 5000}]
})";
}

std::string servicebus(const std::string& consumer) {
  return R"({
  "seed": 7,
  "stop": {"time_ms": 600000},
  "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 10, "ack_latency_ms": 5,
             "queues": {"q": {"lock_duration_ms": 30000, "max_delivery_count": 4, "dead_letter_to": "dlq"}, "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"poisson": {"rate_per_s": 2}}, "service_ms": {"lognormal": {"mean": 20000, "cv": 2}}}],
  "consumers": [)" + consumer + R"(],
  "faults": [{"at_ms": 200000, "consumer": 1, "crash": true, "restart_after_ms": 5000}]
})";
}

// The framework entry and the hand-written keys give the same run; the mapping and the
// platform's bill (`billing`, a Functions group's) are the framework entry's only traces in the
// output.
void same_run(const std::string& with_framework, const std::string& by_hand) {
  const auto a = run_scenario(with_framework);
  const auto b = run_scenario(by_hand);
  auto ja = a.json();
  const auto jb = b.json();
  REQUIRE(ja.contains("frameworks"));
  CHECK_FALSE(jb.contains("frameworks"));
  CHECK_FALSE(jb.contains("billing"));
  ja.erase("frameworks");
  ja.erase("billing");
  CHECK(ja.dump() == jb.dump());
  // Not a run that left every setting without effect: work was done and some of it went wrong.
  CHECK(a.result.generated > 100);
}

// The row of the mapping that set `key`.
nlohmann::ordered_json row_for(const brokersim::test::Run& run, const std::string& key) {
  const auto out = run.json();  // held: a range-for over a part of a temporary would dangle
  for (const auto& row : out["frameworks"][0]["mapping"])
    if (row["key"] == key) return row;
  return {};
}

}  // namespace

TEST_CASE("framework celery: worker_concurrency x worker_prefetch_multiplier, early acks by default, on RabbitMQ") {
  const std::string fw = R"({"queue": "q", "count": 3, "framework": {"name": "celery", "worker_concurrency": 4}})";
  const std::string hand = R"({"queue": "q", "count": 3, "slots": 4, "prefetch": 16, "ack": "before-start"})";
  same_run(rabbitmq(fw), rabbitmq(hand));
  const auto run = run_scenario(rabbitmq(fw));
  CHECK(row_for(run, "prefetch")["value"] == "4, 4 (default)");
  CHECK(row_for(run, "prefetch")["key_value"] == "16");
  CHECK(row_for(run, "ack")["value"] == "false (default)");
  CHECK(row_for(run, "ack")["key_value"] == "before-start");

  // Late acks, multiplier 1, a hard time limit; on a quorum queue.
  const std::string late = R"({"queue": "q", "count": 3, "framework": {"name": "celery", "worker_concurrency": 4,
      "worker_prefetch_multiplier": 1, "task_acks_late": true, "task_time_limit": 0.2}})";
  const std::string late_hand = R"({"queue": "q", "count": 3, "slots": 4, "prefetch": 4, "ack": "after-finish", "exec_timeout": 200})";
  same_run(rabbitmq(late, "rabbitmq-quorum"), rabbitmq(late_hand, "rabbitmq-quorum"));
  CHECK(run_scenario(rabbitmq(late)).result.outcomes[static_cast<std::size_t>(brokersim::Outcome::TimedOut)] > 0);

  // host_cpus stands in for Celery's CPU-count default; multiplier 0 is no prefetch limit.
  const std::string cpus = R"({"queue": "q", "count": 3, "framework": {"name": "celery", "host_cpus": 2, "worker_prefetch_multiplier": 0}})";
  same_run(rabbitmq(cpus), rabbitmq(R"({"queue": "q", "count": 3, "slots": 2, "prefetch": 0, "ack": "before-start"})"));
  CHECK(row_for(run_scenario(rabbitmq(cpus)), "slots")["value"] == "2 (default: host_cpus)");
}

TEST_CASE("framework celery on amazon-sqs: batch of min(prefetch room, 10), the transport's visibility timeout, failed tasks deleted") {
  const std::string fw = R"({"queue": "q", "count": 3, "failure_probability": 0.05, "framework": {"name": "celery",
      "worker_concurrency": 2, "task_acks_late": true, "broker_transport_options": {"visibility_timeout": 20}}})";
  const std::string hand = R"({"queue": "q", "count": 3, "slots": 2, "prefetch": 8, "ack": "after-finish",
      "on_failure": "delete", "batch_size": 10, "visibility_timeout_ms": 20000, "failure_probability": 0.05})";
  same_run(sqs(fw), sqs(hand));
  const std::string defaults = R"({"queue": "q", "count": 3, "framework": {"name": "celery", "worker_concurrency": 4, "task_acks_late": true}})";
  same_run(sqs(defaults), sqs(R"({"queue": "q", "count": 3, "slots": 4, "prefetch": 16, "ack": "after-finish",
      "on_failure": "delete", "batch_size": 10, "visibility_timeout_ms": 1800000})"));
  // Celery's default on SQS: early acks, a DeleteMessage as the task starts.
  const std::string early = R"({"queue": "q", "count": 3, "framework": {"name": "celery", "worker_concurrency": 2}})";
  same_run(sqs(early), sqs(R"({"queue": "q", "count": 3, "slots": 2, "prefetch": 8, "ack": "before-start",
      "batch_size": 10, "visibility_timeout_ms": 1800000})"));
  // The crash of consumer 1 at 20 s loses the tasks it was executing: deleted at their start.
  CHECK(run_scenario(sqs(early)).result.outcomes[static_cast<std::size_t>(brokersim::Outcome::Lost)] > 0);
  // Multiplier 0 (no limit): brokersim's largest prefetch, as 0 is "no buffer" on SQS.
  const std::string unlimited = R"({"queue": "q", "count": 3, "framework": {"name": "celery", "worker_concurrency": 4,
      "worker_prefetch_multiplier": 0, "task_acks_late": true}})";
  same_run(sqs(unlimited), sqs(R"({"queue": "q", "count": 3, "slots": 4, "prefetch": 65535, "ack": "after-finish",
      "on_failure": "delete", "batch_size": 10, "visibility_timeout_ms": 1800000})"));
}

TEST_CASE("framework errors: unknown framework or setting, a key given twice, a broker the framework does not read, settings not honoured") {
  const std::string q = R"({"queue": "q", "framework": )";
  CHECK(load_error(rabbitmq(q + R"({"name": "kafka-streams"}})")) ==
        "consumers.0.framework.name: expected one of \"celery\", \"masstransit\", \"nservicebus\", \"spring-amqp\", "
        "\"azure-functions\", \"aws-lambda\", got \"kafka-streams\"");
  CHECK(load_error(rabbitmq(q + R"({"name": "celery", "worker_concurency": 4}})")) ==
        "consumers.0.framework.worker_concurency: unknown key (did you mean \"worker_concurrency\"?)");
  CHECK(load_error(rabbitmq(R"({"queue": "q", "prefetch": 10, "framework": {"name": "celery", "worker_concurrency": 4}})")) ==
        "consumers.0.prefetch: set by consumers.0.framework.name \"celery\" from worker_concurrency, "
        "worker_prefetch_multiplier; give it there (or leave out framework)");
  CHECK(load_error(rabbitmq(q + R"({"name": "celery"}})")) ==
        "consumers.0.framework.worker_concurrency: expected worker_concurrency (Celery's default is the number of CPU "
        "cores of the worker's host: give it, or give host_cpus), got nothing");
  CHECK(load_error(rabbitmq(q + R"({"name": "celery", "worker_concurrency": 4, "task_acks_late": true,
      "task_acks_on_failure_or_timeout": false}})")) ==
        "consumers.0.framework.task_acks_on_failure_or_timeout: false (a failed task rejected to the dead-letter "
        "exchange) cannot be honoured: give true (celery: not modelled by brokersim)");
  CHECK(load_error(rabbitmq(q + R"({"name": "celery", "worker_concurrency": 4, "broker_transport_options": {"visibility_timeout": 60}}})")) ==
        "consumers.0.framework.broker_transport_options.visibility_timeout: is the SQS (and Redis) transport's; "
        "RabbitMQ has none (celery: not modelled by brokersim)");
  CHECK(load_error(servicebus(q + R"({"name": "celery", "worker_concurrency": 4}})")) ==
        "consumers.0.framework.name: \"celery\" reads from broker kind \"rabbitmq-classic\", \"rabbitmq-quorum\", "
        "\"amazon-sqs\", not \"azure-servicebus\"");
  CHECK(load_error(rabbitmq(q + R"({"name": "celery", "worker_concurrency": 4000, "worker_prefetch_multiplier": 20}})")) ==
        "consumers.0.framework.worker_prefetch_multiplier: worker_concurrency x worker_prefetch_multiplier = 80000 is "
        "above AMQP's 16-bit prefetch count (65535)");
  CHECK(load_error(rabbitmq(q + R"("celery"})")) ==
        "consumers.0.framework: expected an object {\"name\": FRAMEWORK, its settings ...}, got \"celery\"");
  // null: no framework, the group as written.
  CHECK(load_error(rabbitmq(R"({"queue": "q", "count": 2, "framework": null})")) == "(no error)");
}

TEST_CASE("run prints the framework mapping it used, in the summary and in --json") {
  brokersim::test::ScratchDir dir("frameworks");
  const std::string file = dir.write("celery.json", rabbitmq(R"({"queue": "q", "count": 3, "framework": {"name": "celery", "worker_concurrency": 4}})"));
  const auto text = brokersim::test::run_cli({"run", file});
  CHECK(text.status == 0);
  CHECK(text.out.find("Consumer group 0 is framework \"celery\", read as:") != std::string::npos);
  CHECK(text.out.find("worker_concurrency, worker_prefetch_multiplier = 4, 4 (default)") != std::string::npos);
  CHECK(text.out.find("-> prefetch = 16: concurrency x multiplier") != std::string::npos);
  const auto json = brokersim::test::run_cli({"run", file, "--json"});
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["frameworks"][0]["framework"] == "celery");
  CHECK(j["frameworks"][0]["group"] == 0);
}

TEST_CASE("framework masstransit: PrefetchCount max(16, 2 x CPUs), ConcurrentMessageLimit defaults to it") {
  const std::string fw = R"({"queue": "q", "count": 3, "framework": {"name": "masstransit", "host_cpus": 4, "ConcurrentMessageLimit": 3}})";
  same_run(rabbitmq(fw), rabbitmq(R"({"queue": "q", "count": 3, "prefetch": 16, "slots": 3, "ack": "after-finish"})"));
  const std::string big = R"({"queue": "q", "count": 3, "framework": {"name": "masstransit", "host_cpus": 16}})";
  same_run(rabbitmq(big), rabbitmq(R"({"queue": "q", "count": 3, "prefetch": 32, "slots": 32, "ack": "after-finish"})"));
  CHECK(load_error(rabbitmq(R"({"queue": "q", "failure_probability": 0.1, "framework": {"name": "masstransit",
      "PrefetchCount": 8, "UseMessageRetry": {"Immediate": 3}}})")) ==
        "consumers.0.framework.UseMessageRetry.Immediate: above 0 with failure_probability > 0 cannot be honoured "
        "(in-process retries are not modelled): give 0, and failure_probability as the chance that every attempt fails "
        "(masstransit: not modelled by brokersim)");
}

TEST_CASE("framework nservicebus: concurrency max(2, CPUs), prefetch 3 x concurrency and never below it") {
  const std::string fw = R"({"queue": "q", "count": 3, "framework": {"name": "nservicebus", "host_cpus": 1, "ImmediateRetries": 0, "DelayedRetries": 0}})";
  same_run(rabbitmq(fw), rabbitmq(R"({"queue": "q", "count": 3, "slots": 2, "prefetch": 6, "ack": "after-finish"})"));
  const std::string fixed = R"({"queue": "q", "count": 3, "framework": {"name": "nservicebus", "LimitMessageProcessingConcurrencyTo": 4, "PrefetchCount": 2}})";
  same_run(rabbitmq(fixed), rabbitmq(R"({"queue": "q", "count": 3, "slots": 4, "prefetch": 4, "ack": "after-finish"})"));
  CHECK(row_for(run_scenario(rabbitmq(fixed)), "prefetch")["note"] == "PrefetchCount overrides the calculation, raised to the concurrency");
  CHECK(load_error(rabbitmq(R"({"queue": "q", "failure_probability": 0.1, "framework": {"name": "nservicebus", "host_cpus": 4}})")) ==
        "consumers.0.framework.ImmediateRetries: above 0 with failure_probability > 0 cannot be honoured (retries are "
        "not modelled): give ImmediateRetries 0 and DelayedRetries 0, and failure_probability as the chance that a "
        "message fails all its attempts (nservicebus: not modelled by brokersim)");
}

TEST_CASE("framework spring-amqp: each of concurrentConsumers is a consumer of one slot with prefetch 250") {
  const std::string fw = R"({"queue": "q", "count": 2, "framework": {"name": "spring-amqp", "concurrentConsumers": 3}})";
  same_run(rabbitmq(fw), rabbitmq(R"({"queue": "q", "count": 6, "slots": 1, "prefetch": 250, "ack": "after-finish"})"));
  const std::string none = R"({"queue": "q", "count": 2, "framework": {"name": "spring-amqp", "concurrentConsumers": 3,
      "prefetch": 5, "acknowledgeMode": "NONE"}})";
  same_run(rabbitmq(none), rabbitmq(R"({"queue": "q", "count": 6, "slots": 1, "prefetch": 5, "ack": "on-receipt"})"));
  CHECK(load_error(rabbitmq(R"({"queue": "q", "framework": {"name": "spring-amqp", "acknowledgeMode": "MANUAL"}})")) ==
        "consumers.0.framework.acknowledgeMode: \"MANUAL\" (the listener acks when its own code says) cannot be honoured: "
        "give \"AUTO\" or \"NONE\", or leave out framework and give ack (spring-amqp: not modelled by brokersim)");
  CHECK(load_error(rabbitmq(R"({"queue": "q", "failure_probability": 0.1, "framework": {"name": "spring-amqp"}})")) ==
        "consumers.0.framework.defaultRequeueRejected: true (a failed message requeued and redelivered) cannot be "
        "honoured with failure_probability > 0: give false (spring-amqp: not modelled by brokersim)");
  CHECK(load_error(rabbitmq(R"({"queue": "q", "count": 2, "failure_probability": 0.1, "framework": {"name": "spring-amqp", "defaultRequeueRejected": false}})")) ==
        "(no error)");
  // Under NONE (autoAck) nothing is requeued whatever the setting: failures are accepted.
  const std::string none_failing = R"({"queue": "q", "count": 2, "failure_probability": 0.1, "framework": {"name": "spring-amqp",
      "acknowledgeMode": "NONE"}})";
  same_run(rabbitmq(none_failing),
           rabbitmq(R"({"queue": "q", "count": 2, "failure_probability": 0.1, "slots": 1, "prefetch": 250, "ack": "on-receipt"})"));
  CHECK(run_scenario(rabbitmq(none_failing)).result.outcomes[static_cast<std::size_t>(brokersim::Outcome::Failed)] > 0);
}

TEST_CASE("framework azure-functions: maxConcurrentCalls 16 x CPUs, renewal 5 min, the plan's functionTimeout") {
  const std::string fw = R"({"queue": "q", "count": 3, "framework": {"name": "azure-functions"}})";
  same_run(servicebus(fw), servicebus(R"({"queue": "q", "count": 3, "slots": 16, "prefetch": 0, "max_auto_lock_renewal_ms": 300000,
      "ack": "after-finish", "receive_mode": "peek-lock", "exec_timeout": 300000})"));
  const std::string premium = R"({"queue": "q", "count": 3, "framework": {"name": "azure-functions", "hosting_plan": "premium",
      "host_cpus": 2, "prefetchCount": 10, "maxAutoLockRenewalDuration": "00:01:00"}})";
  same_run(servicebus(premium), servicebus(R"({"queue": "q", "count": 3, "slots": 32, "prefetch": 10, "max_auto_lock_renewal_ms": 60000,
      "ack": "after-finish", "receive_mode": "peek-lock", "exec_timeout": 1800000})"));
  const auto run = run_scenario(servicebus(premium));
  // Jobs longer than one minute of renewal plus the 30 s lock run twice.
  CHECK(run.result.duplicates_by_cause[static_cast<std::size_t>(brokersim::DuplicateCause::Lapse)] > 0);
  CHECK(load_error(servicebus(R"({"queue": "q", "framework": {"name": "azure-functions", "autoCompleteMessages": false}})")) ==
        "consumers.0.framework.autoCompleteMessages: false (the function settles messages in its own code) cannot be "
        "honoured: give true, or leave out framework and give ack (azure-functions: not modelled by brokersim)");
  CHECK(load_error(servicebus(R"({"queue": "q", "framework": {"name": "azure-functions", "functionTimeout": "00:20:00"}})")) ==
        "consumers.0.framework.functionTimeout: expected at most 00:10:00 on the Consumption plan, got 00:20:00");
  CHECK(load_error(servicebus(R"({"queue": "q", "framework": {"name": "azure-functions", "functionTimeout": "5 minutes"}})")) ==
        "consumers.0.framework.functionTimeout: expected a duration as \"hh:mm:ss\" (or \"d.hh:mm:ss\", or ISO 8601 "
        "\"PT5M\"), got \"5 minutes\"");
  CHECK(load_error(servicebus(R"({"queue": "q", "count": 2, "framework": {"name": "azure-functions", "functionTimeout": "PT2M30S"}})")) == "(no error)");
  // A batched trigger runs through the batch handler (tests/test_functions_batch.cpp).
  CHECK(load_error(servicebus(R"({"queue": "q", "count": 2, "framework": {"name": "azure-functions", "isBatched": true}})")) ==
        "(no error)");
  CHECK(load_error(servicebus(R"({"queue": "q", "count": 2, "framework": {"name": "azure-functions", "isBatched": false}})")) == "(no error)");
  // A value the framework derived that brokersim refuses: the error names the setting it came from.
  CHECK(load_error(servicebus(R"({"queue": "q", "count": 2, "framework": {"name": "azure-functions", "host_cpus": 100000}})")) ==
        "consumers.0.slots: expected an integer between 1 and 1000000, got 1600000 (set by consumers.0.framework from "
        "maxConcurrentCalls = 1600000 (default: 16 x host_cpus))");
}

TEST_CASE("framework aws-lambda: five concurrent batches to start, 300 more a minute, timeouts come back") {
  const std::string fw = R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 1, "Timeout": 2,
      "ScalingConfig": {"MaximumConcurrency": 50}}})";
  same_run(sqs(fw), sqs(R"({"queue": "q", "count": 5, "batch_size": 1, "prefetch": 1, "slots": 1, "ack": "after-finish",
      "exec_timeout": 2000, "on_timeout": "keep",
      "autoscale": {"metric": "ready", "target_per_replica": 1, "min": 5, "max": 50,
                    "scale_up": {"pods": 300, "percent": null, "period_ms": 60000, "stabilization_ms": 0}}})"));
  const auto run = run_scenario(sqs(fw));
  CHECK(run.outcome(brokersim::Outcome::DeadLettered) > 0);  // jobs longer than 2 s never finish in time
  // The default BatchSize 10 is one invocation per batch (tests/test_batch_handler.cpp).
  CHECK(load_error(sqs(R"({"queue": "q", "framework": {"name": "aws-lambda"}})")) == "(no error)");
  CHECK(load_error(sqs(R"({"queue": "q", "count": 3, "framework": {"name": "aws-lambda", "BatchSize": 1}})")) ==
        "consumers.0.count: set by consumers.0.framework.name \"aws-lambda\" from ScalingConfig.MaximumConcurrency; give it "
        "there (or leave out framework)");
  CHECK(load_error(sqs(R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 1, "MaximumBatchingWindowInSeconds": 5}})")) ==
        "(no error)");
}

TEST_CASE("amazon-sqs on_timeout keep: a timed-out job is not deleted, runs again after its visibility lapses, then is redriven") {
  constexpr const char* kOne = R"({
  "stop": {"time_ms": 10000},
  "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 1000, "dead_letter_to": "dlq", "max_receive_count": 2},
                                              "dlq": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 500}],
  "consumers": [{"queue": "q", "exec_timeout": 100}]
})";
  const auto deleted = run_scenario(kOne);
  REQUIRE(deleted.trace.size() == 1);
  CHECK(deleted.trace[0]["outcome"] == "timed_out");
  CHECK(deleted.trace[0]["executions"] == "1");
  const auto kept = run_scenario(kOne, {"consumers.0.on_timeout=keep"});
  REQUIRE(kept.trace.size() == 1);
  // Received at 0 and 1000 (visibility lapses at 1000), timed out at 100 and 1100; the third
  // receive at 2000 would be the third: redriven to dlq, where nobody reads it.
  CHECK(kept.trace[0]["outcome"] == "dead_lettered");
  CHECK(kept.trace[0]["executions"] == "2");
  CHECK(kept.trace[0].ms("ended_ms") == 2000);
  CHECK(kept.result.duplicates_by_cause[static_cast<std::size_t>(brokersim::DuplicateCause::FailedRetry)] == 1);
  CHECK(load_error(kOne, {"consumers.0.on_timeout=retry"}) == "consumers.0.on_timeout: expected one of \"delete\", \"keep\", got \"retry\"");
}

TEST_CASE("amazon-sqs on_failure delete: a failed job is deleted and not received again") {
  constexpr const char* kOne = R"({
  "stop": {"time_ms": 10000},
  "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 1000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100}],
  "consumers": [{"queue": "q", "failure_probability": 1}]
})";
  // Not deleted: it fails again at every receive (0, 1100, 2200, ...) until the run ends.
  const auto kept = run_scenario(kOne);
  REQUIRE(kept.trace.size() == 1);
  CHECK(kept.trace[0]["executions"] != "1");
  const auto deleted = run_scenario(kOne, {"consumers.0.on_failure=delete"});
  REQUIRE(deleted.trace.size() == 1);
  CHECK(deleted.trace[0]["outcome"] == "failed");
  CHECK(deleted.trace[0]["executions"] == "1");
  CHECK(deleted.trace[0].ms("ended_ms") == 100);
}
