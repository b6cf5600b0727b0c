// An ARM template's function app -> an azure-functions consumer group (function_app.cpp,
// docs/import-servicebus.md "Function apps").
#pragma once

#include <string>
#include <vector>

#include "experiments/cli/import/arm_expressions.hpp"
#include "experiments/cli/import/common.hpp"

namespace brokersim::import {

// A resource of the template and its path there ("resources[3]", "resources[3].resources[0]").
struct TemplateResource {
  std::string path;
  const json* resource;
};

// The Microsoft.Web resources of a template: sites (function apps among them), their plans
// (serverfarms), and sites' config resources (appsettings, web), top level or nested in their site
// (`site` is then the site's path).
struct WebResources {
  std::vector<TemplateResource> sites, farms;
  struct Config {
    TemplateResource at;
    std::string site;  // the nesting site's path, or "" for a top-level Microsoft.Web/sites/config
  };
  std::vector<Config> configs;
  bool any() const { return !sites.empty() || !farms.empty() || !configs.empty(); }
};

// The template's function app mapped onto consumers.0 of `out` (out.consumer, its origin and
// sources, and a note per value naming the entry it came from), after the queues are read; a
// template without one keeps the placeholder fleet and says so. Web resources that are not the
// function app mapped are noted.
void map_function_app(const WebResources& web, ArmState& state, Imported& out);

}  // namespace brokersim::import
