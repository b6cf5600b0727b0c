// brokersim import of an ARM template's function app (experiments/cli/import/function_app.cpp,
// docs/import-servicebus.md "Function apps"): the app mapped onto an azure-functions consumer group
// with the source of each value, the plan from the serverfarm's SKU, app settings in the site or in
// its config resources, what the template cannot hold said, and bad values named at their entry.
#include <doctest/doctest.h>

#include <string>

#include "tests/import_test_util.hpp"
#include "tests/test_util.hpp"

namespace import_function_app_test {

using namespace import_test;

// A template of one Service Bus queue `queue_props`, a serverfarm of SKU `sku` (none when empty)
// and a function app of kind functionapp with `site_props` (its properties besides serverFarmId).
std::string app_template(const std::string& sku, const std::string& site_props, const std::string& queue_props = "{}",
                         const std::string& extra = "") {
  std::string farm;
  if (!sku.empty())
    farm = R"({"type": "Microsoft.Web/serverfarms", "apiVersion": "2022-09-01", "name": "plan-a", "sku": )" + sku + R"(},)";
  return R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
  "contentVersion": "1.0.0.0",
  "resources": [
    {"type": "Microsoft.ServiceBus/namespaces/queues", "apiVersion": "2022-10-01-preview", "name": "sb-a/work",
     "properties": )" + queue_props + R"(},
    )" + farm + R"(
    {"type": "Microsoft.Web/sites", "apiVersion": "2022-09-01", "name": "func-a", "kind": "functionapp",
     "properties": {"serverFarmId": "[resourceId('Microsoft.Web/serverfarms', 'plan-a')]")" + site_props + R"(}}
    )" + extra + R"(
  ]})";
}

std::string settings(const std::string& list) { return R"(, "siteConfig": {"appSettings": [)" + list + "]}"; }
std::string setting(const std::string& name, const std::string& value) {
  return R"({"name": ")" + name + R"(", "value": )" + value + "}";
}
const std::string kSb = "AzureFunctionsJobHost__extensions__serviceBus__";

TEST_CASE("import function app: the example maps onto an azure-functions group, each value with its source") {
  const auto i = import_file(kExamples + "servicebus-functions-arm-template.json");
  REQUIRE_MESSAGE(i.status == 0, i.err);
  CHECK(i.scenario["consumers"][0] == json::parse(R"({"queue": "orders", "count": 2, "framework": {"name": "azure-functions",
      "hosting_plan": "premium", "plan_sku": "EP2", "host_cpus": 2, "functionTimeout": "00:15:00", "maxConcurrentCalls": 32,
      "prefetchCount": 0, "maxAutoLockRenewalDuration": "00:10:00", "autoCompleteMessages": true, "maxMessageBatchSize": 100}})"));
  CHECK(i.scenario["producers"][0]["queue"] == "orders");
  CHECK(i.noted("consumers.0 is the function app resources[6] (Microsoft.Web/sites \"func-orders-pipeline\") (framework "
                "azure-functions) on queue \"orders\", from resources[6].properties.siteConfig.appSettings[5] app setting "
                "OrdersQueueName (a queue of the template)"));
  CHECK(i.noted("consumers.0.framework.hosting_plan \"premium\" from resources[5] (Microsoft.Web/serverfarms "
                "\"plan-orders-pipeline\") sku.name \"EP2\""));
  CHECK(i.noted("consumers.0.framework.maxConcurrentCalls 32 from resources[6].properties.siteConfig.appSettings[7] app setting "
                "AzureFunctionsJobHost__extensions__serviceBus__maxConcurrentCalls"));
  CHECK(i.noted("consumers.0.count 2 from resources[6].properties.siteConfig.minimumElasticInstanceCount (the always-ready "
                "instances); resources[6].properties.siteConfig.functionAppScaleLimit 10 caps the instances"));
  CHECK(i.noted("AzureFunctionsJobHost__extensions__serviceBus__maxConcurrentSessions 16 (resources[6].properties.siteConfig."
                "appSettings[12]): not set, as maxConcurrentSessions applies only to session-enabled triggers"));
  CHECK(i.noted("consumers.0.framework.isBatched: not in the template (the trigger's: IsBatched in the function's attribute, "
                "\"cardinality\": \"many\" in function.json): the framework's default false is kept"));
  CHECK(!i.noted("PLACEHOLDER: producers.0 (Poisson 10/s to queue \"orders\", service_ms exponential with mean 100 ms, no deadline) and "
                 "consumers.0"));
  check_runs(i);
}

TEST_CASE("import function app: the plan from the serverfarm's SKU") {
  const auto group = [](const std::string& text) {
    const auto i = import_text(text);
    REQUIRE_MESSAGE(i.status == 0, i.err);
    check_runs(i);
    return i;
  };
  // Y1: Consumption, one instance; an execution's memory is not in a template.
  const auto y1 = group(app_template(R"({"name": "Y1", "tier": "Dynamic"})", ""));
  CHECK(y1.scenario["consumers"][0] == json::parse(R"({"queue": "work", "count": 1,
      "framework": {"name": "azure-functions", "hosting_plan": "consumption"}})"));
  CHECK(y1.noted("consumers.0.framework.execution_memory_mb: not in the template"));
  CHECK(y1.noted("consumers.0.count 1 the scale controller is not modelled: one instance"));
  // FC1: Flex Consumption, its functionAppConfig's memory, always-ready instances and cap.
  const auto fc1 = group(app_template(R"({"name": "FC1", "tier": "FlexConsumption"})",
                                      R"(, "functionAppConfig": {"scaleAndConcurrency": {"instanceMemoryMB": 4096,
                                          "maximumInstanceCount": 40, "alwaysReady": [{"name": "function:ProcessOrder", "instanceCount": 1}]}})"));
  CHECK(fc1.scenario["consumers"][0] == json::parse(R"({"queue": "work", "count": 1, "framework": {"name": "azure-functions",
      "hosting_plan": "flex-consumption", "instanceMemoryMB": 4096, "always_ready_instances": 1}})"));
  CHECK(fc1.noted("resources[2].properties.functionAppConfig.scaleAndConcurrency.maximumInstanceCount 40 caps the instances"));
  // EP3: Premium, 4 cores for the maxConcurrentCalls default; the plan's capacity as the count.
  const auto ep3 = group(app_template(R"({"name": "EP3", "tier": "ElasticPremium", "capacity": 3})", ""));
  CHECK(ep3.scenario["consumers"][0] == json::parse(R"({"queue": "work", "count": 3, "framework": {"name": "azure-functions",
      "hosting_plan": "premium", "plan_sku": "EP3", "host_cpus": 4}})"));
  // Any other SKU is an App Service plan: Dedicated.
  const auto p1 = group(app_template(R"({"name": "P1v3", "tier": "PremiumV3", "capacity": 2})", ""));
  CHECK(p1.scenario["consumers"][0] == json::parse(R"({"queue": "work", "count": 2, "framework": {"name": "azure-functions",
      "hosting_plan": "dedicated", "plan_sku": "P1v3"}})"));
  // No serverfarm in the template: the framework's default plan, said.
  const auto none = group(app_template("", ""));
  CHECK(none.scenario["consumers"][0]["framework"]["hosting_plan"] == "consumption");
  CHECK(none.noted("consumers.0.framework.hosting_plan \"consumption\" from the framework's default (no serverfarm of the template "
                   "is the function app's plan)"));
}

TEST_CASE("import function app: app settings in config resources, a session queue, the host's overrides") {
  // The app settings in a nested config resource (an object), and in a top-level
  // Microsoft.Web/sites/config: both are the site's.
  const std::string nested = R"(, "resources": [{"type": "config", "name": "appsettings", "properties": {")" + kSb +
                             R"(maxConcurrentSessions": "4", ")" + kSb + R"(maxConcurrentCalls": "64", "QueueName": "work"}}])";
  std::string text = app_template(R"({"name": "EP1"})", "", R"({"requiresSession": true})",
                                  R"(, {"type": "Microsoft.Web/sites/config", "name": "func-a/appsettings", "properties": {")" + kSb +
                                      R"(sessionIdleTimeout": "00:00:30"}})");
  text.replace(text.find(R"("kind": "functionapp",)"), 0, nested.substr(2) + ", ");
  const auto i = import_text(text);
  REQUIRE_MESSAGE(i.status == 0, i.err);
  // A session queue: the trigger is session-enabled; maxConcurrentCalls does not apply to it.
  CHECK(i.scenario["consumers"][0] == json::parse(R"({"queue": "work", "count": 1, "framework": {"name": "azure-functions",
      "hosting_plan": "premium", "plan_sku": "EP1", "host_cpus": 1, "isSessionsEnabled": true, "maxConcurrentSessions": 4,
      "sessionIdleTimeout": "00:00:30"}})"));
  CHECK(i.noted("consumers.0.framework.isSessionsEnabled true from broker.queues.work.requires_session"));
  CHECK(i.noted("consumers.0.framework.maxConcurrentSessions 4 from resources[2].resources[0].properties."));
  CHECK(i.noted("consumers.0.framework.sessionIdleTimeout \"00:00:30\" from resources[3].properties."));
  CHECK(i.noted("not set, as maxConcurrentCalls applies only to triggers without sessions"));
  CHECK(i.noted("from resources[2].resources[0].properties.QueueName app setting QueueName (a queue of the template)"));
  check_runs(i);
  // Names are the host's: case-insensitive, ':' for "__".
  const auto colons = import_text(app_template(R"({"name": "Y1"})", settings(setting("azurefunctionsjobhost:extensions:servicebus:PREFETCHCOUNT", "\"8\""))));
  REQUIRE_MESSAGE(colons.status == 0, colons.err);
  CHECK(colons.scenario["consumers"][0]["framework"]["prefetchCount"] == 8);
}

TEST_CASE("import function app: a bad value is an error at its entry in the template") {
  CHECK(import_error(app_template(R"({"name": "Y1"})", settings(setting(kSb + "maxConcurrentCalls", "\"many\"")))) ==
        "brokersim: error: resources[2].properties.siteConfig.appSettings[0].value: expected an integer (the host reads "
        "maxConcurrentCalls as one), got \"many\"\n");
  // A value the framework refuses for the plan: named at the app setting it came from.
  CHECK(import_error(app_template(R"({"name": "Y1"})", settings(setting("AzureFunctionsJobHost__functionTimeout", "\"00:20:00\"")))) ==
        "brokersim: error: resources[2].properties.siteConfig.appSettings[0] app setting AzureFunctionsJobHost__functionTimeout (the "
        "function app's functionTimeout, consumers.0.framework.functionTimeout in the scenario): expected at most 00:10:00 on the "
        "Consumption plan, got 00:20:00\n");
  CHECK(import_error(app_template(R"({"name": "EP1"})", settings(setting(kSb + "minMessageBatchSize", "\"50\"") + ", " +
                                                                setting(kSb + "maxMessageBatchSize", "\"10\"")))) ==
        "brokersim: error: resources[2].properties.siteConfig.appSettings[0] app setting "
        "AzureFunctionsJobHost__extensions__serviceBus__minMessageBatchSize (the function app's minMessageBatchSize, "
        "consumers.0.framework.minMessageBatchSize in the scenario): expected at most maxMessageBatchSize (10): the Functions host "
        "refuses it (\"The minimum message batch size must be less than the maximum message batch size\", "
        "ServiceBusHostBuilderExtensions), got 50\n");
}

}  // namespace import_function_app_test
