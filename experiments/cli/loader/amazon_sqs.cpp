// broker.kind "amazon-sqs": Amazon SQS standard queues. The broker keys (latencies and queues),
// each queue's attributes with the ranges CreateQueue accepts (SQS Developer Guide, docs/semantics.md
// part 2 section 6), the consumers' batch_size, and the common keys SQS has no counterpart for.
#include <cstdint>
#include <string>

#include "experiments/cli/loader/broker_kinds.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kBrokerKeys[] = {"kind", "delivery_latency_ms", "ack_latency_ms", "queues"};
constexpr std::string_view kQueueKeys[] = {"dead_letter_to", "visibility_timeout_ms", "retention_ms", "delay_ms",
                                           "max_receive_count"};
constexpr std::string_view kConsumerKeys[] = {"batch_size", "visibility_timeout_ms", "visibility_heartbeat", "on_timeout",
                                              "on_failure", "batch_handler"};

constexpr double kMaxVisibilityMs = 43'200'000;  // 12 h
constexpr double kMinRetentionMs = 60'000;       // 60 s
constexpr double kMaxRetentionMs = 1'209'600'000;  // 14 days
constexpr double kMaxDelayMs = 900'000;          // 15 min

bool given(const json& q, const std::string& key) { return has(q, key) && !q[key].is_null(); }

Time ms_between(const json& v, const std::string& path, double min, double max, const std::string& unit_hint) {
  std::string expected = "a duration from ";  // appended: g++ 12 -Wrestrict misfires on "..." + string
  expected += std::to_string(static_cast<std::int64_t>(min)) + " to " + std::to_string(static_cast<std::int64_t>(max)) + " ms" + unit_hint;
  const double x = real(v, path, expected);
  if (x < min || x > max) fail(path, expected, v);
  return sim::from_ms(x);
}

QueueSpec load_queue(const std::string& name, const json& v, const Context& context, const BrokerKind& kind) {
  const std::string at = join("broker.queues", name);
  const json& q = object_at(v, at, "an object (the queue's attributes)");
  check_keys(q, at, kind.queue_keys, foreign_key_owner(kind, Section::Queue));
  QueueSpec queue;
  queue.name = name;
  if (given(q, "visibility_timeout_ms")) {
    queue.sqs.visibility_timeout = ms_between(q["visibility_timeout_ms"], join(at, "visibility_timeout_ms"), 0, kMaxVisibilityMs, " (12 h)");
  }
  if (given(q, "retention_ms")) {
    queue.sqs.retention = ms_between(q["retention_ms"], join(at, "retention_ms"), kMinRetentionMs, kMaxRetentionMs, " (60 s to 14 days)");
  }
  if (given(q, "delay_ms")) queue.sqs.delay = ms_between(q["delay_ms"], join(at, "delay_ms"), 0, kMaxDelayMs, " (15 min)");
  // A redrive policy names both its target and maxReceiveCount; one without the other is a mistake.
  const bool target = given(q, "dead_letter_to");
  const bool count = given(q, "max_receive_count");
  if (count) {
    queue.sqs.max_receive_count = static_cast<int>(
        integer(q["max_receive_count"], join(at, "max_receive_count"), 1, 1000, "an integer from 1 to 1000 or null"));
  }
  if (target) {
    const std::string path = join(at, "dead_letter_to");
    queue.dead_letter_index = queue_index(q["dead_letter_to"], path, context);
    queue.dead_letter_to = q["dead_letter_to"].get<std::string>();
    if (*queue.dead_letter_to == name) fail(path, "another queue (a dead-letter queue cannot be its own source)", q["dead_letter_to"]);
    if (!count) {
      fail(join(at, "max_receive_count"),
           "an integer from 1 to 1000 with dead_letter_to (amazon-sqs redrives after max_receive_count receives)",
           member(q, "max_receive_count"));
    }
  } else if (count) {
    fail(join(at, "dead_letter_to"), "the name of the dead-letter queue with max_receive_count", member(q, "dead_letter_to"));
  }
  return queue;
}

BrokerSpec load(const json& v, Context& context);

// SQS messages have no per-message TTL (retention is the queue's), and are all stored durably.
void load_producer(const json& v, const std::string& path, ProducerSpec& /*producer*/) {
  if (given(v, "expiration_ms")) {
    fail(join(path, "expiration_ms"),
         "null on broker kind \"amazon-sqs\" (SQS has no per-message TTL; use broker.queues.NAME.retention_ms)",
         v["expiration_ms"]);
  }
}

// consumers[].batch_handler (models/consumer_batch.cpp): one execution per batch of up to
// max_messages (AWS Lambda's BatchSize: up to 10,000 on a standard queue), gathered for up to
// window_ms (MaximumBatchingWindowInSeconds: 0 to 300 s). The client holds the batch, so its
// prefetch is at least max_messages; its settlement follows the execution.
constexpr std::int64_t kMaxBatchMessages = 10'000;
constexpr double kMaxBatchWindowMs = 300'000;

void load_batch_handler(const json& v, const std::string& path, ConsumerSpec& consumer) {
  const std::string at = join(path, "batch_handler");
  const json& b = object_at(v["batch_handler"], at,
                            "an object {\"max_messages\": n, \"window_ms\": d, \"item_failures\": bool, \"execution\": \"concurrent\" or "
                            "\"sequential\"}, or null");
  check_keys(b, at, {"max_messages", "window_ms", "item_failures", "execution"});
  consumer.batch.execution = batch_execution(b, at);
  consumer.batch.max_messages = static_cast<int>(integer(member(b, "max_messages"), join(at, "max_messages"), 1, kMaxBatchMessages,
                                                         "an integer from 1 to 10000"));
  if (given(b, "window_ms")) consumer.batch.window = ms_between(b["window_ms"], join(at, "window_ms"), 0, kMaxBatchWindowMs, " (300 s)");
  if (given(b, "item_failures")) {
    if (!b["item_failures"].is_boolean()) fail(join(at, "item_failures"), "true or false", b["item_failures"]);
    consumer.batch.item_failures = b["item_failures"].get<bool>();
  }
  if (consumer.prefetch < consumer.batch.max_messages) {
    fail(join(path, "prefetch"),
         "at least batch_handler.max_messages (" + std::to_string(consumer.batch.max_messages) +
             ": the client holds its batch until it is deleted)",
         has(v, "prefetch") ? v["prefetch"] : json(consumer.prefetch));
  }
  if (consumer.ack != AckMode::AfterFinish) {
    fail(join(path, "ack"), "\"after-finish\" with batch_handler (a batch is deleted when its execution ends)", member(v, "ack"));
  }
}

// SQS has no reject (a message goes to the dead-letter queue only by redrive) and no consumer
// priorities.
void load_consumer(const json& v, const std::string& path, ConsumerSpec& consumer) {
  if (consumer.on_expired == OnExpired::Reject) {
    fail(join(path, "on_expired"),
         "\"ack\" or \"requeue\" on broker kind \"amazon-sqs\" (SQS has no reject: a message reaches the dead-letter "
         "queue only by redrive, after max_receive_count receives)",
         v["on_expired"]);
  }
  if (consumer.priority != 0) {
    fail(join(path, "priority"), "0 on broker kind \"amazon-sqs\" (SQS has no consumer priorities)", v["priority"]);
  }
  if (has(v, "batch_size")) {
    consumer.sqs.batch_size = static_cast<int>(integer(v["batch_size"], join(path, "batch_size"), 1, 10, "an integer from 1 to 10"));
  }
  // What the client does with a job its exec_timeout stopped: delete it (brokersim's rule before
  // the key), or leave it to come back when its visibility lapses (a Lambda invocation's timeout
  // is an error: "If the invocation fails or times out, every message in the batch will be
  // returned to the queue").
  if (given(v, "on_timeout")) consumer.sqs.keep_timed_out = choice(v["on_timeout"], join(path, "on_timeout"), {"delete", "keep"}) == 1;
  // ... and with a job whose execution failed: leave it (brokersim's rule before the key, a worker
  // whose handler threw deletes nothing), or delete it (Celery acks a failed task by default).
  if (given(v, "on_failure")) consumer.sqs.delete_failed = choice(v["on_failure"], join(path, "on_failure"), {"keep", "delete"}) == 1;
  // ReceiveMessage's VisibilityTimeout: 0 to 43,200 s, as the queue attribute (ReceiveMessage API
  // reference).
  if (given(v, "visibility_timeout_ms")) {
    consumer.sqs.receive_visibility_timeout =
        ms_between(v["visibility_timeout_ms"], join(path, "visibility_timeout_ms"), 0, kMaxVisibilityMs, " (12 h)");
  }
  // The handler's ChangeMessageVisibility heartbeat: its period (a periodic tick, at least 1 ms)
  // and the VisibilityTimeout each call sets (0 to 43,200 s).
  if (given(v, "visibility_heartbeat")) {
    const std::string at = join(path, "visibility_heartbeat");
    const json& h = object_at(v["visibility_heartbeat"], at, "an object {\"every_ms\": d, \"extend_ms\": d}, or null");
    check_keys(h, at, {"every_ms", "extend_ms"});
    consumer.sqs.heartbeat_every = ms_period(member(h, "every_ms"), join(at, "every_ms"));
    consumer.sqs.heartbeat_extend = ms_between(member(h, "extend_ms"), join(at, "extend_ms"), 0, kMaxVisibilityMs, " (12 h)");
  }
  if (given(v, "batch_handler")) load_batch_handler(v, path, consumer);
}

// SQS has no auto-ack: a receive always starts a visibility timeout; a client can only delete early.
constexpr RefusedAck kRefusedAcks[] = {
    {AckMode::OnReceipt, "\"after-finish\" or \"before-start\" (SQS has no no-ack receive: a received message is in flight until "
                         "deleted; a client that deletes at once is \"before-start\")"}};

const BrokerKind& kind() {
  static const BrokerKind k{&kAmazonSqsKind, kBrokerKeys, kQueueKeys, {}, kConsumerKeys, load, load_producer, load_consumer, kRefusedAcks};
  return k;
}

BrokerSpec load(const json& v, Context& context) {
  const BrokerKind& k = kind();
  BrokerSpec broker = load_broker_common(v, k);
  const json& queues = member(v, "queues");
  collect_queue_names(queues, context);
  for (auto it = queues.begin(); it != queues.end(); ++it) broker.queues.push_back(load_queue(it.key(), it.value(), context, k));
  return broker;
}

}  // namespace

const BrokerKind& amazon_sqs() { return kind(); }

}  // namespace brokersim::loader
