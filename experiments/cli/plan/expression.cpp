#include "experiments/cli/plan/expression.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "experiments/cli/text.hpp"
#include "models/scenario.hpp"

namespace brokersim {

namespace {

class ExprParser {
 public:
  ExprParser(std::string option, std::string text) : option_(std::move(option)), text_(std::move(text)) {
    if (text_.size() > kMaxExpressionLength)
      throw ScenarioError(option_ + ": expected at most " + std::to_string(kMaxExpressionLength) +
                          " characters, got " + std::to_string(text_.size()));
  }

  std::shared_ptr<Expr> expression() {
    auto left = term();
    for (;;) {
      skip();
      if (peek('+') || peek('-')) {
        const char op = text_[pos_++];
        auto e = std::make_shared<Expr>();
        e->kind = op == '+' ? Expr::Kind::Add : Expr::Kind::Sub;
        e->a = left;
        e->b = term();
        left = e;
      } else {
        return left;
      }
    }
  }

  std::optional<Cmp> comparison() {
    skip();
    if (text_.compare(pos_, 2, "<=") == 0) return pos_ += 2, Cmp::Le;
    if (text_.compare(pos_, 2, ">=") == 0) return pos_ += 2, Cmp::Ge;
    if (peek('<')) return ++pos_, Cmp::Lt;
    if (peek('>')) return ++pos_, Cmp::Gt;
    return std::nullopt;
  }

  // ` in P% of runs` after a target: P a decimal percentage above 0 and below 100 (100% can never
  // be shown by a finite number of runs). nullopt when the text does not go on with `in`.
  std::optional<double> runs_clause() {
    skip();
    if (!word("in")) return std::nullopt;
    skip();
    const char* start = text_.c_str() + pos_;
    double percent = 0;
    const auto r = std::from_chars(start, text_.c_str() + text_.size(), percent, std::chars_format::fixed);
    if (r.ec != std::errc() || !(percent > 0 && percent < 100)) fail("a percentage above 0 and below 100 after 'in'");
    pos_ += static_cast<std::size_t>(r.ptr - start);
    skip();
    if (!peek('%')) fail("'%' after the percentage");
    ++pos_;
    skip();
    if (!word("of")) fail("'of runs' after the percentage");
    skip();
    if (!word("runs")) fail("'runs' after 'of'");
    return percent / 100;
  }

  bool at_end() {
    skip();
    return pos_ == text_.size();
  }

  [[noreturn]] void fail(const std::string& expected) const {
    const std::string rest = pos_ < text_.size() ? quote(text_.substr(pos_)) : std::string("the end");
    throw ScenarioError(option_ + ": expected " + expected + " at character " + std::to_string(pos_ + 1) + " of " +
                        quote(text_) + ", got " + rest);
  }

 private:
  void skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  // The word w at pos_, whole (not the start of a longer name): consumed.
  bool word(const char* w) {
    const std::string s(w);
    if (text_.compare(pos_, s.size(), s) != 0) return false;
    const std::size_t end = pos_ + s.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_' || text_[end] == '.'))
      return false;
    pos_ = end;
    return true;
  }

  std::shared_ptr<Expr> term() {
    auto left = factor();
    for (;;) {
      skip();
      if (peek('*') || peek('/')) {
        const char op = text_[pos_++];
        auto e = std::make_shared<Expr>();
        e->kind = op == '*' ? Expr::Kind::Mul : Expr::Kind::Div;
        e->a = left;
        e->b = factor();
        left = e;
      } else {
        return left;
      }
    }
  }

  // Each unary - and ( nests one level; the limit keeps the recursion (here, in eval and in the
  // tree's destruction) far from the stack's end.
  void enter() {
    if (++depth_ > kMaxExpressionDepth)
      throw ScenarioError(option_ + ": more than " + std::to_string(kMaxExpressionDepth) +
                          " nested parentheses and unary minus signs at character " + std::to_string(pos_ + 1) +
                          " (the limit)");
  }

  std::shared_ptr<Expr> factor() {
    skip();
    auto e = std::make_shared<Expr>();
    if (peek('-')) {
      enter();
      ++pos_;
      e->kind = Expr::Kind::Neg;
      e->a = factor();
      --depth_;
      return e;
    }
    if (peek('(')) {
      enter();
      ++pos_;
      e = expression();
      --depth_;
      skip();
      if (!peek(')')) fail("')'");
      ++pos_;
      return e;
    }
    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    const auto ident_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    if (pos_ < text_.size() && (is_digit(text_[pos_]) || (text_[pos_] == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])))) {
      // Decimal only (from_chars, not strtod): 0x10 is not 16, and 1e999 is refused, not inf.
      const char* start = text_.c_str() + pos_;
      const auto r = std::from_chars(start, text_.c_str() + text_.size(), e->num, std::chars_format::general);
      if (r.ec != std::errc()) fail("a finite decimal number");
      pos_ += static_cast<std::size_t>(r.ptr - start);
      if (pos_ < text_.size() && (ident_start(text_[pos_]) || is_digit(text_[pos_]) || text_[pos_] == '.'))
        fail("an operator, ')' or a comparison after the number");
      return e;
    }
    if (pos_ < text_.size() && ident_start(text_[pos_])) {
      const std::size_t start = pos_;
      while (pos_ < text_.size() && (ident_start(text_[pos_]) || is_digit(text_[pos_]) || text_[pos_] == '.')) ++pos_;
      e->kind = Expr::Kind::Var;
      e->var = text_.substr(start, pos_ - start);
      return e;
    }
    fail("a number, a metric name or '('");
  }

  std::string option_, text_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
};

}  // namespace

Target parse_target(const std::string& text) {
  ExprParser p("--target", text);
  Target t;
  t.text = text;
  t.lhs = p.expression();
  const auto cmp = p.comparison();
  if (!cmp) p.fail("one of <= < >= >");
  t.cmp = *cmp;
  t.rhs = p.expression();
  t.in_runs = p.runs_clause();
  if (!p.at_end()) p.fail(t.in_runs ? "the end of the target" : "the end of the target or 'in P% of runs'");
  return t;
}

std::shared_ptr<Expr> parse_cost(const std::string& text) {
  ExprParser p("--cost", text);
  auto e = p.expression();
  if (!p.at_end()) p.fail("the end of the cost expression");
  return e;
}

}  // namespace brokersim
