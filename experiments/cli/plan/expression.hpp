// plan's expressions: the targets (EXPR CMP EXPR) and the cost, over numbers, names (metrics,
// varied paths, slots_total, scenario paths), + - * /, parentheses and unary -.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace brokersim {

struct Expr {
  enum class Kind { Num, Var, Neg, Add, Sub, Mul, Div } kind = Kind::Num;
  double num = 0;
  std::string var;
  std::shared_ptr<Expr> a, b;

  double eval(const std::function<double(const std::string&)>& lookup) const {
    switch (kind) {
      case Kind::Num: return num;
      case Kind::Var: return lookup(var);
      case Kind::Neg: return -a->eval(lookup);
      case Kind::Add: return a->eval(lookup) + b->eval(lookup);
      case Kind::Sub: return a->eval(lookup) - b->eval(lookup);
      case Kind::Mul: return a->eval(lookup) * b->eval(lookup);
      case Kind::Div: return a->eval(lookup) / b->eval(lookup);
    }
    return 0;
  }
  void names(std::vector<std::string>& out) const {
    if (kind == Kind::Var && std::find(out.begin(), out.end(), var) == out.end()) out.push_back(var);
    if (a) a->names(out);
    if (b) b->names(out);
  }
};

// Limits on a --target or --cost text: its length, and how deeply parentheses and unary minus
// signs nest (a deeper text would overflow the parser's stack). Beyond either: a ScenarioError.
inline constexpr std::size_t kMaxExpressionLength = 4096;
inline constexpr std::size_t kMaxExpressionDepth = 100;

enum class Cmp { Le, Lt, Ge, Gt };

struct Target {
  std::string text;
  std::shared_ptr<Expr> lhs, rhs;
  Cmp cmp = Cmp::Le;
  // `EXPR<=VALUE in P% of runs`: the comparison is made per replication (one run: a day, an
  // hour) and must hold in at least P of them (the fraction, in (0, 1)), judged by the exact
  // Clopper-Pearson lower bound (plan/run_fraction.hpp); nullopt: judged on the means.
  std::optional<double> in_runs;
};

// --target TEXT: EXPR CMP EXPR [in P% of runs]; a ScenarioError names the character where the text goes wrong.
Target parse_target(const std::string& text);
// --cost TEXT: one expression.
std::shared_ptr<Expr> parse_cost(const std::string& text);

}  // namespace brokersim
