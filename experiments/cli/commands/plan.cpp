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
#include <cstdlib>
#include <filesystem>
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
#include "experiments/cli/plan/stages.hpp"
#include "experiments/cli/replication/journal.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/replication/shards.hpp"
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
    "                [--stage-dir DIR --tasks N]\n"
    "  brokersim plan --run-task DIR [--task K/N | --task-count N] [--threads T]\n"
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
    "and the one with the safest worst target margin at its bound is chosen.\n"
    "On a cluster: --stage-dir DIR --tasks N writes the runs the plan needs next as N tasks in DIR (a\n"
    "folder every node sees) and exits with status 7. `plan --run-task DIR --task K/N` (or\n"
    "--task-count N with JOB_COMPLETION_INDEX, or a Slurm array's SLURM_ARRAY_TASK_ID as K) runs\n"
    "task K of DIR's latest stage. The same plan command run again reads the results back and writes the\n"
    "next stage, or prints the answer: byte for byte the local plan's, for any N. A result file that\n"
    "fails its checks (checksum, plan, scenario, stage, task, runs) is refused, exit 2. A task\n"
    "already done is skipped, so a failed or killed task is rerun by running the array again; a\n"
    "folder of another plan is refused, never written over.\n";

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
      ("progress", "report progress on stderr even when it is not a terminal")
      ("stage-dir", po::value<std::string>(), "DIR: run the plan's runs as task files in DIR (shared by the nodes): write the next stage's tasks and stop, or read every stage's results back and print the answer")
      ("tasks", po::value<std::string>(), "with --stage-dir: N, the tasks each new stage is split into (run i in task i % N)")
      ("run-task", po::value<std::string>(), "DIR: run one task of DIR's latest stage (the plan is read from DIR/plan.json) and exit")
      ("task", po::value<std::string>(), "with --run-task: K/N, task K (from 0) of the stage's N (default: task SLURM_ARRAY_TASK_ID, a Slurm array's index, of the stage's N)")
      ("task-count", po::value<std::string>(), "with --run-task: N, the stage's task count, K from JOB_COMPLETION_INDEX (a Kubernetes indexed Job)");
  add_precision_options(opts, false);
  return opts;
}

// The options that decide a plan's answer, in a fixed order (the scenario's path made absolute):
// what a stage folder's plan.json records, and what a task reads back to rebuild the plan. Not
// --json, --progress, --threads (how it is shown and run), nor the stage options.
std::vector<std::string> plan_identity_args(const po::variables_map& vm) {
  std::vector<std::string> a{std::filesystem::absolute(vm["scenario"].as<std::string>()).lexically_normal().string()};
  for (const char* name : {"set", "vary", "target"})
    for (const auto& v : option_list(vm, name)) {
      a.push_back(std::string("--") + name);
      a.push_back(v);
    }
  for (const char* name : {"cost", "bisect", "seed", "replications", "precision", "precision-abs", "max-replications"})
    if (vm.count(name)) {
      a.push_back(std::string("--") + name);
      a.push_back(vm[name].as<std::string>());
    }
  for (const char* name : {"conservative", "headroom"})
    if (vm.count(name)) a.push_back(std::string("--") + name);
  return a;
}

PlanOptions plan_options_of(const po::variables_map& vm) {
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

// The plan before any run: its targets and cost read, the runs a target over runs needs checked
// (and made the first stage with --precision), the grid built, validated and costed.
struct PreparedPlan {
  std::vector<Target> targets;
  std::shared_ptr<Expr> cost_expr;
  PlanGrid grid;
};

PreparedPlan prepare_plan(PlanOptions& o) {
  PreparedPlan pp;
  std::vector<Target>& targets = pp.targets;
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
  if (o.cost) pp.cost_expr = parse_cost(*o.cost);
  pp.grid = build_grid(o, targets, pp.cost_expr.get());
  return pp;
}

// The options of the other mode refused by name: a task reads the plan from DIR/plan.json.
void check_stage_options(const po::variables_map& vm) {
  if (vm.count("run-task")) {
    for (const auto& [name, value] : vm) {
      if (name == "run-task" || name == "task" || name == "task-count" || name == "threads" || value.defaulted())
        continue;
      throw ScenarioError("--run-task", "only --task, --task-count and --threads beside it (the plan is read from DIR/plan.json)",
                          name == "scenario" ? "a scenario file, " + quote(value.as<std::string>()) : "--" + name);
    }
    return;
  }
  for (const char* name : {"task", "task-count"})
    if (vm.count(name)) throw ScenarioError(std::string("--") + name, "--run-task DIR beside it", "no --run-task");
  if (vm.count("tasks") && !vm.count("stage-dir")) throw ScenarioError("--tasks", "--stage-dir DIR beside it", "no --stage-dir");
  if (vm.count("stage-dir") && !vm.count("tasks"))
    throw ScenarioError("--stage-dir", "--tasks N beside it (the tasks each stage is split into)", "no --tasks");
}

// plan --run-task DIR: the plan rebuilt from DIR/plan.json, then one task of its latest stage.
int run_plan_task(const po::variables_map& vm, std::ostream& out, std::ostream& err) {
  const std::string dir = vm["run-task"].as<std::string>();
  const StageIdentity id = read_stage_identity(dir, "--run-task");
  const auto parsed = parse_scenario_command(id.args, plan_option_descriptions(), out, nullptr);
  if (!parsed || parsed->count("run-task") || parsed->count("stage-dir"))
    throw ScenarioError(dir + "/plan.json: args", "a plan's arguments", "others");
  PlanOptions o = plan_options_of(*parsed);
  PreparedPlan pp = prepare_plan(o);
  const std::string hash = hash_hex(pp.grid.space.base.dump());
  if (hash != id.scenario_hash)
    throw ScenarioError("--run-task", "the scenario the plan in " + dir + " was started with (scenario_hash " + id.scenario_hash + ")",
                        quote(o.scenario) + " with scenario_hash " + hash + " (the file changed since: put it back, or start the plan afresh)");
  check_stage_inputs(id, pinned_inputs(pp.grid.scenarios), "--run-task", dir);
  // A Slurm array's index is the task number itself (the count is the stage's), so that
  // --array=1,4 runs just the tasks 1 and 4 of a stage again.
  Shard task;
  const char* slurm_task = std::getenv("SLURM_ARRAY_TASK_ID");
  if (!vm.count("task") && !vm.count("task-count") && slurm_task) {
    task.index = parse_count("SLURM_ARRAY_TASK_ID", slurm_task, 0);
    task.count = 0;  // the stage's
  } else {
    task = select_shard(vm, "task", "task-count");
  }
  const unsigned threads =
      thread_count(vm.count("threads") ? std::optional<std::string>(vm["threads"].as<std::string>()) : std::nullopt);
  return run_stage_task(dir, id, pp.grid, task, threads, err);
}

// The message of a stage still waiting for tasks (stderr), with what to run.
void report_outstanding(std::ostream& err, const StageOutstanding& w) {
  err << "brokersim: plan: stage " << w.stage << (w.written ? " written: " : ": ") << w.stage_file << " (" << w.runs
      << " run(s) of " << w.setting << " in " << w.tasks << " task(s))\n";
  err << "brokersim: plan: stage " << w.stage << " waits for " << w.missing.size() << " of its " << w.tasks << " task(s): ";
  for (std::size_t i = 0; i < w.missing.size() && i < 20; ++i) err << (i ? ", " : "") << w.missing[i];
  if (w.missing.size() > 20) err << ", ...";
  err << "; run `brokersim plan --run-task " << w.dir << " --task K/" << w.tasks
      << "` for each (a Slurm array: --array=";
  for (std::size_t i = 0; i < w.missing.size() && i < 20; ++i) err << (i ? "," : "") << w.missing[i];
  if (w.missing.size() > 20) err << ",...";
  err << "), then this command again (exit status " << kPlanTasksOutstanding << ")\n";
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const auto parsed = parse_scenario_command(args, plan_option_descriptions(), out, kPlanHelp);
  if (!parsed) return 0;  // --help was printed
  const po::variables_map& vm = *parsed;
  check_stage_options(vm);
  if (vm.count("run-task")) return run_plan_task(vm, out, err);
  PlanOptions o = plan_options_of(vm);
  PreparedPlan pp = prepare_plan(o);
  const std::vector<Target>& targets = pp.targets;
  PlanGrid& grid = pp.grid;
  const std::optional<std::size_t> bisect =
      grid.cost_from_metrics && !o.bisect ? std::nullopt : choose_bisect_axis(grid, o.bisect);

  // Where the runs run: this machine's threads, or task files in --stage-dir (plan/stages.hpp).
  LocalExecutor local(o.threads);
  std::unique_ptr<StagedExecutor> staged;
  if (vm.count("stage-dir")) {
    const std::string dir = vm["stage-dir"].as<std::string>();
    const std::uint64_t tasks = parse_count("--tasks", vm["tasks"].as<std::string>(), 1);
    if (tasks > kMaxStageTasks)
      throw ScenarioError("--tasks", "an integer from 1 to " + std::to_string(kMaxStageTasks), quote(vm["tasks"].as<std::string>()));
    const StageIdentity id =
        make_stage_identity(hash_hex(grid.space.base.dump()), plan_identity_args(vm), pinned_inputs(grid.scenarios));
    open_stage_dir(dir, id, "--stage-dir");
    staged = std::make_unique<StagedExecutor>(dir, id, tasks, grid);
  }
  PlanExecutor& executor = staged ? static_cast<PlanExecutor&>(*staged) : local;

  // A staged plan mostly reads results back: its progress only when asked for.
  const bool show = o.progress || (!staged && &err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
  PointRunner runner(grid, targets, o, show ? &err : nullptr, executor);
  const std::uint64_t first_stage = o.precision ? o.precision->first : 0;
  std::optional<std::size_t> best;
  std::optional<Headroom> headroom;
  std::vector<std::size_t> tied;
  try {
    best = grid.cost_from_metrics ? search_by_measured_cost(grid, *pp.cost_expr, runner, first_stage)
           : bisect               ? search_by_bisection(grid, *bisect, runner)
                                  : search_in_cost_order(grid, runner);
    runner.finish();
    tied = resolve_cost_ties(grid, runner, best);
    if (best && o.headroom) headroom = find_headroom(grid, *best, targets, o, executor);
  } catch (const StageOutstanding& w) {
    report_outstanding(err, w);
    return kPlanTasksOutstanding;
  }

  PlanReport rep{o, grid, targets, runner, bisect, best, std::nullopt, shown_metrics(grid, targets),
                 o.cost ? *o.cost : "slots_total, then the prefetch sum", std::move(tied), {}};
  if (!best) rep.closest = closest_tried(grid, runner);
  rep.headroom = std::move(headroom);
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
