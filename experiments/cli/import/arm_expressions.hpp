// ARM template expressions as `brokersim import` evaluates them where it reads a value:
// "[concat(parameters('ns'), '/orders')]" with parameters() (their defaultValue), variables(),
// concat(), format(), string(), resourceId() and literals. docs/import-servicebus.md, "Template
// expressions", has the rules and the bounds.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/cli/import/common.hpp"

namespace brokersim::import {

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

// `v` evaluated if it is an expression ("[...]"; "[[" escapes a literal '['), else as it is. An
// expression brokersim cannot evaluate is an input error naming `path`.
json arm_value(const json& v, ArmState& state, const std::string& path);
// The same, nullopt where it cannot be evaluated (a value read only to recognise it: an app
// setting that may hold listKeys()).
std::optional<json> arm_value_if(const json& v, ArmState& state, const std::string& path);

}  // namespace brokersim::import
