// Celery workers (docs/framework-celery.md): one `celery worker` is one AMQP consumer (one SQS
// poller) with `worker_concurrency` pool processes; the group's `count` is the number of workers.
#include <algorithm>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

// A worker consumes all its queues (-Q a,b) on one channel (kombu's Consumer), and its basic.qos
// is global on RabbitMQ >= 3.3 (celery/worker/consumer/tasks.py qos_global: py-amqp's
// qos_semantics_matches_spec is false there), so several queues share one window. Celery 5.5's
// worker_detect_quorum_queues (on by default) turns global QoS off when a queue is a quorum queue;
// without it (false, or any Celery before 5.5) the worker asks for global QoS on a quorum queue,
// which RabbitMQ refuses: the mapping says so, and the consumer loader refuses the group.
void map_global_qos(Translation& t) {
  const bool detect = t.boolean("worker_detect_quorum_queues", true);
  if (t.kind() == "amazon-sqs") {
    if (t.given("worker_detect_quorum_queues") != nullptr) t.no_key("worker_detect_quorum_queues", "the RabbitMQ transport's only");
    return;
  }
  const json* queue = t.consumer_key("queue");
  const bool several = queue != nullptr && queue->is_array();
  if (!t.reads_quorum_queue()) {
    if (several)
      t.set("prefetch_scope", "channel", "worker_prefetch_multiplier", "global QoS: one prefetch window for all its queues");
    if (t.given("worker_detect_quorum_queues") != nullptr)
      t.no_key("worker_detect_quorum_queues", "no quorum queue here: global QoS stays on");
  } else if (!detect) {
    t.set("prefetch_scope", "channel", "worker_detect_quorum_queues", "global QoS, which a quorum queue refuses");
  } else if (several) {
    t.set("prefetch_scope", "consumer", "worker_prefetch_multiplier, worker_detect_quorum_queues",
          "quorum queues: global QoS off, the prefetch per queue");
  } else {
    t.no_key("worker_detect_quorum_queues", "a quorum queue: global QoS off (the prefetch is the queue's subscription's)");
  }
}

void translate(Translation& t) {
  t.kinds({"rabbitmq-classic", "rabbitmq-quorum", "amazon-sqs"}, "celery");
  // Celery's default concurrency is the worker host's CPU count, which only the user knows.
  if (t.given("worker_concurrency") == nullptr && t.given("host_cpus") == nullptr) {
    fail_message(t.at("worker_concurrency"),
                 "expected worker_concurrency (Celery's default is the number of CPU cores of the worker's host: "
                 "give it, or give host_cpus), got nothing");
  }
  const std::int64_t cpus = t.given("host_cpus") ? t.integer("host_cpus", 1, 1, 100'000) : 0;
  const std::int64_t concurrency = t.integer("worker_concurrency", cpus, 1, 1'000'000, "host_cpus");
  const std::int64_t multiplier = t.integer("worker_prefetch_multiplier", 4, 0, 65535);
  const bool late = t.boolean("task_acks_late", false);
  const bool on_failure = t.boolean("task_acks_on_failure_or_timeout", true);
  t.boolean("task_reject_on_worker_lost", false);

  t.set("slots", concurrency, "worker_concurrency", "one task per pool process");
  // The worker's basic.qos: concurrency x multiplier, 0 (no limit) when the multiplier is 0.
  const std::int64_t prefetch = multiplier * concurrency;
  if (prefetch > 65535) {
    fail_message(t.at("worker_prefetch_multiplier"),
                 "worker_concurrency x worker_prefetch_multiplier = " + std::to_string(prefetch) +
                     (t.kind() == "amazon-sqs" ? " is above the largest prefetch brokersim takes (65535)"
                                               : " is above AMQP's 16-bit prefetch count (65535)"));
  }
  // No limit is prefetch 0 on RabbitMQ; on SQS brokersim's 0 is "no buffer", so its largest
  // prefetch stands for none.
  const bool sqs = t.kind() == "amazon-sqs";
  t.set("prefetch", multiplier == 0 && sqs ? 65535 : prefetch, "worker_concurrency, worker_prefetch_multiplier",
        multiplier == 0 ? "multiplier 0: no prefetch limit" : "concurrency x multiplier");
  t.set("ack", late ? "after-finish" : "before-start", "task_acks_late",
        late ? "acked after the task returns" : "acked just before the task executes");
  if (late) {
    // A failed or timed-out task is rejected (not requeued) instead of acked: brokersim's clients
    // ack failures, so only the default can be honoured.
    if (!on_failure)
      t.refuse("task_acks_on_failure_or_timeout",
               t.kind() == "amazon-sqs"
                   ? "false (a failed task rejected instead of acked: kombu's SQS reject is not modelled) cannot be honoured: give true"
                   : "false (a failed task rejected to the dead-letter exchange) cannot be honoured: give true");
    if (t.kind() == "amazon-sqs")
      t.set("on_failure", "delete", "task_acks_on_failure_or_timeout", "a failed task is acked: deleted, not received again");
    else
      t.no_key("task_acks_on_failure_or_timeout", "a failed or timed-out task is acked (brokersim's failed, timed_out)");
  } else {
    t.no_key("task_acks_on_failure_or_timeout", "applies only with task_acks_late");
  }
  t.no_key("task_reject_on_worker_lost",
           "concerns a pool process dying under a live worker, which brokersim does not model; a crash fault is the "
           "whole worker, whose connection's unacked messages the broker takes back");
  if (t.given("task_time_limit") != nullptr) {
    const double s = t.seconds("task_time_limit", 0, 0.001, 1e9);
    t.set("exec_timeout", s * 1000, "task_time_limit", "the hard time limit kills the task: timed_out, acked");
  }
  map_global_qos(t);
  if (sqs) {
    // kombu's SQS channel asks each ReceiveMessage for the free prefetch room, at most 10: a
    // batch of 10 limited by the room, as brokersim's client receives.
    t.set("batch_size", 10, "worker_concurrency, worker_prefetch_multiplier", "min(free prefetch room, 10) per ReceiveMessage");
    const double visibility = t.seconds("broker_transport_options.visibility_timeout", 1800, 0, 43'200);
    t.set("visibility_timeout_ms", visibility * 1000, "broker_transport_options.visibility_timeout");
  } else if (t.given("broker_transport_options.visibility_timeout") != nullptr) {
    t.refuse("broker_transport_options.visibility_timeout", "is the SQS (and Redis) transport's; RabbitMQ has none");
  }
}

}  // namespace

const Framework& celery() {
  static const Framework f{"celery",
                           {"host_cpus", "worker_concurrency", "worker_prefetch_multiplier", "task_acks_late",
                            "task_acks_on_failure_or_timeout", "task_reject_on_worker_lost", "task_time_limit",
                            "broker_transport_options.visibility_timeout", "worker_detect_quorum_queues"},
                           translate,
                           {{"task_soft_time_limit", "SoftTimeLimitExceeded is raised inside the task, which brokersim cannot see; task_time_limit is the hard limit it models"},
                            {"worker_eta_task_limit", "the prefetch raised for ETA/countdown tasks"},
                            {"task_acks_on_failure", "Celery 5.7 (unreleased at the research snapshot); task_acks_on_failure_or_timeout is read"},
                            {"task_acks_on_timeout", "Celery 5.7 (unreleased at the research snapshot); task_acks_on_failure_or_timeout is read"},
                            {"worker_disable_prefetch", "the Redis transport only"},
                            {"broker_transport_options.wait_time_seconds", "SQS long-poll length: brokersim answers a long poll as soon as messages are visible"},
                            {"broker_transport_options.polling_interval", "the sleep after an empty SQS poll"}}};
  return f;
}

}  // namespace brokersim::loader
