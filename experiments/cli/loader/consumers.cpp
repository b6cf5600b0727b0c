// Consumer groups: identical consumers reading one queue, their prefetch, slots, clocks and
// admission rules.
#include "experiments/cli/loader/broker_kinds.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kConsumerKeys[] = {"queue",         "count",      "prefetch",     "slots",
                                              "start_ms",      "clock_offset_ms", "uncertainty_ms", "admission",
                                              "min_window_ms", "on_expired", "exec_timeout", "failure_probability",
                                              "priority",      "stop_ms",    "shutdown_grace_ms", "autoscale",
                                              "ack",           "framework",  "on_process_lost", "eta"};

constexpr std::int64_t kMaxReplicas = 10'000;

// One direction's HPA rules: {"percent": p, "pods": n, "period_ms": d, "stabilization_ms": d}; a
// policy given as null is switched off, one left out keeps its default.
void load_rules(const json& v, const std::string& path, AutoscaleSpec::Rules& rules) {
  object_at(v, path);
  check_keys(v, path, {"percent", "pods", "period_ms", "stabilization_ms"});
  if (has(v, "percent")) {
    rules.percent = v["percent"].is_null() ? -1 : positive(v["percent"], join(path, "percent"));
  }
  if (has(v, "pods")) {
    rules.pods = v["pods"].is_null() ? -1
                                     : static_cast<int>(integer(v["pods"], join(path, "pods"), 1, kMaxReplicas, "null or an integer >= 1"));
  }
  if (rules.percent < 0 && rules.pods < 0) fail(path, "at least one policy (percent or pods) that is not null", v);
  if (has(v, "period_ms")) rules.period = ms_positive(v["period_ms"], join(path, "period_ms"));
  if (has(v, "stabilization_ms")) rules.stabilization = ms_non_negative(v["stabilization_ms"], join(path, "stabilization_ms"));
}

AutoscaleSpec load_autoscale(const json& v, const std::string& path, int count) {
  object_at(v, path, "an object {\"target_per_replica\": n, ...}");
  check_keys(v, path, {"metric", "target_per_replica", "min", "max", "sync_ms", "tolerance", "activation", "cooldown_ms",
                       "scale_up", "scale_down", "start_latency_ms"});
  AutoscaleSpec a;
  if (has(v, "metric")) {
    constexpr AutoscaleSpec::Metric kMetrics[] = {AutoscaleSpec::Metric::Ready, AutoscaleSpec::Metric::ReadyUnacked,
                                                  AutoscaleSpec::Metric::PublishRate};
    a.metric = kMetrics[choice(v["metric"], join(path, "metric"), {"ready", "ready+unacked", "publish_rate"})];
  }
  a.target_per_replica = positive(member(v, "target_per_replica"), join(path, "target_per_replica"));
  if (has(v, "min")) a.min = static_cast<int>(integer(v["min"], join(path, "min"), 0, kMaxReplicas, "an integer >= 0"));
  if (has(v, "max")) a.max = static_cast<int>(integer(v["max"], join(path, "max"), 1, kMaxReplicas, "an integer >= 1 and <= 10000"));
  if (a.min > a.max) fail(join(path, "min"), "at most max (" + std::to_string(a.max) + ")", v["min"]);
  if (count > a.max) {
    fail_message(join(path, "max"), "expected at least the group's count (" + std::to_string(count) +
                                        ", the initial replicas), got " + std::to_string(a.max));
  }
  if (has(v, "sync_ms")) a.sync = ms_period(v["sync_ms"], join(path, "sync_ms"));
  if (has(v, "tolerance")) a.tolerance = non_negative(v["tolerance"], join(path, "tolerance"));
  if (has(v, "activation")) a.activation = non_negative(v["activation"], join(path, "activation"));
  if (has(v, "cooldown_ms")) a.cooldown = ms_non_negative(v["cooldown_ms"], join(path, "cooldown_ms"));
  if (has(v, "scale_up")) load_rules(v["scale_up"], join(path, "scale_up"), a.up);
  if (has(v, "scale_down")) load_rules(v["scale_down"], join(path, "scale_down"), a.down);
  a.start_latency = optional_distribution(v, "start_latency_ms", path, Range::Duration);
  return a;
}

// `queue`: a queue's name, or (where the kind has one channel consume several queues) a list of
// distinct names, the first being the group's own for the outputs that name one queue.
void load_queues(const json& v, const std::string& path, const Context& context, const BrokerKind& kind, ConsumerSpec& consumer) {
  if (!v.is_array()) {
    consumer.queue = queue_index(v, path, context);
    return;
  }
  if (!kind.reads_several_queues) {
    std::vector<std::string_view> owners;
    for (const BrokerKind* other : broker_kinds())
      if (other->reads_several_queues) owners.push_back(other->name());
    fail(path, "the name of a queue in broker.queues (a list of queues read by one consumer is modelled on broker kind " +
                   list(owners, "\"") + ")",
         v);
  }
  if (v.empty() || v.size() > context.queue_names.size()) {
    fail(path, "a queue's name or a list of 1 to " + std::to_string(context.queue_names.size()) + " distinct queue names", v);
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const int q = queue_index(v[i], join(path, i), context);
    if (i > 0 && consumer.reads(q)) fail(join(path, i), "a queue not already in the list", v[i]);
    if (i == 0) consumer.queue = q;
    else consumer.other_queues.push_back(q);
  }
}

// on_process_lost: what the client does with a delivery whose process was killed (faults[].kill_process).
// Read after the kind's own keys, which say whether the group runs batches.
void load_process_loss(const json& v, const std::string& path, ConsumerSpec& consumer) {
  if (!has(v, "on_process_lost") || v["on_process_lost"].is_null()) return;
  const std::string at = join(path, "on_process_lost");
  constexpr ConsumerSpec::OnProcessLost kActions[] = {ConsumerSpec::OnProcessLost::Ack, ConsumerSpec::OnProcessLost::Requeue};
  consumer.on_process_lost = kActions[choice(v["on_process_lost"], at, {"ack", "requeue"})];
  if (consumer.batch.max_messages > 0)
    fail(at, "null with batch_handler (a batch runs in one execution; its process is not modelled)", v["on_process_lost"]);
  // An early ack (before-start, on-receipt) has settled the message before the process could die.
  if (consumer.on_process_lost == ConsumerSpec::OnProcessLost::Requeue && consumer.ack != AckMode::AfterFinish)
    fail(at, "\"ack\" with ack \"" + std::string(consumer.ack == AckMode::BeforeStart ? "before-start" : "on-receipt") +
                 "\" (the message was settled before its execution started: nothing is left to requeue)",
         v["on_process_lost"]);
}

// eta: what the client does with a job whose ETA (producers[].countdown_ms) has not come. The rules
// that need the queue's type are check_consumer_eta's.
void load_eta(const json& v, const std::string& path, ConsumerSpec& consumer) {
  if (!has(v, "eta") || v["eta"].is_null()) return;
  const std::string at = join(path, "eta");
  constexpr ConsumerSpec::Eta kModes[] = {ConsumerSpec::Eta::Ignore, ConsumerSpec::Eta::Hold, ConsumerSpec::Eta::HoldOutsidePrefetch};
  consumer.eta = kModes[choice(v["eta"], at, {"ignore", "hold", "hold-outside-prefetch"})];
  if (consumer.eta != ConsumerSpec::Eta::Ignore && consumer.batch.max_messages > 0)
    fail(at, "\"ignore\" with batch_handler (a batch takes its messages as they come)", v["eta"]);
}

constexpr std::int64_t kMaxSlots = 1'000'000;
constexpr std::int64_t kMaxPrefetch = 65535;  // AMQP 0-9-1 basic.qos prefetch-count is 16 bits

}  // namespace

ConsumerSpec load_consumer(const json& v, const std::string& path, const Context& context, std::int64_t& total) {
  object_at(v, path);
  const BrokerKind& kind = *context.broker;
  check_keys(v, path, section_keys(kConsumerKeys, kind, Section::Consumer), foreign_key_owner(kind, Section::Consumer));
  ConsumerSpec consumer;
  consumer.prefetch = 0;  // RabbitMQ's default: unlimited
  load_queues(member(v, "queue"), join(path, "queue"), context, kind, consumer);
  if (has(v, "count")) {
    consumer.count = static_cast<int>(integer(v["count"], join(path, "count"), 1, kMaxConsumers, "an integer >= 1"));
  }
  consumer.fleet_keys = has(v, "autoscale") || has(v, "stop_ms");
  if (has(v, "autoscale") && !v["autoscale"].is_null()) {
    consumer.autoscale = load_autoscale(v["autoscale"], join(path, "autoscale"), consumer.count);
  }
  total += consumer.members();
  if (total > kMaxConsumers) {
    fail(join(path, consumer.autoscale ? "autoscale.max" : "count"),
         "at most " + std::to_string(kMaxConsumers) + " consumers across all groups (an autoscaled group counts its max)",
         json(consumer.members()));
  }
  if (has(v, "prefetch")) {
    consumer.prefetch = static_cast<int>(integer(v["prefetch"], join(path, "prefetch"), 0, kMaxPrefetch, "an integer >= 0"));
  }
  if (has(v, "slots")) {
    consumer.slots = static_cast<int>(integer(v["slots"], join(path, "slots"), 1, kMaxSlots, "an integer >= 1"));
  }
  if (has(v, "start_ms")) consumer.start = ms_non_negative(v["start_ms"], join(path, "start_ms"));
  consumer.clock_offset = optional_distribution(v, "clock_offset_ms", path, Range::Signed);
  if (has(v, "uncertainty_ms")) consumer.uncertainty = ms_non_negative(v["uncertainty_ms"], join(path, "uncertainty_ms"));
  if (has(v, "admission")) {
    constexpr Admission kAdmissions[] = {Admission::None, Admission::CheckBeforeStart, Admission::CheckAtReceiveAndStart};
    consumer.admission =
        kAdmissions[choice(v["admission"], join(path, "admission"), {"none", "check-before-start", "check-at-receive-and-start"})];
  }
  if (has(v, "min_window_ms")) consumer.min_window = ms_non_negative(v["min_window_ms"], join(path, "min_window_ms"));
  if (has(v, "on_expired")) {
    constexpr OnExpired kActions[] = {OnExpired::Ack, OnExpired::Reject, OnExpired::Requeue, OnExpired::Defer};
    if (!kind.defers && v["on_expired"] == "defer") {
      std::vector<std::string_view> owners;
      for (const BrokerKind* other : broker_kinds())
        if (other->defers) owners.push_back(other->name());
      fail(join(path, "on_expired"), "one of \"ack\", \"reject\", \"requeue\" (\"defer\" belongs to broker kind " + list(owners, "\"") + ")",
           v["on_expired"]);
    }
    // Defer() is offered, and named, only where the kind has it.
    const int action = kind.defers ? choice(v["on_expired"], join(path, "on_expired"), {"ack", "reject", "requeue", "defer"})
                                  : choice(v["on_expired"], join(path, "on_expired"), {"ack", "reject", "requeue"});
    consumer.on_expired = kActions[action];
  }
  if (has(v, "ack")) {
    constexpr AckMode kModes[] = {AckMode::AfterFinish, AckMode::BeforeStart, AckMode::OnReceipt};
    const std::string at = join(path, "ack");
    consumer.ack = kModes[choice(v["ack"], at, {"after-finish", "before-start", "on-receipt"})];
    for (const RefusedAck& refused : kind.refused_acks)
      if (consumer.ack == refused.mode) fail(at, std::string(refused.expected), v["ack"]);
    // A no-ack delivery is settled as it is sent: the client has nothing left to reject or requeue.
    if (consumer.ack == AckMode::OnReceipt && consumer.on_expired != OnExpired::Ack) {
      fail(join(path, "on_expired"), "\"ack\" with ack \"on-receipt\" (the broker settled the message when it sent it)",
           v["on_expired"]);
    }
  }
  if (has(v, "exec_timeout") && !v["exec_timeout"].is_null()) {
    const json& e = v["exec_timeout"];
    if (e.is_string()) {
      if (e.get_ref<const std::string&>() != "remaining-budget") {
        fail(join(path, "exec_timeout"), "null, \"remaining-budget\" or a duration", e);
      }
      consumer.exec_timeout = ConsumerSpec::ExecTimeout::RemainingBudget;
    } else {
      consumer.exec_timeout = ConsumerSpec::ExecTimeout::Fixed;
      consumer.exec_timeout_value = distribution(e, join(path, "exec_timeout"), Range::Duration);
    }
  }
  if (has(v, "failure_probability")) {
    const std::string at = join(path, "failure_probability");
    const double p = real(v["failure_probability"], at, "a number between 0 and 1");
    if (p < 0 || p > 1) fail(at, "a number between 0 and 1", v["failure_probability"]);
    consumer.failure_probability = p;
  }
  if (has(v, "priority")) {
    consumer.priority = static_cast<int>(integer(v["priority"], join(path, "priority"), -kMaxInt - 1, kMaxInt, "an integer"));
  }
  if (has(v, "stop_ms") && !v["stop_ms"].is_null()) {
    consumer.stop = ms_non_negative(v["stop_ms"], join(path, "stop_ms"));
    if (*consumer.stop < consumer.start) {
      fail(join(path, "stop_ms"), "a time >= start_ms (" + format_number(sim::to_ms(consumer.start)) + ")", v["stop_ms"]);
    }
  }
  if (has(v, "shutdown_grace_ms")) consumer.shutdown_grace = ms_non_negative(v["shutdown_grace_ms"], join(path, "shutdown_grace_ms"));
  if (kind.load_consumer != nullptr) kind.load_consumer(v, path, consumer);
  load_process_loss(v, path, consumer);
  load_eta(v, path, consumer);
  return consumer;
}

// eta hold-outside-prefetch is a basic.qos sent on a live subscription: RabbitMQ applies a new
// per-consumer prefetch only to consumers subscribed after it, so the raise needs global QoS (one
// window for the channel: a classic queue; quorum queues refuse global QoS), or SQS's client-side
// count. Service Bus has no prefetch count to raise.
void check_consumer_eta(const Scenario& s, std::size_t group, const std::string& path) {
  const ConsumerSpec& c = s.consumers[group];
  if (c.eta != ConsumerSpec::Eta::HoldOutsidePrefetch) return;
  const std::string at = join(path, "eta");
  const bool quorum = s.broker.queues[static_cast<std::size_t>(c.queue)].rabbitmq.type == QueueType::Quorum &&
                      s.broker.kind.rfind("rabbitmq", 0) == 0;
  if (quorum)
    fail_message(at, "expected \"ignore\" or \"hold\" on a quorum queue (a basic.qos after the subscription changes no "
                     "existing consumer's prefetch, and quorum queues refuse global QoS), got \"hold-outside-prefetch\"");
  if (s.broker.kind == "azure-servicebus")
    fail_message(at, "expected \"ignore\" or \"hold\" on azure-servicebus (a receiver has no prefetch count to raise), got "
                     "\"hold-outside-prefetch\"");
  if (c.reads_several() && c.prefetch_scope != ConsumerSpec::PrefetchScope::Channel)
    fail_message(at, "expected \"ignore\" or \"hold\" with prefetch_scope \"consumer\" (a basic.qos after the "
                     "subscriptions changes no existing consumer's prefetch; global QoS does: prefetch_scope \"channel\"), "
                     "got \"hold-outside-prefetch\"");
}

void check_consumer_queues(const Scenario& s, std::size_t group, const std::string& path) {
  const ConsumerSpec& c = s.consumers[group];
  const auto type = [&](int q) { return s.broker.queues[static_cast<std::size_t>(q)].rabbitmq.type; };
  const auto name = [&](int q) { return s.broker.queues[static_cast<std::size_t>(q)].name; };
  // One queue or several: RabbitMQ answers basic.consume on a quorum queue from a channel with
  // global QoS with a connection error (rabbit_channel: global_qos_not_supported_for_queue_type),
  // so such a group never receives a message.
  if (c.prefetch_scope == ConsumerSpec::PrefetchScope::Channel && type(c.queue) == QueueType::Quorum) {
    fail_message(join(path, "prefetch_scope"),
                 "expected \"consumer\": quorum queues refuse a consumer on a channel with global QoS, and " +
                     quoted(name(c.queue)) +
                     " is a quorum queue (RabbitMQ answers the group's basic.consume with 540 NOT_IMPLEMENTED \"does not "
                     "support global qos\" and closes the connection: the group could never consume; quorum-queues guide, "
                     "\"Global QoS\"), got \"channel\"");
  }
  if (!c.reads_several()) return;
  const std::string at = join(path, "queue");
  for (int q : c.other_queues) {
    if (type(q) != type(c.queue)) {
      // The channel's prefetch window and consumer timeout follow one queue type's rules.
      fail_message(at, "expected queues of one type, got " + quoted(name(c.queue)) + " (" +
                           (type(c.queue) == QueueType::Quorum ? "quorum" : "classic") + ") and " + quoted(name(q)) + " (" +
                           (type(q) == QueueType::Quorum ? "quorum" : "classic") + "): give the group of each type its own entry");
    }
  }
  if (c.autoscale) {
    fail_message(join(path, "autoscale"), "expected null for a group reading several queues (its scaler would read one queue), got an "
                                          "autoscale object: give each queue a group of its own to autoscale it");
  }
}

}  // namespace brokersim::loader
