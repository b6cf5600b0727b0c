// A RabbitMQ definitions export (`rabbitmqctl export_definitions`, the management UI's download)
// -> broker.queues. Policies and operator policies are applied as rabbit_policy.erl does (per
// vhost, the pattern searched in the queue name, apply-to by queue type, the highest priority
// wins; an operator policy merged by rabbit_policies:merge_policy_value), queue arguments against
// the effective policy as rabbit_amqqueue_process (classic) and rabbit_quorum_queue (quorum) do,
// and dead-letter exchanges routed through the exported exchanges and bindings to the queues they
// reach. docs/import-rabbitmq.md has the table and the sources.
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <re2/re2.h>
#include <set>

#include "experiments/import/common.hpp"
#include "experiments/scenario/checks.hpp"
#include "models/scenario.hpp"

namespace brokersim::import {

namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMaxExpiry = 315'360'000'000;
// AMQP 0-9-1 carries queue names and routing keys as short strings: at most 255 bytes.
constexpr std::size_t kMaxShortString = 255;
constexpr std::size_t kMaxPatternBytes = 65'536;
constexpr std::int64_t kPatternMemory = 8 << 20;

struct Policy {
  std::string name, vhost, apply_to, path;
  std::shared_ptr<const RE2> pattern;
  double priority = 0;
  json definition;
};

struct Queue {
  std::string raw, vhost, type, path, name;  // name: in the scenario
  json arguments = json::object();
};

struct Exchange {
  std::string type, path;
  std::string alternate;  // alternate-exchange (argument, else exchange policy); "" = none
  std::string alternate_how;
};

struct Binding {
  std::string source, vhost, destination, destination_type, routing_key;
  json arguments = json::object();
};

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

// One modelled key of a queue: its value after policy, operator policy and argument, and how.
struct Effective {
  json value;  // null: not set
  std::string how;
};

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

// ---- dead-letter routing

struct Topology {
  std::map<std::pair<std::string, std::string>, Exchange> exchanges;  // (vhost, name)
  std::vector<Binding> bindings;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_source;  // (vhost, source) -> bindings
};

// rabbit_exchange_type_topic: a key's words split at '.', the empty key having none.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    const auto dot = s.find('.', start);
    out.push_back(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

// '*' is one word, '#' zero or more. By dynamic programming over (pattern words, key words), so
// that a binding of many '#' costs |pattern| x |key|, not the exponential backtracking search.
bool topic_match(const std::vector<std::string>& pattern, const std::vector<std::string>& key) {
  // reach[k]: the first p pattern words can match the first k key words.
  std::vector<char> reach(key.size() + 1, 0), next(key.size() + 1);
  reach[0] = 1;
  for (const auto& w : pattern) {
    if (w == "#") {
      char any = 0;
      for (std::size_t k = 0; k <= key.size(); ++k) next[k] = any = any || reach[k];
    } else {
      next[0] = 0;
      for (std::size_t k = 1; k <= key.size(); ++k) next[k] = reach[k - 1] && (w == "*" || w == key[k - 1]);
    }
    reach.swap(next);
  }
  return reach[key.size()];
}

// Where a dead letter goes: the queues it certainly reaches, what cannot be followed, and the
// routes that depend on message headers the file does not have (their outcome is unknown: never
// reported as dropped).
struct Route {
  std::set<std::string> queues;
  std::vector<std::string> problems;
  std::vector<std::string> unknown;
};

// rabbit_exchange_type_headers: a binding's arguments other than x-* are the headers it matches;
// x-match "all" (the default, and "all-with-x") of no headers matches every message, "any" of none
// matches none. nullopt: the answer depends on the message's headers.
std::optional<bool> headers_binding_matches(const json& args) {
  std::string mode = "all";
  if (args.contains("x-match") && args["x-match"].is_string()) mode = args["x-match"].get<std::string>();
  // all-with-x and any-with-x also match on x- headers; the others skip them.
  const bool with_x = mode == "all-with-x" || mode == "any-with-x";
  bool conditions = false;
  for (auto it = args.begin(); it != args.end(); ++it)
    if (it.key() != "x-match" && (with_x || it.key().rfind("x-", 0) != 0)) conditions = true;
  if (conditions) return std::nullopt;
  return mode == "all" || mode == "all-with-x";
}

// The queues (raw names) a message with `key` published to exchange `start` reaches, as
// rabbit_exchange:route does: each exchange's matching bindings, exchange-to-exchange bindings
// followed (each exchange once), and an exchange that routes the message nowhere hands it to its
// alternate exchange. A worklist, not recursion: a chain of bindings is as long as the file makes it.
Route route(const Topology& t, const std::string& vhost, const std::string& start, const std::string& key) {
  Route r;
  if (start.empty()) {  // the default exchange: the queue named by the routing key
    r.queues.insert(key);
    return r;
  }
  const auto key_words = words(key);
  std::set<std::string> seen{start};
  std::vector<std::string> pending{start};
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    std::string type;
    const Exchange* exchange = nullptr;
    const auto it = t.exchanges.find({vhost, name});
    if (it != t.exchanges.end()) {
      exchange = &it->second;
      type = exchange->type;
    } else if (name == "amq.direct" || name == "amq.fanout" || name == "amq.topic" || name == "amq.headers" ||
               name == "amq.match") {
      type = name == "amq.match" ? "headers" : name.substr(4);
    } else {
      r.problems.push_back("exchange " + loader::quoted(name) +
                           " is not in the file (RabbitMQ drops dead letters to a missing exchange)");
      continue;
    }
    if (type != "direct" && type != "fanout" && type != "topic" && type != "headers") {
      r.unknown.push_back("exchange " + loader::quoted(name) + " has type " + loader::quoted(type) +
                          ", whose routing brokersim does not know");
      continue;
    }
    bool routed = false, depends = false;
    if (const auto bound = t.by_source.find({vhost, name}); bound != t.by_source.end()) {
      for (const std::size_t i : bound->second) {
        const Binding& b = t.bindings[i];
        bool hit = false;
        if (type == "headers") {
          const auto m = headers_binding_matches(b.arguments);
          if (!m) {
            depends = true;
            r.unknown.push_back("headers exchange " + loader::quoted(name) + " binds " +
                                (b.destination_type == "exchange" ? "exchange " : "queue ") + loader::quoted(b.destination) +
                                " on message headers " + b.arguments.dump());
            continue;
          }
          hit = *m;
        } else {
          hit = type == "fanout" || (type == "direct" && b.routing_key == key) ||
                (type == "topic" && topic_match(words(b.routing_key), key_words));
        }
        if (!hit) continue;
        routed = true;
        if (b.destination_type != "exchange")
          r.queues.insert(b.destination);
        else if (b.destination.empty())
          r.queues.insert(key);
        else if (seen.insert(b.destination).second)
          pending.push_back(b.destination);
      }
    }
    // Unroutable here: the alternate exchange takes it (unless headers may yet have matched).
    if (!routed && !depends && exchange && !exchange->alternate.empty() && seen.insert(exchange->alternate).second)
      pending.push_back(exchange->alternate);
  }
  return r;
}

std::string broker_version(const std::string& v, std::vector<std::string>& notes) {
  int major = 0, minor = 0;
  if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) != 2) {
    notes.push_back("rabbit_version " + loader::quoted(v) + " is not MAJOR.MINOR...: broker.version left at its default 4.2");
    return "";
  }
  const int n = major * 100 + minor;
  std::string chosen = n >= 403 ? "4.3" : n >= 402 ? "4.2" : n >= 400 ? "4.0" : "3.13";
  const std::string exact = std::to_string(major) + "." + std::to_string(minor);
  if (exact != chosen)
    notes.push_back("rabbit_version " + loader::quoted(v) + ": broker.version " + chosen + " is the nearest modelled version" +
                    (n < 313   ? " (versions before 3.13 are not modelled)"
                     : n > 403 ? " (later versions are not modelled)"
                               : " at or below it"));
  return chosen;
}

}  // namespace

Imported import_rabbitmq(const json& doc) {
  Imported out;
  out.format = "RabbitMQ definitions export";
  auto& notes = out.notes;

  for (const char* key : {"users", "permissions", "topic_permissions", "global_parameters"})
    if (doc.contains(key) && doc[key].is_array() && !doc[key].empty())
      notes.push_back(std::string(key) + ": " + std::to_string(doc[key].size()) + " entries (not modelled)");
  // Runtime parameters: operator policies are read (below); the other components (shovels,
  // federation upstreams, vhost limits, ...) are not modelled.
  if (doc.contains("parameters") && doc["parameters"].is_array()) {
    std::map<std::string, std::size_t> others;
    for (const json& e : doc["parameters"])
      if (!(e.is_object() && e.contains("component") && e["component"] == "operator_policy"))
        ++others[e.is_object() && e.contains("component") && e["component"].is_string() ? e["component"].get<std::string>()
                                                                                          : "?"];
    for (const auto& [component, n] : others)
      notes.push_back("parameters: " + std::to_string(n) + " of component " + loader::quoted(component) + " (not modelled)");
  }

  // A vhost's default queue type (3.11+), for queues declared without x-queue-type.
  std::map<std::string, std::pair<std::string, std::string>> default_types;  // vhost -> (type, path)
  const json& vhost_list = array_of(doc, "vhosts");
  for (std::size_t i = 0; i < vhost_list.size(); ++i) {
    const json& v = vhost_list[i];
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string()) continue;
    for (const auto& [owner, path] : {std::pair<const json*, std::string>{&v, at(at("vhosts", i), "default_queue_type")},
                                      {v.contains("metadata") && v["metadata"].is_object() ? &v["metadata"] : nullptr,
                                       at(at(at("vhosts", i), "metadata"), "default_queue_type")}})
      if (owner && owner->contains("default_queue_type") && (*owner)["default_queue_type"].is_string() &&
          (*owner)["default_queue_type"] != "undefined")
        default_types[v["name"].get<std::string>()] = {(*owner)["default_queue_type"].get<std::string>(), path};
  }

  // Queues, with their types.
  const json& list = array_of(doc, "queues");
  std::vector<Queue> queues;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = at("queues", i);
    const json& e = list[i];
    if (!e.is_object()) fail(path, "an object (a queue)", e);
    Queue q;
    q.path = path;
    q.raw = text(e, "name", path, "", true);
    short_string(q.raw, at(path, "name"), "a queue name");
    q.vhost = text(e, "vhost", path, "/", false);
    if (e.contains("arguments")) {
      if (!e["arguments"].is_object()) fail(at(path, "arguments"), "an object", e["arguments"]);
      q.arguments = e["arguments"];
    }
    q.type = "classic";
    std::string type_path = q.arguments.contains("x-queue-type") ? at(at(path, "arguments"), "x-queue-type") : at(path, "type");
    if (q.arguments.contains("x-queue-type")) {
      q.type = text(q.arguments, "x-queue-type", at(path, "arguments"), "", true);
    } else if (e.contains("type")) {
      q.type = text(e, "type", path, "", true);
    } else if (default_types.count(q.vhost)) {
      q.type = default_types[q.vhost].first;
      type_path = default_types[q.vhost].second;
      notes.push_back("queue " + loader::quoted(q.raw) + ": no x-queue-type: its vhost's default_queue_type " +
                      loader::quoted(q.type));
    }
    if (q.type != "classic" && q.type != "quorum" && q.type != "stream")
      fail(type_path, "\"classic\", \"quorum\" or \"stream\"", json(q.type));
    const std::string who = "queue " + loader::quoted(q.raw);
    if (e.contains("auto_delete") && e["auto_delete"] == true)
      notes.push_back(who + ": auto_delete true (deleted when its last consumer leaves: not modelled)");
    if (e.contains("exclusive") && e["exclusive"] == true) notes.push_back(who + ": exclusive true (not modelled)");
    if (e.contains("durable") && e["durable"] == false)
      notes.push_back(who +
                      ": durable false (a transient queue is gone after a broker restart: not modelled; messages are lost or "
                      "kept by producers[].persistent)");
    if (q.type == "stream") {
      notes.push_back(who + ": a stream (not simulated): skipped");
      continue;
    }
    // Checked while reading: a file of a million queues is refused at the 65th, not after naming all.
    if (queues.size() == kMaxQueues)
      fail("queues", std::string("at most ") + std::to_string(kMaxQueues) + " classic and quorum queues (brokersim's limit)",
           json("a 65th at " + path + " (" + std::to_string(list.size()) + " entries in the file)"));
    queues.push_back(std::move(q));
  }
  if (queues.empty()) fail("queues", "at least one classic or quorum queue", list);

  // broker.kind: the queue type most queues have (the first queue's on a tie).
  std::size_t quorum = 0;
  for (const auto& q : queues) quorum += q.type == "quorum";
  const std::string type =
      2 * quorum > queues.size() || (2 * quorum == queues.size() && queues.front().type == "quorum") ? "quorum" : "classic";
  out.broker["kind"] = type == "quorum" ? "rabbitmq-quorum" : "rabbitmq-classic";
  // The node's own version decides which policies a queue type takes (unsupported_policies);
  // without one, broker.version's default, 4.2.
  int version_number = 402;
  for (const char* key : {"rabbit_version", "rabbitmq_version"})
    if (doc.contains(key)) {
      if (!doc[key].is_string()) fail(key, "a version string (\"3.13.7\")", doc[key]);
      const std::string v = broker_version(doc[key].get<std::string>(), notes);
      if (!v.empty()) out.broker["version"] = v;
      int major = 0, minor = 0;
      if (std::sscanf(doc[key].get<std::string>().c_str(), "%d.%d", &major, &minor) == 2 && major >= 0 && major < 100 &&
          minor >= 0 && minor < 100)
        version_number = major * 100 + minor;
      break;
    }
  out.broker["queues"] = ojson::object();

  const auto policies = read_policies(doc, "policies");
  // A node's export holds operator policies as runtime parameters; "operator_policies" is read too
  // (files written by hand, and by tools that mirror the HTTP API's /api/operator-policies).
  auto operator_policies = read_operator_parameters(doc);
  for (auto& p : read_policies(doc, "operator_policies")) operator_policies.push_back(std::move(p));

  Topology topology;
  const json& exchanges = array_of(doc, "exchanges");
  for (std::size_t i = 0; i < exchanges.size(); ++i) {
    const std::string path = at("exchanges", i);
    if (!exchanges[i].is_object()) fail(path, "an object (an exchange)", exchanges[i]);
    const std::string name = text(exchanges[i], "name", path, "", true);
    Exchange x{text(exchanges[i], "type", path, "", true), path, "", ""};
    if (exchanges[i].contains("arguments")) {
      const json& args = exchanges[i]["arguments"];
      if (!args.is_object()) fail(at(path, "arguments"), "an object", args);
      if (args.contains("alternate-exchange")) {
        x.alternate = text(args, "alternate-exchange", at(path, "arguments"), "", true);
        x.alternate_how = "its argument alternate-exchange";
      }
    }
    topology.exchanges[{text(exchanges[i], "vhost", path, "/", false), name}] = std::move(x);
  }
  // An exchange policy (apply-to exchanges or all; the highest priority that matches) sets an
  // alternate exchange where the exchange's own argument does not (rabbit_exchange's get_arg:
  // the argument first). Operator policies cannot set one.
  for (auto& [where, x] : topology.exchanges) {
    if (!x.alternate.empty()) continue;
    const Policy* best = nullptr;
    for (const auto& p : policies)
      if (p.vhost == where.first && (p.apply_to == "exchanges" || p.apply_to == "all") && RE2::PartialMatch(where.second, *p.pattern) &&
          (!best || p.priority > best->priority))
        best = &p;
    if (best && best->definition.contains("alternate-exchange") && best->definition["alternate-exchange"].is_string()) {
      x.alternate = best->definition["alternate-exchange"].get<std::string>();
      x.alternate_how = "policy " + loader::quoted(best->name);
    }
  }
  const json& bindings = array_of(doc, "bindings");
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const std::string path = at("bindings", i);
    const json& b = bindings[i];
    if (!b.is_object()) fail(path, "an object (a binding)", b);
    const std::string dtype = text(b, "destination_type", path, "queue", false);
    if (dtype != "queue" && dtype != "exchange")
      fail(at(path, "destination_type"), "\"queue\" or \"exchange\"", b["destination_type"]);
    Binding binding{text(b, "source", path, "", true), text(b, "vhost", path, "/", false),
                    text(b, "destination", path, "", true), dtype, text(b, "routing_key", path, "", false), json::object()};
    if (b.contains("arguments") && !b["arguments"].is_null()) {
      if (!b["arguments"].is_object()) fail(at(path, "arguments"), "an object", b["arguments"]);
      binding.arguments = b["arguments"];
    }
    short_string(binding.routing_key, at(path, "routing_key"), "a routing key");
    topology.by_source[{binding.vhost, binding.source}].push_back(topology.bindings.size());
    topology.bindings.push_back(std::move(binding));
  }

  // Names in the scenario, in file order.
  std::vector<std::string> taken;
  std::map<std::pair<std::string, std::string>, std::string> names;  // (vhost, raw) -> name
  std::set<std::string> vhosts;
  for (const auto& q : queues) vhosts.insert(q.vhost);
  for (auto& q : queues) {
    q.name = queue_name(vhosts.size() > 1 ? (q.vhost == "/" ? q.raw : q.vhost + "_" + q.raw) : q.raw, taken, notes);
    names[{q.vhost, q.raw}] = q.name;
  }

  // (json::value() would throw on a member of another type: read each one only if it is a string.)
  const auto text_or = [](const json& o, const char* key, const std::string& fallback) {
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : fallback;
  };
  std::set<std::string> stream_names;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].is_object() && list[i].contains("arguments") && text_or(list[i]["arguments"], "x-queue-type", "") == "stream")
      stream_names.insert(text_or(list[i], "vhost", "/") + "\n" + text_or(list[i], "name", ""));

  for (const auto& q : queues) {
    const std::string who =
        "queue " + loader::quoted(q.raw) + (vhosts.size() > 1 ? " (vhost " + loader::quoted(q.vhost) + ")" : "");
    const Policy* policy = match(policies, q, version_number, notes, "policy");
    const Policy* op = match(operator_policies, q, version_number, notes, "operator policy");
    ojson spec = ojson::object();
    // A queue of the other type than broker.kind's says so (broker.queues.NAME.type).
    if (q.type != type) spec["type"] = q.type;

    // Settings not modelled: arguments, and the applied policies' other keys.
    for (auto it = q.arguments.begin(); it != q.arguments.end(); ++it) {
      const std::string& k = it.key();
      if (k == "x-queue-type") continue;
      if (k.rfind("x-", 0) != 0 || std::find(kModelled.begin(), kModelled.end(), k.substr(2)) == kModelled.end())
        notes.push_back(who + ": " + k + " " + it.value().dump() + " (not modelled)");
    }
    for (const Policy* p : {policy, op}) {
      if (!p) continue;
      for (auto it = p->definition.begin(); it != p->definition.end(); ++it)
        if (std::find(kModelled.begin(), kModelled.end(), it.key()) == kModelled.end())
          notes.push_back(who + ": " + (p == op ? "operator policy " : "policy ") + loader::quoted(p->name) + " key " + it.key() +
                          " " + it.value().dump() + " (not modelled)");
    }

    std::map<std::string, Effective> e;
    for (const auto& key : kModelled) e[key] = effective(key, q, policy, op);
    const auto set = [&](const char* scenario_key, const std::string& key) {
      const Effective& v = e[key];
      if (v.value.is_null()) return;
      spec[scenario_key] = v.value;
      if (v.how != "queue argument") notes.push_back(who + ": " + scenario_key + " " + v.value.dump() + " from " + v.how);
    };
    set("message_ttl_ms", "message-ttl");
    set("expires_ms", "expires");
    set("max_length", "max-length");
    set("max_length_bytes", "max-length-bytes");
    if (!e["overflow"].value.is_null()) {
      if (e["overflow"].value == "reject-publish-dlx" && q.type == "quorum") {
        notes.push_back(
            who + ": overflow \"reject-publish-dlx\" on a quorum queue: RabbitMQ ignores it (logs a warning) and uses drop-head");
        e["overflow"].value = "drop-head";
      }
      set("overflow", "overflow");
    }
    for (const char* key : {"delivery-limit", "dead-letter-strategy"}) {
      const Effective& v = e[key];
      if (v.value.is_null()) continue;
      if (q.type != "quorum") {
        notes.push_back(who + ": " + key + " " + v.value.dump() + " (quorum queues only: a classic queue ignores it)");
      } else {
        const std::string scenario_key = std::string(key) == "delivery-limit" ? "delivery_limit" : "dead_letter_strategy";
        Effective w = v;
        if (w.value.is_number() && w.value.get<std::int64_t>() < 0) w.value = -1;
        e[key] = w;
        set(scenario_key.c_str(), key);
      }
    }

    // Dead-lettering: the exchange, and the routing key (or the message's own).
    const Effective& dlx = e["dead-letter-exchange"];
    if (!dlx.value.is_null()) {
      const Effective& rk = e["dead-letter-routing-key"];
      std::string key = rk.value.is_null() ? q.raw : rk.value.get<std::string>();
      if (rk.value.is_null())
        notes.push_back(who +
                        ": dead letters keep their original routing key (no dead-letter-routing-key): assumed to be the queue's "
                        "own name " +
                        loader::quoted(q.raw) + ", as for messages published through the default exchange");
      const Route routed = route(topology, q.vhost, dlx.value.get<std::string>(), key);
      const std::set<std::string>& reached = routed.queues;
      for (const auto& p : routed.problems)
        notes.push_back(who + ": dead-letter exchange " + loader::quoted(dlx.value.get<std::string>()) + ": " + p);
      std::vector<std::string> targets;
      for (const auto& raw : reached) {
        const auto it = names.find({q.vhost, raw});
        if (it != names.end())
          targets.push_back(it->second);
        else if (stream_names.count(q.vhost + "\n" + raw))
          notes.push_back(who + ": dead letters also reach stream " + loader::quoted(raw) + " (not simulated)");
        else
          notes.push_back(who + ": dead letters routed to " + loader::quoted(raw) +
                          ", which is not a queue in the file (dropped)");
      }
      std::sort(targets.begin(), targets.end());
      const std::string route_text =
          "dead-letter exchange " + loader::quoted(dlx.value.get<std::string>()) + " with routing key " + loader::quoted(key);
      if (!routed.unknown.empty()) {
        std::string why;
        for (const auto& u : routed.unknown) why += (why.empty() ? "" : "; ") + u;
        notes.push_back(who + ": " + route_text + ": where dead letters go " +
                        (targets.empty() ? std::string("is unknown") : std::string("is only partly known")) +
                        ": it depends on what brokersim cannot read from the file (" + why + ")" +
                        (targets.empty() ? ": dead_letter_to is left unset, not guessed; set broker.queues." + q.name +
                                               ".dead_letter_to to the queue they reach"
                                         : std::string()));
      }
      if (targets.empty()) {
        if (routed.unknown.empty())
          notes.push_back(who + ": " + route_text + " reaches no queue: dead letters are dropped (dead_letter_to null)");
      } else {
        spec["dead_letter_to"] = targets.front();
        out.dead_letter_targets.push_back(targets.front());
        std::string how = route_text + " (" + dlx.how + ")";
        if (targets.size() > 1) {
          std::string others;
          for (std::size_t i = 1; i < targets.size(); ++i) others += (i > 1 ? ", " : "") + loader::quoted(targets[i]);
          notes.push_back(who + ": " + route_text + " reaches " + std::to_string(targets.size()) +
                          " queues; dead_letter_to names one, " + loader::quoted(targets.front()) +
                          " (not modelled: the copies to " + others + ")");
        } else {
          notes.push_back(who + ": dead_letter_to " + loader::quoted(targets.front()) + " through " + how);
        }
      }
    } else if (!e["dead-letter-routing-key"].value.is_null()) {
      notes.push_back(who + ": dead-letter-routing-key without a dead-letter exchange (RabbitMQ ignores it)");
    }
    out.broker["queues"][q.name] = spec;
  }

  if (!exchanges.empty() || !bindings.empty())
    notes.push_back("exchanges (" + std::to_string(exchanges.size()) + ") and bindings (" + std::to_string(bindings.size()) +
                    "): used only to route dead letters to their queues (alternate exchanges included); producers publish "
                    "straight to a queue in brokersim, and other exchange arguments are not modelled");
  for (const auto& p : policies) {
    if (p.apply_to != "exchanges") continue;
    std::string others;
    for (auto it = p.definition.begin(); it != p.definition.end(); ++it)
      if (it.key() != "alternate-exchange") others += (others.empty() ? "" : ", ") + it.key();
    if (p.definition.contains("alternate-exchange"))
      notes.push_back("policy " + loader::quoted(p.name) + " applies to exchanges: its alternate-exchange routes dead letters" +
                      (others.empty() ? std::string() : "; " + others + " not modelled"));
    else
      notes.push_back("policy " + loader::quoted(p.name) + " applies to exchanges (not modelled)");
  }
  for (const auto& p : operator_policies)
    if (p.apply_to == "exchanges")
      notes.push_back("operator policy " + loader::quoted(p.name) + " applies to exchanges (not modelled)");
  return out;
}

}  // namespace brokersim::import
