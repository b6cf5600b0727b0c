#include "experiments/cli/import/arm_expressions.hpp"

#include <algorithm>
#include <cctype>

#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/frameworks/number_text.hpp"
#include "models/scenario.hpp"

namespace brokersim::import {

namespace {

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
         "string(), resourceId(), string and number literals; " +
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
    // resourceId([subscriptionId], [resourceGroupName], resourceType, name1, ...): the type is the
    // first argument with a '/', the names follow it. "/providers/TYPE/NAME1/..." is what the
    // importer needs to match a resource by its type and name (a site's serverFarmId).
    if (name == "resourceId") {
      std::size_t k = 0;
      while (k < args.size() && !(args[k].is_string() && args[k].get_ref<const std::string&>().find('/') != std::string::npos)) ++k;
      if (k + 1 >= args.size()) bad("resourceId() takes a resource type and its name");
      std::size_t bytes = 11;
      for (std::size_t n = k; n < args.size(); ++n) {
        if (!args[n].is_string()) bad("resourceId() takes strings");
        bytes += args[n].get_ref<const std::string&>().size() + 1;
      }
      charge(bytes, "the string resourceId() builds");
      std::string out = "/providers/" + args[k].get<std::string>();
      for (std::size_t n = k + 1; n < args.size(); ++n) out += "/" + args[n].get<std::string>();
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

}  // namespace

json arm_value(const json& v, ArmState& state, const std::string& path) {
  if (!v.is_string()) return v;
  const std::string& t = v.get_ref<const std::string&>();
  if (t.size() >= 2 && t.front() == '[' && t[1] == '[') return t.substr(1);  // "[[" escapes a literal '['
  if (t.empty() || t.front() != '[') return v;
  if (t.back() != ']') fail(path, "a template expression ending in ']'", v);
  return Expression(t.substr(1, t.size() - 2), state, path, v).evaluate();
}

std::optional<json> arm_value_if(const json& v, ArmState& state, const std::string& path) {
  try {
    return arm_value(v, state, path);
  } catch (const ScenarioError&) {
    return std::nullopt;
  }
}

}  // namespace brokersim::import
