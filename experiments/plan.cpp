// brokersim plan: the cheapest grid point whose replication means meet every --target.
//
// Search: the points are ordered by cost (default: slots_total = sum of count*slots over the
// consumer groups, then the prefetch sum; --cost EXPR replaces both). If some varied path is
// monotone in cost (the primary cost strictly increases with its value, the other paths fixed:
// a consumer count, slots), the search bisects along it for each combination of the other paths,
// ASSUMING the target is monotone in it (once a value meets the target, every costlier value
// does too), and skips every point that costs at least as much as the best found so far.
// Without such a path the points are run in cost order until one meets the target.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "experiments/cli_options.hpp"
#include "experiments/commands/commands.hpp"
#include "experiments/replication/grid.hpp"
#include "experiments/replication/metrics.hpp"
#include "experiments/replication/pool.hpp"
#include "experiments/replication/precision.hpp"
#include "experiments/replication/progress.hpp"
#include "experiments/replication/statistics.hpp"
#include "experiments/scenario_load.hpp"
#include "experiments/text.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Expressions: numbers, names (metrics, varied paths, slots_total), + - * /, parentheses, unary -.

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

enum class Cmp { Le, Lt, Ge, Gt };

class ExprParser {
 public:
  ExprParser(std::string option, std::string text) : option_(std::move(option)), text_(std::move(text)) {}

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

  std::shared_ptr<Expr> factor() {
    skip();
    auto e = std::make_shared<Expr>();
    if (peek('-')) {
      ++pos_;
      e->kind = Expr::Kind::Neg;
      e->a = factor();
      return e;
    }
    if (peek('(')) {
      ++pos_;
      e = expression();
      skip();
      if (!peek(')')) fail("')'");
      ++pos_;
      return e;
    }
    const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    if (pos_ < text_.size() && (is_digit(text_[pos_]) || (text_[pos_] == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])))) {
      const char* start = text_.c_str() + pos_;
      char* end = nullptr;
      e->num = std::strtod(start, &end);
      pos_ += static_cast<std::size_t>(end - start);
      return e;
    }
    const auto ident_start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
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
};

struct Target {
  std::string text;
  std::shared_ptr<Expr> lhs, rhs;
  Cmp cmp = Cmp::Le;
};

Target parse_target(const std::string& text) {
  ExprParser p("--target", text);
  Target t;
  t.text = text;
  t.lhs = p.expression();
  const auto cmp = p.comparison();
  if (!cmp) p.fail("one of <= < >= >");
  t.cmp = *cmp;
  t.rhs = p.expression();
  if (!p.at_end()) p.fail("the end of the target");
  return t;
}

std::shared_ptr<Expr> parse_cost(const std::string& text) {
  ExprParser p("--cost", text);
  auto e = p.expression();
  if (!p.at_end()) p.fail("the end of the cost expression");
  return e;
}

// ---------------------------------------------------------------------------------------------

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

// " (did you mean "X"?)" for the nearest candidate within a typo or two (more for long names,
// whose dotted prefixes make a transposed pair cost 2), else nothing.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 8);
  std::size_t best_distance = limit + 1;
  std::string best;
  for (const auto& c : candidates) {
    const std::size_t gap = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (gap > limit) continue;
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  return best.empty() ? std::string() : " (did you mean " + quote(best) + "?)";
}

constexpr const char* kPlanHelp =
    "usage:\n"
    "  brokersim plan SCENARIO.json [--vary PATH=LIST ...] --target 'EXPR<=VALUE' ... [--cost EXPR]\n"
    "                [--bisect PATH|none] [--conservative] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--json] [--progress]\n"
    "                [--precision REL] [--precision-abs A] [--max-replications N]\n"
    "\n"
    "Finds the cheapest grid point whose replication means meet every --target (metric names as in\n"
    "sweep's CSV without _mean, numbers, + - * / and parentheses, one of <= < >= >). Cheapest:\n"
    "fewest slots_total (sum of count*slots), then the smallest prefetch sum, or --cost EXPR over\n"
    "slots_total, the varied paths and any numeric scenario path (consumers.0.count*consumers.0.slots).\n"
    "A path whose value raises the cost (a consumer count) is bisected for each combination of the\n"
    "others, assuming the target is monotone in it. `brokersim metrics SCENARIO.json` lists the\n"
    "metric names. Exit status 5: no setting in the grid meets every target.\n"
    "With --precision REL a setting is accepted only when each target's 95% confidence bound meets it\n"
    "and rejected only when a bound misses it; a setting whose interval straddles a target gets more\n"
    "replications (rounds 3, 4, 6, 9, ...) until it is decided, its target metrics are within REL of\n"
    "their means (or --precision-abs), or --max-replications is reached: then it is undecided, and\n"
    "not accepted.\n";

// ---------------------------------------------------------------------------------------------
// Step 1: the command line.

struct PlanOptions {
  std::string scenario;
  std::vector<std::string> sets, varies, target_texts;
  std::optional<std::string> cost, bisect;
  std::optional<std::uint64_t> seed;
  std::uint64_t replications = 5;
  unsigned threads = 1;
  bool json = false, conservative = false, progress = false;
  std::optional<PrecisionRule> precision;
};

po::options_description plan_option_descriptions() {
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("vary", po::value<std::vector<std::string>>()->composing(), "PATH=LIST: a grid axis (repeatable), as in sweep")
      ("target", po::value<std::vector<std::string>>()->composing(), "EXPR CMP EXPR on replication means (repeatable; all must hold)")
      ("cost", po::value<std::string>(), "cost expression over slots_total, the varied paths and numeric scenario paths (default: slots_total, then prefetch sum)")
      ("bisect", po::value<std::string>(), "PATH to bisect along, or none (default: chosen automatically)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replications", po::value<std::string>(), "runs per setting (default 5)")
      ("threads", po::value<std::string>(), "worker threads (default: all cores)")
      ("json", "print the answer as one JSON object")
      ("conservative", "a target holds only at its 95% confidence bound (the margin lhs - rhs per replication, mean + ci95)")
      ("progress", "report progress on stderr even when it is not a terminal");
  add_precision_options(opts, false);
  return opts;
}

// nullopt: --help was printed.
std::optional<PlanOptions> parse_plan_options(const std::vector<std::string>& args, std::ostream& out) {
  const po::options_description opts = plan_option_descriptions();
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const po::variables_map vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    out << kPlanHelp << '\n' << opts << '\n';
    return std::nullopt;
  }
  if (!vm.count("scenario")) throw ScenarioError("plan: expected a scenario file, got nothing");
  if (!vm.count("target")) throw ScenarioError("plan: expected at least one --target, got nothing");
  PlanOptions o;
  o.scenario = vm["scenario"].as<std::string>();
  o.sets = option_list(vm, "set");
  o.varies = option_list(vm, "vary");
  o.target_texts = option_list(vm, "target");
  if (vm.count("replications")) o.replications = parse_count("--replications", vm["replications"].as<std::string>(), 1);
  o.threads = thread_count(vm.count("threads") ? std::optional<std::string>(vm["threads"].as<std::string>()) : std::nullopt);
  if (vm.count("seed")) o.seed = parse_count("--seed", vm["seed"].as<std::string>(), 0);
  if (vm.count("cost")) o.cost = vm["cost"].as<std::string>();
  if (vm.count("bisect")) o.bisect = vm["bisect"].as<std::string>();
  o.json = vm.count("json") > 0;
  o.conservative = vm.count("conservative") > 0;
  o.progress = vm.count("progress") > 0;
  o.precision = read_precision_options(vm, vm.count("replications") ? o.replications : kMinSequentialReplications);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Step 2: the grid, every point validated and costed before anything runs.

struct PlanGrid {
  SweepSpace space;
  std::vector<Scenario> scenarios;  // one per grid point
  std::vector<std::string> names;   // metric columns of a run
  std::map<std::string, std::size_t> metric_index, axis_index;
  std::vector<double> slots_total, prefetch_total, cost;
  bool custom_cost = false;
  // --cost names a metric (fleet.slot_seconds: what an autoscaled fleet cost is only known after
  // the run): every point is run, then costed on its replication means.
  bool cost_from_metrics = false;

  std::size_t size() const { return scenarios.size(); }

  double axis_number(std::size_t p, std::size_t a, const std::string& option) const {
    const auto coords = grid_coords(space.axes, p);
    const json& v = space.axes[a].values[coords[a]];
    if (!v.is_number())
      throw ScenarioError(option + ": expected numeric values of " + space.axes[a].path + ", got " +
                          quote(space.axes[a].labels[coords[a]]));
    return v.get<double>();
  }

  // The search order: cost, then (default cost) the prefetch sum, then grid order.
  bool cheaper(std::size_t x, std::size_t y) const {
    if (cost[x] != cost[y]) return cost[x] < cost[y];
    if (!custom_cost && prefetch_total[x] != prefetch_total[y]) return prefetch_total[x] < prefetch_total[y];
    return x < y;
  }
};

// Every name a target may use, for the did-you-mean: metrics, varied paths, slots_total.
std::vector<std::string> target_names(const PlanGrid& grid) {
  std::vector<std::string> names = grid.names;
  for (const auto& a : grid.space.axes) names.push_back(a.path);
  names.emplace_back("slots_total");
  return names;
}

void check_target_names(const PlanGrid& grid, const std::vector<Target>& targets) {
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    for (const auto& u : used)
      if (!grid.metric_index.count(u) && !grid.axis_index.count(u) && u != "slots_total")
        throw ScenarioError("--target: expected metric names (as in sweep's CSV, without _mean: "
                            "fraction.expired_in_queue, wait_ms.local.p95, throughput_per_s, ...), got " + quote(u) +
                            did_you_mean(u, target_names(grid)) + "; `brokersim metrics SCENARIO.json` lists them all");
  }
}

// The numeric leaves of a scenario document as dotted paths (consumers.0.count), for the
// did-you-mean of --cost.
void numeric_paths(const json& v, const std::string& prefix, std::vector<std::string>& out) {
  if (v.is_number()) out.push_back(prefix);
  if (!v.is_object() && !v.is_array()) return;
  std::size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    const std::string key = v.is_object() ? it.key() : std::to_string(i);
    numeric_paths(it.value(), prefix.empty() ? key : prefix + "." + key, out);
  }
}

// The capacity keys a file may leave to their defaults; --cost reads those from the validated
// scenario, so `consumers.0.count*consumers.0.slots` works whether or not slots is written.
std::optional<double> consumer_default(const Scenario& s, const std::string& path) {
  const auto first = path.find('.'), last = path.rfind('.');
  if (path.compare(0, first, "consumers") != 0 || first == last) return std::nullopt;
  const std::string index = path.substr(first + 1, last - first - 1), key = path.substr(last + 1);
  if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const std::size_t g = std::stoul(index);
  if (g >= s.consumers.size()) return std::nullopt;
  if (key == "count") return s.consumers[g].count;
  if (key == "slots") return s.consumers[g].slots;
  if (key == "prefetch") return s.consumers[g].prefetch;
  return std::nullopt;
}

// A scenario path's value at a grid point (after --set and the varied values), or nullopt.
std::optional<double> scenario_number(const json& doc, const Scenario& s, const std::string& path, std::string* got) {
  std::string pointer;
  for (char c : path) pointer += c == '.' ? '/' : c;
  try {
    const json::json_pointer ptr("/" + pointer);
    if (doc.contains(ptr)) {
      const json& v = doc.at(ptr);
      if (v.is_number()) return v.get<double>();
      if (got) *got = v.dump(-1, ' ', false, json::error_handler_t::replace);
      return std::nullopt;
    }
  } catch (const json::exception&) {
    // not a path into this document (an array indexed by a word): as if missing
  }
  return consumer_default(s, path);
}

[[noreturn]] void bad_cost_name(const PlanGrid& grid, const json& doc, const std::string& name, const std::string& got) {
  std::vector<std::string> candidates{"slots_total"};
  for (const auto& a : grid.space.axes) candidates.push_back(a.path);
  numeric_paths(doc, "", candidates);
  for (std::size_t g = 0; g < grid.scenarios[0].consumers.size(); ++g)
    for (const char* k : {"count", "slots", "prefetch"}) candidates.push_back("consumers." + std::to_string(g) + "." + k);
  if (!got.empty())
    throw ScenarioError("--cost: expected a number at scenario path " + name + ", got " + got);
  throw ScenarioError("--cost: expected varied paths, slots_total or numeric scenario paths (consumers.0.count), got " +
                      quote(name) + did_you_mean(name, candidates));
}

// Names in --cost: slots_total, a varied path, or any numeric scenario path (read per point, so a
// path under a varied one follows it).
void compute_costs(PlanGrid& grid, const Expr* cost_expr) {
  const std::size_t n = grid.size();
  grid.slots_total.assign(n, 0);
  grid.prefetch_total.assign(n, 0);
  grid.cost.assign(n, 0);
  grid.custom_cost = cost_expr != nullptr;
  for (std::size_t p = 0; p < n; ++p) {
    for (const auto& c : grid.scenarios[p].consumers) {
      grid.slots_total[p] += static_cast<double>(c.count) * c.slots;
      grid.prefetch_total[p] += c.prefetch;
    }
  }
  if (!cost_expr) {
    grid.cost = grid.slots_total;
    return;
  }
  std::vector<std::string> used;
  cost_expr->names(used);
  const bool reads_scenario = std::any_of(used.begin(), used.end(), [&](const std::string& u) {
    return u != "slots_total" && !grid.axis_index.count(u) && !grid.metric_index.count(u);
  });
  for (std::size_t p = 0; p < n; ++p) {
    const json doc = reads_scenario ? grid.space.point_doc(p) : json();
    grid.cost[p] = cost_expr->eval([&](const std::string& name) -> double {
      if (name == "slots_total") return grid.slots_total[p];
      if (const auto it = grid.axis_index.find(name); it != grid.axis_index.end())
        return grid.axis_number(p, it->second, "--cost");
      if (grid.metric_index.count(name)) {
        grid.cost_from_metrics = true;
        return 0.0;  // known after the run (search_by_measured_cost)
      }
      std::string got;
      if (const auto v = scenario_number(doc, grid.scenarios[p], name, &got)) return *v;
      bad_cost_name(grid, doc, name, got);
    });
  }
}

PlanGrid build_grid(const PlanOptions& o, const std::vector<Target>& targets, const Expr* cost_expr) {
  PlanGrid grid;
  grid.space = load_sweep_space(o.scenario, o.sets, o.varies, o.seed);
  std::vector<std::size_t> all(grid.space.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  grid.scenarios = validate_points(grid.space, all);
  grid.names = metric_names(grid.space);
  for (std::size_t i = 0; i < grid.names.size(); ++i) grid.metric_index[grid.names[i]] = i;
  for (std::size_t a = 0; a < grid.space.axes.size(); ++a) grid.axis_index[grid.space.axes[a].path] = a;
  check_target_names(grid, targets);
  compute_costs(grid, cost_expr);
  return grid;
}

// ---------------------------------------------------------------------------------------------
// Step 3: the axis to bisect along.

// Lines along an axis: for a fixed combination of the other paths, the points in the axis's order.
std::vector<std::vector<std::size_t>> lines_along(const PlanGrid& grid, std::size_t a) {
  const auto& axes = grid.space.axes;
  std::vector<std::vector<std::size_t>> lines;
  const std::size_t len = axes[a].values.size();
  std::size_t stride = 1;
  for (std::size_t b = a + 1; b < axes.size(); ++b) stride *= axes[b].values.size();
  for (std::size_t p = 0; p < grid.size(); ++p) {
    if (grid_coords(axes, p)[a] != 0) continue;
    std::vector<std::size_t> line;
    for (std::size_t i = 0; i < len; ++i) line.push_back(p + i * stride);
    lines.push_back(line);
  }
  return lines;
}

// An axis qualifies for bisection when its values are numbers and, along every line, the primary
// cost strictly increases with the value (or strictly decreases: then it is reversed).
bool cost_monotone_along(const PlanGrid& grid, std::size_t a) {
  const auto& axis = grid.space.axes[a];
  for (const auto& v : axis.values)
    if (!v.is_number()) return false;
  if (axis.values.size() < 2) return false;
  for (const auto& line : lines_along(grid, a)) {
    std::vector<std::size_t> by_value = line;
    std::sort(by_value.begin(), by_value.end(), [&](std::size_t x, std::size_t y) {
      return grid.axis_number(x, a, "--bisect") < grid.axis_number(y, a, "--bisect");
    });
    bool up = true, down = true;
    for (std::size_t i = 1; i < by_value.size(); ++i) {
      up = up && grid.cost[by_value[i]] > grid.cost[by_value[i - 1]];
      down = down && grid.cost[by_value[i]] < grid.cost[by_value[i - 1]];
    }
    if (!up && !down) return false;
  }
  return true;
}

std::optional<std::size_t> choose_bisect_axis(const PlanGrid& grid, const std::optional<std::string>& option) {
  const auto& axes = grid.space.axes;
  std::optional<std::size_t> bisect;
  if (option) {
    if (*option == "none") return std::nullopt;
    const auto it = grid.axis_index.find(*option);
    if (it == grid.axis_index.end()) throw ScenarioError("--bisect: expected a varied path or none, got " + quote(*option));
    if (!cost_monotone_along(grid, it->second))
      throw ScenarioError("--bisect: expected a path along which the cost strictly increases, got " + quote(*option));
    return it->second;
  }
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (cost_monotone_along(grid, a) && (!bisect || axes[a].values.size() > axes[*bisect].values.size())) bisect = a;
  return bisect;
}

// ---------------------------------------------------------------------------------------------
// Step 4: running a point and judging the targets on it.

struct PointResult {
  Summary summary;
  std::vector<double> lhs;  // each target's left-hand side, on the means
  std::vector<double> rhs;
  std::vector<double> margin_ci95;  // each target's margin (lhs - rhs) 95% half-width; NaN for 1 replication
  std::vector<bool> holds;          // each target, as judged (on the mean or, --conservative, its bound)
  bool meets = false;
  // --precision: some target's interval still straddles it (neither met nor missed at its bound)
  // and no target is missed at its bound: the setting is neither accepted nor rejected.
  bool undecided = false;
  std::vector<bool> decided;        // --precision: each target, its bound on one side
  std::uint64_t replications = 0;   // replications run for this setting
  double violation = 0;     // sum of relative shortfalls, 0 when the target is met
  std::size_t incomplete = 0;  // replications stopped by a limit or that measured nothing: never met
};

// Student t 95% half-width of a target's margin (lhs - rhs), evaluated per replication: the
// expression need not be linear in the metrics, so the metrics' own ci95 do not give it.
double margin_half_width(const Target& t, const std::vector<std::vector<double>>& rows,
                         const std::map<std::string, std::size_t>& metric_index,
                         const std::function<double(const std::string&)>& lookup) {
  std::vector<double> margins;
  for (const auto& row : rows) {
    const auto per_rep = [&](const std::string& name) -> double {
      if (const auto it = metric_index.find(name); it != metric_index.end()) return row[it->second];
      return lookup(name);
    };
    margins.push_back(t.lhs->eval(per_rep) - t.rhs->eval(per_rep));
  }
  return student_t_interval(margins, 0.95).half_width;
}

// The targets on a point's replication rows: on the means, or (--conservative) on the margin's
// 95% bound, towards failing. `guarantee` (--precision) also decides each target: met at the
// bound towards failing, missed at the bound towards passing, else undecided.
PointResult judge_point(const PlanGrid& grid, std::size_t p, const std::vector<Target>& targets,
                        const std::vector<std::vector<double>>& rows, bool conservative, bool guarantee = false) {
  std::vector<const std::vector<double>*> reps;
  for (const auto& row : rows) reps.push_back(&row);
  PointResult res;
  res.summary = summarize(reps);
  const auto lookup = [&](const std::string& name) -> double {
    if (const auto it = grid.metric_index.find(name); it != grid.metric_index.end()) return res.summary.mean[it->second];
    if (name == "slots_total") return grid.slots_total[p];
    return grid.axis_number(p, grid.axis_index.at(name), "--target");
  };
  res.meets = true;
  for (const auto& t : targets) {
    const double l = t.lhs->eval(lookup), r = t.rhs->eval(lookup);
    res.lhs.push_back(l);
    res.rhs.push_back(r);
    const double half_width = rows.size() > 1 ? margin_half_width(t, rows, grid.metric_index, lookup) : NAN;
    res.margin_ci95.push_back(half_width);
    const double slack = (conservative || guarantee) && rows.size() > 1 ? half_width : 0;
    bool ok = false;
    double shortfall = 0;
    switch (t.cmp) {
      case Cmp::Le: ok = l + slack <= r; shortfall = l + slack - r; break;
      case Cmp::Lt: ok = l + slack < r; shortfall = l + slack - r; break;
      case Cmp::Ge: ok = l - slack >= r; shortfall = r - (l - slack); break;
      case Cmp::Gt: ok = l - slack > r; shortfall = r - (l - slack); break;
    }
    res.holds.push_back(ok);
    if (guarantee) {
      bool missed = false;  // at the bound towards passing
      switch (t.cmp) {
        case Cmp::Le: missed = !(l - half_width <= r); break;
        case Cmp::Lt: missed = !(l - half_width < r); break;
        case Cmp::Ge: missed = !(l + half_width >= r); break;
        case Cmp::Gt: missed = !(l + half_width > r); break;
      }
      res.decided.push_back(ok || missed);
    }
    if (!ok) {
      res.meets = false;
      res.violation += std::max(shortfall, 0.0) / std::max(std::fabs(r), 1e-12) + (shortfall <= 0 ? 1e-12 : 0);
    }
    if (std::isnan(l) || std::isnan(r)) res.violation = std::numeric_limits<double>::infinity();
  }
  res.replications = rows.size();
  if (guarantee && !res.meets) {
    bool any_missed = false, all_decided = true;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      any_missed = any_missed || (res.decided[i] && !res.holds[i]);
      all_decided = all_decided && res.decided[i];
    }
    res.undecided = !any_missed && !all_decided;
  }
  return res;
}

// Runs each point at most once (R replications over the pool) and remembers the order run.
class PointRunner {
 public:
  PointRunner(const PlanGrid& grid, const std::vector<Target>& targets, const PlanOptions& o, std::ostream* progress)
      : grid_(grid), targets_(targets), o_(o), progress_(progress, grid.size(), "plan (grid points)") {
    progress_.update(0);
  }

  const PointResult& evaluate(std::size_t p) {
    if (const auto it = results_.find(p); it != results_.end()) return it->second;
    PointResult res;
    if (o_.precision) {
      // Spend replications where the decision is close: a setting clearly on one side of every
      // target stops after the first round; one that straddles a target runs on.
      const std::vector<const Scenario*> points{&grid_.scenarios[p]};
      std::size_t incomplete = 0;
      spent_ += run_sequential(
          points, *o_.precision, o_.threads, grid_.names,
          [&](std::size_t, const std::vector<std::vector<double>>& rows) { return settled(p, rows); },
          [&](std::size_t, const std::vector<std::vector<double>>& rows, std::size_t bad) {
            res = judge_point(grid_, p, targets_, rows, o_.conservative, true);
            incomplete = bad;
          },
          &stats_);
      res.incomplete = incomplete;
    } else {
      std::vector<RunTask> tasks;
      for (std::uint64_t r = 0; r < o_.replications; ++r) tasks.push_back({&grid_.scenarios[p], r});
      const auto rows = run_tasks(tasks, o_.threads, grid_.names, {}, &stats_);
      spent_ += tasks.size();
      res = judge_point(grid_, p, targets_, rows, o_.conservative);
      for (const auto& why : stats_.incomplete) res.incomplete += !why.empty();
    }
    // A replication stopped by a limit or that measured nothing (every outcome 0) cannot show a
    // target is met: "0 stale jobs" of a run that counted no job is no answer.
    if (res.incomplete > 0) {
      res.meets = false;
      res.undecided = false;  // rejected: no answer from it, whatever more replications would say
      res.violation = std::numeric_limits<double>::infinity();
    }
    tried_.push_back(p);
    progress_.update(tried_.size());
    return results_.emplace(p, std::move(res)).first->second;
  }
  void finish() { progress_.finish(); }

  const std::map<std::size_t, PointResult>& results() const { return results_; }
  const std::vector<std::size_t>& tried() const { return tried_; }
  const TaskRunStats& stats() const { return stats_; }
  std::uint64_t replications_spent() const { return spent_; }

 private:
  // --precision: done when the setting is decided (met, or some target missed at its bound), or
  // when every undecided target's metrics are as precise as asked: more replications would only
  // resolve a difference smaller than the precision the user cares about.
  bool settled(std::size_t p, const std::vector<std::vector<double>>& rows) const {
    const PointResult r = judge_point(grid_, p, targets_, rows, o_.conservative, true);
    if (!r.undecided) return true;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      if (r.decided[i]) continue;
      std::vector<std::string> used;
      targets_[i].lhs->names(used);
      targets_[i].rhs->names(used);
      for (const auto& u : used)
        if (const auto it = grid_.metric_index.find(u); it != grid_.metric_index.end())
          if (!is_precise(*o_.precision, r.summary.mean[it->second], r.summary.ci95[it->second])) return false;
    }
    return true;
  }

  const PlanGrid& grid_;
  const std::vector<Target>& targets_;
  const PlanOptions& o_;
  Progress progress_;
  std::map<std::size_t, PointResult> results_;
  std::vector<std::size_t> tried_;
  TaskRunStats stats_;
  std::uint64_t spent_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Step 5: the search.

// For each line along the axis (cheapest line first), bisect among the points cheaper than the
// best so far, assuming a costlier value never misses a target a cheaper one meets.
std::optional<std::size_t> search_by_bisection(const PlanGrid& grid, std::size_t axis, PointRunner& runner) {
  std::optional<std::size_t> best;
  const auto cheaper = [&](std::size_t x, std::size_t y) { return grid.cheaper(x, y); };
  auto lines = lines_along(grid, axis);
  for (auto& line : lines) std::sort(line.begin(), line.end(), cheaper);
  std::sort(lines.begin(), lines.end(), [&](const auto& x, const auto& y) { return cheaper(x[0], y[0]); });
  for (const auto& line : lines) {
    std::size_t hi = 0;  // points of this line cheaper than the best so far
    while (hi < line.size() && (!best || cheaper(line[hi], *best))) ++hi;
    if (hi == 0 || !runner.evaluate(line[hi - 1]).meets) continue;
    std::size_t lo = 0, h = hi - 1;  // line[h] meets; find the first that does
    while (lo < h) {
      const std::size_t mid = lo + (h - lo) / 2;
      if (runner.evaluate(line[mid]).meets)
        h = mid;
      else
        lo = mid + 1;
    }
    best = line[h];
  }
  return best;
}

std::optional<std::size_t> search_in_cost_order(const PlanGrid& grid, PointRunner& runner) {
  std::vector<std::size_t> order(grid.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return grid.cheaper(x, y); });
  for (std::size_t p : order)
    if (runner.evaluate(p).meets) return p;
  return std::nullopt;
}

// A cost that names metrics: run every point, cost it on its means, then take the cheapest that
// meets the targets (no bisection: the cost's order is unknown before the runs).
std::optional<std::size_t> search_by_measured_cost(PlanGrid& grid, const Expr& cost_expr, PointRunner& runner) {
  for (std::size_t p = 0; p < grid.size(); ++p) {
    const PointResult& res = runner.evaluate(p);
    const json doc = grid.space.point_doc(p);
    grid.cost[p] = cost_expr.eval([&](const std::string& name) -> double {
      if (const auto it = grid.metric_index.find(name); it != grid.metric_index.end()) return res.summary.mean[it->second];
      if (name == "slots_total") return grid.slots_total[p];
      if (const auto it = grid.axis_index.find(name); it != grid.axis_index.end())
        return grid.axis_number(p, it->second, "--cost");
      std::string got;
      if (const auto v = scenario_number(doc, grid.scenarios[p], name, &got)) return *v;
      bad_cost_name(grid, doc, name, got);
    });
  }
  return search_in_cost_order(grid, runner);
}

// The setting tried that misses the targets by the least (relative shortfall), cheaper first on ties.
std::optional<std::size_t> closest_tried(const PlanGrid& grid, const PointRunner& runner) {
  std::optional<std::size_t> closest;
  const auto& results = runner.results();
  for (std::size_t p : runner.tried()) {
    const double v = results.at(p).violation;
    if (!closest || v < results.at(*closest).violation || (v == results.at(*closest).violation && grid.cheaper(p, *closest)))
      closest = p;
  }
  return closest;
}

// ---------------------------------------------------------------------------------------------
// Step 6: the report.

struct PlanReport {
  const PlanOptions& options;
  const PlanGrid& grid;
  const std::vector<Target>& targets;
  const PointRunner& runner;
  std::optional<std::size_t> bisect, best, closest;
  std::vector<std::string> shown;  // metrics to show: those in the targets, then the standard few
  std::string cost_text;

  const PointResult& result(std::size_t p) const { return runner.results().at(p); }
};

std::vector<std::string> shown_metrics(const PlanGrid& grid, const std::vector<Target>& targets) {
  std::vector<std::string> shown;
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    for (const auto& u : used)
      if (grid.metric_index.count(u) && std::find(shown.begin(), shown.end(), u) == shown.end()) shown.push_back(u);
  }
  for (const char* m : {"throughput_per_s", "goodput_per_s", "slot_utilization", "wait_ms.local.p95", "wait_ms.queue.p95"})
    if (grid.metric_index.count(m) && std::find(shown.begin(), shown.end(), m) == shown.end()) shown.emplace_back(m);
  return shown;
}

// A chosen setting whose target holds on the mean by less than the margin's own 95% half-width
// could well miss it on another sample of the same length: say so, rather than let the mean
// decide alone (2 replications accepted 0.005 +- 0.050 against 0.01).
struct Caveat {
  std::optional<std::size_t> target;  // index into the targets; nullopt: about every target
  double margin = NAN, ci95 = NAN;
  std::string message;
};

std::vector<Caveat> caveats_of(const PlanReport& rep) {
  std::vector<Caveat> caveats;
  if (!rep.best) return caveats;
  if (rep.options.replications == 1 && !rep.options.precision) {
    caveats.push_back({std::nullopt, NAN, NAN,
                       "1 replication per setting: the targets were judged on a single run, with no confidence "
                       "interval; run more --replications (and --conservative)"});
    return caveats;
  }
  const PointResult& r = rep.result(*rep.best);
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    const double margin = r.lhs[i] - r.rhs[i], hw = r.margin_ci95[i];
    if (!(hw > std::fabs(margin))) continue;
    caveats.push_back({i, margin, hw,
                       "target " + std::to_string(i + 1) + " (" + rep.targets[i].text + ") holds on the mean by " +
                           fmt(std::fabs(margin)) + ", less than its 95% confidence half-width " + fmt(hw) +
                           ": this setting may miss it; judge it with --conservative or run more --replications"});
  }
  return caveats;
}

// Why nothing was chosen, in one sentence: which targets the closest setting tried misses.
std::string unmet_reason(const PlanReport& rep) {
  std::string reason = "no setting in the grid meets every target";
  if (!rep.closest) return reason;
  const PointResult& r = rep.result(*rep.closest);
  reason += "; the closest tried, " + rep.grid.space.point_label(*rep.closest) + ", misses ";
  bool first = true;
  for (std::size_t i = 0; i < rep.targets.size(); ++i) {
    if (r.holds[i]) continue;
    reason += (first ? "target " : ", target ") + std::to_string(i + 1) + " (" + rep.targets[i].text +
              ": the left-hand side is " + fmt(r.lhs[i]) +
              (std::isnan(r.margin_ci95[i]) ? std::string() : " ± " + fmt(r.margin_ci95[i])) + ")";
    first = false;
  }
  return reason;
}

ojson setting_json(const PlanReport& rep, std::size_t p) {
  const PlanGrid& grid = rep.grid;
  ojson s;
  s["point"] = p;
  ojson values = ojson::object();
  const auto coords = grid_coords(grid.space.axes, p);
  for (std::size_t a = 0; a < grid.space.axes.size(); ++a)
    values[grid.space.axes[a].path] = ojson::parse(grid.space.axes[a].values[coords[a]].dump());
  s["setting"] = values;
  s["cost"] = grid.cost[p];
  s["slots_total"] = grid.slots_total[p];
  const PointResult& r = rep.result(p);
  s["meets"] = r.meets;
  s["undecided"] = r.undecided;
  s["replications"] = r.replications;
  s["targets"] = r.lhs;
  ojson metrics = ojson::object();
  for (const auto& m : rep.shown) {
    const std::size_t i = grid.metric_index.at(m);
    metrics[m]["mean"] = r.summary.mean[i];
    if (std::isnan(r.summary.ci95[i]))
      metrics[m]["ci95"] = nullptr;
    else
      metrics[m]["ci95"] = r.summary.ci95[i];
  }
  s["metrics"] = metrics;
  return s;
}

void print_plan_json(std::ostream& out, const PlanReport& rep) {
  const PlanGrid& grid = rep.grid;
  ojson j;
  j["scenario"] = grid.scenarios[0].name;
  j["seed"] = grid.scenarios[0].seed;
  j["replications"] = rep.options.precision ? rep.options.precision->first : rep.options.replications;
  if (rep.options.precision) {
    const PrecisionRule& pr = *rep.options.precision;
    j["precision"] = {{"rel", pr.rel}, {"abs", pr.abs}, {"first_round", pr.first}, {"max_replications", pr.max_replications}};
  }
  j["replications_run"] = rep.runner.replications_spent();
  j["targets"] = rep.options.target_texts;
  j["cost"] = rep.cost_text;
  j["conservative"] = rep.options.conservative;
  j["grid_points"] = grid.size();
  j["points_run"] = rep.runner.tried().size();
  j["bisect"] = rep.bisect ? ojson(grid.space.axes[*rep.bisect].path) : ojson(nullptr);
  j["met"] = rep.best.has_value();
  j["best"] = rep.best ? setting_json(rep, *rep.best) : ojson(nullptr);
  if (!rep.best) j["closest"] = rep.closest ? setting_json(rep, *rep.closest) : ojson(nullptr);
  if (!rep.best) j["reason"] = unmet_reason(rep);
  j["undecided"] = ojson::array();
  for (std::size_t p : rep.runner.tried())
    if (rep.result(p).undecided) j["undecided"].push_back(p);
  j["caveats"] = ojson::array();
  for (const auto& c : caveats_of(rep)) {
    ojson cj;
    cj["target"] = c.target ? ojson(*c.target + 1) : ojson(nullptr);
    cj["margin"] = std::isnan(c.margin) ? ojson(nullptr) : ojson(c.margin);
    cj["ci95"] = std::isnan(c.ci95) ? ojson(nullptr) : ojson(c.ci95);
    cj["message"] = c.message;
    j["caveats"].push_back(cj);
  }
  j["tried"] = ojson::array();
  for (std::size_t p : rep.runner.tried()) j["tried"].push_back(setting_json(rep, p));
  out << j.dump(2) << '\n';
}

void print_plan_header(std::ostream& out, const PlanReport& rep) {
  const PlanGrid& grid = rep.grid;
  const std::uint64_t replications = rep.options.replications;
  out << "brokersim plan: scenario \"" << grid.scenarios[0].name << "\", seed " << grid.scenarios[0].seed << ", ";
  if (const auto& pr = rep.options.precision)
    out << "replications per setting chosen by --precision " << fmt(pr->rel) << " (or within " << fmt(pr->abs) << "), "
        << pr->first << " to " << pr->max_replications << "\n"
        << "guarantee: a setting is accepted when every target holds at its 95% confidence bound, rejected when one"
           " misses it at the other bound, else undecided (not accepted)\n";
  else
    out << replications << " replication" << (replications == 1 ? "" : "s") << " per setting\n";
  for (std::size_t i = 0; i < rep.targets.size(); ++i) out << "target " << i + 1 << ": " << rep.targets[i].text << '\n';
  if (rep.options.conservative) out << "conservative: each target must hold at its 95% confidence bound, not just on the mean\n";
  out << "cost: " << rep.cost_text << '\n';
  out << "searched " << grid.size() << " grid points, ran " << rep.runner.tried().size();
  if (rep.options.precision) out << " (" << rep.runner.replications_spent() << " replications in all)";
  if (rep.bisect) {
    const std::string& path = grid.space.axes[*rep.bisect].path;
    out << " (bisecting " << path << " for each setting of the other paths, assuming that a"
        << " costlier " << path << " never misses a target a cheaper one meets)";
  } else if (grid.cost_from_metrics) {
    out << " (every one: the cost is measured by the runs)";
  } else {
    out << " (in order of cost, up to the first that meets the target)";
  }
  out << "\n\n";
}

void print_setting(std::ostream& out, const PlanReport& rep, std::size_t p) {
  const PlanGrid& grid = rep.grid;
  out << "  " << grid.space.point_label(p) << "  (cost " << fmt(grid.cost[p]);
  if (grid.custom_cost) out << ", slots_total " << fmt(grid.slots_total[p]);
  out << ")\n\n";
  out << "  " << pad("metric", 34) << pad("mean", 14) << "ci95\n";
  const PointResult& r = rep.result(p);
  for (const auto& m : rep.shown) {
    const std::size_t i = grid.metric_index.at(m);
    out << "  " << pad(m, 34) << pad(fmt(r.summary.mean[i]), 14)
        << (std::isnan(r.summary.ci95[i]) ? std::string("-") : "± " + fmt(r.summary.ci95[i])) << '\n';
  }
  out << '\n';
}

void print_tried_table(std::ostream& out, const PlanReport& rep) {
  const auto& axes = rep.grid.space.axes;
  out << "Settings tried (in the order run):\n  ";
  std::vector<std::size_t> widths;
  for (const auto& a : axes) {
    widths.push_back(std::max<std::size_t>(a.path.size() + 2, 8));
    out << pad(a.path, widths.back());
  }
  out << pad("cost", 10);
  if (rep.options.precision) out << pad("reps", 6);
  for (std::size_t i = 0; i < rep.targets.size(); ++i) out << pad("target " + std::to_string(i + 1), 14);
  out << "meets\n";
  for (std::size_t p : rep.runner.tried()) {
    const auto coords = grid_coords(axes, p);
    out << "  ";
    for (std::size_t a = 0; a < axes.size(); ++a) out << pad(axes[a].labels[coords[a]], widths[a]);
    out << pad(fmt(rep.grid.cost[p]), 10);
    if (rep.options.precision) out << pad(std::to_string(rep.result(p).replications), 6);
    for (double l : rep.result(p).lhs) out << pad(fmt(l), 14);
    out << (rep.result(p).meets ? "yes" : rep.result(p).undecided ? "undecided" : "no") << '\n';
  }
  out << "(target N: the left-hand side of target N, on the replication means)\n";
}

void print_plan_text(std::ostream& out, const PlanReport& rep) {
  print_plan_header(out, rep);
  if (rep.best) {
    out << "Cheapest setting that meets the target:\n";
    print_setting(out, rep, *rep.best);
  } else {
    out << "no setting in the grid meets the target\n\n";
    if (rep.closest) {
      out << "Closest setting tried:\n";
      print_setting(out, rep, *rep.closest);
    }
  }
  print_tried_table(out, rep);
  std::string undecided;
  for (std::size_t p : rep.runner.tried())
    if (rep.result(p).undecided) undecided += "\n  " + rep.grid.space.point_label(p);
  if (!undecided.empty())
    out << "Undecided after --max-replications or at the precision asked (their intervals straddle a target; not"
           " accepted, so a cheaper one of them may in truth meet it):" << undecided << '\n';
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::optional<PlanOptions> options = parse_plan_options(args, out);
  if (!options) return 0;
  const PlanOptions& o = *options;
  std::vector<Target> targets;
  for (const auto& t : o.target_texts) targets.push_back(parse_target(t));
  std::shared_ptr<Expr> cost_expr;
  if (o.cost) cost_expr = parse_cost(*o.cost);

  PlanGrid grid = build_grid(o, targets, cost_expr.get());
  const std::optional<std::size_t> bisect =
      grid.cost_from_metrics && !o.bisect ? std::nullopt : choose_bisect_axis(grid, o.bisect);

  const bool show = o.progress || (&err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
  PointRunner runner(grid, targets, o, show ? &err : nullptr);
  const std::optional<std::size_t> best = grid.cost_from_metrics ? search_by_measured_cost(grid, *cost_expr, runner)
                                          : bisect ? search_by_bisection(grid, *bisect, runner)
                                                   : search_in_cost_order(grid, runner);
  runner.finish();

  PlanReport rep{o, grid, targets, runner, bisect, best, std::nullopt, shown_metrics(grid, targets),
                 o.cost ? *o.cost : "slots_total, then the prefetch sum"};
  if (!best) rep.closest = closest_tried(grid, runner);
  if (o.json)
    print_plan_json(out, rep);
  else
    print_plan_text(out, rep);
  for (const auto& c : caveats_of(rep)) err << "brokersim: caveat: " << c.message << '\n';
  if (const int status = warn_incomplete_runs(err, runner.stats())) return status;
  if (!best) {
    // A status of its own, so that a script or CI job can gate on "the fleet cannot meet the SLO".
    err << "brokersim: plan: " << unmet_reason(rep) << " (exit status 5)\n";
    return 5;
  }
  return 0;
}

int cmd_metrics(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "usage:\n"
      "  brokersim metrics SCENARIO.json [--set PATH=VALUE ...]\n\n"
      "Prints every metric name of the scenario, one per line: the names --target and --cost of\n"
      "`brokersim plan` take, and the NAME_mean / NAME_ci95 columns of `brokersim sweep` (queue\n"
      "metrics depend on the scenario's queues, hence the scenario). plan also takes slots_total\n"
      "and the varied paths; --cost any numeric scenario path");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const po::variables_map vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    out << opts << '\n';
    return 0;
  }
  const Scenario s = load_command_scenario(vm, "metrics");
  for (const auto& name : metric_names(s)) out << name << '\n';
  (void)err;
  return 0;
}

}  // namespace brokersim
