// MassTransit receive endpoints on RabbitMQ (docs/framework-masstransit.md): one endpoint on one
// service instance is one AMQP consumer with basic.qos PrefetchCount, running at most
// ConcurrentMessageLimit consumers at once; the group's `count` is the service instances.
#include <algorithm>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

void translate(Translation& t) {
  t.kinds({"rabbitmq-classic", "rabbitmq-quorum"}, "masstransit");
  // The transport's default PrefetchCount follows the host's processor count.
  if (t.given("PrefetchCount") == nullptr && t.given("host_cpus") == nullptr) {
    fail_message(t.at("PrefetchCount"),
                 "expected PrefetchCount (MassTransit's default follows the host's processor count: give it, or give "
                 "host_cpus), got nothing");
  }
  const std::int64_t cpus = t.given("host_cpus") ? t.integer("host_cpus", 1, 1, 100'000) : 0;
  const std::int64_t prefetch = t.integer("PrefetchCount", std::max<std::int64_t>(16, cpus * 2), 1, 65535, "max(16, 2 x host_cpus)");
  const std::int64_t limit = t.integer("ConcurrentMessageLimit", prefetch, 1, 65535, "PrefetchCount");
  t.set("prefetch", prefetch, "PrefetchCount", "basic.qos of the endpoint's consumer");
  t.set("slots", limit, "ConcurrentMessageLimit", "messages consumed at once per endpoint");
  t.set("ack", "after-finish", "", "acked when the consumer completes");
  // A consumer that throws (after any retry policy) has its message moved to the _error queue:
  // gone from this queue, as brokersim's failed.
  const std::int64_t retries = t.integer("UseMessageRetry.Immediate", 0, 0, 1'000);
  const json* failures = t.consumer_key("failure_probability");
  if (retries > 0 && failures != nullptr && failures->is_number() && failures->get<double>() > 0)
    t.refuse("UseMessageRetry.Immediate", "above 0 with failure_probability > 0 cannot be honoured (in-process retries are "
                                          "not modelled): give 0, and failure_probability as the chance that every attempt fails");
  t.no_key("UseMessageRetry.Immediate", "a failed message is moved to the _error queue: brokersim's failed, acked");
}

}  // namespace

const Framework& masstransit() {
  static const Framework f{"masstransit",
                           {"host_cpus", "PrefetchCount", "ConcurrentMessageLimit", "UseMessageRetry.Immediate"},
                           translate,
                           {{"UseDelayedRedelivery", "delayed redelivery re-sends the message later"},
                            {"UseScheduledRedelivery", "scheduled redelivery re-sends the message later"},
                            {"PublishFaults", "the Fault<T> event is not simulated"}}};
  return f;
}

}  // namespace brokersim::loader
