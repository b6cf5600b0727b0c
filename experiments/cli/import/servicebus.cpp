// Azure Service Bus queue properties -> broker.queues of kind azure-servicebus: an ARM template
// (Bicep compiles to one; resources of type Microsoft.ServiceBus/namespaces/queues, top level or
// nested in their namespace, with the template expressions parameters(), variables(), concat() and
// format() evaluated from the template's defaultValue and variables), or `az servicebus queue
// show` (one object) / `list` (an array). docs/import-servicebus.md has the table and the sources.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "experiments/cli/import/arm_expressions.hpp"
#include "experiments/cli/import/common.hpp"
#include "experiments/cli/import/function_app.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/frameworks/number_text.hpp"
#include "models/scenario.hpp"

namespace brokersim::import {

namespace {

// A value of the file, evaluated (ARM expressions) or as it is (az output).
using Evaluate = std::function<json(const json& v, const std::string& path)>;

struct SbQueue {
  std::string raw, name, path;  // path: of the properties object
  json properties;
};

// ---- the properties of one queue

const std::set<std::string> kServiceBusReadOnly{"messageCount", "countDetails", "sizeInBytes", "createdAt", "updatedAt",
                                      "accessedAt",   "id",           "name",        "type",      "resourceGroup",
                                      "location",     "systemData",   "etag"};

void map_queue(const SbQueue& q, const Evaluate& eval, const std::vector<SbQueue>& all, std::vector<std::string>& taken,
               std::map<std::string, std::string>& added, Imported& out) {
  const std::string who = "queue " + loader::quoted(q.raw);
  auto& notes = out.notes;
  ojson spec = ojson::object();
  // Simulated time ends at 1e12 ms (about 31.7 years): a longer TTL or idle time never fires.
  constexpr double kNever = 1e12;
  const std::string beyond =
      " is beyond brokersim's simulated time (1e12 ms, about 31.7 years): no limit, as with TimeSpan.MaxValue";
  std::vector<std::string> read_only;
  if (!q.properties.is_object()) fail(q.path, "an object (the queue's properties)", q.properties);
  for (auto it = q.properties.begin(); it != q.properties.end(); ++it) {
    const std::string& key = it.key();
    const std::string path = at(q.path, key);
    if (kServiceBusReadOnly.count(key)) {
      read_only.push_back(key);
      continue;
    }
    const json v = eval(it.value(), path);
    if (v.is_null()) continue;  // not set (az prints forwardTo: null)
    if (key == "lockDuration") {
      const auto ms = iso8601_ms(v, path);
      if (!ms || *ms <= 0 || *ms > 300000)
        fail(path, "a lock duration above 0 and at most PT5M (Service Bus's maximum; brokersim's lock_duration_ms 0..300000)", v);
      spec["lock_duration_ms"] = *ms;
    } else if (key == "maxDeliveryCount") {
      spec["max_delivery_count"] = string_integer(v, path, 1, 2147483647, "an integer >= 1");
    } else if (key == "defaultMessageTimeToLive") {
      const auto ms = iso8601_ms(v, path);
      if (ms && *ms <= 0) fail(path, "a positive duration (Service Bus's minimum TTL is 1 s)", v);
      if (ms && *ms >= kNever)
        notes.push_back(who + ": defaultMessageTimeToLive " + v.dump() + beyond);
      else if (ms)
        spec["default_ttl_ms"] = *ms;
    } else if (key == "autoDeleteOnIdle") {
      const auto ms = iso8601_ms(v, path);
      if (ms && *ms < 300000)
        fail(path, "a duration of at least PT5M (Service Bus's minimum; brokersim's auto_delete_on_idle_ms >= 300000)", v);
      if (ms && *ms >= kNever)
        notes.push_back(who + ": autoDeleteOnIdle " + v.dump() + beyond);
      else if (ms)
        spec["auto_delete_on_idle_ms"] = *ms;
    } else if (key == "deadLetteringOnMessageExpiration") {
      spec["dead_letter_on_expiration"] = boolean_value(v, path, true);
    } else if (key == "requiresSession") {
      spec["requires_session"] = boolean_value(v, path, true);
    } else if (key == "forwardDeadLetteredMessagesTo") {
      if (!v.is_string()) fail(path, "a queue name", v);
      const std::string target = v.get<std::string>();
      if (target.empty()) continue;
      const auto hit = std::find_if(all.begin(), all.end(), [&](const SbQueue& o) { return o.raw == target; });
      std::string name;
      if (hit != all.end()) {
        name = hit->name;
      } else if (added.count(target)) {
        name = added[target];
      } else {
        name = added[target] = queue_name(target, taken, notes);
        out.broker["queues"][name] = ojson::object();
        notes.push_back("queue " + loader::quoted(target) +
                        " is not in the file: added with Service Bus's defaults as the target of " + who +
                        "'s forwardDeadLetteredMessagesTo (if it is a topic, its subscriptions are not modelled)");
      }
      if (name == q.name) fail(path, "another queue (a queue cannot forward its dead letters to itself)", v);
      spec["dead_letter_to"] = name;
      out.dead_letter_targets.push_back(name);
    } else if (key == "status") {
      if (v != json("Active"))
        notes.push_back(who + ": status " + v.dump() + " (not modelled: the queue is simulated as Active)");
    } else if (key == "forwardTo") {
      if (v.is_string() && !v.get<std::string>().empty())
        notes.push_back(who + ": forwardTo " + v.dump() + " (auto-forwarding is not modelled: messages stay in this queue)");
    } else {
      static const std::set<std::string> kKnown{
          "enablePartitioning",      "maxSizeInMegabytes", "requiresDuplicateDetection", "duplicateDetectionHistoryTimeWindow",
          "enableBatchedOperations", "enableExpress",      "maxMessageSizeInKilobytes",  "userMetadata"};
      notes.push_back(who + ": " + key + " " + v.dump() +
                      (kKnown.count(key) ? " (not modelled)" : " (unknown property: not modelled)"));
    }
  }
  if (!read_only.empty()) {
    std::string list;
    for (const auto& k : read_only) list += (list.empty() ? "" : ", ") + k;
    notes.push_back(who + ": read-only and state properties ignored: " + list);
  }
  out.broker["queues"][q.name] = spec;
}

Imported finish(std::vector<SbQueue>& queues, const Evaluate& eval, Imported out, const std::string& what) {
  if (queues.empty()) fail(what, "at least one Service Bus queue", json::array());
  std::vector<std::string> taken;
  for (auto& q : queues) q.name = queue_name(q.raw, taken, out.notes);
  out.broker["kind"] = "azure-servicebus";
  out.broker["queues"] = ojson::object();
  std::map<std::string, std::string> added;  // forwarding targets not in the file: raw -> name
  for (const auto& q : queues) map_queue(q, eval, queues, taken, added, out);
  if (out.broker["queues"].size() > 64) fail(what, "at most 64 queues (brokersim's limit)", json(out.broker["queues"].size()));
  return out;
}

}  // namespace

Imported import_arm_template(const json& doc) {
  Imported out;
  out.format = "ARM template";
  std::vector<SbQueue> queues;
  ArmState state(doc);
  const Evaluate eval = [&state](const json& v, const std::string& path) { return arm_value(v, state, path); };
  const json& resources = doc["resources"];
  // Symbolic-name templates (languageVersion 2.0) hold resources in an object.
  std::vector<std::pair<std::string, const json*>> list;
  if (resources.is_array()) {
    for (std::size_t i = 0; i < resources.size(); ++i) list.push_back({at("resources", i), &resources[i]});
  } else if (resources.is_object()) {
    for (auto it = resources.begin(); it != resources.end(); ++it) list.push_back({at("resources", it.key()), &it.value()});
  } else {
    fail("resources", "an array of resources", resources);
  }
  WebResources web;
  // `site`: the path of the Microsoft.Web/sites resource `r` is nested in, if any.
  const std::function<void(const json&, const std::string&, bool, const std::string&)> visit =
      [&](const json& r, const std::string& path, bool nested, const std::string& site) {
    if (!r.is_object()) fail(path, "an object (a resource)", r);
    if (!r.contains("type") || !r["type"].is_string()) fail(at(path, "type"), "a resource type", loader::member(r, "type"));
    const std::string type = r["type"];
    const bool queue = type == "Microsoft.ServiceBus/namespaces/queues" || (nested && site.empty() && type == "queues");
    if (type == "Microsoft.Web/sites") {
      web.sites.push_back({path, &r});
    } else if (type == "Microsoft.Web/serverfarms") {
      web.farms.push_back({path, &r});
    } else if (type == "Microsoft.Web/sites/config" || (!site.empty() && type == "config")) {
      web.configs.push_back({{path, &r}, site});
    } else if (queue) {
      const json name = arm_value(loader::member(r, "name"), state, at(path, "name"));
      if (!name.is_string() || name.get<std::string>().empty()) fail(at(path, "name"), "a queue name (NAMESPACE/QUEUE)", name);
      const std::string full = name;
      SbQueue q;
      q.raw = full.substr(full.rfind('/') + 1);
      q.path = at(path, "properties");
      q.properties = r.contains("properties") ? r["properties"] : json::object();
      queues.push_back(q);
    } else if (type != "Microsoft.ServiceBus/namespaces") {
      const bool servicebus = type.rfind("Microsoft.ServiceBus/", 0) == 0 || nested;
      out.notes.push_back(path + ": resource of type " + type + (servicebus ? " (not modelled)" : " (not Service Bus: ignored)"));
    } else if (r.contains("sku") && r["sku"].is_object() && r["sku"].contains("name")) {
      out.notes.push_back(path + ": namespace sku " + arm_value(r["sku"]["name"], state, at(at(path, "sku"), "name")).dump() +
                          " (tiers, throttling and messaging units are not modelled)");
    }
    if (r.contains("resources") && r["resources"].is_array())
      for (std::size_t i = 0; i < r["resources"].size(); ++i)
        visit(r["resources"][i], at(at(path, "resources"), i), true, type == "Microsoft.Web/sites" ? path : site);
  };
  for (const auto& [path, r] : list) visit(*r, path, false, "");
  Imported imported = finish(queues, eval, std::move(out), "resources");
  map_function_app(web, state, imported);
  return imported;
}

Imported import_az_cli(const json& doc) {
  Imported out;
  out.format = doc.is_array() ? "az servicebus queue list output" : "az servicebus queue show output";
  std::vector<SbQueue> queues;
  const auto add = [&](const json& q, const std::string& path) {
    if (!q.contains("name") || !q["name"].is_string() || q["name"].get<std::string>().empty())
      fail(at(path, "name"), "the queue's name", loader::member(q, "name"));
    // az prints the properties at the top level (older versions: under "properties").
    queues.push_back({q["name"], "", q.contains("properties") && q["properties"].is_object() ? at(path, "properties") : path,
                      q.contains("properties") && q["properties"].is_object() ? q["properties"] : q});
  };
  if (doc.is_array()) {
    // Appended, not "[" + ...: g++ 12 inlines that into a false -Wstringop-overflow (GCC bug 105329).
    for (std::size_t i = 0; i < doc.size(); ++i) add(doc[i], std::string("[").append(std::to_string(i)).append("]"));
  } else {
    add(doc, "");
  }
  // Paths of a single object read "lockDuration", not ".lockDuration".
  for (auto& q : queues)
    if (!q.path.empty() && q.path.front() == '.') q.path.erase(0, 1);
  const Evaluate eval = [](const json& v, const std::string&) { return v; };
  return finish(queues, eval, std::move(out), doc.is_array() ? "[]" : "name");
}

}  // namespace brokersim::import
