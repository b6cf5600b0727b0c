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
#include "experiments/commands.hpp"
#include "experiments/scenario_load.hpp"
#include "experiments/sweep.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string quote(const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); }

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

struct PointResult {
  Summary summary;
  std::vector<double> lhs;  // each target's left-hand side, on the means
  bool meets = false;
  double violation = 0;     // sum of relative shortfalls, 0 when the target is met
};

std::string fmt(double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

constexpr const char* kPlanHelp =
    "usage:\n"
    "  brokersim plan SCENARIO.json [--vary PATH=LIST ...] --target 'EXPR<=VALUE' ... [--cost EXPR]\n"
    "                [--bisect PATH|none] [--conservative] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--json] [--progress]\n"
    "\n"
    "Finds the cheapest grid point whose replication means meet every --target (metric names as in\n"
    "sweep's CSV without _mean, numbers, + - * / and parentheses, one of <= < >= >). Cheapest:\n"
    "fewest slots_total (sum of count*slots), then the smallest prefetch sum, or --cost EXPR over\n"
    "the varied paths and slots_total. A path whose value raises the cost (a consumer count) is\n"
    "bisected for each combination of the others, assuming the target is monotone in it.\n";

}  // namespace

int cmd_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("vary", po::value<std::vector<std::string>>()->composing(), "PATH=LIST: a grid axis (repeatable), as in sweep")
      ("target", po::value<std::vector<std::string>>()->composing(), "EXPR CMP EXPR on replication means (repeatable; all must hold)")
      ("cost", po::value<std::string>(), "cost expression over the varied paths and slots_total (default: slots_total, then prefetch sum)")
      ("bisect", po::value<std::string>(), "PATH to bisect along, or none (default: chosen automatically)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replications", po::value<std::string>(), "runs per setting (default 5)")
      ("threads", po::value<std::string>(), "worker threads (default: all cores)")
      ("json", "print the answer as one JSON object")
      ("conservative", "a target holds only at its 95% confidence bound (the margin lhs - rhs per replication, mean + ci95)")
      ("progress", "report progress on stderr even when it is not a terminal");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const po::variables_map vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    out << kPlanHelp << '\n' << opts << '\n';
    return 0;
  }
  const auto list = [&](const char* n) {
    return vm.count(n) ? vm[n].as<std::vector<std::string>>() : std::vector<std::string>{};
  };
  if (!vm.count("scenario")) throw ScenarioError("plan: expected a scenario file, got nothing");
  if (!vm.count("target")) throw ScenarioError("plan: expected at least one --target, got nothing");
  const std::uint64_t replications =
      vm.count("replications") ? parse_count("--replications", vm["replications"].as<std::string>(), 1) : 5;
  const unsigned threads =
      thread_count(vm.count("threads") ? std::optional<std::string>(vm["threads"].as<std::string>()) : std::nullopt);
  std::optional<std::uint64_t> seed;
  if (vm.count("seed")) seed = parse_count("--seed", vm["seed"].as<std::string>(), 0);

  std::vector<Target> targets;
  for (const auto& t : list("target")) targets.push_back(parse_target(t));
  std::shared_ptr<Expr> cost_expr;
  if (vm.count("cost")) cost_expr = parse_cost(vm["cost"].as<std::string>());

  const SweepSpace space = load_sweep_space(vm["scenario"].as<std::string>(), list("set"), list("vary"), seed);
  const std::size_t n = space.size();
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  const std::vector<Scenario> scenarios = validate_points(space, all);
  const std::vector<std::string> names = metric_names(scenarios[0]);
  std::map<std::string, std::size_t> metric_index;
  for (std::size_t i = 0; i < names.size(); ++i) metric_index[names[i]] = i;

  std::map<std::string, std::size_t> axis_index;
  for (std::size_t a = 0; a < space.axes.size(); ++a) axis_index[space.axes[a].path] = a;
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    for (const auto& u : used)
      if (!metric_index.count(u) && !axis_index.count(u) && u != "slots_total")
        throw ScenarioError("--target: expected metric names (as in sweep's CSV, without _mean: "
                            "fraction.expired_in_queue, wait_ms.local.p95, throughput_per_s, ...), got " + quote(u));
  }

  // Costs.
  std::vector<double> slots_total(n), prefetch_total(n), cost(n);
  for (std::size_t p = 0; p < n; ++p) {
    for (const auto& c : scenarios[p].consumers) {
      slots_total[p] += static_cast<double>(c.count) * c.slots;
      prefetch_total[p] += c.prefetch;
    }
  }
  const auto axis_number = [&](std::size_t p, std::size_t a, const std::string& option) {
    const auto coords = grid_coords(space.axes, p);
    const json& v = space.axes[a].values[coords[a]];
    if (!v.is_number())
      throw ScenarioError(option + ": expected numeric values of " + space.axes[a].path + ", got " + quote(space.axes[a].labels[coords[a]]));
    return v.get<double>();
  };
  for (std::size_t p = 0; p < n; ++p) {
    if (!cost_expr) {
      cost[p] = slots_total[p];
      continue;
    }
    cost[p] = cost_expr->eval([&](const std::string& name) -> double {
      if (name == "slots_total") return slots_total[p];
      const auto it = axis_index.find(name);
      if (it == axis_index.end())
        throw ScenarioError("--cost: expected varied paths or slots_total, got " + quote(name));
      return axis_number(p, it->second, "--cost");
    });
  }
  // Order: cost, then (default cost) prefetch sum, then grid order.
  const auto key_less = [&](std::size_t x, std::size_t y) {
    if (cost[x] != cost[y]) return cost[x] < cost[y];
    if (!cost_expr && prefetch_total[x] != prefetch_total[y]) return prefetch_total[x] < prefetch_total[y];
    return x < y;
  };

  // Lines along each axis: for a fixed combination of the other paths, the points in the axis's order.
  const auto lines_of = [&](std::size_t a) {
    std::vector<std::vector<std::size_t>> lines;
    const std::size_t len = space.axes[a].values.size();
    for (std::size_t p = 0; p < n; ++p) {
      if (grid_coords(space.axes, p)[a] != 0) continue;
      std::size_t stride = 1;
      for (std::size_t b = a + 1; b < space.axes.size(); ++b) stride *= space.axes[b].values.size();
      std::vector<std::size_t> line;
      for (std::size_t i = 0; i < len; ++i) line.push_back(p + i * stride);
      lines.push_back(line);
    }
    return lines;
  };
  // An axis qualifies for bisection when its values are numbers and, along every line, the
  // primary cost strictly increases with the value (or strictly decreases: then it is reversed).
  const auto monotone = [&](std::size_t a) {
    for (const auto& v : space.axes[a].values)
      if (!v.is_number()) return false;
    if (space.axes[a].values.size() < 2) return false;
    for (const auto& line : lines_of(a)) {
      std::vector<std::size_t> by_value = line;
      std::sort(by_value.begin(), by_value.end(), [&](std::size_t x, std::size_t y) {
        return axis_number(x, a, "--bisect") < axis_number(y, a, "--bisect");
      });
      bool up = true, down = true;
      for (std::size_t i = 1; i < by_value.size(); ++i) {
        up = up && cost[by_value[i]] > cost[by_value[i - 1]];
        down = down && cost[by_value[i]] < cost[by_value[i - 1]];
      }
      if (!up && !down) return false;
    }
    return true;
  };
  std::optional<std::size_t> bisect;
  if (vm.count("bisect")) {
    const std::string b = vm["bisect"].as<std::string>();
    if (b != "none") {
      const auto it = axis_index.find(b);
      if (it == axis_index.end()) throw ScenarioError("--bisect: expected a varied path or none, got " + quote(b));
      if (!monotone(it->second))
        throw ScenarioError("--bisect: expected a path along which the cost strictly increases, got " + quote(b));
      bisect = it->second;
    }
  } else {
    for (std::size_t a = 0; a < space.axes.size(); ++a)
      if (monotone(a) && (!bisect || space.axes[a].values.size() > space.axes[*bisect].values.size())) bisect = a;
  }

  // Running a point: R replications over the pool, then the targets on the means.
  std::map<std::size_t, PointResult> results;
  std::vector<std::size_t> tried;
  TaskRunStats stats;
  const bool conservative = vm.count("conservative") > 0;
  const bool show = vm.count("progress") || (&err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
  Progress progress(show ? &err : nullptr, n, "plan (grid points)");
  progress.update(0);
  const auto evaluate = [&](std::size_t p) -> const PointResult& {
    if (const auto it = results.find(p); it != results.end()) return it->second;
    std::vector<RunTask> tasks;
    for (std::uint64_t r = 0; r < replications; ++r) tasks.push_back({&scenarios[p], r});
    const auto rows = run_tasks(tasks, threads, names, {}, &stats);
    std::vector<const std::vector<double>*> reps;
    for (const auto& row : rows) reps.push_back(&row);
    PointResult res;
    res.summary = summarize(reps);
    const auto lookup = [&](const std::string& name) -> double {
      if (const auto it = metric_index.find(name); it != metric_index.end()) return res.summary.mean[it->second];
      if (name == "slots_total") return slots_total[p];
      return axis_number(p, axis_index.at(name), "--target");
    };
    res.meets = true;
    for (const auto& t : targets) {
      const double l = t.lhs->eval(lookup), r = t.rhs->eval(lookup);
      res.lhs.push_back(l);
      // --conservative: judge the target's margin (lhs - rhs, per replication: the expression
      // need not be linear in the metrics) by its mean plus its 95% half-width, towards failing.
      double slack = 0;
      if (conservative && rows.size() > 1) {
        std::vector<double> margins;
        for (const auto& row : rows) {
          const auto per_rep = [&](const std::string& name) -> double {
            if (const auto it = metric_index.find(name); it != metric_index.end()) return row[it->second];
            return lookup(name);
          };
          margins.push_back(t.lhs->eval(per_rep) - t.rhs->eval(per_rep));
        }
        double mean = 0, ss = 0;
        for (double m : margins) mean += m;
        mean /= static_cast<double>(margins.size());
        for (double m : margins) ss += (m - mean) * (m - mean);
        slack = student_t975(margins.size() - 1) *
                std::sqrt(ss / static_cast<double>(margins.size() - 1) / static_cast<double>(margins.size()));
      }
      bool ok = false;
      double shortfall = 0;
      switch (t.cmp) {
        case Cmp::Le: ok = l + slack <= r; shortfall = l + slack - r; break;
        case Cmp::Lt: ok = l + slack < r; shortfall = l + slack - r; break;
        case Cmp::Ge: ok = l - slack >= r; shortfall = r - (l - slack); break;
        case Cmp::Gt: ok = l - slack > r; shortfall = r - (l - slack); break;
      }
      if (!ok) {
        res.meets = false;
        res.violation += std::max(shortfall, 0.0) / std::max(std::fabs(r), 1e-12) + (shortfall <= 0 ? 1e-12 : 0);
      }
      if (std::isnan(l) || std::isnan(r)) res.violation = std::numeric_limits<double>::infinity();
    }
    tried.push_back(p);
    progress.update(tried.size());
    return results.emplace(p, std::move(res)).first->second;
  };

  std::optional<std::size_t> best;
  if (bisect) {
    auto lines = lines_of(*bisect);
    for (auto& line : lines) std::sort(line.begin(), line.end(), key_less);
    std::sort(lines.begin(), lines.end(), [&](const auto& x, const auto& y) { return key_less(x[0], y[0]); });
    for (const auto& line : lines) {
      std::size_t hi = 0;  // points of this line cheaper than the best so far
      while (hi < line.size() && (!best || key_less(line[hi], *best))) ++hi;
      if (hi == 0 || !evaluate(line[hi - 1]).meets) continue;
      std::size_t lo = 0, h = hi - 1;  // line[h] meets; find the first that does
      while (lo < h) {
        const std::size_t mid = lo + (h - lo) / 2;
        if (evaluate(line[mid]).meets)
          h = mid;
        else
          lo = mid + 1;
      }
      best = line[h];
    }
  } else {
    std::vector<std::size_t> order = all;
    std::sort(order.begin(), order.end(), key_less);
    for (std::size_t p : order)
      if (evaluate(p).meets) {
        best = p;
        break;
      }
  }
  progress.finish();

  std::optional<std::size_t> closest;
  if (!best)
    for (std::size_t p : tried)
      if (!closest || results[p].violation < results[*closest].violation ||
          (results[p].violation == results[*closest].violation && key_less(p, *closest)))
        closest = p;

  // Metrics to show: those in the targets, then the standard few.
  std::vector<std::string> shown;
  for (const auto& t : targets) {
    std::vector<std::string> used;
    t.lhs->names(used);
    t.rhs->names(used);
    for (const auto& u : used)
      if (metric_index.count(u) && std::find(shown.begin(), shown.end(), u) == shown.end()) shown.push_back(u);
  }
  for (const char* m : {"throughput_per_s", "goodput_per_s", "slot_utilization", "wait_ms.local.p95", "wait_ms.queue.p95"})
    if (metric_index.count(m) && std::find(shown.begin(), shown.end(), m) == shown.end()) shown.emplace_back(m);

  const std::string cost_text = cost_expr ? vm["cost"].as<std::string>() : "slots_total, then the prefetch sum";
  const auto setting_json = [&](std::size_t p) {
    ojson s;
    s["point"] = p;
    ojson values = ojson::object();
    const auto coords = grid_coords(space.axes, p);
    for (std::size_t a = 0; a < space.axes.size(); ++a) values[space.axes[a].path] = ojson::parse(space.axes[a].values[coords[a]].dump());
    s["setting"] = values;
    s["cost"] = cost[p];
    s["slots_total"] = slots_total[p];
    const PointResult& r = results.at(p);
    s["meets"] = r.meets;
    s["targets"] = r.lhs;
    ojson metrics = ojson::object();
    for (const auto& m : shown) {
      const std::size_t i = metric_index.at(m);
      metrics[m]["mean"] = r.summary.mean[i];
      if (std::isnan(r.summary.ci95[i]))
        metrics[m]["ci95"] = nullptr;
      else
        metrics[m]["ci95"] = r.summary.ci95[i];
    }
    s["metrics"] = metrics;
    return s;
  };

  if (vm.count("json")) {
    ojson j;
    j["scenario"] = scenarios[0].name;
    j["seed"] = scenarios[0].seed;
    j["replications"] = replications;
    j["targets"] = list("target");
    j["cost"] = cost_text;
    j["conservative"] = conservative;
    j["grid_points"] = n;
    j["points_run"] = tried.size();
    j["bisect"] = bisect ? ojson(space.axes[*bisect].path) : ojson(nullptr);
    j["met"] = best.has_value();
    j["best"] = best ? setting_json(*best) : ojson(nullptr);
    if (!best) j["closest"] = closest ? setting_json(*closest) : ojson(nullptr);
    j["tried"] = ojson::array();
    for (std::size_t p : tried) j["tried"].push_back(setting_json(p));
    out << j.dump(2) << '\n';
  } else {
    out << "brokersim plan: scenario \"" << scenarios[0].name << "\", seed " << scenarios[0].seed << ", "
        << replications << " replication" << (replications == 1 ? "" : "s") << " per setting\n";
    for (std::size_t i = 0; i < targets.size(); ++i) out << "target " << i + 1 << ": " << targets[i].text << '\n';
    if (conservative) out << "conservative: each target must hold at its 95% confidence bound, not just on the mean\n";
    out << "cost: " << cost_text << '\n';
    out << "searched " << n << " grid points, ran " << tried.size();
    if (bisect)
      out << " (bisecting " << space.axes[*bisect].path << " for each setting of the other paths, assuming that a"
          << " costlier " << space.axes[*bisect].path << " never misses a target a cheaper one meets)";
    else
      out << " (in order of cost, up to the first that meets the target)";
    out << "\n\n";
    const auto describe = [&](std::size_t p) {
      out << "  " << space.point_label(p) << "  (cost " << fmt(cost[p]);
      if (cost_expr) out << ", slots_total " << fmt(slots_total[p]);
      out << ")\n\n";
      out << "  " << pad("metric", 34) << pad("mean", 14) << "ci95\n";
      const PointResult& r = results.at(p);
      for (const auto& m : shown) {
        const std::size_t i = metric_index.at(m);
        out << "  " << pad(m, 34) << pad(fmt(r.summary.mean[i]), 14)
            << (std::isnan(r.summary.ci95[i]) ? std::string("-") : "± " + fmt(r.summary.ci95[i])) << '\n';
      }
      out << '\n';
    };
    if (best) {
      out << "Cheapest setting that meets the target:\n";
      describe(*best);
    } else {
      out << "no setting in the grid meets the target\n\n";
      if (closest) {
        out << "Closest setting tried:\n";
        describe(*closest);
      }
    }
    out << "Settings tried (in the order run):\n  ";
    std::vector<std::size_t> widths;
    for (const auto& a : space.axes) {
      widths.push_back(std::max<std::size_t>(a.path.size() + 2, 8));
      out << pad(a.path, widths.back());
    }
    out << pad("cost", 10);
    for (std::size_t i = 0; i < targets.size(); ++i) out << pad("target " + std::to_string(i + 1), 14);
    out << "meets\n";
    for (std::size_t p : tried) {
      const auto coords = grid_coords(space.axes, p);
      out << "  ";
      for (std::size_t a = 0; a < space.axes.size(); ++a) out << pad(space.axes[a].labels[coords[a]], widths[a]);
      out << pad(fmt(cost[p]), 10);
      for (double l : results[p].lhs) out << pad(fmt(l), 14);
      out << (results[p].meets ? "yes" : "no") << '\n';
    }
    out << "(target N: the left-hand side of target N, on the replication means)\n";
  }
  if (stats.limited) {
    err << "brokersim: warning: " << stats.limited << " run(s) stopped early at a limit: see limits in the README\n";
    return 3;
  }
  return 0;
}

}  // namespace brokersim
