// `brokersim import FILE`: a broker's own configuration (a RabbitMQ definitions export, an Azure
// Service Bus ARM template or `az servicebus queue show/list` output, SQS `get-queue-attributes`
// output or a CloudFormation template) -> a brokersim scenario. The format is recognised from the
// content; each format has its file (rabbitmq.cpp, servicebus.cpp, sqs.cpp) and this is what they
// share: the result they fill in, queue names, input errors with their entry's path, and the
// scenario around the broker section. docs/import-rabbitmq.md, import-servicebus.md, import-sqs.md.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace brokersim::import {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// What a format's reader makes of a file: the broker section of the scenario and every setting it
// read but does not model (each naming its queue or entry).
struct Imported {
  std::string format;              // "RabbitMQ definitions export", ...
  ojson broker = ojson::object();  // kind, version, queues
  std::vector<std::string> notes;
  std::vector<std::string> dead_letter_targets;  // queues some queue dead-letters to
  // A consumer group the file itself describes (an ARM template's function app,
  // function_app.cpp), written instead of the placeholder fleet: its entry, a line saying where it
  // came from, and per setting of its framework the entry of the file it was read from (a value
  // the loader refuses is reported there).
  std::optional<ojson> consumer;
  std::string consumer_origin;
  std::map<std::string, std::string> consumer_sources;
  // The queue the placeholder producer and consumers use: the file's consumer's, or the first (in
  // name order) that has a dead_letter_to and is no queue's dead-letter target; else the first
  // that is no target; else the first.
  std::string work_queue() const;
  // The first (in name order) that has a dead_letter_to and is no target, ... (as work_queue
  // without a consumer of the file's).
  std::string first_work_queue() const;
};

// Input errors name the entry as the file spells it: queues[2].arguments.x-message-ttl.
std::string at(const std::string& path, const std::string& key);
std::string at(const std::string& path, std::size_t index);
// ScenarioError "PATH: expected EXPECTED, got GOT" (GOT rendered as JSON): exit status 2.
[[noreturn]] void fail(const std::string& path, const std::string& expected, const json& got);

// brokersim's limit on queues in one scenario, checked as an importer names them.
inline constexpr std::size_t kMaxQueues = 64;

// A brokersim queue name for `raw` (1..255 bytes without '.', ',', '"' or control characters;
// unique among `taken`); a renaming is noted. The 65th name is an input error.
std::string queue_name(const std::string& raw, std::vector<std::string>& taken, std::vector<std::string>& notes);

// Integers as the broker reads them. `integer_value` accepts a JSON integer (or an integral
// double); `string_integer` also accepts a string of decimal digits (SQS attributes are strings).
std::int64_t integer_value(const json& v, const std::string& path, std::int64_t min, std::int64_t max,
                           const std::string& expected);
std::int64_t string_integer(const json& v, const std::string& path, std::int64_t min, std::int64_t max,
                            const std::string& expected);
// true/false, or (string_ok) "true"/"false" in any case.
bool boolean_value(const json& v, const std::string& path, bool string_ok);

// ISO-8601 duration (PnDTnHnMn.nS, also PnW, PnY/PnM taken as 365/30 days) in milliseconds;
// nullopt for TimeSpan.MaxValue (P10675199DT2H48M5.4775807S) or anything at least as long
// ("no limit"). Anything else is an error naming `path`.
std::optional<double> iso8601_ms(const json& v, const std::string& path);

// The file's format, from its content.
enum class Format { RabbitMqDefinitions, ArmTemplate, AzCli, SqsAttributes, CloudFormation };
Format sniff(const json& doc, const std::string& file);
// Non-JSON text: a CloudFormation YAML template gets its own message (convert it to JSON).
[[noreturn]] void not_json(const std::string& text, const std::string& file, const std::string& parse_error);

Imported import_rabbitmq(const json& doc);
Imported import_arm_template(const json& doc);
Imported import_az_cli(const json& doc);
Imported import_sqs_attributes(const json& doc);
Imported import_cloudformation(const json& doc);
// The file's format recognised and read by its importer.
Imported import_document(const json& doc, const std::string& file);

// The whole scenario: name, stop, the broker, a placeholder producer and consumer group on the
// work queue, and notes (the placeholders first, then everything not modelled).
ojson scenario_of(const Imported& imported, const std::string& file);

}  // namespace brokersim::import
