// Azure Functions' Service Bus trigger, extension 5.x (host.json `extensions.serviceBus`, the
// trigger's isSessionsEnabled, host.json's functionTimeout; docs/framework-azure-functions.md):
// one function app instance is one Service Bus client; the group's `count` is the instances.
#include <array>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

void translate_single(Translation& t) {
  // The extension's default MaxConcurrentCalls is 16 x the processor count (ServiceBusOptions);
  // a Consumption instance has one CPU, where it is the documented 16.
  const std::int64_t cpus = t.integer("host_cpus", 1, 1, 100'000);
  const bool sessions = t.boolean("isSessionsEnabled", false);
  if (sessions) {
    const std::int64_t per_instance = t.integer("maxConcurrentSessions", 8, 1, 1'000'000);
    t.set("slots", per_instance, "maxConcurrentSessions", "sessions held at once per instance, one call each");
    if (t.given("sessionIdleTimeout") != nullptr) {
      const double idle = t.timespan_ms("sessionIdleTimeout", "00:01:00");
      t.set("session_idle_timeout_ms", idle, "sessionIdleTimeout");
    } else {
      // Unset, the extension waits the client's TryTimeout (60 s) on an idle session.
      const double idle = t.timespan_ms("sessionIdleTimeout", "00:01:00");
      t.set("session_idle_timeout_ms", idle, "sessionIdleTimeout", "unset: the client's TryTimeout");
    }
    if (t.given("maxConcurrentCalls") != nullptr)
      t.refuse("maxConcurrentCalls", "applies only without sessions (isSessionsEnabled false): give maxConcurrentSessions");
  } else {
    const std::int64_t calls = t.integer("maxConcurrentCalls", 16 * cpus, 1, 1'000'000, "16 x host_cpus");
    t.set("slots", calls, "maxConcurrentCalls", "concurrent function calls per instance");
    for (const char* s : {"maxConcurrentSessions", "sessionIdleTimeout"})
      if (t.given(s) != nullptr) t.refuse(s, "applies only with isSessionsEnabled true");
  }
  const std::int64_t prefetch = t.integer("prefetchCount", 0, 0, 1'000'000);
  t.set("prefetch", prefetch, "prefetchCount", prefetch == 0 ? "no prefetch buffer: one receive per free call" : "");
  const double renewal = t.timespan_ms("maxAutoLockRenewalDuration", "00:05:00");
  t.set("max_auto_lock_renewal_ms", renewal, "maxAutoLockRenewalDuration",
        sessions ? "renews the session lock" : "renews the message lock while the function runs");
  if (!t.boolean("autoCompleteMessages", true)) {
    t.refuse("autoCompleteMessages", "false (the function settles messages in its own code) cannot be honoured: give true, "
                                     "or leave out framework and give ack");
  }
  t.set("ack", "after-finish", "autoCompleteMessages", "completed when the function succeeds, abandoned when it throws");
  t.set("receive_mode", "peek-lock", "", "the trigger always receives in PeekLock");
}

// The batch settings (maxMessageBatchSize, minMessageBatchSize, maxBatchWaitTime) are host.json's,
// shared by every function of the app: the host checks them at start-up whether or not this
// function is batched (ServiceBusHostBuilderExtensions.AddServiceBus), so they are read either way.
struct BatchSettings {
  std::int64_t max, min;
  double wait_ms;
};

// Without isBatched, only the settings given are read (and shown).
BatchSettings batch_settings(Translation& t, bool batched) {
  const auto read = [&](std::string_view s) { return batched || t.given(s) != nullptr; };
  // MaxMessageBatchSize: no bound in ServiceBusOptions; ReceiveMessagesAsync refuses maxMessages
  // below 1, and brokersim's batch is at most its largest prefetch.
  const std::int64_t max = read("maxMessageBatchSize") ? t.integer("maxMessageBatchSize", 1000, 1, 65535) : 1000;
  const std::int64_t min = read("minMessageBatchSize") ? t.integer("minMessageBatchSize", 1, 1, 65535) : 1;
  if (min > max)
    fail_message(t.at("minMessageBatchSize"),
                 "expected at most maxMessageBatchSize (" + (read("maxMessageBatchSize") ? t.shown("maxMessageBatchSize") : "1000 (default)") +
                     "): the Functions host refuses it (\"The minimum message batch size must be less than the maximum message "
                     "batch size\", ServiceBusHostBuilderExtensions), got " + t.shown("minMessageBatchSize"));
  const double wait = read("maxBatchWaitTime") ? t.timespan_ms("maxBatchWaitTime", "00:00:30") : 30'000;
  if (wait > 150'000)
    fail_message(t.at("maxBatchWaitTime"),
                 "expected at most 00:02:30: the Functions host refuses a longer wait (\"no longer then 50% of the entity message "
                 "lock duration, meaning the maximum allowed value is 2 minutes and 30 seconds\", ServiceBusHostBuilderExtensions), "
                 "got " + t.shown("maxBatchWaitTime"));
  return {max, min, wait};
}

// The trigger's isBatched (a function taking ServiceBusReceivedMessage[]): the batch receive loop
// of ServiceBusListener. One loop per instance awaits each invocation before it receives again
// (concurrency 1), ReceiveMessagesAsync(maxMessageBatchSize) returns what is available, a batch
// waits for minMessageBatchSize up to maxBatchWaitTime, and afterwards each message is completed
// (success) or abandoned (failure). The receiver renews no lock (MaxAutoLockRenewalDuration "does
// not apply for functions that receive a batch of messages", ServiceBusOptions).
void translate_batched(Translation& t, const BatchSettings& b) {
  if (t.boolean("isSessionsEnabled", false))
    t.refuse("isSessionsEnabled", "true with isBatched true (a batched session trigger) is not modelled: give false");
  for (const char* s : {"maxConcurrentSessions", "sessionIdleTimeout"})
    if (t.given(s) != nullptr) t.refuse(s, "applies only with isSessionsEnabled true");
  t.integer("maxConcurrentCalls", 16 * t.integer("host_cpus", 1, 1, 100'000), 1, 1'000'000, "16 x host_cpus");
  t.no_key("maxConcurrentCalls", "does not apply to batched functions (ServiceBusOptions): one invocation at a time per instance");
  t.no_key("host_cpus", "only in the maxConcurrentCalls default, which batched functions do not use");
  t.set("slots", 1, "isBatched", "the batch receive loop runs one invocation at a time per instance (ServiceBusListener)");
  t.integer("prefetchCount", 0, 0, 1'000'000);
  t.no_key("prefetchCount", "not modelled with isBatched: the instance holds only the batch it receives (maxMessageBatchSize)");
  t.set("prefetch", b.max, "maxMessageBatchSize", "ReceiveMessagesAsync(maxMessageBatchSize): the instance holds its batch");
  // How the code runs the array it receives is the function's own, not host.json's: brokersim's
  // setting, whose default is the docs' batched example (functions-bindings-service-bus-trigger,
  // ServiceBusReceivedMessageBatchFunction: `foreach (ServiceBusReceivedMessage message in
  // messages)`), one message after another.
  const std::string execution = t.choice("batch_execution", {"sequential", "concurrent"}, "sequential",
                                         "the function loops over the array it receives");
  json handler = {{"max_messages", b.max}, {"window_ms", 0}, {"item_failures", false}, {"execution", execution}};
  if (b.min > 1) {
    handler["min_messages"] = b.min;
    handler["window_ms"] = b.wait_ms;
  } else {
    t.no_key("maxBatchWaitTime", "ignored with minMessageBatchSize 1: a batch is what one receive brought");
  }
  const std::string in_turn = execution == "sequential" ? "; its messages run in turn" : "; its messages run at once";
  t.set("batch_handler", handler, "maxMessageBatchSize, minMessageBatchSize, maxBatchWaitTime, batch_execution",
        (b.min > 1 ? "one invocation per batch; it waits for minMessageBatchSize messages up to maxBatchWaitTime"
                   : "one invocation per batch: what one receive brought, up to maxMessageBatchSize") +
            in_turn);
  t.timespan_ms("maxAutoLockRenewalDuration", "00:05:00");
  t.no_key("maxAutoLockRenewalDuration", "does not apply to batched functions (ServiceBusOptions)");
  t.set("max_auto_lock_renewal_ms", 0, "isBatched", "no lock renewal: each message's lock runs from its receipt");
  if (!t.boolean("autoCompleteMessages", true)) {
    t.refuse("autoCompleteMessages", "false (the function settles messages in its own code) cannot be honoured: give true, "
                                     "or leave out framework and give ack");
  }
  t.set("ack", "after-finish", "autoCompleteMessages",
        "each message completed when the invocation succeeds, each abandoned when it fails");
  t.set("receive_mode", "peek-lock", "", "the trigger always receives in PeekLock");
}

// The hosting plan's bill in Microsoft's units (docs/framework-azure-functions.md, "Billing"):
// Consumption, executions and GB-seconds of each execution's memory (rounded up to 128 MB, at most
// 1,536) and duration (at least 100 ms); Flex Consumption, executions and GB-seconds of each
// instance's memory while it executes, and of its always-ready instances' baseline; Premium, the
// vCPU-seconds and GB-seconds of the instances allocated (EP1 1 core 3.5 GB, EP2 2 and 7, EP3 4 and
// 14); Dedicated, the App Service plan's instance-hours. Each setting belongs to one plan.
void bill_plan(Translation& t, const std::string& plan) {
  using Plan = FrameworkMapping::Billing::Plan;
  const auto only = [&](std::string_view setting, std::string_view plans) {
    if (t.given(setting) != nullptr && plans.find(plan) == std::string_view::npos)
      fail_message(t.at(setting), "a setting of hosting_plan " + std::string(plans) + " only (this group's hosting_plan is " + plan +
                                      "): give it there, or leave it out");
  };
  only("execution_memory_mb", "consumption");
  only("instanceMemoryMB", "flex-consumption");
  only("always_ready_instances", "flex-consumption");
  only("plan_sku", "premium, dedicated");
  FrameworkMapping::Billing b;
  if (plan == "consumption") {
    b.plan = Plan::FunctionsConsumption;
    if (t.given("execution_memory_mb") != nullptr) {
      const std::int64_t mb = t.integer("execution_memory_mb", 128, 1, 1536);
      b.memory_mb = static_cast<double>((mb + 127) / 128 * 128);
      t.no_key("execution_memory_mb", "billing only: GB-seconds = each execution's duration rounded up to 1 ms, at least "
                                      "100 ms, x " + format_number(b.memory_mb) + " MB (rounded up to 128 MB) / 1024");
    }
  } else if (plan == "flex-consumption") {
    b.plan = Plan::FunctionsFlex;
    // The instance sizes Flex offers (flex-consumption-plan, "Instance memory").
    const std::int64_t mb = t.integer("instanceMemoryMB", 2048, 512, 4096);
    if (mb != 512 && mb != 2048 && mb != 4096) fail(t.at("instanceMemoryMB"), "one of 512, 2048, 4096 (MB)", *t.given("instanceMemoryMB"));
    b.memory_mb = static_cast<double>(mb);
    t.no_key("instanceMemoryMB", "billing only: GB-seconds = each instance's active periods (at least 1 s, rounded up to "
                                 "100 ms) x the instance memory / 1024");
    b.always_ready = static_cast<int>(t.integer("always_ready_instances", 0, 0, 1000));
    t.no_key("always_ready_instances", "billing only: the group's first instances are always ready: their baseline GB-seconds "
                                       "over the whole span, and their executions apart");
  } else if (plan == "premium") {
    b.plan = Plan::FunctionsPremium;
    const json* sku = t.given("plan_sku");
    const std::size_t i = sku == nullptr ? 0 : choice(*sku, t.at("plan_sku"), {"EP1", "EP2", "EP3"});
    b.sku = std::array<const char*, 3>{"EP1", "EP2", "EP3"}[i];
    b.vcpus = std::array<double, 3>{1, 2, 4}[i];
    b.memory_mb = std::array<double, 3>{3.5 * 1024, 7 * 1024, 14 * 1024}[i];
    t.text("plan_sku", sku == nullptr ? "EP1 (default)" : b.sku);
    t.no_key("plan_sku", "billing only: vCPU-seconds and GB-seconds of the instances allocated, at least one at all times");
  } else {
    b.plan = Plan::FunctionsDedicated;
    if (const json* sku = t.given("plan_sku")) {
      if (!sku->is_string() || sku->get<std::string>().empty()) fail(t.at("plan_sku"), "an App Service plan SKU name (\"P1v3\")", *sku);
      b.sku = sku->get<std::string>();
      t.text("plan_sku", b.sku);
      t.no_key("plan_sku", "billing only: the App Service plan bills instance-hours of its SKU");
    }
  }
  t.bill(b);
}

void translate(Translation& t) {
  t.kinds({"azure-servicebus"}, "azure-functions");
  const bool batched = t.given("isBatched") != nullptr && t.boolean("isBatched", false);
  const BatchSettings batch = batch_settings(t, batched);
  if (batched) {
    translate_batched(t, batch);
  } else {
    if (t.given("batch_execution") != nullptr) t.choice("batch_execution", {"sequential", "concurrent"}, "sequential");
    for (const char* s : {"maxMessageBatchSize", "minMessageBatchSize", "maxBatchWaitTime", "batch_execution"})
      if (t.given(s) != nullptr) t.no_key(s, "applies only to batched functions (isBatched true)");
    if (t.given("isBatched") != nullptr) t.no_key("isBatched", "false: the function receives one message at a time");
    translate_single(t);
  }
  // functionTimeout's default is the hosting plan's (functions-scale#timeout).
  const json* plan = t.given("hosting_plan");
  std::string plan_name = "consumption";
  if (plan != nullptr) {
    const std::size_t i = choice(*plan, t.at("hosting_plan"), {"consumption", "flex-consumption", "premium", "dedicated"});
    plan_name = std::string(std::array<const char*, 4>{"consumption", "flex-consumption", "premium", "dedicated"}[i]);
  }
  t.text("hosting_plan", plan == nullptr ? "consumption (default)" : plan_name);
  bill_plan(t, plan_name);
  const std::string_view fallback = plan_name == "consumption" ? "00:05:00" : "00:30:00";
  // -1 is no limit, allowed on every plan but Consumption (functions-scale#timeout).
  const json* given = t.given("functionTimeout");
  if (given != nullptr && (*given == -1 || *given == "-1")) {
    if (plan_name == "consumption")
      fail_message(t.at("functionTimeout"), "expected at most 00:10:00 on the Consumption plan, got -1 (no limit)");
    t.text("functionTimeout", "-1");
    t.no_key("functionTimeout", "no limit: executions are never stopped");
    return;
  }
  const double limit = t.timespan_ms("functionTimeout", fallback);
  // The host refuses a timeout under a second ("FunctionTimeout must be greater than 00:00:01",
  // ScriptJobHostOptionsSetup.MinFunctionTimeout): 00:00:00 would time out every execution.
  if (limit < 1'000)
    fail_message(t.at("functionTimeout"),
                 "expected at least 00:00:01 (the Functions host refuses a shorter functionTimeout), got " +
                     t.shown("functionTimeout"));
  if (plan_name == "consumption" && limit > 600'000)
    fail_message(t.at("functionTimeout"), "expected at most 00:10:00 on the Consumption plan, got " + t.shown("functionTimeout"));
  t.set("exec_timeout", limit, "hosting_plan, functionTimeout",
        "a timed-out execution fails: the message is abandoned (the worker restart it causes is not modelled)");
}

}  // namespace

const Framework& azure_functions() {
  static const Framework f{"azure-functions",
                           {"host_cpus", "isSessionsEnabled", "maxConcurrentCalls", "maxConcurrentSessions",
                            "sessionIdleTimeout", "prefetchCount", "maxAutoLockRenewalDuration", "autoCompleteMessages",
                            "hosting_plan", "functionTimeout", "isBatched", "maxMessageBatchSize", "minMessageBatchSize",
                            "maxBatchWaitTime", "batch_execution", "execution_memory_mb", "instanceMemoryMB",
                            "always_ready_instances", "plan_sku"},
                           translate,
                           {{"maxConcurrentCallsPerSession", "taken as 1 (one call per session)"},
                            {"clientRetryOptions", "retries of SDK calls only"}}};
  return f;
}

}  // namespace brokersim::loader
