// broker.kind "azure-servicebus": Azure Service Bus queues (models/brokers/azure_servicebus.hpp).
// The broker keys are the latencies and the queues; a queue has the entity's settings (lock
// duration, max delivery count, default TTL, dead-lettering on expiration) and dead_letter_to
// (the queue standing for its dead-letter sub-queue). The per-message TTL is the producer's
// expiration_ms. RabbitMQ's queue arguments (message_ttl_ms, max_length, overflow, expires_ms,
// ...) are refused naming the kinds that have them. A session queue (requires_session) and its
// producers' session ids go together.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "experiments/cli/loader/broker_kinds.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kBrokerKeys[] = {"kind", "delivery_latency_ms", "ack_latency_ms", "queues"};
constexpr std::string_view kQueueKeys[] = {"dead_letter_to",    "lock_duration_ms",          "max_delivery_count",
                                           "default_ttl_ms",    "dead_letter_on_expiration", "requires_session",
                                           "auto_delete_on_idle_ms"};
constexpr std::string_view kProducerKeys[] = {"scheduled_delay_ms", "session"};
constexpr std::string_view kConsumerKeys[] = {"receive_mode", "max_auto_lock_renewal_ms", "session_idle_timeout_ms",
                                              "receive_deferred_after_ms", "batch_handler"};

// CreateQueueOptions.LockDuration: at most 5 minutes.
constexpr double kMaxLockMs = 300'000;

bool given(const json& q, const std::string& key) { return has(q, key) && !q[key].is_null(); }

// Which queues require sessions, from the broker section, for the producers' check that follows it
// in the same load (the producer hook sees only its producer). thread_local: sweeps load in threads.
thread_local std::vector<bool> session_queues;
thread_local std::vector<std::string> queue_names;

bool boolean(const json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, "true or false", v);
  return v.get<bool>();
}

QueueSpec load_queue(const std::string& name, const json& v, const Context& context, const BrokerKind& kind) {
  const std::string at = join("broker.queues", name);
  const json& q = object_at(v, at, "an object (the queue's settings)");
  check_keys(q, at, kind.queue_keys, foreign_key_owner(kind, Section::Queue));
  QueueSpec queue;
  queue.name = name;
  if (given(q, "dead_letter_to")) {
    queue.dead_letter_index = queue_index(q["dead_letter_to"], join(at, "dead_letter_to"), context);
    queue.dead_letter_to = q["dead_letter_to"].get<std::string>();
  }
  if (has(q, "lock_duration_ms")) {
    const std::string path = join(at, "lock_duration_ms");
    const std::string expected = "a number > 0 and <= 300000 (5 minutes, Service Bus's longest lock)";
    const double ms = real(q["lock_duration_ms"], path, expected);
    if (ms <= 0 || ms > kMaxLockMs || sim::from_ms(ms) < 1) fail(path, expected, q["lock_duration_ms"]);
    queue.servicebus.lock_duration = sim::from_ms(ms);
  }
  if (has(q, "max_delivery_count")) {
    queue.servicebus.max_delivery_count = static_cast<int>(
        integer(q["max_delivery_count"], join(at, "max_delivery_count"), 1, kMaxInt, "an integer >= 1"));
  }
  if (given(q, "default_ttl_ms")) queue.servicebus.default_ttl = ms_non_negative(q["default_ttl_ms"], join(at, "default_ttl_ms"));
  if (has(q, "dead_letter_on_expiration")) {
    queue.servicebus.dead_letter_on_expiration = boolean(q["dead_letter_on_expiration"], join(at, "dead_letter_on_expiration"));
  }
  if (given(q, "auto_delete_on_idle_ms")) {
    // AutoDeleteOnIdle: at least 5 minutes (message-expiration.md, temporary entities).
    const std::string path = join(at, "auto_delete_on_idle_ms");
    const std::string expected = "a number >= 300000 (5 minutes, Service Bus's minimum) or null";
    const double ms = real(q["auto_delete_on_idle_ms"], path, expected);
    if (ms < 300'000) fail(path, expected, q["auto_delete_on_idle_ms"]);
    queue.expires = sim::from_ms(ms);
  }
  if (has(q, "requires_session")) queue.servicebus.requires_session = boolean(q["requires_session"], join(at, "requires_session"));
  return queue;
}

BrokerSpec load(const json& v, Context& context);

void load_producer(const json& v, const std::string& path, ProducerSpec& producer) {
  if (given(v, "scheduled_delay_ms")) {
    producer.servicebus.scheduled_delay = distribution(v["scheduled_delay_ms"], join(path, "scheduled_delay_ms"), Range::Duration);
  }
  const bool session_queue = session_queues[static_cast<std::size_t>(producer.queue)];
  const std::string& queue = queue_names[static_cast<std::size_t>(producer.queue)];
  if (given(v, "session")) {
    const std::string at = join(path, "session");
    if (!session_queue) {
      fail_message(at, "a session id needs a queue with requires_session (broker.queues." + queue + ".requires_session is false)");
    }
    // Session ids are numbers, not durations: no ms -> ns scaling; drawn per message, rounded.
    producer.servicebus.session = distribution(v["session"], at, Range::Signed).scaled(1e-6);
  } else if (session_queue) {
    // Service Bus refuses the send of a message without a SessionId to a session-enabled entity.
    fail_message(path, "a producer to a queue with requires_session needs a session (broker.queues." + queue +
                           ".requires_session is true)");
  }
}

// consumers[].batch_handler (models/consumer_batch.cpp), as the Azure Functions trigger's batches
// use it (docs/framework-azure-functions.md): one execution per batch of up to max_messages
// (maxMessageBatchSize), starting once min_messages (minMessageBatchSize) are there or window_ms
// (maxBatchWaitTime) has passed since the oldest arrived. Each message keeps its own peek-lock.
// The client holds its batch (prefetch >= max_messages) and settles each message after the
// execution (ack after-finish, peek-lock); session queues are not modelled with batches.
constexpr std::int64_t kMaxBatchMessages = 65535;  // the largest prefetch
constexpr double kMaxBatchWindowMs = 300'000;

void load_batch_handler(const json& v, const std::string& path, ConsumerSpec& consumer) {
  const std::string at = join(path, "batch_handler");
  const json& b = object_at(v["batch_handler"], at,
                            "an object {\"max_messages\": n, \"min_messages\": n, \"window_ms\": d, \"item_failures\": bool, "
                            "\"execution\": \"concurrent\" or \"sequential\"}, or null");
  check_keys(b, at, {"max_messages", "min_messages", "window_ms", "item_failures", "execution"});
  consumer.batch.execution = batch_execution(b, at);
  consumer.batch.max_messages = static_cast<int>(
      integer(member(b, "max_messages"), join(at, "max_messages"), 1, kMaxBatchMessages, "an integer from 1 to 65535"));
  if (given(b, "min_messages")) {
    consumer.batch.min_messages = static_cast<int>(integer(b["min_messages"], join(at, "min_messages"), 1, consumer.batch.max_messages,
                                                           "an integer from 1 to max_messages (" +
                                                               std::to_string(consumer.batch.max_messages) + ")"));
  }
  if (given(b, "window_ms")) {
    const std::string w = join(at, "window_ms");
    const std::string expected = "a duration from 0 to 300000 ms";
    const double ms = real(b["window_ms"], w, expected);
    if (ms < 0 || ms > kMaxBatchWindowMs) fail(w, expected, b["window_ms"]);
    consumer.batch.window = sim::from_ms(ms);
  }
  if (given(b, "item_failures")) consumer.batch.item_failures = boolean(b["item_failures"], join(at, "item_failures"));
  if (consumer.prefetch < consumer.batch.max_messages) {
    fail(join(path, "prefetch"),
         "at least batch_handler.max_messages (" + std::to_string(consumer.batch.max_messages) +
             ": the client holds its batch until it is settled)",
         has(v, "prefetch") ? v["prefetch"] : json(consumer.prefetch));
  }
  if (consumer.ack != AckMode::AfterFinish || consumer.servicebus.receive_and_delete) {
    fail(join(path, "ack"), "\"after-finish\" (peek-lock) with batch_handler (each message of a batch is settled when its execution ends)",
         member(v, "ack"));
  }
  if (session_queues[static_cast<std::size_t>(consumer.queue)]) {
    fail_message(at, "batches are not modelled on a queue with requires_session (broker.queues." +
                         queue_names[static_cast<std::size_t>(consumer.queue)] + ".requires_session is true)");
  }
}

void load_consumer(const json& v, const std::string& path, ConsumerSpec& consumer) {
  if (has(v, "priority")) {
    fail_message(join(path, "priority"), "Service Bus receivers have no priority; broker kind \"azure-servicebus\" has no such key");
  }
  if (has(v, "receive_mode")) {
    consumer.servicebus.receive_and_delete = choice(v["receive_mode"], join(path, "receive_mode"), {"peek-lock", "receive-and-delete"}) == 1;
  }
  // consumers[].ack "on-receipt" is ReceiveAndDelete by its generic name: either key says it, and
  // both must agree when both are given.
  if (has(v, "ack") && has(v, "receive_mode") && (consumer.ack == AckMode::OnReceipt) != consumer.servicebus.receive_and_delete) {
    fail_message(join(path, "ack"), std::string("ack \"") + (consumer.ack == AckMode::OnReceipt ? "on-receipt" : "after-finish") +
                                        "\" contradicts receive_mode \"" +
                                        (consumer.servicebus.receive_and_delete ? "receive-and-delete" : "peek-lock") +
                                        "\" (on-receipt is receive-and-delete; give one of the two keys)");
  }
  if (consumer.ack == AckMode::OnReceipt) consumer.servicebus.receive_and_delete = true;
  if (consumer.servicebus.receive_and_delete) consumer.ack = AckMode::OnReceipt;
  // ServiceBusProcessorOptions.MaxAutoLockRenewalDuration (5 min by default in the .NET SDK; null
  // or absent here: renewed for as long as the handler runs). A negative TimeSpan is refused by the
  // SDK; 0 turns renewal off.
  if (given(v, "max_auto_lock_renewal_ms")) {
    const std::string at = join(path, "max_auto_lock_renewal_ms");
    if (consumer.servicebus.receive_and_delete) {
      fail_message(at, "receive_mode \"receive-and-delete\" has no lock to renew; give max_auto_lock_renewal_ms only with peek-lock");
    }
    consumer.servicebus.max_auto_lock_renewal = ms_non_negative(v["max_auto_lock_renewal_ms"], at);
  }
  // ServiceBusSessionProcessorOptions.SessionIdleTimeout (the SDK's default is its TryTimeout, 60 s;
  // absent here: 0, a session is closed as soon as it has nothing left). Only a session queue has
  // sessions to keep.
  if (given(v, "session_idle_timeout_ms")) {
    const std::string at = join(path, "session_idle_timeout_ms");
    if (!session_queues[static_cast<std::size_t>(consumer.queue)]) {
      fail_message(at, "a session idle timeout needs a queue with requires_session (broker.queues." +
                           queue_names[static_cast<std::size_t>(consumer.queue)] + ".requires_session is false)");
    }
    consumer.servicebus.session_idle_timeout = ms_non_negative(v["session_idle_timeout_ms"], at);
  }
  // ReceiveDeferredMessagesAsync: the client that deferred a message receives it back by its
  // sequence number this long after its Defer(). Only a client that defers has one to ask for; a
  // session's deferred messages are received through the session (not modelled: refused).
  if (given(v, "receive_deferred_after_ms")) {
    const std::string at = join(path, "receive_deferred_after_ms");
    if (consumer.on_expired != OnExpired::Defer) {
      fail_message(at, "only a consumer that defers has deferred messages to receive back; give it with on_expired \"defer\"");
    }
    if (consumer.servicebus.receive_and_delete) {
      fail_message(at, "receive_mode \"receive-and-delete\" settles a message when it is sent, so nothing is deferred; give "
                       "receive_deferred_after_ms only with peek-lock");
    }
    if (session_queues[static_cast<std::size_t>(consumer.queue)]) {
      fail_message(at, "receiving deferred messages back is not modelled on a queue with requires_session (broker.queues." +
                           queue_names[static_cast<std::size_t>(consumer.queue)] + ".requires_session is true)");
    }
    consumer.servicebus.receive_deferred_after = ms_non_negative(v["receive_deferred_after_ms"], at);
  }
  if (given(v, "batch_handler")) load_batch_handler(v, path, consumer);
}

constexpr RefusedAck kRefusedAcks[] = {
    {AckMode::BeforeStart, "\"after-finish\" or \"on-receipt\" (an early Complete() is not modelled on broker kind \"azure-servicebus\")"}};

// Defer() is Azure Service Bus's: offered, and named, only here.
constexpr BrokerKind kAzureServiceBus{&kAzureServiceBusKind, kBrokerKeys, kQueueKeys, kProducerKeys, kConsumerKeys,
                                      load, load_producer, load_consumer, kRefusedAcks, true};

BrokerSpec load(const json& v, Context& context) {
  BrokerSpec broker = load_broker_common(v, kAzureServiceBus);
  const json& queues = member(v, "queues");
  collect_queue_names(queues, context);
  session_queues.clear();
  queue_names.clear();
  for (auto it = queues.begin(); it != queues.end(); ++it) {
    broker.queues.push_back(load_queue(it.key(), it.value(), context, kAzureServiceBus));
    session_queues.push_back(broker.queues.back().servicebus.requires_session);
    queue_names.push_back(it.key());
  }
  return broker;
}

}  // namespace

const BrokerKind& azure_servicebus() { return kAzureServiceBus; }

}  // namespace brokersim::loader
