// Spring AMQP's SimpleMessageListenerContainer (Spring Boot's spring.rabbitmq.listener.simple.*;
// docs/framework-spring-amqp.md): each of `concurrentConsumers` is its own AMQP consumer on its
// own channel, with its own basic.qos `prefetch`, running one listener call at a time. The group's
// `count` is the number of application instances, so the group has count x concurrentConsumers
// consumers of one slot each.
#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

void translate(Translation& t) {
  t.kinds({"rabbitmq-classic", "rabbitmq-quorum"}, "spring-amqp");
  const std::int64_t prefetch = t.integer("prefetch", 250, 0, 65535);
  const std::int64_t consumers = t.integer("concurrentConsumers", 1, 1, 100'000);
  if (t.given("maxConcurrentConsumers") != nullptr) {
    const std::int64_t m = t.integer("maxConcurrentConsumers", consumers, 1, 100'000);
    if (m != consumers)
      t.refuse("maxConcurrentConsumers", "other than concurrentConsumers (the container's own scaling of consumers) cannot "
                                         "be honoured: give it equal to concurrentConsumers, or use the group's autoscale");
    t.no_key("maxConcurrentConsumers", "equal to concurrentConsumers: the container does not scale");
  }
  const json* mode = t.given("acknowledgeMode");
  std::string ack = "after-finish";
  if (mode != nullptr) {
    if (!mode->is_string()) fail(t.at("acknowledgeMode"), "\"AUTO\", \"NONE\" or \"MANUAL\"", *mode);
    const std::string m = mode->get<std::string>();
    if (m == "NONE") ack = "on-receipt";
    else if (m == "MANUAL")
      t.refuse("acknowledgeMode", "\"MANUAL\" (the listener acks when its own code says) cannot be honoured: give \"AUTO\" or "
                                  "\"NONE\", or leave out framework and give ack");
    else if (m != "AUTO") fail(t.at("acknowledgeMode"), "\"AUTO\", \"NONE\" or \"MANUAL\"", *mode);
  }
  t.text("acknowledgeMode", mode ? mode->get<std::string>() : "AUTO (default)");
  const bool requeue = t.boolean("defaultRequeueRejected", true);

  const std::int64_t instances = t.take_count();
  t.set("count", instances * consumers, "concurrentConsumers",
        "count (" + std::to_string(instances) + " instances) x concurrentConsumers: one channel and consumer each");
  t.set("slots", 1, "concurrentConsumers", "a consumer runs one listener call at a time");
  t.set("prefetch", prefetch, "prefetch", "basic.qos per consumer");
  // A container listening to several queues consumes each on every consumer's channel: its
  // basic.qos counts per queue (global false), or for the channel with globalQos true.
  if (t.boolean("globalQos", false)) t.set("prefetch_scope", "channel", "globalQos", "basic.qos global: one window for the channel");
  t.set("ack", ack, "acknowledgeMode", ack == "on-receipt" ? "NONE: autoAck, settled as sent" : "AUTO: acked when the listener returns");
  // A listener exception nacks the message with requeue = defaultRequeueRejected: back to the
  // queue (true) or rejected (false). brokersim's failed jobs are acked, so failures can be
  // honoured only when they are rejected to nowhere.
  const json* failures = t.consumer_key("failure_probability");
  if (ack == "on-receipt") {
    // autoAck: the broker settled the message as it sent it; a listener exception returns nothing.
    t.no_key("defaultRequeueRejected", "NONE: a message is settled as sent, nothing is requeued or rejected");
  } else if (failures != nullptr && failures->is_number() && failures->get<double>() > 0) {
    if (requeue)
      t.refuse("defaultRequeueRejected", "true (a failed message requeued and redelivered) cannot be honoured with "
                                         "failure_probability > 0: give false");
    t.no_key("defaultRequeueRejected", "false: a failed message is rejected without requeue (brokersim: failed, removed; "
                                       "a dead-letter exchange on the queue is not used for it)");
  } else {
    t.no_key("defaultRequeueRejected", "no job fails (failure_probability 0): no listener exception to requeue");
  }
}

}  // namespace

const Framework& spring_amqp() {
  static const Framework f{"spring-amqp",
                           {"prefetch", "concurrentConsumers", "maxConcurrentConsumers", "acknowledgeMode",
                            "defaultRequeueRejected", "globalQos"},
                           translate,
                           {{"batchSize", "one ack covering several messages"}}};
  return f;
}

}  // namespace brokersim::loader
