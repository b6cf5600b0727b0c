// brokersim plan: the cheapest grid point whose replication means meet every --target.
//
// Search: the points are ordered by cost (default: slots_total = sum of count*slots over the
// consumer groups, then the prefetch sum; --cost EXPR replaces both). If some varied path is
// monotone in cost (the primary cost strictly increases with its value, the other paths fixed:
// a consumer count, slots), the search bisects along it for each combination of the other paths,
// ASSUMING the target is monotone in it (once a value meets the target, every costlier value
// does too), and skips every point that costs at least as much as the best found so far.
// Without such a path the points are run in cost order until one meets the target.
//
// The parts: plan/expression (targets and cost), plan/costed_grid (validated, costed points and the
// bisection axis), plan/search (running and judging points, the searches), plan/report.
#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/plan/expression.hpp"
#include "experiments/cli/plan/costed_grid.hpp"
#include "experiments/cli/plan/headroom.hpp"
#include "experiments/cli/plan/report.hpp"
#include "experiments/cli/plan/run_fraction.hpp"
#include "experiments/cli/plan/search.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/text.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

constexpr const char* kPlanHelp =
    "usage:\n"
    "  brokersim plan SCENARIO.json [--vary PATH=LIST ...] --target 'EXPR<=VALUE' ... [--cost EXPR]\n"
    "                [--bisect PATH|none] [--conservative] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--json] [--progress]\n"
    "                [--precision REL] [--precision-abs A] [--max-replications N] [--headroom]\n"
    "\n"
    "Finds the cheapest grid point whose replication means meet every --target (metric names as in\n"
    "sweep's CSV without _mean, numbers, + - * / and parentheses, one of <= < >= >). Cheapest:\n"
    "fewest slots_total (sum of count*slots; an autoscaled group at autoscale.max*slots), then the\n"
    "smallest prefetch sum, or --cost EXPR over slots_total, the varied paths and any numeric scenario\n"
    "path (consumers.0.count*consumers.0.slots).\n"
    "A path whose value raises the cost (a consumer count) is bisected for each combination of the\n"
    "others, assuming the target is monotone in it. `brokersim metrics SCENARIO.json` lists the\n"
    "metric names. Exit status 5: no setting in the grid meets every target.\n"
    "Numbers in EXPR are decimal; an EXPR is at most 4096 characters and 100 nested parentheses or\n"
    "unary minus signs; a cost or target side that is NaN (0/0) or infinite at a setting is an error\n"
    "naming it (exit 2). --replications is at most 1000000, and grid points x replications at most\n"
    "10000000; --seed beside a varied seed is refused.\n"
    "With --precision REL a setting is accepted only when each target's 95% confidence bound meets it\n"
    "and rejected only when a bound misses it (Stein's two stages: a first stage of 10 replications or\n"
    "--replications, then as many as that stage's spread says it takes to decide each target, or to\n"
    "know it within REL of its threshold, at most --max-replications); a setting still straddling a\n"
    "target is undecided, and not accepted.\n"
    "With several targets each bound is at 1 - 0.05/k (Bonferroni: all k hold together at 95%).\n"
    "A target 'EXPR<=VALUE in P% of runs' is judged per replication (one run: a day, an hour): the\n"
    "Clopper-Pearson lower bound on the fraction of runs meeting it must be at least P (59 runs at\n"
    "least for 95%). windows.K.METRIC names one window's figure (run --json's windows list). A cost\n"
    "over metrics gets its interval; settings whose cost intervals overlap the cheapest's are tied,\n"
    "and the one with the safest worst target margin at its bound is chosen.\n";

po::options_description plan_option_descriptions() {
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("vary", po::value<std::vector<std::string>>()->composing(), "PATH=LIST: a grid axis (repeatable), as in sweep")
      ("target", po::value<std::vector<std::string>>()->composing(), "EXPR CMP EXPR on replication means, or EXPR CMP EXPR in P% of runs (repeatable; all must hold)")
      ("cost", po::value<std::string>(), "cost expression over slots_total, the varied paths and numeric scenario paths (default: slots_total, then prefetch sum)")
      ("bisect", po::value<std::string>(), "PATH to bisect along, or none (default: chosen automatically)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replications", po::value<std::string>(), "runs per setting (default 5, at most 1000000)")
      ("threads", po::value<std::string>(), "worker threads (default: all cores)")
      ("json", "print the answer as one JSON object")
      ("headroom", "also find the largest volume multiplier (every producer's) at which the chosen setting still meets every target: bisection over 1.00..4.00 in steps of 0.05, each judged as the plan judges")
      ("conservative", "a target holds only at its 95% confidence bound (the margin lhs - rhs per replication, mean + ci95)")
      ("progress", "report progress on stderr even when it is not a terminal");
  add_precision_options(opts, false);
  return opts;
}

// nullopt: --help was printed.
std::optional<PlanOptions> parse_plan_options(const std::vector<std::string>& args, std::ostream& out) {
  const auto parsed = parse_scenario_command(args, plan_option_descriptions(), out, kPlanHelp);
  if (!parsed) return std::nullopt;
  const po::variables_map& vm = *parsed;
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
  o.headroom = vm.count("headroom") > 0;
  o.progress = vm.count("progress") > 0;
  o.precision = read_precision_options(vm, vm.count("replications") ? o.replications : 0);
  o.max_replications_given = vm.count("max-replications") > 0;
  return o;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::optional<PlanOptions> options = parse_plan_options(args, out);
  if (!options) return 0;
  PlanOptions& o = *options;
  std::vector<Target> targets;
  for (const auto& t : o.target_texts) targets.push_back(parse_target(t));
  // A target over runs needs enough runs that n met out of n could show it: refused up front
  // without --precision, else the first stage is made that long.
  const std::uint64_t runs_required = runs_needed_of(targets);
  if (runs_required > 0) {
    if (runs_required > kMaxReplications)
      throw ScenarioError("--target: expected a percentage of runs that at most " + std::to_string(kMaxReplications) +
                          " runs (brokersim's limit per setting) can show at 95% confidence, got one that needs " +
                          (runs_required == std::numeric_limits<std::uint64_t>::max() ? std::string("over 1e18")
                           : runs_required > 1'000'000'000 ? "about " + fmt(static_cast<double>(runs_required), 2)
                                                           : std::to_string(runs_required)) +
                          " (99.9% of runs needs 2995; 99.99% needs 29956)");
    if (!o.precision && o.replications < runs_required)
      throw ScenarioError("--replications: expected at least " + std::to_string(runs_required) +
                          " for a target 'in P% of runs' (fewer runs can never show it at 95% confidence, "
                          "even if every run meets it), got " + std::to_string(o.replications));
    // Room for the looks of the sequential rule (run_fraction.hpp): 59, 118, 236, 472 for 95%.
    if (o.precision && !o.max_replications_given)
      o.precision->max_replications =
          std::max(o.precision->max_replications,
                   std::min(kRunLookSpan * std::max(o.precision->first, runs_required),
                            std::max(kMaxSequentialReplications, runs_required)));
    if (o.precision && o.precision->max_replications < runs_required)
      throw ScenarioError("--max-replications: expected at least " + std::to_string(runs_required) +
                          " for a target 'in P% of runs', got " + std::to_string(o.precision->max_replications));
    if (o.precision) o.precision->first = std::max(o.precision->first, runs_required);
  }
  std::shared_ptr<Expr> cost_expr;
  if (o.cost) cost_expr = parse_cost(*o.cost);

  PlanGrid grid = build_grid(o, targets, cost_expr.get());
  const std::optional<std::size_t> bisect =
      grid.cost_from_metrics && !o.bisect ? std::nullopt : choose_bisect_axis(grid, o.bisect);

  const bool show = o.progress || (&err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
  LocalExecutor local(o.threads);  // the runs on this machine's threads
  PointRunner runner(grid, targets, o, show ? &err : nullptr, local);
  const std::uint64_t first_stage = o.precision ? o.precision->first : 0;
  std::optional<std::size_t> best = grid.cost_from_metrics ? search_by_measured_cost(grid, *cost_expr, runner, first_stage)
                                    : bisect ? search_by_bisection(grid, *bisect, runner)
                                             : search_in_cost_order(grid, runner);
  runner.finish();
  std::vector<std::size_t> tied = resolve_cost_ties(grid, runner, best);

  PlanReport rep{o, grid, targets, runner, bisect, best, std::nullopt, shown_metrics(grid, targets),
                 o.cost ? *o.cost : "slots_total, then the prefetch sum", std::move(tied), {}};
  if (!best) rep.closest = closest_tried(grid, runner);
  if (best && o.headroom) rep.headroom = find_headroom(grid, *best, targets, o, local);
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

}  // namespace brokersim
