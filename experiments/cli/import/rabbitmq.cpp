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

#include "experiments/cli/import/common.hpp"
#include "experiments/cli/import/rabbitmq_definitions.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "models/scenario.hpp"

namespace brokersim::import {

using namespace rabbitmq;  // the importer's own parts (rabbitmq_definitions.hpp)

namespace {

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
