// Azure Service Bus queue properties -> broker.queues of kind azure-servicebus: an ARM template
// (Bicep compiles to one; resources of type Microsoft.ServiceBus/namespaces/queues, top level or
// nested in their namespace, with the template expressions parameters(), variables(), concat() and
// format() evaluated from the template's defaultValue and variables), or `az servicebus queue
// show` (one object) / `list` (an array). docs/import-servicebus.md has the table and the sources.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "experiments/cli/import/common.hpp"
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

// ---- ARM template expressions: "[concat(parameters('ns'), '/orders')]"
//
// No input controls the evaluator's recursion or what it allocates: calls nest at most kMaxNesting
// deep in one expression, parameters and variables refer on at most kMaxReferences deep (a loop is
// named), each parameter or variable is evaluated once (so ten references to a variable that
// references the next ten times cost twenty evaluations, not 10^n), every string concat(),
// format() or string() builds is checked against kMaxBuilt before it is built, and the bytes the
// template's expressions build and copy in all against kMaxBuiltTotal.

constexpr int kMaxNesting = 64;
constexpr std::size_t kMaxReferences = 32;
constexpr std::size_t kMaxBuilt = std::size_t{1} << 20;             // 1 MiB
constexpr std::size_t kMaxBuiltTotal = std::size_t{64} << 20;       // 64 MiB

// What the evaluation of one template shares: the template, the values of the parameters and
// variables evaluated so far, the chain of those being evaluated, and the bytes built.
struct ArmState {
  explicit ArmState(const json& t) : templ(t) {}
  const json& templ;
  struct Done {
    json value;
    std::size_t bytes;
  };
  std::map<std::string, Done> done;  // "variables('x')" -> value
  std::vector<std::string> active;   // outermost first
  std::size_t built = 0;
};

std::size_t text_bytes(const json& v) { return v.is_string() ? v.get_ref<const std::string&>().size() : v.dump().size(); }

class Expression {
 public:
  Expression(const std::string& text, ArmState& state, const std::string& path, const json& original)
      : s_(text), state_(state), path_(path), original_(original) {}
  json evaluate() {
    json v = value(0);
    skip();
    if (i_ != s_.size()) bad("text after the expression");
    return v;
  }

 private:
  [[noreturn]] void bad(const std::string& why) {
    fail(path_,
         "a template expression brokersim can evaluate (parameters() with a defaultValue, variables(), concat(), format(), "
         "string and number literals; " +
             why + ")",
         original_);
  }
  void skip() {
    while (i_ < s_.size() && s_[i_] == ' ') ++i_;
  }
  // Bytes about to be built or copied: refused past the limits, before the work.
  void charge(std::size_t bytes, const std::string& what) {
    if (bytes > kMaxBuilt)
      bad(what + " would be " + std::to_string(bytes) + " bytes, more than brokersim's limit of " + std::to_string(kMaxBuilt) +
          " (1 MiB)");
    if (bytes > kMaxBuiltTotal - state_.built)
      bad("the template's expressions would build more than " + std::to_string(kMaxBuiltTotal) + " bytes (64 MiB) in all");
    state_.built += bytes;
  }
  json value(int nesting) {
    skip();
    if (i_ >= s_.size()) bad("it ends early");
    if (s_[i_] == '\'') {
      std::string out;
      for (++i_;; ++i_) {
        if (i_ >= s_.size()) bad("an unterminated string");
        if (s_[i_] == '\'') {
          if (i_ + 1 < s_.size() && s_[i_ + 1] == '\'') {
            out += '\'';
            ++i_;
            continue;
          }
          ++i_;
          return out;
        }
        out += s_[i_];
      }
    }
    if (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-') {
      std::size_t j = i_ + 1;
      while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) ++j;
      const auto n = loader::read_integer(std::string_view(s_).substr(i_, j - i_));
      if (!n || n->too_large) bad("a number that is not a 64-bit integer");
      i_ = j;
      return n->value;
    }
    std::size_t j = i_;
    while (j < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[j])) || s_[j] == '_')) ++j;
    const std::string name = s_.substr(i_, j - i_);
    i_ = j;
    if (name == "true" || name == "false") return name == "true";
    skip();
    if (name.empty() || i_ >= s_.size() || s_[i_] != '(')
      bad("unexpected " + (name.empty() ? std::string("character") : "name " + name));
    if (nesting >= kMaxNesting) bad("calls nested more than " + std::to_string(kMaxNesting) + " deep");
    ++i_;
    std::vector<json> args;
    skip();
    if (i_ < s_.size() && s_[i_] == ')') {
      ++i_;
    } else {
      for (;;) {
        args.push_back(value(nesting + 1));
        skip();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ')') {
          ++i_;
          break;
        }
        bad("a missing ')'");
      }
    }
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == '[')) bad("property access is not supported");
    return call(name, args);
  }
  json call(const std::string& name, const std::vector<json>& args) {
    if (name == "parameters" || name == "variables") {
      if (args.size() != 1 || !args[0].is_string()) bad(name + "() takes one name");
      const std::string key = args[0];
      const json& templ = state_.templ;
      const json& section = templ.contains(name) ? templ[name] : json::object();
      if (!section.is_object() || !section.contains(key)) bad(name + "('" + key + "') is not in the template's " + name);
      if (name == "variables") return reference(name + "('" + key + "')", section[key]);
      const json& p = section[key];
      if (!p.is_object() || !p.contains("defaultValue"))
        bad("parameter '" + key + "' has no defaultValue in the template: give the value in the template or export with values");
      return reference(name + "('" + key + "')", p["defaultValue"]);
    }
    if (name == "concat" || name == "format") {
      // Non-string arguments as JSON text, once.
      std::vector<std::string> texts;
      for (const auto& a : args) texts.push_back(a.is_string() ? std::string() : a.dump());
      const auto piece = [&](std::size_t k) -> const std::string& {
        return args[k].is_string() ? args[k].get_ref<const std::string&>() : texts[k];
      };
      std::string out;
      if (name == "concat") {
        std::size_t bytes = 0;
        for (std::size_t k = 0; k < args.size(); ++k) bytes += piece(k).size();
        charge(bytes, "the string concat() builds");
        out.reserve(bytes);
        for (std::size_t k = 0; k < args.size(); ++k) out += piece(k);
        return out;
      }
      if (args.empty() || !args[0].is_string()) bad("format() takes a format string");
      const std::string& f = args[0].get_ref<const std::string&>();
      const auto placeholder = [&](std::size_t k) {
        return f[k] == '{' && k + 2 < f.size() && std::isdigit(static_cast<unsigned char>(f[k + 1])) && f[k + 2] == '}';
      };
      // The size first (saturating past the limit), then the string.
      std::size_t bytes = 0;
      for (std::size_t k = 0; k < f.size() && bytes <= kMaxBuiltTotal; ++k) {
        if (placeholder(k)) {
          const std::size_t n = static_cast<std::size_t>(f[k + 1] - '0') + 1;
          if (n >= args.size()) bad("format() lacks argument " + std::to_string(n - 1));
          bytes += piece(n).size();
          k += 2;
        } else {
          ++bytes;
        }
      }
      charge(bytes, "the string format() builds");
      out.reserve(bytes);
      for (std::size_t k = 0; k < f.size(); ++k) {
        if (placeholder(k)) {
          out += piece(static_cast<std::size_t>(f[k + 1] - '0') + 1);
          k += 2;
        } else {
          out += f[k];
        }
      }
      return out;
    }
    if (name == "string" && args.size() == 1) {
      if (args[0].is_string()) return args[0];
      std::string out = args[0].dump();
      charge(out.size(), "the string string() builds");
      return out;
    }
    bad("function " + name + "() is not supported");
  }
  // A parameter's defaultValue or a variable's value (`id`: "variables('x')"), evaluated once.
  json reference(const std::string& id, const json& v) {
    if (const auto hit = state_.done.find(id); hit != state_.done.end()) {
      charge(hit->second.bytes, id);
      return hit->second.value;
    }
    auto& active = state_.active;
    if (std::find(active.begin(), active.end(), id) != active.end()) {
      std::string chain;
      for (auto k = std::find(active.begin(), active.end(), id); k != active.end(); ++k) chain += *k + " -> ";
      bad("parameters or variables refer to each other in a loop: " + chain + id);
    }
    if (active.size() >= kMaxReferences)
      bad("parameters and variables refer on more than " + std::to_string(kMaxReferences) + " deep (" + active.front() +
          " -> ... -> " + id + ")");
    active.push_back(id);
    json out = v;
    if (v.is_string() && v.get_ref<const std::string&>().size() > 1 && v.get_ref<const std::string&>().front() == '[' &&
        v.get_ref<const std::string&>()[1] != '[') {
      const std::string& t = v.get_ref<const std::string&>();
      if (t.back() != ']') bad(id + " has no closing ']'");
      out = Expression(t.substr(1, t.size() - 2), state_, path_, original_).evaluate();
    }
    active.pop_back();
    const std::size_t bytes = text_bytes(out);
    state_.done.emplace(id, ArmState::Done{out, bytes});
    return out;
  }

  std::string s_;
  ArmState& state_;
  const std::string& path_;
  const json& original_;
  std::size_t i_ = 0;
};

json arm_value(const json& v, ArmState& state, const std::string& path) {
  if (!v.is_string()) return v;
  const std::string& t = v.get_ref<const std::string&>();
  if (t.size() >= 2 && t.front() == '[' && t[1] == '[') return t.substr(1);  // "[[" escapes a literal '['
  if (t.empty() || t.front() != '[') return v;
  if (t.back() != ']') fail(path, "a template expression ending in ']'", v);
  return Expression(t.substr(1, t.size() - 2), state, path, v).evaluate();
}

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
  const std::function<void(const json&, const std::string&, bool)> visit = [&](const json& r, const std::string& path,
                                                                               bool nested) {
    if (!r.is_object()) fail(path, "an object (a resource)", r);
    if (!r.contains("type") || !r["type"].is_string()) fail(at(path, "type"), "a resource type", loader::member(r, "type"));
    const std::string type = r["type"];
    const bool queue = type == "Microsoft.ServiceBus/namespaces/queues" || (nested && type == "queues");
    if (queue) {
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
      for (std::size_t i = 0; i < r["resources"].size(); ++i) visit(r["resources"][i], at(at(path, "resources"), i), true);
  };
  for (const auto& [path, r] : list) visit(*r, path, false);
  return finish(queues, eval, std::move(out), "resources");
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
