// Policies and operator policies applied to a queue as rabbit_policy.erl does (per vhost, the
// pattern searched in the queue name, apply-to by queue type, the highest priority wins; an
// operator policy merged by rabbit_policies:merge_policy_value), and queue arguments against the
// effective policy as rabbit_amqqueue_process (classic) and rabbit_quorum_queue (quorum) do.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "experiments/cli/import/rabbitmq_definitions.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "models/scenario.hpp"

namespace brokersim::import::rabbitmq {

namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxExpiry = 315'360'000'000;
// AMQP 0-9-1 carries queue names and routing keys as short strings: at most 255 bytes.
constexpr std::size_t kMaxShortString = 255;
constexpr std::size_t kMaxPatternBytes = 65'536;
constexpr std::int64_t kPatternMemory = 8 << 20;

}  // namespace

std::string text(const json& entry, const char* key, const std::string& path, const std::string& fallback, bool required) {
  if (!entry.contains(key)) {
    if (required) fail(at(path, key), "a string", loader::member(entry, key));
    return fallback;
  }
  if (!entry[key].is_string()) fail(at(path, key), "a string", entry[key]);
  return entry[key].get<std::string>();
}

const json& array_of(const json& doc, const char* key) {
  static const json empty = json::array();
  if (!doc.contains(key) || doc[key].is_null()) return empty;
  if (!doc[key].is_array()) fail(key, "an array", doc[key]);
  return doc[key];
}

// RabbitMQ matches a policy's pattern with Erlang's re (PCRE) against the queue name's bytes.
// PCRE backtracks, so a pattern such as ^(a+)+$ takes exponential time on a name it does not
// match; RE2 matches in time linear in the name and refuses what only a backtracking engine can
// do (backreferences, lookaround), which is then an error naming the policy, not a hang.
std::shared_ptr<const RE2> compile_pattern(const std::string& pattern, const std::string& path, const std::string& policy) {
  RE2::Options options;
  options.set_encoding(RE2::Options::EncodingLatin1);  // re:run on a binary without `unicode`: bytes
  options.set_log_errors(false);
  options.set_max_mem(kPatternMemory);
  if (pattern.size() > kMaxPatternBytes)
    fail(path, "a regular expression of at most " + std::to_string(kMaxPatternBytes) + " bytes (policy " + loader::quoted(policy) + ")",
         json(std::to_string(pattern.size()) + " bytes"));
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok())
    fail(path,
         "a regular expression brokersim can match in linear time (RE2 syntax: no backreferences or lookaround; policy " +
             loader::quoted(policy) + ": " + re->error() + ")",
         json(pattern));
  return re;
}

// Names and keys AMQP carries as short strings; a longer one cannot come from a broker.
void short_string(const std::string& s, const std::string& path, const std::string& what) {
  if (s.size() > kMaxShortString)
    fail(path, what + " of at most 255 bytes (AMQP 0-9-1 short string)", json(std::to_string(s.size()) + " bytes"));
}

// A policy's definition as an object: the HTTP API writes one, `rabbitmqctl export_definitions`
// writes an operator policy's as a list of [key, value] pairs.
json definition_object(const json& d, const std::string& path) {
  if (d.is_object()) return d;
  if (!d.is_array()) fail(path, "an object (the policy's keys) or a list of [key, value] pairs", d);
  json out = json::object();
  for (std::size_t i = 0; i < d.size(); ++i) {
    const json& pair = d[i];
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string())
      fail(at(path, i), "a [key, value] pair", pair);
    const std::string k = pair[0].get<std::string>();
    if (out.contains(k)) fail(at(at(path, i), 0), "a key not given before in this definition", pair[0]);
    out[k] = pair[1];
  }
  return out;
}

// One policy from its fields in `p` (a `policies` entry, or an operator policy parameter's
// `value`), named and placed by `name`, `vhost`, `path`.
Policy read_policy(const json& p, const std::string& path, const std::string& name, const std::string& vhost) {
  Policy policy;
  policy.path = path;
  policy.name = name;
  policy.vhost = vhost;
  const std::string pattern = text(p, "pattern", path, "", true);
  policy.pattern = compile_pattern(pattern, at(path, "pattern"), policy.name);
  policy.apply_to = text(p, "apply-to", path, "all", false);
  static const std::set<std::string> kApplyTo{"all", "queues", "classic_queues", "quorum_queues", "streams", "exchanges"};
  if (!kApplyTo.count(policy.apply_to))
    fail(at(path, "apply-to"), "one of all, queues, classic_queues, quorum_queues, streams, exchanges", p["apply-to"]);
  if (p.contains("priority")) {
    if (!p["priority"].is_number()) fail(at(path, "priority"), "a number", p["priority"]);
    policy.priority = p["priority"].get<double>();
  }
  if (!p.contains("definition")) fail(at(path, "definition"), "an object (the policy's keys)", loader::member(p, "definition"));
  policy.definition = definition_object(p["definition"], at(path, "definition"));
  return policy;
}

// Operator policies as a node exports them: runtime parameters of component "operator_policy"
// (rabbit_policy registers itself under that name); there is no top-level key for them.
std::vector<Policy> read_operator_parameters(const json& doc) {
  std::vector<Policy> out;
  const json& list = array_of(doc, "parameters");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = at("parameters", i);
    const json& e = list[i];
    if (!e.is_object() || !e.contains("component") || e["component"] != "operator_policy") continue;
    if (!e.contains("value") || !e["value"].is_object())
      fail(at(path, "value"), "an object (the operator policy)", loader::member(e, "value"));
    out.push_back(read_policy(e["value"], at(path, "value"), text(e, "name", path, "", true), text(e, "vhost", path, "/", false)));
  }
  return out;
}

std::vector<Policy> read_policies(const json& doc, const char* key) {
  std::vector<Policy> out;
  const json& list = array_of(doc, key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = at(key, i);
    const json& p = list[i];
    if (!p.is_object()) fail(path, "an object (a policy)", p);
    out.push_back(read_policy(p, path, text(p, "name", path, "", true), text(p, "vhost", path, "/", false)));
  }
  return out;
}

bool applies_to(const std::string& apply_to, const std::string& type) {
  if (apply_to == "all" || apply_to == "queues") return true;
  return (apply_to == "classic_queues" && type == "classic") || (apply_to == "quorum_queues" && type == "quorum") ||
         (apply_to == "streams" && type == "stream");
}

// The policy keys a queue type refuses (its capabilities' unsupported_policies, in
// rabbit_classic_queue.erl and rabbit_quorum_queue.erl of the version `v`, MAJOR * 100 + MINOR).
std::vector<std::string> unsupported_policies(const std::string& type, int v) {
  std::vector<std::string> keys{"max-age", "stream-max-segment-size-bytes", "initial-cluster-size"};
  if (type == "classic") {
    keys.insert(keys.end(), {"delivery-limit", "dead-letter-strategy"});
    if (v < 400) keys.push_back("queue-leader-locator");
    if (v >= 313) keys.insert(keys.end(), {"max-in-memory-length", "max-in-memory-bytes", "target-group-size"});
  } else if (type == "quorum") {
    keys.insert(keys.end(), {"max-priority", "queue-mode", "ha-mode", "ha-params", "ha-sync-mode", "ha-promote-on-shutdown",
                             "ha-promote-on-failure", "queue-master-locator"});
    if (v < 402) keys.push_back("single-active-consumer");
  }
  if (v >= 403 && type != "stream") keys.insert(keys.end(), {"selector-fields", "selector-field-max-bytes"});
  return keys;
}

// rabbit_policy:match/2: the policies whose vhost, apply-to and pattern match and that the queue's
// type can take (rabbit_queue_type:is_policy_applicable: none of the definition's keys among the
// type's unsupported policies), sorted by priority (lists:sort, stable, with `>=`); the first wins.
// Of equal priorities the one the broker lists first, which for an export is the order of the file.
const Policy* match(const std::vector<Policy>& policies, const Queue& q, int version, std::vector<std::string>& notes,
                    const char* what) {
  const Policy* best = nullptr;
  std::vector<const Policy*> tied;
  const auto refused = unsupported_policies(q.type, version);
  for (const auto& p : policies) {
    if (p.vhost != q.vhost || !applies_to(p.apply_to, q.type) || !RE2::PartialMatch(q.raw, *p.pattern)) continue;
    std::string refused_key;
    for (auto it = p.definition.begin(); it != p.definition.end() && refused_key.empty(); ++it)
      if (std::find(refused.begin(), refused.end(), it.key()) != refused.end()) refused_key = it.key();
    if (!refused_key.empty()) {
      notes.push_back("queue " + loader::quoted(q.raw) + ": " + what + " " + loader::quoted(p.name) + " matches but has key " +
                      refused_key + ", which a " + q.type +
                      " queue does not support: RabbitMQ does not apply it (rabbit_queue_type:is_policy_applicable) and "
                      "takes the next matching one by priority");
      continue;
    }
    if (!best || p.priority > best->priority) {
      best = &p;
      tied.clear();
    } else if (p.priority == best->priority) {
      tied.push_back(&p);
    }
  }
  if (best && !tied.empty()) {
    std::string others;
    for (const auto* p : tied) others += (others.empty() ? "" : ", ") + loader::quoted(p->name);
    notes.push_back(
        "queue " + loader::quoted(q.raw) + ": " + what + " " + loader::quoted(best->name) + " applied; " + others +
        " match with the same priority " + loader::format_number(best->priority) +
        " (RabbitMQ then takes the first it lists, which need not be the file's order: give them different priorities)");
  }
  return best;
}

// The keys brokersim models, as policy keys (the queue argument is "x-" + key).
const std::vector<std::string> kModelled{"message-ttl",
                                         "expires",
                                         "max-length",
                                         "max-length-bytes",
                                         "overflow",
                                         "dead-letter-exchange",
                                         "dead-letter-routing-key",
                                         "delivery-limit",
                                         "dead-letter-strategy"};

// Checks a value of `key` (from an argument or a policy) where it was read.
json checked(const std::string& key, const json& v, const std::string& path) {
  // rabbit_misc:check_expiry: TTLs and queue expiry up to 10 years in milliseconds.
  if (key == "message-ttl" || key == "expires") {
    const bool ttl = key == "message-ttl";
    const std::string expected = ttl ? "a non-negative integer" : "a positive integer (milliseconds)";
    const std::int64_t x = integer_value(v, path, ttl ? 0 : 1, kMaxInt64, expected);
    if (x > kMaxExpiry) fail(path, expected + " at most 315360000000 (10 years, RabbitMQ's maximum)", v);
    return x;
  }
  if (key == "max-length" || key == "max-length-bytes") return integer_value(v, path, 0, kMaxInt64, "a non-negative integer");
  if (key == "delivery-limit")
    return integer_value(v, path, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int32_t>::max(),
                         "an integer");
  if (key == "overflow") {
    if (v != json("drop-head") && v != json("reject-publish") && v != json("reject-publish-dlx"))
      fail(path, "one of \"drop-head\", \"reject-publish\", \"reject-publish-dlx\"", v);
    return v;
  }
  if (key == "dead-letter-strategy") {
    if (v != json("at-most-once") && v != json("at-least-once")) fail(path, "\"at-most-once\" or \"at-least-once\"", v);
    return v;
  }
  if (!v.is_string()) fail(path, "a string", v);
  if (key == "dead-letter-routing-key") short_string(v.get<std::string>(), path, "a routing key");
  return v;
}

std::int64_t delivery_limit_merge(std::int64_t a, std::int64_t b) {
  return (a < 0 || b < 0) ? std::max(a, b) : std::min(a, b);
}


Effective effective(const std::string& key, const Queue& q, const Policy* policy, const Policy* op) {
  const std::string arg_key = "x-" + key;
  std::optional<json> arg, pol, opv;
  if (q.arguments.contains(arg_key)) arg = checked(key, q.arguments[arg_key], at(at(q.path, "arguments"), arg_key));
  if (policy && policy->definition.contains(key))
    pol = checked(key, policy->definition[key], at(at(policy->path, "definition"), key));
  if (op && op->definition.contains(key)) opv = checked(key, op->definition[key], at(at(op->path, "definition"), key));

  // rabbit_policies:merge_policy_value: the lower of the numeric limits, the operator's overflow.
  std::optional<json> merged = pol ? pol : opv;
  std::string how = pol ? "policy " + loader::quoted(policy->name) : opv ? "operator policy " + loader::quoted(op->name) : "";
  if (pol && opv) {
    if (key == "delivery-limit")
      merged = delivery_limit_merge(pol->get<std::int64_t>(), opv->get<std::int64_t>());
    else if (pol->is_number())
      merged = std::min(pol->get<std::int64_t>(), opv->get<std::int64_t>());
    else
      merged = opv;
    how = "policy " + loader::quoted(policy->name) + " " + pol->dump() + " and operator policy " + loader::quoted(op->name) +
          " " + opv->dump() + (pol->is_number() ? ": the lower" : ": the operator's");
  }
  if (!merged && !arg) return {};
  if (!merged) return {*arg, "queue argument"};
  if (!arg) return {*merged, how};
  // Both: rabbit_amqqueue_process (classic) takes the lower of the numeric limits and the argument
  // otherwise; rabbit_quorum_queue the same, except overflow, where the policy wins, and
  // delivery-limit, the lower unless one is negative (unlimited), then the higher.
  json value;
  std::string rule;
  if (key == "delivery-limit") {
    value = delivery_limit_merge(merged->get<std::int64_t>(), arg->get<std::int64_t>());
    rule = "the lower (or, when one is negative, the higher)";
  } else if (merged->is_number()) {
    value = std::min(merged->get<std::int64_t>(), arg->get<std::int64_t>());
    rule = "the lower";
  } else if (key == "overflow" && q.type == "quorum") {
    value = *merged;
    rule = "the policy's, on a quorum queue";
  } else {
    value = *arg;
    rule = "the queue argument's";
  }
  return {value, "queue argument " + arg->dump() + " and " + how + " " + merged->dump() + ": " + rule};
}

}  // namespace brokersim::import::rabbitmq
