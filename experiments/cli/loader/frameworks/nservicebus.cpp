// NServiceBus endpoints on the RabbitMQ transport (docs/framework-nservicebus.md): one endpoint
// instance is one AMQP consumer whose basic.qos is the message processing concurrency times the
// transport's PrefetchMultiplier (or PrefetchCount when given); `count` is the number of
// endpoint instances.
#include <algorithm>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

void translate(Translation& t) {
  t.kinds({"rabbitmq-classic", "rabbitmq-quorum"}, "nservicebus");
  if (t.given("LimitMessageProcessingConcurrencyTo") == nullptr && t.given("host_cpus") == nullptr) {
    fail_message(t.at("LimitMessageProcessingConcurrencyTo"),
                 "expected LimitMessageProcessingConcurrencyTo (NServiceBus's default is max(2, the host's processor "
                 "count): give it, or give host_cpus), got nothing");
  }
  const std::int64_t cpus = t.given("host_cpus") ? t.integer("host_cpus", 1, 1, 100'000) : 0;
  const std::int64_t concurrency =
      t.integer("LimitMessageProcessingConcurrencyTo", std::max<std::int64_t>(2, cpus), 1, 1'000'000, "max(2, host_cpus)");
  const std::int64_t multiplier = t.integer("PrefetchMultiplier", 3, 1, 65535);

  t.set("slots", concurrency, "LimitMessageProcessingConcurrencyTo", "messages processed at once per endpoint instance");
  // The prefetch is PrefetchCountCalculation(concurrency), 3 x by default, or the fixed
  // PrefetchCount; either is raised to at least the concurrency (MessagePump).
  std::int64_t prefetch = concurrency * multiplier;
  std::string from = "LimitMessageProcessingConcurrencyTo, PrefetchMultiplier";
  std::string how = "concurrency x multiplier";
  if (t.given("PrefetchCount") != nullptr) {
    prefetch = t.integer("PrefetchCount", 0, 1, 65535);
    from = "LimitMessageProcessingConcurrencyTo, PrefetchCount";
    how = "PrefetchCount overrides the calculation";
    if (t.given("PrefetchMultiplier") != nullptr) t.no_key("PrefetchMultiplier", "not used: PrefetchCount is given");
  }
  if (prefetch < concurrency) {
    prefetch = concurrency;
    how += ", raised to the concurrency";
  }
  t.set("prefetch", std::min<std::int64_t>(prefetch, 65535), from, how + (prefetch > 65535 ? ", capped at 65535" : ""));
  t.set("ack", "after-finish", "",
        "the transport acks when the handlers' receive transaction completes");
  // Recoverability: immediate retries run again in the same slot, delayed retries go through a
  // delay queue, then the error queue. brokersim's `failed` is a message that has exhausted them.
  const std::int64_t immediate = t.integer("ImmediateRetries", 5, 0, 1'000);
  const std::int64_t delayed = t.integer("DelayedRetries", 3, 0, 1'000);
  const json* failures = t.consumer_key("failure_probability");
  if (failures != nullptr && failures->is_number() && failures->get<double>() > 0 && (immediate > 0 || delayed > 0)) {
    t.refuse(immediate > 0 ? "ImmediateRetries" : "DelayedRetries",
             "above 0 with failure_probability > 0 cannot be honoured (retries are not modelled): give "
             "ImmediateRetries 0 and DelayedRetries 0, and failure_probability as the chance that a message fails "
             "all its attempts");
  }
  const bool fails = failures != nullptr && failures->is_number() && failures->get<double>() > 0;
  t.no_key("ImmediateRetries", fails ? "0: a failed message is not retried in place"
                                     : "not modelled; with failure_probability 0 no handler fails");
  t.no_key("DelayedRetries", "not modelled; a failed message goes to the error queue: brokersim's failed, acked");
}

}  // namespace

const Framework& nservicebus() {
  static const Framework f{"nservicebus",
                           {"host_cpus", "LimitMessageProcessingConcurrencyTo", "PrefetchMultiplier", "PrefetchCount",
                            "ImmediateRetries", "DelayedRetries"},
                           translate};
  return f;
}

}  // namespace brokersim::loader
