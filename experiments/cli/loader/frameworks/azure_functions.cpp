// Azure Functions' Service Bus trigger, extension 5.x (host.json `extensions.serviceBus`, the
// trigger's isSessionsEnabled, host.json's functionTimeout; docs/framework-azure-functions.md):
// one function app instance is one Service Bus client; the group's `count` is the instances.
#include <array>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

void translate(Translation& t) {
  t.kinds({"azure-servicebus"}, "azure-functions");
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
  // The trigger's isBatched (a function taking ServiceBusReceivedMessage[]): batches of up to
  // maxMessageBatchSize are not mapped onto consumers[].batch_handler yet (amazon-sqs only).
  if (t.given("isBatched") != nullptr) {
    if (t.boolean("isBatched", false))
      t.refuse("isBatched", "true (a function that receives a batch of messages) is not modelled yet on azure-servicebus: "
                            "give false, a function that receives one message at a time");
    t.no_key("isBatched", "false: the function receives one message at a time");
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
  // functionTimeout's default is the hosting plan's (functions-scale#timeout).
  const json* plan = t.given("hosting_plan");
  std::string plan_name = "consumption";
  if (plan != nullptr) {
    const std::size_t i = choice(*plan, t.at("hosting_plan"), {"consumption", "flex-consumption", "premium", "dedicated"});
    plan_name = std::string(std::array<const char*, 4>{"consumption", "flex-consumption", "premium", "dedicated"}[i]);
  }
  t.text("hosting_plan", plan == nullptr ? "consumption (default)" : plan_name);
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
                            "hosting_plan", "functionTimeout", "isBatched"},
                           translate,
                           {{"maxMessageBatchSize", "batched triggers: the translation is for functions that receive one message at a time"},
                            {"minMessageBatchSize", "batched triggers: the translation is for functions that receive one message at a time"},
                            {"maxBatchWaitTime", "batched triggers: the translation is for functions that receive one message at a time"},
                            {"maxConcurrentCallsPerSession", "taken as 1 (one call per session)"},
                            {"clientRetryOptions", "retries of SDK calls only"}}};
  return f;
}

}  // namespace brokersim::loader
