// brokersim import (experiments/cli/import/) of Azure Service Bus and Amazon SQS (RabbitMQ is in
// test_import.cpp): values at the brokers' own limits, ISO-8601 durations, each format's mapping key
// by key, SQS's string-typed attributes, bad inputs naming their entry; and the command: the format
// recognised from the content, --out, and every example importing to the checked-in scenario, which
// loads and runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
#include "experiments/cli/import/common.hpp"
#include "tests/import_test_util.hpp"
#include "tests/test_util.hpp"

using namespace import_test;

TEST_SUITE("import") {
  TEST_CASE("import: values at the brokers' own limits") {
    // RabbitMQ refuses TTLs and expiries above 10 years (rabbit_misc:check_expiry).
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-message-ttl": 315360000001})")})))
              .find("queues[0].arguments.x-message-ttl: expected a non-negative integer at most 315360000000") !=
          std::string::npos);
    CHECK(import_error(rabbit(arr({classic("a", R"({"x-expires": 315360000001})")})))
              .find("queues[0].arguments.x-expires: expected a positive integer (milliseconds) at most 315360000000") !=
          std::string::npos);
    const auto big = import_text(rabbit(arr({classic("a", R"({"x-message-ttl": 315360000000, "x-max-length": 1000000000000000,
                                                              "x-max-length-bytes": 9000000000000000000})")})));
    REQUIRE_MESSAGE(big.status == 0, big.err);
    CHECK(big.queue("a") ==
          json::parse(
              R"({"message_ttl_ms": 315360000000, "max_length": 1000000000000000, "max_length_bytes": 9000000000000000000})"));
    check_runs(big);
    // Service Bus: a TTL beyond brokersim's simulated time is no TTL, noted.
    const auto sb = import_text(R"({"name": "a", "defaultMessageTimeToLive": "P100000D", "autoDeleteOnIdle": "P99999D"})");
    REQUIRE_MESSAGE(sb.status == 0, sb.err);
    CHECK(sb.queue("a") == json::object());
    CHECK(sb.noted("queue \"a\": defaultMessageTimeToLive \"P100000D\" is beyond brokersim's simulated time"));
    CHECK(sb.noted("queue \"a\": autoDeleteOnIdle \"P99999D\" is beyond"));
    check_runs(sb);
  }

  TEST_CASE("import: ISO-8601 durations") {
    using brokersim::import::iso8601_ms;
    CHECK(*iso8601_ms("PT1M", "p") == 60000);
    CHECK(*iso8601_ms("PT30S", "p") == 30000);
    CHECK(*iso8601_ms("PT2M30.5S", "p") == 150500);
    CHECK(*iso8601_ms("PT0.001S", "p") == 1);
    CHECK(*iso8601_ms("P14D", "p") == 14 * 86400e3);
    CHECK(*iso8601_ms("P1DT2H", "p") == 26 * 3600e3);
    CHECK(*iso8601_ms("P1W", "p") == 7 * 86400e3);
    CHECK(*iso8601_ms("0:01:00", "p") == 60000);            // older az: Python's timedelta
    CHECK(!iso8601_ms("P10675199DT2H48M5.4775807S", "p"));  // TimeSpan.MaxValue: no limit
    CHECK(!iso8601_ms("10675199 days, 2:48:05.477581", "p"));
    for (const char* bad : {"1M", "PT", "P", "P1H", "PT1D", "PTM", "PT1.2.3S", "PT1M2", "P1DT", "abc"}) {
      bool threw = false;
      try {
        (void)iso8601_ms(bad, "queue.lockDuration");
      } catch (const brokersim::ScenarioError& e) {
        threw = std::string(e.what()).find("queue.lockDuration: expected an ISO-8601 duration") == 0;
      }
      CHECK_MESSAGE(threw, bad);
    }
  }

  TEST_CASE("import: the ARM template example, key by key") {
    const auto i = import_file(kExamples + "servicebus-arm-template.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"]["kind"] == "azure-servicebus");
    CHECK(i.queue("orders") == json::parse(R"({"lock_duration_ms": 60000, "requires_session": false, "default_ttl_ms": 1209600000,
                                               "dead_letter_on_expiration": true, "max_delivery_count": 5, "dead_letter_to": "orders-dlq"})"));
    CHECK(i.queue("orders-dlq") ==
          json::parse(R"({"lock_duration_ms": 30000, "max_delivery_count": 10, "dead_letter_on_expiration": false})"));
    CHECK(i.queue("invoices") == json::parse(R"({"lock_duration_ms": 150500, "max_delivery_count": 3, "requires_session": true,
                                                 "default_ttl_ms": 3600000, "auto_delete_on_idle_ms": 604800000})"));
    CHECK(i.noted("queue \"orders\": requiresDuplicateDetection true (not modelled)"));
    CHECK(i.noted("queue \"orders\": duplicateDetectionHistoryTimeWindow \"PT10M\" (not modelled)"));
    CHECK(i.noted("queue \"orders\": enablePartitioning false (not modelled)"));
    CHECK(i.noted("namespace sku \"Standard\""));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");
    // On a session queue, the placeholder producer draws session ids (the queue requires them).
    const auto sessions = import_text(R"({"name": "s", "requiresSession": true})");
    REQUIRE(sessions.status == 0);
    CHECK(sessions.scenario["producers"][0]["session"] == json::parse(R"({"uniform": {"min": 0, "max": 99}})"));
    check_runs(sessions);
    check_runs(i);
  }

  TEST_CASE("import: az servicebus queue show and list") {
    const auto i = import_file(kExamples + "servicebus-az-queue-show.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("orders") ==
          json::parse(R"({"lock_duration_ms": 60000, "max_delivery_count": 10, "dead_letter_on_expiration": false,
                                               "requires_session": false})"));
    CHECK(
        i.noted("queue \"orders\": read-only and state properties ignored: accessedAt, countDetails, createdAt, id, location, "
                "messageCount, name, resourceGroup, sizeInBytes, type, updatedAt"));
    CHECK(i.noted("queue \"orders\": maxSizeInMegabytes 1024 (not modelled)"));
    check_runs(i);
    const auto l =
        import_text(R"([{"name": "a", "lockDuration": "PT10S", "maxDeliveryCount": 2, "forwardDeadLetteredMessagesTo": "b"},
                                   {"name": "b", "lockDuration": "PT20S", "status": "Disabled", "forwardTo": "c"}])");
    REQUIRE_MESSAGE(l.status == 0, l.err);
    CHECK(l.queue("a") == json::parse(R"({"lock_duration_ms": 10000, "max_delivery_count": 2, "dead_letter_to": "b"})"));
    CHECK(l.queue("b") == json::parse(R"({"lock_duration_ms": 20000})"));
    CHECK(l.noted("queue \"b\": status \"Disabled\" (not modelled"));
    CHECK(l.noted("queue \"b\": forwardTo \"c\" (auto-forwarding is not modelled"));
    CHECK(l.scenario["producers"][0]["queue"] == "a");
    // Older az versions: the properties under "properties", durations as Python's timedelta.
    const auto nested = import_text(R"({"name": "old", "properties": {"lockDuration": "0:00:45", "maxDeliveryCount": 7,
                                                                      "defaultMessageTimeToLive": "10675199 days, 2:48:05.477581"}})");
    REQUIRE_MESSAGE(nested.status == 0, nested.err);
    CHECK(nested.queue("old") == json::parse(R"({"lock_duration_ms": 45000, "max_delivery_count": 7})"));
    // A forwarding target outside the file is added with the defaults.
    const auto f = import_text(R"({"name": "a", "lockDuration": "PT10S", "forwardDeadLetteredMessagesTo": "central-dlq"})");
    REQUIRE(f.status == 0);
    CHECK(f.queue("central-dlq") == json::object());
    CHECK(f.noted("queue \"central-dlq\" is not in the file: added"));
    check_runs(f);
  }

  TEST_CASE("import: Service Bus bad input names the entry") {
    CHECK(import_error(R"({"name": "a", "lockDuration": "PT6M"})")
              .find("lockDuration: expected a lock duration above 0 and at most PT5M") != std::string::npos);
    CHECK(import_error(R"({"name": "a", "lockDuration": "1 minute"})").find("lockDuration: expected an ISO-8601 duration") !=
          std::string::npos);
    CHECK(
        import_error(R"([{"name": "a", "maxDeliveryCount": 0}])").find("[0].maxDeliveryCount: expected an integer >= 1, got 0") !=
        std::string::npos);
    CHECK(import_error(R"({"name": "a", "autoDeleteOnIdle": "PT1M"})")
              .find("autoDeleteOnIdle: expected a duration of at least PT5M") != std::string::npos);
    CHECK(import_error(R"({"name": "a", "requiresSession": "maybe"})").find("requiresSession: expected true or false") !=
          std::string::npos);
    CHECK(import_error(R"({"lockDuration": "PT1M"})").find("name: expected the queue's name, got nothing") != std::string::npos);
    const std::string arm = R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
      "parameters": {"ns": {"type": "string"}, "lock": {"type": "string", "defaultValue": "PT1M"}},
      "resources": [{"type": "Microsoft.ServiceBus/namespaces/queues", "name": "ns1/ok", "properties": {"lockDuration": "[parameters('lock')]"}},
                    {"type": "Microsoft.ServiceBus/namespaces/queues", "name": "[concat(parameters('ns'), '/q')]", "properties": {}}]})";
    CHECK(import_error(arm).find("resources[1].name: expected a template expression brokersim can evaluate") !=
          std::string::npos);
    CHECK(import_error(arm).find("parameter 'ns' has no defaultValue") != std::string::npos);
    const std::string unknown_function = R"({"resources": [{"type": "Microsoft.ServiceBus/namespaces/queues", "name": "ns/q",
      "properties": {"lockDuration": "[uniqueString(resourceGroup().id)]"}}]})";
    CHECK(import_error(unknown_function).find("resources[0].properties.lockDuration: expected a template expression") !=
          std::string::npos);
  }

  TEST_CASE("import: ARM nested queue resources and template expressions") {
    const auto i = import_text(R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
      "parameters": {"ttl": {"type": "string", "defaultValue": "PT5M"}, "mdc": {"type": "int", "defaultValue": 4}},
      "variables": {"name": "[concat('or', 'ders')]"},
      "resources": [{"type": "Microsoft.ServiceBus/namespaces", "name": "ns", "resources": [
        {"type": "queues", "name": "[variables('name')]", "properties": {"defaultMessageTimeToLive": "[parameters('ttl')]",
                                                                         "maxDeliveryCount": "[parameters('mdc')]"}},
        {"type": "topics", "name": "events"}]}]})");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("orders") == json::parse(R"({"default_ttl_ms": 300000, "max_delivery_count": 4})"));
    CHECK(i.noted("resources[0].resources[1]: resource of type topics (not modelled)"));
    // Symbolic names (languageVersion 2.0): resources in an object.
    const auto sym = import_text(R"({"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
      "languageVersion": "2.0", "resources": {"ns": {"type": "Microsoft.ServiceBus/namespaces", "name": "ns"},
        "work": {"type": "Microsoft.ServiceBus/namespaces/queues", "name": "ns/work", "properties": {"lockDuration": "PT45S"}}}})");
    REQUIRE_MESSAGE(sym.status == 0, sym.err);
    CHECK(sym.queue("work") == json::parse(R"({"lock_duration_ms": 45000})"));
  }

  TEST_CASE("import: the SQS attribute dump, string-typed, with a RedrivePolicy string") {
    const auto i = import_file(kExamples + "sqs-get-queue-attributes.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.scenario["broker"]["kind"] == "amazon-sqs");
    CHECK(i.queue("orders") == json::parse(R"({"visibility_timeout_ms": 120000, "retention_ms": 345600000, "delay_ms": 0,
                                               "max_receive_count": 5, "dead_letter_to": "orders-dlq"})"));
    CHECK(i.queue("orders-dlq") == json::object());
    CHECK(i.noted("queue \"orders-dlq\" is not in the file: added with SQS's default attributes"));
    CHECK(i.noted("queue \"orders\": ReceiveMessageWaitTimeSeconds 20 (not modelled"));
    CHECK(i.noted("queue \"orders\": MaximumMessageSize \"262144\" (not modelled)"));
    CHECK(i.noted("queue \"orders\": read-only and state attributes ignored: ApproximateNumberOfMessages"));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");
    check_runs(i);
    const auto fifo = import_text(R"({"Attributes": {"QueueArn": "arn:aws:sqs:us-east-1:1:jobs.fifo", "FifoQueue": "true",
                                                     "ContentBasedDeduplication": "true"}})");
    REQUIRE(fifo.status == 0);
    CHECK(fifo.noted("FifoQueue true: FIFO queues are not simulated"));
    CHECK(fifo.noted("queue \"jobs.fifo\": ContentBasedDeduplication \"true\" (not modelled)"));
    CHECK(fifo.queue("jobs_fifo") == json::object());
  }

  TEST_CASE("import: SQS bad input names the entry") {
    CHECK(import_error(R"({"Attributes": {"QueueArn": "arn:aws:sqs:us-east-1:1:q", "VisibilityTimeout": "abc"}})")
              .find("Attributes.VisibilityTimeout: expected an integer number of seconds from 0 to 43200") != std::string::npos);
    CHECK(import_error(R"({"Attributes": {"VisibilityTimeout": "43201"}})").find("got \"43201\"") != std::string::npos);
    CHECK(import_error(R"({"Attributes": {"MessageRetentionPeriod": "59"}})")
              .find("Attributes.MessageRetentionPeriod: expected an integer number of seconds from 60 to 1209600") !=
          std::string::npos);
    CHECK(import_error(R"({"Attributes": {"DelaySeconds": "901"}})").find("Attributes.DelaySeconds") != std::string::npos);
    CHECK(
        import_error(
            R"({"Attributes": {"RedrivePolicy": "{\"deadLetterTargetArn\": \"arn:aws:sqs:r:1:d\", \"maxReceiveCount\": \"0\"}"}})")
            .find("Attributes.RedrivePolicy.maxReceiveCount: expected an integer from 1 to 1000, got \"0\"") !=
        std::string::npos);
    CHECK(import_error(R"({"Attributes": {"RedrivePolicy": "{\"maxReceiveCount\": 3}"}})")
              .find("Attributes.RedrivePolicy.deadLetterTargetArn: expected the dead-letter queue's ARN, got nothing") !=
          std::string::npos);
    CHECK(import_error(R"({"Attributes": {"RedrivePolicy": "{not json"}})").find("Attributes.RedrivePolicy") !=
          std::string::npos);
    CHECK(
        import_error(
            R"({"Attributes": {"QueueArn": "arn:aws:sqs:r:1:q", "RedrivePolicy": "{\"deadLetterTargetArn\": \"arn:aws:sqs:r:1:q\", \"maxReceiveCount\": 2}"}})")
            .find("expected another queue") != std::string::npos);
    CHECK(import_error(R"({"Attributes": {"FifoQueue": "yes"}})").find("Attributes.FifoQueue: expected true or false") !=
          std::string::npos);
    // A CloudFormation resource without a Type, or not an object (found by the fuzzer: the
    // missing Type once escaped as a JSON library error).
    const std::string cfn = R"({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"Q": {"Type": "AWS::SQS::Queue"}, )";
    CHECK(import_error(cfn + R"("D": {"Tupe": "AWS::SQS::Queue"}}})") == "brokersim: error: Resources.D.Type: expected a resource type, got nothing\n");
    CHECK(import_error(cfn + R"("D": 5}})") == "brokersim: error: Resources.D: expected an object (a resource), got 5\n");
  }

  TEST_CASE("import: the CloudFormation example, with Fn::GetAtt and Ref") {
    const auto i = import_file(kExamples + "sqs-cloudformation.json");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.queue("orders") == json::parse(R"({"visibility_timeout_ms": 300000, "retention_ms": 1209600000, "delay_ms": 5000,
                                               "max_receive_count": 4, "dead_letter_to": "orders-dlq"})"));
    CHECK(i.queue("orders-dlq") == json::parse(R"({"retention_ms": 1209600000})"));
    CHECK(i.queue("ReportsQueue") == json::parse(R"({"visibility_timeout_ms": 60000})"));
    CHECK(i.noted("queue \"ReportsQueue\": no QueueName"));
    CHECK(i.noted("queue \"orders\": KmsMasterKeyId \"alias/aws/sqs\" (not modelled)"));
    CHECK(i.noted("queue \"orders-dlq\": RedriveAllowPolicy"));
    CHECK(i.noted("Resources.OrdersQueuePolicy: resource of type AWS::SQS::QueuePolicy (not modelled)"));
    CHECK(i.scenario["producers"][0]["queue"] == "orders");
    check_runs(i);
    CHECK(
        import_error(R"({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": {"Ref": "Nope"}}}}})")
            .find("Resources.Q.Properties.VisibilityTimeout: expected a value, or a Ref to a parameter with a Default") !=
        std::string::npos);
    CHECK(
        import_error(
            R"({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"RedrivePolicy": {"deadLetterTargetArn": {"Fn::GetAtt": ["Missing", "Arn"]}, "maxReceiveCount": 3}}}}})")
            .find("Resources.Q.Properties.RedrivePolicy.deadLetterTargetArn: expected the Arn of an AWS::SQS::Queue of the "
                  "template") != std::string::npos);
    CHECK(
        import_error(R"({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": {"Fn::Sub": "${X}"}}}}})")
            .find("Resources.Q.Properties.DelaySeconds: expected a value brokersim can read") != std::string::npos);
    CHECK(import_error(R"({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}})")
              .find("Resources: expected at least one resource of type AWS::SQS::Queue") != std::string::npos);
  }

  TEST_CASE("import: the format comes from the content, not the file name") {
    const std::string sqs = read_file(kExamples + "sqs-get-queue-attributes.json");
    const auto i = import_text(sqs, "definitions.yaml");
    REQUIRE(i.status == 0);
    CHECK(i.scenario["broker"]["kind"] == "amazon-sqs");
    const auto r = import_text(read_file(kExamples + "rabbitmq-definitions.json"), "template.txt");
    REQUIRE(r.status == 0);
    CHECK(r.scenario["broker"]["kind"] == "rabbitmq-classic");
    CHECK(import_error(R"({"hello": 1})").find("input.json: expected a RabbitMQ definitions export") != std::string::npos);
    CHECK(import_error("[1, 2]").find("got an array of something else") != std::string::npos);
    CHECK(import_error("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n", "template.json")
              .find("a CloudFormation template in YAML: brokersim import reads JSON only; convert it first (cfn-flip") !=
          std::string::npos);
    CHECK(import_error("queues:\n  - name: a\n").find("invalid JSON") != std::string::npos);
    CHECK(import_error("").find("invalid JSON") != std::string::npos);
  }

  TEST_CASE("import: --out writes the scenario, refuses to overwrite the input, and a failure writes nothing") {
    ScratchDir dir("brokersim-import-out");
    const std::string in = dir.write("defs.json", read_file(kExamples + "rabbitmq-definitions.json"));
    const std::string out = dir.path("scenario.json");
    const auto r = run_cli({"import", in, "--out", out});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(r.out.empty());
    CHECK(r.err.find("notes (also in the scenario's \"notes\"):") != std::string::npos);
    const auto run = run_cli({"run", out, "--set", "stop.time_ms=10000"});
    CHECK_MESSAGE(run.status == 0, run.err);
    const auto same = run_cli({"import", in, "--out", in});
    CHECK(same.status == 2);
    CHECK(read_file(in) == read_file(kExamples + "rabbitmq-definitions.json"));
    // A failed import leaves an existing output as it was.
    const std::string bad = dir.write("bad.json", R"({"Attributes": {"VisibilityTimeout": "-1"}})");
    const std::string before = read_file(out);
    CHECK(run_cli({"import", bad, "--out", out}).status == 2);
    CHECK(read_file(out) == before);
    CHECK(run_cli({"import"}).status == 2);
    CHECK(run_cli({"import", dir.path("missing.json")}).status == 2);
  }

  // Each example's scenario is checked in as experiments/scenarios/import-NAME.json (with its
  // fingerprint): the importer still writes exactly it.
  TEST_CASE("import: every example's checked-in scenario is what the importer writes today") {
    std::size_t examples = 0;
    for (const auto& e : fs::directory_iterator(kExamples)) {
      CAPTURE(e.path().string());
      const auto i = import_file(e.path().string());
      REQUIRE_MESSAGE(i.status == 0, i.err);
      CHECK(i.out == read_file(std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/import-" +
                               e.path().filename().string()));
      ++examples;
    }
    CHECK(examples == 6);
  }

  TEST_CASE("import: every example imports to a scenario that loads and runs") {
    for (const auto& e : fs::directory_iterator(kExamples)) {
      CAPTURE(e.path().string());
      const auto i = import_file(e.path().string());
      REQUIRE_MESSAGE(i.status == 0, i.err);
      CHECK(i.scenario["notes"].size() >= 2);
      check_runs(i);
    }
  }
}
