// Amazon SQS queue attributes -> broker.queues of kind amazon-sqs: `aws sqs get-queue-attributes
// --attribute-names All` output ({"Attributes": {...}}, every value a string, the RedrivePolicy a
// JSON string inside it) or the AWS::SQS::Queue resources of a CloudFormation template in JSON
// (values numbers or strings; Ref to a parameter's Default; the redrive target by Fn::GetAtt
// [LogicalId, Arn], Ref or a literal ARN). docs/import-sqs.md has the table and the sources.
#include <algorithm>
#include <map>
#include <set>

#include "experiments/cli/import/common.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/json_text.hpp"
#include "models/scenario.hpp"

namespace brokersim::import {

namespace {

struct SqsQueue {
  std::string raw, name, path, logical_id;  // logical_id: CloudFormation's
  json attributes;
};

// A CloudFormation value: literals as they are, {"Ref": PARAMETER} as its Default.
json cfn_value(const json& v, const json& doc, const std::string& path) {
  if (!v.is_object()) return v;
  if (v.size() == 1 && v.contains("Ref") && v["Ref"].is_string()) {
    const std::string name = v["Ref"];
    const json& params = doc.contains("Parameters") ? doc["Parameters"] : json::object();
    if (params.is_object() && params.contains(name) && params[name].is_object() && params[name].contains("Default"))
      return params[name]["Default"];
    fail(path,
         "a value, or a Ref to a parameter with a Default (parameter " + loader::quoted(name) + " has none in the template)", v);
  }
  fail(path, "a value brokersim can read (a literal, or a Ref to a parameter with a Default)", v);
}

// The CLI's RedrivePolicy: JSON text inside the attribute's string. Its errors name the
// attribute: a repeated key is PATH.KEY (parse_json_text reports the key's path within the text).
json policy_text(const std::string& text, const std::string& path) {
  try {
    return parse_json_text(text, path);
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    // A syntax error is "PATH:LINE:COLUMN: invalid JSON: ..." already.
    if (e.path.empty() || !message.starts_with(e.path + ": ")) throw;
    loader::fail_message(at(path, e.path), message.substr(e.path.size() + 2));
  }
}

std::string arn_queue(const std::string& arn) {
  return arn.substr(arn.rfind(':') + 1);
}

struct Context {
  const json* doc = nullptr;  // the CloudFormation template; null for CLI output
  std::vector<SqsQueue>* queues = nullptr;
  std::vector<std::string>* taken = nullptr;
  std::map<std::string, std::string> added;  // raw name -> name, targets not in the file
};

// The queue a RedrivePolicy's deadLetterTargetArn names. In a template: Fn::GetAtt or Ref to a
// queue of the template, or Ref to a parameter whose Default is the ARN (or, again, a Ref), followed
// in a loop, not by recursion: each parameter at most once, a loop reported with its chain.
std::string target_queue(const json& given, const std::string& path, Context& c, Imported& out) {
  json v = given;
  std::vector<std::string> parameters;  // followed so far
  while (c.doc && v.is_object() && v.size() == 1 && (v.contains("Fn::GetAtt") || v.contains("Ref"))) {
    std::string logical;
    if (v.contains("Ref") && v["Ref"].is_string()) logical = v["Ref"];
    const json& g = v.contains("Fn::GetAtt") ? v["Fn::GetAtt"] : json();
    if (g.is_array() && g.size() == 2 && g[0].is_string() && g[1] == "Arn") logical = g[0];
    if (g.is_string() && g.get<std::string>().ends_with(".Arn"))
      logical = g.get<std::string>().substr(0, g.get<std::string>().size() - 4);
    const auto hit = std::find_if(c.queues->begin(), c.queues->end(), [&](const SqsQueue& q) { return q.logical_id == logical; });
    if (!logical.empty() && hit != c.queues->end()) return hit->name;
    if (!v.contains("Ref")) fail(path, "the Arn of an AWS::SQS::Queue of the template ({\"Fn::GetAtt\": [\"LOGICAL_ID\", \"Arn\"]})", v);
    if (std::find(parameters.begin(), parameters.end(), logical) != parameters.end()) {
      std::string chain;
      for (const auto& p : parameters) chain += loader::quoted(p) + " -> ";
      fail(path,
           "a queue ARN, or a Ref to a parameter whose Default is one (the parameters' Defaults refer to each other in a loop: " +
               chain + loader::quoted(logical) + ")",
           given);
    }
    if (!logical.empty()) parameters.push_back(logical);
    v = cfn_value(v, *c.doc, path);
  }
  std::string raw;
  if (!v.is_string() || v.get<std::string>().rfind("arn:", 0) != 0)
    fail(path, "a queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)", v);
  raw = arn_queue(v.get<std::string>());
  if (raw.empty()) fail(path, "a queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)", v);
  const auto hit = std::find_if(c.queues->begin(), c.queues->end(), [&](const SqsQueue& q) { return q.raw == raw; });
  if (hit != c.queues->end()) return hit->name;
  if (!c.added.count(raw)) {
    const std::string name = queue_name(raw, *c.taken, out.notes);
    c.added[raw] = name;
    out.broker["queues"][name] = ojson::object();
    out.notes.push_back("queue " + loader::quoted(raw) +
                        " is not in the file: added with SQS's default attributes as a dead-letter target (" +
                        v.get<std::string>() + ")");
  }
  return c.added[raw];
}

const std::set<std::string> kSqsReadOnly{"ApproximateNumberOfMessages",
                                      "ApproximateNumberOfMessagesNotVisible",
                                      "ApproximateNumberOfMessagesDelayed",
                                      "CreatedTimestamp",
                                      "LastModifiedTimestamp",
                                      "QueueArn",
                                      "QueueUrl"};
const std::set<std::string> kNotModelled{"ContentBasedDeduplication",
                                         "KmsMasterKeyId",
                                         "KmsDataKeyReusePeriodSeconds",
                                         "MaximumMessageSize",
                                         "RedriveAllowPolicy",
                                         "SqsManagedSseEnabled",
                                         "DeduplicationScope",
                                         "FifoThroughputLimit",
                                         "Policy",
                                         "Tags"};

void map_queue(const SqsQueue& q, Context& c, Imported& out) {
  const std::string who = "queue " + loader::quoted(q.raw);
  auto& notes = out.notes;
  ojson spec = ojson::object();
  std::vector<std::string> read_only;
  const auto value = [&](const json& v, const std::string& path) { return c.doc ? cfn_value(v, *c.doc, path) : v; };
  const auto seconds = [&](const json& v, const std::string& path, std::int64_t min, std::int64_t max, const std::string& range) {
    return 1000 * string_integer(value(v, path), path, min, max, "an integer number of seconds from " + range);
  };
  for (auto it = q.attributes.begin(); it != q.attributes.end(); ++it) {
    const std::string& key = it.key();
    const std::string path = at(q.path, key);
    if (kSqsReadOnly.count(key)) {
      read_only.push_back(key);
      continue;
    }
    if (key == "QueueName") continue;  // the queue's name, read already
    if (key == "VisibilityTimeout") {
      spec["visibility_timeout_ms"] =
          seconds(it.value(), path, 0, 43200, "0 to 43200 (12 h; brokersim's visibility_timeout_ms 0..43200000)");
    } else if (key == "MessageRetentionPeriod") {
      spec["retention_ms"] =
          seconds(it.value(), path, 60, 1209600, "60 to 1209600 (14 days; brokersim's retention_ms 60000..1209600000)");
    } else if (key == "DelaySeconds") {
      spec["delay_ms"] = seconds(it.value(), path, 0, 900, "0 to 900 (15 min; brokersim's delay_ms 0..900000)");
    } else if (key == "ReceiveMessageWaitTimeSeconds") {
      const auto s = seconds(it.value(), path, 0, 20, "0 to 20") / 1000;
      notes.push_back(who + ": ReceiveMessageWaitTimeSeconds " + std::to_string(s) +
                      " (not modelled: brokersim's SQS consumers always long-poll, answered as soon as messages are visible)");
    } else if (key == "FifoQueue") {
      if (boolean_value(value(it.value(), path), path, true))
        notes.push_back(who +
                        ": FifoQueue true: FIFO queues are not simulated (docs/scenario.md, amazon-sqs); imported as a standard "
                        "queue: message groups, ordering and exactly-once deduplication are not modelled");
    } else if (key == "RedrivePolicy") {
      json policy =
          it.value().is_object() && (it.value().contains("deadLetterTargetArn") || it.value().contains("maxReceiveCount"))
              ? it.value()
              : value(it.value(), path);
      if (policy.is_string()) policy = policy_text(policy.get<std::string>(), path);  // the CLI's JSON inside a string
      if (!policy.is_object())
        fail(path, "a redrive policy ({\"deadLetterTargetArn\": ARN, \"maxReceiveCount\": N})", it.value());
      if (!policy.contains("deadLetterTargetArn"))
        fail(at(path, "deadLetterTargetArn"), "the dead-letter queue's ARN", loader::member(policy, "deadLetterTargetArn"));
      if (!policy.contains("maxReceiveCount"))
        fail(at(path, "maxReceiveCount"), "an integer from 1 to 1000", loader::member(policy, "maxReceiveCount"));
      for (auto p = policy.begin(); p != policy.end(); ++p)
        if (p.key() != "deadLetterTargetArn" && p.key() != "maxReceiveCount")
          notes.push_back(who + ": RedrivePolicy." + p.key() + " " + p.value().dump() + " (not modelled)");
      const std::string mrc_path = at(path, "maxReceiveCount");
      spec["max_receive_count"] =
          string_integer(value(policy["maxReceiveCount"], mrc_path), mrc_path, 1, 1000, "an integer from 1 to 1000");
      const std::string name = target_queue(policy["deadLetterTargetArn"], at(path, "deadLetterTargetArn"), c, out);
      if (name == q.name)
        fail(at(path, "deadLetterTargetArn"), "another queue (a queue cannot be its own dead-letter queue)",
             policy["deadLetterTargetArn"]);
      spec["dead_letter_to"] = name;
      out.dead_letter_targets.push_back(name);
    } else {
      notes.push_back(who + ": " + key + " " + it.value().dump() +
                      (kNotModelled.count(key) ? " (not modelled)" : " (unknown attribute: not modelled)"));
    }
  }
  if (!read_only.empty()) {
    std::string list;
    for (const auto& k : read_only) list += (list.empty() ? "" : ", ") + k;
    notes.push_back(who + ": read-only and state attributes ignored: " + list);
  }
  out.broker["queues"][q.name] = spec;
}

Imported finish(std::vector<SqsQueue>& queues, Context& c, Imported out) {
  std::vector<std::string> taken;
  for (auto& q : queues) q.name = queue_name(q.raw, taken, out.notes);
  c.queues = &queues;
  c.taken = &taken;
  out.broker["kind"] = "amazon-sqs";
  out.broker["queues"] = ojson::object();
  for (const auto& q : queues) map_queue(q, c, out);
  if (out.broker["queues"].size() > 64)
    fail("Resources", "at most 64 queues (brokersim's limit)", json(out.broker["queues"].size()));
  return out;
}

}  // namespace

Imported import_sqs_attributes(const json& doc) {
  Imported out;
  out.format = "aws sqs get-queue-attributes output";
  const json& attributes = doc["Attributes"];
  if (!attributes.is_object()) fail("Attributes", "an object of queue attributes", attributes);
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "Attributes") out.notes.push_back(it.key() + " (outside Attributes: ignored)");
  SqsQueue q;
  q.path = "Attributes";
  q.attributes = attributes;
  if (attributes.contains("QueueArn")) {
    if (!attributes["QueueArn"].is_string() || attributes["QueueArn"].get<std::string>().rfind("arn:", 0) != 0)
      fail("Attributes.QueueArn", "a queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)", attributes["QueueArn"]);
    q.raw = arn_queue(attributes["QueueArn"].get<std::string>());
    // "arn:aws:sqs:REGION:ACCOUNT:" names no queue: an error, not a queue called "queue".
    if (q.raw.empty())
      fail("Attributes.QueueArn", "a queue ARN that ends in the queue's name (arn:aws:sqs:REGION:ACCOUNT:NAME)",
           attributes["QueueArn"]);
  }
  if (q.raw.empty()) {
    q.raw = "queue";
    out.notes.push_back("no QueueArn in Attributes (ask for --attribute-names All): the queue is named \"queue\"");
  }
  std::vector<SqsQueue> queues{q};
  Context c;
  return finish(queues, c, std::move(out));
}

Imported import_cloudformation(const json& doc) {
  Imported out;
  out.format = "CloudFormation template";
  if (!doc.contains("Resources") || !doc["Resources"].is_object())
    fail("Resources", "an object of resources", loader::member(doc, "Resources"));
  std::vector<SqsQueue> queues;
  for (auto it = doc["Resources"].begin(); it != doc["Resources"].end(); ++it) {
    const std::string path = at("Resources", it.key());
    const json& r = it.value();
    if (!r.is_object()) fail(path, "an object (a resource)", r);
    if (!r.contains("Type") || !r["Type"].is_string()) fail(at(path, "Type"), "a resource type", loader::member(r, "Type"));
    const std::string type = r["Type"];
    if (type != "AWS::SQS::Queue") {
      out.notes.push_back(path + ": resource of type " + type +
                          (type.rfind("AWS::SQS::", 0) == 0 ? " (not modelled)" : " (not SQS: ignored)"));
      continue;
    }
    SqsQueue q;
    q.logical_id = it.key();
    q.path = at(path, "Properties");
    q.attributes = r.contains("Properties") ? r["Properties"] : json::object();
    if (!q.attributes.is_object()) fail(q.path, "an object (the queue's properties)", q.attributes);
    if (q.attributes.contains("QueueName")) {
      const json name = cfn_value(q.attributes["QueueName"], doc, at(q.path, "QueueName"));
      if (!name.is_string() || name.get<std::string>().empty()) fail(at(q.path, "QueueName"), "a queue name", name);
      q.raw = name;
    } else {
      q.raw = it.key();
      out.notes.push_back("queue " + loader::quoted(q.raw) +
                          ": no QueueName (CloudFormation generates one): named after its logical ID");
    }
    queues.push_back(q);
  }
  if (queues.empty()) fail("Resources", "at least one resource of type AWS::SQS::Queue", doc["Resources"]);
  Context c;
  c.doc = &doc;
  return finish(queues, c, std::move(out));
}

}  // namespace brokersim::import
