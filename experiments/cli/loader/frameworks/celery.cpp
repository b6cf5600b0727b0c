// Celery workers (docs/framework-celery.md): one `celery worker` is one AMQP consumer (one SQS
// poller) with `worker_concurrency` pool processes; the group's `count` is the number of workers.
#include <algorithm>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

// A pool process killed mid-task (faults[].kill_process) fails the request with WorkerLostError:
// with late acks it is rejected with requeue when task_reject_on_worker_lost is true, else acked
// (celery/worker/request.py on_failure); with early acks it was acked as it started.
void worker_lost(Translation& t, bool late) {
  const bool reject = t.boolean("task_reject_on_worker_lost", false);
  const bool requeue = late && reject;
  t.set("on_process_lost", requeue ? "requeue" : "ack", "task_acks_late, task_reject_on_worker_lost",
        requeue ? "rejected with requeue: the task runs again"
                : late ? "acked: the task is lost" : "acked as it started: the task is lost");
}

// task_time_limit kills the pool process at the hard limit; task_soft_time_limit raises
// SoftTimeLimitExceeded in the task, which fails it there and frees the process, unless the task
// catches it and runs on to the hard limit. Either way the task is cut by a time limit
// (timed_out) and acked, never requeued (the ack on failure or timeout is the default).
void time_limits(Translation& t) {
  const bool hard = t.given("task_time_limit") != nullptr;
  const bool soft = t.given("task_soft_time_limit") != nullptr;
  const double hard_s = hard ? t.seconds("task_time_limit", 0, 0.001, 1e9) : 0;
  const double soft_s = soft ? t.seconds("task_soft_time_limit", 0, 0.001, 1e9) : 0;
  const bool caught = t.boolean("task_catches_soft_time_limit", false);
  if (!soft) {
    if (hard) t.set("exec_timeout", hard_s * 1000, "task_time_limit", "the hard time limit kills the task: timed_out, acked");
    if (caught) t.no_key("task_catches_soft_time_limit", "no task_soft_time_limit to catch");
    return;
  }
  if (caught) {
    if (hard)
      t.set("exec_timeout", hard_s * 1000, "task_time_limit, task_catches_soft_time_limit",
            "the task catches SoftTimeLimitExceeded and runs on; the hard limit kills it: timed_out, acked");
    else
      t.no_key("task_catches_soft_time_limit", "the task catches SoftTimeLimitExceeded and runs on: no task_time_limit stops it");
    return;
  }
  if (hard && hard_s <= soft_s) {
    t.set("exec_timeout", hard_s * 1000, "task_time_limit, task_soft_time_limit",
          "the hard limit comes first and kills the task: timed_out, acked");
    return;
  }
  t.set("exec_timeout", soft_s * 1000, hard ? "task_soft_time_limit, task_time_limit, task_catches_soft_time_limit"
                                            : "task_soft_time_limit, task_catches_soft_time_limit",
        "SoftTimeLimitExceeded, uncaught, fails the task at the soft limit: timed_out, acked");
}

// A task's expires (producers[].framework) is checked as the worker receives the message
// (celery/worker/strategy.py) and again as a pool process is free to take it (request.py
// execute_using_pool); an expired task is revoked and acked.
void expiry_checks(Translation& t) {
  t.set("admission", "check-at-receive-and-start", "", "a task's expires is checked at receipt and as a pool process takes it");
  t.set("on_expired", "ack", "", "an expired task is revoked and acked");
}

// A task with an ETA (countdown) is received at once and kept in the worker's timer until then
// (strategy.py, consumer.py apply_eta_task). With global QoS (RabbitMQ classic queues, and kombu's
// SQS QoS) the worker raises its prefetch by one for each such task it holds; with quorum queues
// it cannot (global QoS off), and the held task blocks a place in the window ("ETA/Countdown will
// block the worker", docs/getting-started/backends-and-brokers/rabbitmq.rst, Limitations).
void eta_tasks(Translation& t) {
  const bool quorum = t.kind() == "rabbitmq-quorum" || t.reads_quorum_queue();
  t.set("eta", quorum ? "hold" : "hold-outside-prefetch", "",
        quorum ? "an ETA task is held until due, in the prefetch window: quorum queues have no global QoS to raise"
               : "an ETA task is held until due, the prefetch raised by one meanwhile");
}

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
  worker_lost(t, late);
  time_limits(t);
  expiry_checks(t);
  eta_tasks(t);
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

// producers[].framework "celery": the options a task is sent with (apply_async, send_task).
// `expires` in seconds counts from the send (docs/userguide/calling.rst, "Expiration"); it travels
// as the task's expires header, which the worker checks (the job's deadline, in the producer's
// clock as Celery's is), and on RabbitMQ send_task also sets the message's AMQP expiration to it
// (celery/app/base.py), so the queue drops an expired task at its head, and the worker never
// hears of it. kombu's SQS transport sends no expiration: there only the worker drops it.
void translate_producer(Translation& t) {
  t.kinds({"rabbitmq-classic", "rabbitmq-quorum", "amazon-sqs"}, "celery");
  const bool sqs = t.kind() == "amazon-sqs";
  if (t.given("expires") != nullptr) {
    // 0 is a TTL of 0 (dropped unless a worker is waiting) and an expires already past at receipt:
    // no task would run; brokersim's deadline 0 would refuse it at the publish instead.
    const double s = t.seconds("expires", 0, 0.001, 1e9);
    t.set("deadline_ms", s * 1000, "expires",
          sqs ? "the expires header the worker checks (kombu's SQS transport sends no message expiration)"
              : "the expires header the worker checks at receipt and before start");
    if (!sqs)
      t.set("expiration_ms", "remaining-budget", "expires",
            "send_task's AMQP expiration, the same seconds: RabbitMQ drops an expired task at the queue head");
  }
  // A countdown makes the task's ETA, counted from the send like expires; the worker holds it
  // until then (consumers[].eta). 0 is no countdown: Celery sends no ETA.
  if (t.given("countdown") != nullptr) {
    const double s = t.seconds("countdown", 0, 0, 1e9);
    if (s > 0)
      t.set("countdown_ms", s * 1000, "countdown", "the task's ETA: the worker receives it at once and holds it until then");
    else
      t.no_key("countdown", "0: no ETA");
  }
  if (t.given("eta") != nullptr)
    t.refuse("eta", "is a datetime, one moment for every task of the producer; give countdown, the same delay after "
                    "each task's send");
}

}  // namespace

const Framework& celery() {
  static const Framework f{"celery",
                           {"host_cpus", "worker_concurrency", "worker_prefetch_multiplier", "task_acks_late",
                            "task_acks_on_failure_or_timeout", "task_reject_on_worker_lost", "task_time_limit",
                            "task_soft_time_limit", "task_catches_soft_time_limit",
                            "broker_transport_options.visibility_timeout", "worker_detect_quorum_queues"},
                           translate,
                           {{"worker_eta_task_limit", "a cap on the ETA tasks a worker holds (Celery 5.6): no cap is modelled"},
                            {"task_acks_on_failure", "Celery 5.7 (unreleased at the research snapshot); task_acks_on_failure_or_timeout is read"},
                            {"task_acks_on_timeout", "Celery 5.7 (unreleased at the research snapshot); task_acks_on_failure_or_timeout is read"},
                            {"worker_disable_prefetch", "the Redis transport only"},
                            {"broker_transport_options.wait_time_seconds", "SQS long-poll length: brokersim answers a long poll as soon as messages are visible"},
                            {"broker_transport_options.polling_interval", "the sleep after an empty SQS poll"}},
                           nullptr,
                           {{"expires", "countdown", "eta"}, translate_producer}};
  return f;
}

}  // namespace brokersim::loader
