// An ARM template's function app (a Microsoft.Web/sites resource whose kind names functionapp, on
// its Microsoft.Web/serverfarms plan) -> an azure-functions consumer group
// (docs/framework-azure-functions.md): the plan from the farm's SKU (Y1 Consumption, FC1 Flex
// Consumption, EP1-EP3 Elastic Premium, any other an App Service plan: Dedicated), the host.json
// settings the app overrides in its app settings (AzureFunctionsJobHost__extensions__serviceBus__*,
// AzureFunctionsJobHost__functionTimeout), the instances from siteConfig (functionAppScaleLimit,
// minimumElasticInstanceCount) or Flex's functionAppConfig, and the queue from an app setting that
// names one of the template's queues. What the template cannot hold (the trigger's isBatched and
// isSessionsEnabled, how the code runs a batch, an execution's memory) keeps the framework's
// default and is said. Every value is noted with the entry it came from.
// docs/import-servicebus.md, "Function apps".
#include "experiments/cli/import/function_app.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "experiments/cli/loader/checks.hpp"

namespace brokersim::import {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string last_segment(const std::string& s) { return s.substr(s.rfind('/') + 1); }

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A value the template gives, and the entry it came from.
struct Sourced {
  json value;
  std::string source;
};

// A resource's evaluated name, or "" when it has none the importer can evaluate.
std::string name_of(const TemplateResource& r, ArmState& state) {
  if (!r.resource->contains("name")) return "";
  const auto v = arm_value_if((*r.resource)["name"], state, at(r.path, "name"));
  return v && v->is_string() ? v->get<std::string>() : "";
}

std::string resource_words(const TemplateResource& r, ArmState& state) {
  const std::string type = (*r.resource)["type"].get<std::string>();
  return r.path + " (" + type + " " + loader::quoted(name_of(r, state)) + ")";
}

// ---- the site's own settings: app settings and siteConfig, in the site or its config resources

// Does config resource `c` belong to `site` (named `site_name`), under `kind` (appsettings, web)?
bool config_of(const WebResources::Config& c, const TemplateResource& site, const std::string& site_name, const std::string& kind,
               ArmState& state) {
  const std::string name = name_of(c.at, state);
  if (!c.site.empty()) return c.site == site.path && lower(name) == kind;
  const auto slash = name.find('/');
  return slash != std::string::npos && name.substr(0, slash) == site_name && lower(name.substr(slash + 1)) == kind;
}

// The app settings: siteConfig.appSettings ([{name, value}]) and config resources named
// appsettings ({name: value}); each with its path. A name the importer cannot evaluate is passed
// over (it cannot be one of the settings read).
std::vector<std::pair<std::string, Sourced>> app_settings(const TemplateResource& site, const std::string& site_name,
                                                          const WebResources& web, ArmState& state) {
  std::vector<std::pair<std::string, Sourced>> out;
  const json& props = site.resource->value("properties", json::object());
  const std::string list_path = at(at(at(site.path, "properties"), "siteConfig"), "appSettings");
  if (props.is_object() && props.contains("siteConfig") && props["siteConfig"].is_object() &&
      props["siteConfig"].contains("appSettings") && props["siteConfig"]["appSettings"].is_array()) {
    const json& list = props["siteConfig"]["appSettings"];
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_object() || !list[i].contains("name")) fail(at(list_path, i), "an app setting {\"name\": ..., \"value\": ...}", list[i]);
      const auto name = arm_value_if(list[i]["name"], state, at(at(list_path, i), "name"));
      if (name && name->is_string()) out.push_back({name->get<std::string>(), {loader::member(list[i], "value"), at(list_path, i)}});
    }
  }
  for (const auto& c : web.configs) {
    if (!config_of(c, site, site_name, "appsettings", state)) continue;
    const json& p = c.at.resource->value("properties", json::object());
    if (!p.is_object()) continue;
    for (auto it = p.begin(); it != p.end(); ++it) out.push_back({it.key(), {it.value(), at(at(c.at.path, "properties"), it.key())}});
  }
  return out;
}

// A siteConfig property, from the site or its config resource named web.
std::optional<Sourced> site_config(const TemplateResource& site, const std::string& site_name, const WebResources& web,
                                   ArmState& state, const std::string& key) {
  const json& props = site.resource->value("properties", json::object());
  if (props.is_object() && props.contains("siteConfig") && props["siteConfig"].is_object() && props["siteConfig"].contains(key)) {
    const std::string path = at(at(at(site.path, "properties"), "siteConfig"), key);
    return Sourced{arm_value(props["siteConfig"][key], state, path), path};
  }
  for (const auto& c : web.configs) {
    if (!config_of(c, site, site_name, "web", state)) continue;
    const json& p = c.at.resource->value("properties", json::object());
    if (p.is_object() && p.contains(key)) {
      const std::string path = at(at(c.at.path, "properties"), key);
      return Sourced{arm_value(p[key], state, path), path};
    }
  }
  return std::nullopt;
}

// ---- the hosting plan: the serverfarm the site names

struct HostingPlan {
  std::string plan = "consumption";  // the framework's hosting_plan
  std::string sku;                    // the farm's sku.name
  std::string source;                 // where the plan came from, for the notes
  std::optional<Sourced> capacity, max_burst;  // sku.capacity, properties.maximumElasticWorkerCount
};

std::string plan_of_sku(const std::string& sku, const std::string& tier) {
  const std::string s = lower(sku), t = lower(tier);
  if (s == "y1" || (s.empty() && t == "dynamic")) return "consumption";
  if (s == "fc1" || (s.empty() && t == "flexconsumption")) return "flex-consumption";
  if (s == "ep1" || s == "ep2" || s == "ep3" || (s.empty() && t == "elasticpremium")) return "premium";
  return "dedicated";
}

// The serverfarm the site's serverFarmId names, if the template has it.
std::optional<TemplateResource> named_farm(const TemplateResource& site, const WebResources& web, ArmState& state) {
  const json& props = site.resource->value("properties", json::object());
  if (!props.is_object() || !props.contains("serverFarmId")) return std::nullopt;
  const auto id = arm_value_if(props["serverFarmId"], state, at(at(site.path, "properties"), "serverFarmId"));
  if (!id || !id->is_string()) return std::nullopt;
  for (const auto& f : web.farms)
    if (name_of(f, state) == last_segment(id->get<std::string>())) return f;
  return std::nullopt;
}

std::optional<TemplateResource> farm_of(const TemplateResource& site, const WebResources& web, ArmState& state, Imported& out) {
  if (auto farm = named_farm(site, web, state)) return farm;
  if (web.farms.size() == 1) {
    out.notes.push_back("function app " + resource_words(site, state) + ": its serverFarmId names no serverfarm of the template; " +
                        "the template's one, " + resource_words(web.farms[0], state) + ", is taken as its plan");
    return web.farms[0];
  }
  return std::nullopt;
}

HostingPlan hosting_plan(const std::optional<TemplateResource>& farm, ArmState& state) {
  HostingPlan hp;
  if (!farm) {
    hp.source = "the framework's default (no serverfarm of the template is the function app's plan)";
    return hp;
  }
  const json& r = *farm->resource;
  const json sku = r.value("sku", json::object());
  const std::string sku_path = at(farm->path, "sku");
  std::string name, tier;
  if (sku.is_object() && sku.contains("name")) name = text_of(arm_value(sku["name"], state, at(sku_path, "name")));
  if (sku.is_object() && sku.contains("tier")) tier = text_of(arm_value(sku["tier"], state, at(sku_path, "tier")));
  hp.plan = plan_of_sku(name, tier);
  hp.sku = name;
  hp.source = resource_words(*farm, state) + (name.empty() ? " sku.tier " + loader::quoted(tier) : " sku.name " + loader::quoted(name));
  if (sku.is_object() && sku.contains("capacity"))
    hp.capacity = Sourced{arm_value(sku["capacity"], state, at(sku_path, "capacity")), at(sku_path, "capacity")};
  const json& props = r.value("properties", json::object());
  if (props.is_object() && props.contains("maximumElasticWorkerCount")) {
    const std::string p = at(at(farm->path, "properties"), "maximumElasticWorkerCount");
    hp.max_burst = Sourced{arm_value(props["maximumElasticWorkerCount"], state, p), p};
  }
  return hp;
}

// ---- the mapping

// The host.json settings a function app overrides as AzureFunctionsJobHost__extensions__serviceBus__NAME.
enum class Kind { Integer, Boolean, Duration };
struct HostSetting {
  const char* name;
  Kind kind;
};
constexpr HostSetting kHostSettings[] = {
    {"maxConcurrentCalls", Kind::Integer},    {"maxConcurrentSessions", Kind::Integer},
    {"maxConcurrentCallsPerSession", Kind::Integer}, {"prefetchCount", Kind::Integer},
    {"maxMessageBatchSize", Kind::Integer},   {"minMessageBatchSize", Kind::Integer},
    {"maxBatchWaitTime", Kind::Duration},     {"sessionIdleTimeout", Kind::Duration},
    {"maxAutoLockRenewalDuration", Kind::Duration}, {"autoCompleteMessages", Kind::Boolean}};
constexpr const char* kServiceBusPrefix = "azurefunctionsjobhost__extensions__servicebus__";

// An app setting's name as the host reads it: case-insensitive, ':' and "__" alike.
std::string host_key(const std::string& name) {
  std::string k;
  for (std::size_t i = 0; i < name.size(); ++i) k += name[i] == ':' ? std::string("__") : std::string(1, name[i]);
  return lower(k);
}

// An app setting's value as the framework setting takes it (app settings are strings).
json host_value(const json& raw, Kind kind, ArmState& state, const std::string& path, const std::string& setting) {
  const json v = arm_value(raw, state, at(path, "value"));
  switch (kind) {
    case Kind::Integer:
      return string_integer(v, at(path, "value"), -1'000'000'000'000, 1'000'000'000'000,
                            "an integer (the host reads " + setting + " as one)");
    case Kind::Boolean:
      return boolean_value(v, at(path, "value"), true);
    case Kind::Duration:
      if (v.is_string() || v == -1) return v;
      fail(at(path, "value"), "a duration (\"00:05:00\") (the host reads " + setting + " as one)", v);
  }
  return v;
}

struct Mapping {
  ojson framework = ojson::object();
  std::vector<std::string> notes;
  std::map<std::string, std::string> sources;
  void set(const std::string& key, const json& value, const std::string& source) {
    framework[key] = value;
    notes.push_back("consumers.0.framework." + key + " " + value.dump() + " from " + source);
    sources[key] = source;
  }
};

// host.json is the app's, shared by its functions: a setting for the other kind of trigger (with
// or without sessions) does not apply to this one, and is noted, not written.
bool applies(const std::string& setting, bool sessions) {
  if (sessions) return setting != "maxConcurrentCalls";
  return setting != "maxConcurrentSessions" && setting != "maxConcurrentCallsPerSession" && setting != "sessionIdleTimeout";
}

void map_host_settings(const std::vector<std::pair<std::string, Sourced>>& settings, ArmState& state, bool sessions, Mapping& m) {
  std::vector<std::string> other;
  for (const auto& [name, s] : settings) {
    const std::string key = host_key(name);
    const std::string source = s.source + " app setting " + name;
    if (key == "azurefunctionsjobhost__functiontimeout") {
      m.set("functionTimeout", host_value(s.value, Kind::Duration, state, s.source, "functionTimeout"), source);
      continue;
    }
    if (key.rfind(kServiceBusPrefix, 0) != 0) {
      if (key.rfind("azurefunctionsjobhost__", 0) == 0) other.push_back(name);
      continue;
    }
    const std::string setting = key.substr(std::string(kServiceBusPrefix).size());
    const auto it = std::find_if(std::begin(kHostSettings), std::end(kHostSettings),
                                 [&](const HostSetting& h) { return lower(h.name) == setting; });
    if (it == std::end(kHostSettings)) {
      other.push_back(name);
      continue;
    }
    const json value = host_value(s.value, it->kind, state, s.source, it->name);
    if (applies(it->name, sessions)) {
      m.set(it->name, value, source);
    } else {
      m.notes.push_back("function app setting " + name + " " + value.dump() + " (" + s.source + "): not set, as " + it->name +
                        (sessions ? " applies only to triggers without sessions and the trigger's queue requires sessions"
                                  : " applies only to session-enabled triggers and the trigger's queue requires none"));
    }
  }
  for (const auto& name : other)
    m.notes.push_back("function app setting " + name + ": a host.json override brokersim does not read (not modelled)");
}

// The queue the trigger reads is the function's (its attribute or function.json); an app setting
// whose value is one of the template's queues, the %setting% the trigger names, is the usual
// trace of it in a template.
std::pair<std::string, std::string> trigger_queue(const std::vector<std::pair<std::string, Sourced>>& settings, ArmState& state,
                                                  const Imported& out) {
  std::vector<std::pair<std::string, std::string>> found;  // queue, source
  for (const auto& [name, s] : settings) {
    const auto v = arm_value_if(s.value, state, at(s.source, "value"));
    if (!v || !v->is_string() || !out.broker["queues"].contains(v->get<std::string>())) continue;
    if (std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.first == v->get<std::string>(); }))
      found.push_back({v->get<std::string>(), s.source + " app setting " + name});
  }
  if (found.size() == 1) return {found[0].first, "from " + found[0].second + " (a queue of the template)"};
  const std::string queue = out.first_work_queue();
  if (found.empty())
    return {queue, "the template's work queue: the trigger's queue is the function's (its attribute or function.json), and no app "
                   "setting names a queue of the template"};
  return {queue, "the template's work queue: app settings name " + std::to_string(found.size()) +
                     " of its queues, and which one the trigger reads is the function's (its attribute or function.json)"};
}

void map_plan(const HostingPlan& hp, Mapping& m) {
  m.set("hosting_plan", hp.plan, hp.source);
  if (hp.plan == "premium") {
    m.set("plan_sku", lower(hp.sku) == "ep2" ? "EP2" : lower(hp.sku) == "ep3" ? "EP3" : "EP1", hp.source);
    // The maxConcurrentCalls default is 16 x the instance's processors: the SKU's cores.
    m.set("host_cpus", lower(hp.sku) == "ep2" ? 2 : lower(hp.sku) == "ep3" ? 4 : 1,
          hp.source + " (EP1 1 core, EP2 2, EP3 4: functions-premium-plan)");
  } else if (hp.plan == "dedicated" && !hp.sku.empty()) {
    m.set("plan_sku", hp.sku, hp.source);
  }
}

// Flex Consumption's functionAppConfig.scaleAndConcurrency: instance memory, the always-ready
// instances of a function, the most instances.
std::optional<Sourced> map_flex(const TemplateResource& site, ArmState& state, Mapping& m) {
  const json& props = site.resource->value("properties", json::object());
  if (!props.is_object() || !props.contains("functionAppConfig") || !props["functionAppConfig"].is_object() ||
      !props["functionAppConfig"].contains("scaleAndConcurrency"))
    return std::nullopt;
  const std::string path = at(at(at(site.path, "properties"), "functionAppConfig"), "scaleAndConcurrency");
  const json& sc = props["functionAppConfig"]["scaleAndConcurrency"];
  if (!sc.is_object()) fail(path, "an object", sc);
  if (sc.contains("instanceMemoryMB"))
    m.set("instanceMemoryMB", string_integer(arm_value(sc["instanceMemoryMB"], state, at(path, "instanceMemoryMB")),
                                             at(path, "instanceMemoryMB"), 1, 1'000'000, "an integer (MB)"),
          at(path, "instanceMemoryMB"));
  if (sc.contains("alwaysReady") && sc["alwaysReady"].is_array()) {
    std::vector<std::size_t> functions;
    for (std::size_t i = 0; i < sc["alwaysReady"].size(); ++i) {
      const json& e = sc["alwaysReady"][i];
      if (e.is_object() && e.contains("name") && text_of(arm_value(e["name"], state, at(at(at(path, "alwaysReady"), i), "name"))).rfind("function:", 0) == 0)
        functions.push_back(i);
    }
    if (functions.size() == 1) {
      const std::string p = at(at(at(path, "alwaysReady"), functions[0]), "instanceCount");
      m.set("always_ready_instances", string_integer(arm_value(loader::member(sc["alwaysReady"][functions[0]], "instanceCount"), state, p), p,
                                                     0, 1000, "an integer from 0 to 1000"),
            p);
    } else if (!functions.empty()) {
      m.notes.push_back("function app " + path + ".alwaysReady: " + std::to_string(functions.size()) +
                        " functions have always-ready instances; which one is the Service Bus trigger is the app's code: "
                        "give consumers.0.framework.always_ready_instances");
    }
  }
  if (!sc.contains("maximumInstanceCount")) return std::nullopt;
  return Sourced{arm_value(sc["maximumInstanceCount"], state, at(path, "maximumInstanceCount")), at(path, "maximumInstanceCount")};
}

// The instances: brokersim does not model the scale controller, so the group's count is the
// plan's floor (Premium's always-ready instances or the plan's capacity, Dedicated's capacity,
// Flex's always-ready ones), and the cap on instances is said, for a plan over the count.
void map_count(const HostingPlan& hp, const std::optional<Sourced>& ready, const std::optional<Sourced>& cap, ojson& consumer,
               Mapping& m) {
  std::int64_t count = 1;
  std::string source = "the scale controller is not modelled: one instance";
  const auto take = [&](const Sourced& s, const std::string& what) {
    count = string_integer(s.value, s.source, 1, 1'000'000, "an integer >= 1");
    source = "from " + s.source + " (" + what + ")";
  };
  if (hp.plan == "premium" && ready) take(*ready, "the always-ready instances");
  else if ((hp.plan == "premium" || hp.plan == "dedicated") && hp.capacity) take(*hp.capacity, "the plan's instances");
  else if (hp.plan == "flex-consumption" && m.framework.contains("always_ready_instances") && m.framework["always_ready_instances"] > 0) {
    count = m.framework["always_ready_instances"].get<std::int64_t>();
    source = "the always-ready instances";
  }
  consumer["count"] = count;
  std::string note = "consumers.0.count " + std::to_string(count) + " " + source;
  if (cap)
    note += "; " + cap->source + " " + text_of(cap->value) + " caps the instances: brokersim does not scale them, plan over "
                                                             "consumers.0.count=1:" + text_of(cap->value);
  m.notes.push_back(note);
}

// What a template cannot hold: said, with the framework's default kept.
void note_not_in_template(const Mapping& m, std::vector<std::string>& notes) {
  const bool batch_settings = m.framework.contains("maxMessageBatchSize") || m.framework.contains("minMessageBatchSize") ||
                              m.framework.contains("maxBatchWaitTime");
  notes.push_back(
      "consumers.0.framework.isBatched: not in the template (the trigger's: IsBatched in the function's attribute, "
      "\"cardinality\": \"many\" in function.json): the framework's default false is kept" +
      std::string(batch_settings ? "; the app sets batch settings, which apply only to a batched function: give isBatched true if "
                                   "it is one (its batch_execution, how its code runs a batch, defaults to sequential)"
                                 : "; give isBatched true for a batched function"));
  if (!m.framework.contains("isSessionsEnabled"))
    notes.push_back("consumers.0.framework.isSessionsEnabled: not in the template (the trigger's; its queue requires no sessions): "
                    "the framework's default false is kept");
  if (m.framework["hosting_plan"] == "consumption")
    notes.push_back("consumers.0.framework.execution_memory_mb: not in the template (an execution's memory is observed, not "
                    "configured): billing.gb_seconds needs it");
}

bool is_function_app(const TemplateResource& site, ArmState& state) {
  if (!site.resource->contains("kind")) return false;
  const auto kind = arm_value_if((*site.resource)["kind"], state, at(site.path, "kind"));
  return kind && kind->is_string() && lower(kind->get<std::string>()).find("functionapp") != std::string::npos;
}

// The function app to map: the first whose app settings name the Service Bus extension, else the
// first.
std::optional<TemplateResource> chosen_app(const std::vector<TemplateResource>& apps, const WebResources& web, ArmState& state) {
  for (const auto& a : apps)
    for (const auto& [name, s] : app_settings(a, name_of(a, state), web, state))
      if (lower(name).find("servicebus") != std::string::npos) return a;
  if (apps.empty()) return std::nullopt;
  return apps.front();
}

}  // namespace

void map_function_app(const WebResources& web, ArmState& state, Imported& out) {
  std::vector<TemplateResource> apps;
  for (const auto& s : web.sites)
    if (is_function_app(s, state)) apps.push_back(s);
    else out.notes.push_back(resource_words(s, state) + ": a site that is no function app (not modelled)");
  const auto app = chosen_app(apps, web, state);
  if (!app) {
    for (const auto& f : web.farms) out.notes.push_back(resource_words(f, state) + ": a plan with no function app of the template (not modelled)");
    return;
  }
  const auto farm = farm_of(*app, web, state, out);
  for (const auto& f : web.farms)
    if (!farm || f.path != farm->path)
      out.notes.push_back(resource_words(f, state) + ": a plan, not the mapped function app's (not modelled)");
  for (const auto& a : apps)
    if (a.path != app->path)
      out.notes.push_back("function app " + resource_words(a, state) + ": not mapped (one consumer group per template: " +
                          resource_words(*app, state) + " is)");
  const std::string site_name = name_of(*app, state);
  const auto settings = app_settings(*app, site_name, web, state);
  Mapping m;
  m.framework["name"] = "azure-functions";
  const HostingPlan hp = hosting_plan(farm, state);
  map_plan(hp, m);
  std::optional<Sourced> cap = site_config(*app, site_name, web, state, "functionAppScaleLimit");
  if (hp.plan == "flex-consumption") {
    if (auto flex_cap = map_flex(*app, state, m)) cap = flex_cap;
  }
  if (!cap && hp.max_burst) cap = hp.max_burst;
  const auto [queue, queue_source] = trigger_queue(settings, state, out);
  // A session queue is read by a session-enabled trigger only: the queue says what its
  // isSessionsEnabled is.
  const bool sessions = out.broker["queues"][queue].value("requires_session", false);
  if (sessions)
    m.set("isSessionsEnabled", true, "broker.queues." + queue + ".requires_session (the queue requires sessions: so does its trigger)");
  map_host_settings(settings, state, sessions, m);
  ojson consumer = ojson::object();
  consumer["queue"] = queue;
  map_count(hp, site_config(*app, site_name, web, state, "minimumElasticInstanceCount"), cap, consumer, m);
  consumer["framework"] = m.framework;
  note_not_in_template(m, m.notes);
  out.consumer = consumer;
  out.consumer_origin = "consumers.0 is the function app " + resource_words(*app, state) + " (framework azure-functions) on queue " +
                        loader::quoted(queue) + ", " + queue_source;
  out.consumer_sources = m.sources;
  for (auto& n : m.notes) out.notes.push_back(std::move(n));
}

}  // namespace brokersim::import
