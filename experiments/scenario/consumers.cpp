// Consumer groups: identical consumers reading one queue, their prefetch, slots, clocks and
// admission rules.
#include "experiments/scenario/broker_kinds.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kConsumerKeys[] = {"queue",         "count",      "prefetch",     "slots",
                                              "start_ms",      "clock_offset_ms", "uncertainty_ms", "admission",
                                              "min_window_ms", "on_expired", "exec_timeout", "failure_probability",
                                              "priority"};

constexpr std::int64_t kMaxSlots = 1'000'000;
constexpr std::int64_t kMaxPrefetch = 65535;  // AMQP 0-9-1 basic.qos prefetch-count is 16 bits

}  // namespace

ConsumerSpec load_consumer(const json& v, const std::string& path, const Context& context, std::int64_t& total) {
  object_at(v, path);
  const BrokerKind& kind = *context.broker;
  check_keys(v, path, section_keys(kConsumerKeys, kind, Section::Consumer), foreign_key_owner(kind, Section::Consumer));
  ConsumerSpec consumer;
  consumer.prefetch = 0;  // RabbitMQ's default: unlimited
  consumer.queue = queue_index(member(v, "queue"), join(path, "queue"), context);
  if (has(v, "count")) {
    consumer.count = static_cast<int>(integer(v["count"], join(path, "count"), 1, kMaxConsumers, "an integer >= 1"));
  }
  total += consumer.count;
  if (total > kMaxConsumers) {
    fail(join(path, "count"), "at most " + std::to_string(kMaxConsumers) + " consumers across all groups", member(v, "count"));
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
    constexpr OnExpired kActions[] = {OnExpired::Ack, OnExpired::Reject, OnExpired::Requeue};
    consumer.on_expired = kActions[choice(v["on_expired"], join(path, "on_expired"), {"ack", "reject", "requeue"})];
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
  if (kind.load_consumer != nullptr) kind.load_consumer(v, path, consumer);
  return consumer;
}

}  // namespace brokersim::loader
