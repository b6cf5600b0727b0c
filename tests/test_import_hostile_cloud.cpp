// Issue 38's third hostile round, the cloud readers: the Service Bus, SQS and CloudFormation
// importers, the ARM expression evaluator, ISO-8601 / timedelta / TimeSpan durations and the
// Functions framework's timeouts. Each input here once crashed (unbounded recursion, std::regex
// recursion, a 10^12-byte string), was accepted when the service refuses it, or failed with
// "brokersim: error: stod" and no key. Each is now an input error: exit status 2, the entry's path,
// what was expected and what was given.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/cli/import/common.hpp"
#include "experiments/cli/loader/frameworks/number_text.hpp"
#include "tests/test_util.hpp"

namespace {

using nlohmann::json;

struct CloudImport {
  int status;
  std::string out, err;
};

// `brokersim import` of `text`; on failure, checked to leave no output file behind.
CloudImport cloud_import(const std::string& text) {
  brokersim::test::ScratchDir dir("brokersim-hostile-cloud");
  const std::string in = dir.write("input.json", text);
  const std::string out = dir.path("out.json");
  const auto r = brokersim::test::run_cli({"import", in, "--out", out});
  if (r.status != 0) CHECK_MESSAGE(!std::filesystem::exists(out), "a failed import left an output behind");
  return {r.status, r.status == 0 ? brokersim::test::read_file(out) : r.out, r.err};
}

// The error of an input that must be refused: exit status 2, "brokersim: error: ...".
std::string cloud_error(const std::string& text) {
  const auto r = cloud_import(text);
  CHECK(r.status == 2);
  CHECK(r.err.rfind("brokersim: error: ", 0) == 0);
  return r.err;
}

bool cloud_has(const std::string& text, const std::string& fragment) {
  const bool found = text.find(fragment) != std::string::npos;
  if (!found) MESSAGE("missing \"" << fragment << "\" in: " << text.substr(0, 2000));
  return found;
}

// An ARM template with one queue whose properties are `properties` and the given variables.
std::string cloud_arm(const json& properties, const json& variables = json::object()) {
  const json doc = {
      {"$schema", "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"},
      {"variables", variables},
      {"resources", json::array({{{"type", "Microsoft.ServiceBus/namespaces/queues"}, {"name", "ns/work"},
                                  {"properties", properties}}})}};
  return doc.dump();
}

std::string cloud_repeat(const std::string& s, std::size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// A CloudFormation template: queue Q whose dead-letter target is `target`, and `parameters`.
std::string cloud_cfn(const json& target, const json& parameters) {
  const json doc = {
      {"AWSTemplateFormatVersion", "2010-09-09"},
      {"Parameters", parameters},
      {"Resources",
       {{"Q", {{"Type", "AWS::SQS::Queue"},
               {"Properties", {{"QueueName", "work"},
                               {"RedrivePolicy", {{"deadLetterTargetArn", target}, {"maxReceiveCount", 3}}}}}}}}}};
  return doc.dump();
}

// A Service Bus scenario whose one consumer group is the Azure Functions framework with `settings`.
std::string cloud_functions(const json& settings) {
  json framework = settings;
  framework["name"] = "azure-functions";
  const json doc = {
      {"seed", 1},
      {"stop", {{"time_ms", 5000}}},
      {"broker",
       {{"kind", "azure-servicebus"}, {"queues", {{"q", {{"lock_duration_ms", 30000}, {"max_delivery_count", 3}}}}}}},
      {"producers", json::array({{{"queue", "q"}, {"arrivals", {{"poisson", {{"rate_per_s", 5}}}}}, {"service_ms", 100}}})},
      {"consumers", json::array({{{"queue", "q"}, {"framework", framework}}})}};
  return doc.dump();
}

brokersim::test::CliResult cloud_run(const std::string& scenario) {
  brokersim::test::ScratchDir dir("brokersim-hostile-cloud-run");
  return brokersim::test::run_cli({"run", dir.write("s.json", scenario), "--json"});
}

}  // namespace

TEST_CASE("import hostile cloud: a CloudFormation parameter whose Default refers to itself or round a loop") {
  // A parameter whose Default is a Ref to itself once recursed until the stack ran out (SIGSEGV).
  const std::string self = cloud_error(cloud_cfn({{"Ref", "DlqArn"}}, {{"DlqArn", {{"Type", "String"}, {"Default", {{"Ref", "DlqArn"}}}}}}));
  CHECK(self ==
        "brokersim: error: Resources.Q.Properties.RedrivePolicy.deadLetterTargetArn: expected a queue ARN, or a Ref to a "
        "parameter whose Default is one (the parameters' Defaults refer to each other in a loop: \"DlqArn\" -> \"DlqArn\"), "
        "got {\"Ref\":\"DlqArn\"}\n");
  const std::string loop = cloud_error(cloud_cfn(
      {{"Ref", "A"}}, {{"A", {{"Type", "String"}, {"Default", {{"Ref", "B"}}}}}, {"B", {{"Type", "String"}, {"Default", {{"Ref", "A"}}}}}}));
  CHECK(cloud_has(loop, "Resources.Q.Properties.RedrivePolicy.deadLetterTargetArn: expected a queue ARN"));
  CHECK(cloud_has(loop, "refer to each other in a loop: \"A\" -> \"B\" -> \"A\"), got {\"Ref\":\"A\"}"));
  // A chain that ends in an ARN is followed (no recursion, each parameter once).
  const auto chain = cloud_import(cloud_cfn({{"Ref", "A"}}, {{"A", {{"Type", "String"}, {"Default", {{"Ref", "B"}}}}},
                                                             {"B", {{"Type", "String"}, {"Default", "arn:aws:sqs:r:1:dlq"}}}}));
  REQUIRE_MESSAGE(chain.status == 0, chain.err);
  CHECK(json::parse(chain.out)["broker"]["queues"]["work"]["dead_letter_to"] == "dlq");
}

TEST_CASE("import hostile cloud: ARM calls nested 200000 deep in one string are refused at 64") {
  const auto nested = [](std::size_t depth) {
    return "[" + cloud_repeat("concat(", depth) + "'PT1M'" + cloud_repeat(")", depth) + "]";
  };
  // 200,000 deep once overflowed the stack: the JSON depth limit does not look inside a string.
  const std::string deep = cloud_error(cloud_arm({{"lockDuration", nested(200000)}}));
  CHECK(cloud_has(deep, "brokersim: error: resources[0].properties.lockDuration: expected a template expression brokersim can "
                        "evaluate ("));
  CHECK(cloud_has(deep, "; calls nested more than 64 deep), got \"[concat(concat(concat("));
  CHECK(cloud_has(cloud_error(cloud_arm({{"lockDuration", nested(65)}})), "calls nested more than 64 deep"));
  const auto at_limit = cloud_import(cloud_arm({{"lockDuration", nested(64)}}));
  REQUIRE_MESSAGE(at_limit.status == 0, at_limit.err);
  CHECK(json::parse(at_limit.out)["broker"]["queues"]["work"]["lock_duration_ms"] == 60000);
  // The deepest evaluation allowed, 32 variables each referring to the next inside calls nested
  // 63 deep, runs on an ordinary stack.
  json vars = json::object();
  for (int k = 0; k < 31; ++k)
    vars["v" + std::to_string(k)] = "[" + cloud_repeat("concat(", 63) + "variables('v" + std::to_string(k + 1) + "')" +
                                    cloud_repeat(")", 63) + "]";
  vars["v31"] = "PT2M";
  const auto deepest = cloud_import(cloud_arm({{"lockDuration", "[variables('v0')]"}}, vars));
  REQUIRE_MESSAGE(deepest.status == 0, deepest.err);
  CHECK(json::parse(deepest.out)["broker"]["queues"]["work"]["lock_duration_ms"] == 120000);
  vars["v31"] = "[variables('v32')]";
  vars["v32"] = "PT2M";
  CHECK(cloud_has(cloud_error(cloud_arm({{"lockDuration", "[variables('v0')]"}}, vars)),
                  "parameters and variables refer on more than 32 deep (variables('v0') -> ... -> variables('v32'))"));
  // A loop among variables is named.
  CHECK(cloud_has(cloud_error(cloud_arm({{"lockDuration", "[variables('a')]"}},
                                        {{"a", "[concat(variables('b'))]"}, {"b", "[variables('a')]"}})),
                  "refer to each other in a loop: variables('a') -> variables('b') -> variables('a'))"));
}

TEST_CASE("import hostile cloud: ARM format() and concat() strings are bounded before they are built") {
  // v0 formats v1 ten times, v1 formats v2 ten times, ...: v0 would be 10^12 bytes (once
  // std::bad_alloc). v6 (10^6 bytes) is built; v5's 10^7 is refused before it is.
  json vars = json::object();
  for (int k = 0; k < 12; ++k)
    vars["v" + std::to_string(k)] = "[format('{0}{0}{0}{0}{0}{0}{0}{0}{0}{0}', variables('v" + std::to_string(k + 1) + "'))]";
  vars["v12"] = "x";
  const std::string big = cloud_error(cloud_arm({{"lockDuration", "[variables('v0')]"}}, vars));
  CHECK(cloud_has(big, "brokersim: error: resources[0].properties.lockDuration: expected a template expression"));
  CHECK(cloud_has(big, "; the string format() builds would be 10000000 bytes, more than brokersim's limit of 1048576 (1 MiB)), "
                       "got \"[variables('v0')]\""));
  // Ten references each to a variable that references the next ten times: each variable is
  // evaluated once (10^12 evaluations before).
  json fan = json::object();
  for (int k = 0; k < 12; ++k) {
    const std::string next = "variables('w" + std::to_string(k + 1) + "')";
    fan["w" + std::to_string(k)] = "[concat(" + next + cloud_repeat(", " + next, 9) + ")]";
  }
  fan["w12"] = "";
  const auto fanned = cloud_import(cloud_arm({{"lockDuration", "[concat(variables('w0'), 'PT3M')]"}}, fan));
  REQUIRE_MESSAGE(fanned.status == 0, fanned.err);
  CHECK(json::parse(fanned.out)["broker"]["queues"]["work"]["lock_duration_ms"] == 180000);
  // Copies of a 10^6-byte variable count too: 70 in one concat() pass 64 MiB in all.
  std::string many = "[concat(variables('v6')";
  for (int k = 0; k < 69; ++k) many += ", variables('v6')";
  many += ")]";
  CHECK(cloud_has(cloud_error(cloud_arm({{"lockDuration", many}}, vars)),
                  "the template's expressions would build more than 67108864 bytes (64 MiB) in all"));
  // concat() of strings over 1 MiB in all.
  CHECK(cloud_has(cloud_error(cloud_arm({{"lockDuration", "[concat(variables('v6'), variables('v6'))]"}}, vars)),
                  "the string concat() builds would be 2000000 bytes, more than brokersim's limit of 1048576 (1 MiB)"));
}

TEST_CASE("import hostile cloud: Service Bus durations of 300000 digits are too large, read without std::regex") {
  // 300,000 digits + ":00:00" once overflowed the stack in std::regex_match.
  const std::string digits = cloud_repeat("9", 300000);
  const std::string lock = cloud_error(json({{"name", "a"}, {"lockDuration", digits + ":00:00"}}).dump());
  CHECK(cloud_has(lock, "brokersim: error: lockDuration: expected a duration of at most P10675199DT2H48M5.4775807S "
                        "(TimeSpan.MaxValue, .NET's longest, which Service Bus reads as no limit), got \"9999"));
  CHECK(cloud_has(lock, " (too large)\n"));
  // 400-digit ISO-8601 numbers and timedelta day counts: once "brokersim: error: stod".
  const std::string nines = cloud_repeat("9", 400);
  for (const std::string& ttl : {"PT" + nines + "S", "P" + nines + "D", nines + " days, 0:00:00", std::string("P99999999D")}) {
    const std::string e = cloud_error(json({{"name", "a"}, {"defaultMessageTimeToLive", ttl}}).dump());
    CHECK(cloud_has(e, "brokersim: error: defaultMessageTimeToLive: expected a duration of at most P10675199DT2H48M5.4775807S"));
    CHECK(cloud_has(e, "(too large)"));
  }
  // Not numbers at all: the key, what was expected, what was given.
  for (const std::string& bad : {std::string("PT.S"), std::string("PT1.S"), std::string("0:00:.5"), std::string("1 days, 0:0:00"),
                                 std::string("0:01:0012"), std::string("PT1." + cloud_repeat("5", 19) + "S")}) {
    const std::string e = cloud_error(json({{"name", "a"}, {"lockDuration", bad}}).dump());
    CHECK(e == "brokersim: error: lockDuration: expected an ISO-8601 duration (PT1M, P14D, PT0.5S, P1DT2H30M), got " +
                   json(bad).dump() + "\n");
  }
  // What stays: TimeSpan.MaxValue (and az's timedelta of it, rounded up to microseconds) is no
  // limit; timedelta forms and commas are read.
  using brokersim::import::iso8601_ms;
  CHECK(!iso8601_ms("P10675199DT2H48M5.4775807S", "p"));
  CHECK(!iso8601_ms("10675199 days, 2:48:05.477581", "p"));
  CHECK(*iso8601_ms("1 day, 0:00:01.5", "p") == 86401500);
  CHECK(*iso8601_ms("2 days, 10:00:00", "p") == 2 * 86400e3 + 36000e3);
  CHECK(*iso8601_ms("PT0,5S", "p") == 500);
  CHECK(*iso8601_ms("PT" + cloud_repeat("0", 500) + "7S", "p") == 7000);
}

TEST_CASE("import hostile cloud: one routine reads the numbers, with bounded digits") {
  using brokersim::loader::read_decimal;
  using brokersim::loader::read_integer;
  std::size_t pos = 0;
  const auto d = read_decimal("12.50S", pos);
  REQUIRE(d);
  CHECK(d->value() == 12.5);
  CHECK(pos == 5);
  pos = 0;
  CHECK(!read_decimal(".5", pos));
  CHECK(!read_decimal("5.", pos));
  CHECK(pos == 0);
  CHECK(read_decimal(cloud_repeat("9", 19), pos)->too_large);
  pos = 0;
  CHECK(!read_decimal(cloud_repeat("9", 18), pos)->too_large);
  CHECK(read_integer("-42")->value == -42);
  CHECK(read_integer("999999999999999999")->value == 999999999999999999);
  CHECK(read_integer(cloud_repeat("9", 400))->too_large);
  CHECK(!read_integer("1.0"));
  CHECK(!read_integer(""));
  CHECK(!read_integer("-"));
  CHECK(!read_integer("12a"));
  // SQS's string-typed integers through it: 400 digits is out of range, not a crash.
  CHECK(cloud_has(cloud_error(json({{"Attributes", {{"VisibilityTimeout", cloud_repeat("9", 400)}}}}).dump()),
                  "brokersim: error: Attributes.VisibilityTimeout: expected an integer number of seconds from 0 to 43200"));
  // An ARM integer literal of 400 digits.
  CHECK(cloud_has(cloud_error(cloud_arm({{"maxDeliveryCount", "[string(" + cloud_repeat("9", 400) + ")]"}})),
                  "resources[0].properties.maxDeliveryCount: expected a template expression brokersim can evaluate"));
}

TEST_CASE("import hostile cloud: an SQS QueueArn with no queue name is refused") {
  // It was named "queue", with a note saying the QueueArn was missing.
  CHECK(cloud_error(R"({"Attributes": {"QueueArn": "arn:aws:sqs:us-east-1:123456789012:", "VisibilityTimeout": "30"}})") ==
        "brokersim: error: Attributes.QueueArn: expected a queue ARN that ends in the queue's name "
        "(arn:aws:sqs:REGION:ACCOUNT:NAME), got \"arn:aws:sqs:us-east-1:123456789012:\"\n");
  // Without a QueueArn at all, the queue is still named "queue" (noted).
  const auto none = cloud_import(R"({"Attributes": {"VisibilityTimeout": "30"}})");
  REQUIRE_MESSAGE(none.status == 0, none.err);
  CHECK(cloud_has(none.err, "no QueueArn in Attributes"));
}

TEST_CASE("import hostile cloud: a duplicate key in an SQS redrive policy names its whole path") {
  CHECK(cloud_error(R"({"Attributes": {"QueueArn": "arn:aws:sqs:r:1:q", "RedrivePolicy": "{\"deadLetterTargetArn\": \"arn:aws:sqs:r:1:d\", \"maxReceiveCount\": 2, \"maxReceiveCount\": 5}"}})") ==
        "brokersim: error: Attributes.RedrivePolicy.maxReceiveCount: duplicate key\n");
  // A syntax error keeps its line and column within the policy.
  CHECK(cloud_has(cloud_error(R"({"Attributes": {"RedrivePolicy": "{not json"}})"),
                  "brokersim: error: Attributes.RedrivePolicy:1:3: invalid JSON: syntax error"));
}

TEST_CASE("import hostile cloud: Functions functionTimeout 00:00:00 is refused as the host refuses it") {
  const auto zero = cloud_run(cloud_functions({{"functionTimeout", "00:00:00"}}));
  CHECK(zero.status == 2);
  CHECK(zero.err ==
        "brokersim: error: consumers.0.framework.functionTimeout: expected at least 00:00:01 (the Functions host refuses a "
        "shorter functionTimeout), got 00:00:00\n");
  CHECK(cloud_run(cloud_functions({{"functionTimeout", "PT0.5S"}})).status == 2);
  const auto one = cloud_run(cloud_functions({{"functionTimeout", "00:00:01"}}));
  CHECK_MESSAGE(one.status == 0, one.err);
}

TEST_CASE("import hostile cloud: framework timespans are read by the checked routine") {
  // "PT.S" and "00:00:." were "brokersim: error: stod", naming no key.
  for (const char* bad : {"PT.S", "00:00:.", "PT5", "1.:00:00", "00:60:00", "24:00:00", "00:00:05.1234567890123456789"}) {
    const auto r = cloud_run(cloud_functions({{"maxAutoLockRenewalDuration", bad}}));
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: consumers.0.framework.maxAutoLockRenewalDuration: expected a duration as \"hh:mm:ss\" "
                   "(or \"d.hh:mm:ss\", or ISO 8601 \"PT5M\"), got " +
                       json(bad).dump() + "\n");
  }
  // Past where simulated time ends (1e12 ms): too large, with the maximum.
  for (const std::string& big : {std::string("99999999.00:00:00"), "PT" + cloud_repeat("9", 400) + "H", std::string("11574.01:46:41")}) {
    const auto r = cloud_run(cloud_functions({{"maxAutoLockRenewalDuration", big}}));
    CHECK(r.status == 2);
    CHECK(cloud_has(r.err, "brokersim: error: consumers.0.framework.maxAutoLockRenewalDuration: expected a duration of at most "
                           "11574.01:46:40 (1e12 ms, where brokersim's simulated time ends), got \""));
    CHECK(cloud_has(r.err, "(too large)\n"));
  }
  // What is read stays read.
  const auto ok = cloud_run(cloud_functions({{"maxAutoLockRenewalDuration", "1.02:03:04.5"}, {"functionTimeout", "PT2M30S"}}));
  CHECK_MESSAGE(ok.status == 0, ok.err);
}
