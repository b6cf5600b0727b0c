// brokersim sweep: every point of a grid, replications of each reduced to mean and ci95 per
// metric, one CSV row per point; sharded, resumable, or with replications chosen by --precision.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/output_file.hpp"
#include "experiments/cli/plan/window_names.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/journal.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/precision.hpp"
#include "experiments/cli/replication/progress.hpp"
#include "experiments/cli/replication/sectioning.hpp"
#include "experiments/cli/replication/shards.hpp"
#include "experiments/cli/replication/statistics.hpp"
#include "experiments/cli/text.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::optional<std::uint64_t> seed_option(const po::variables_map& vm) {
  if (!vm.count("seed")) return std::nullopt;
  return parse_count("--seed", vm["seed"].as<std::string>(), 0);
}

// The metadata that identifies a sweep (everything but the shard and its rows): with the scenario
// file, enough to run it again to the same bytes. `sets` and `varies` are the options as given,
// in order (later --set overrides earlier ones; the first --vary varies slowest); `varies` is
// empty when the grid came from the scenario's sweep block.
ojson sweep_identity(const SweepSpace& space, std::uint64_t replications, const std::vector<std::string>& sets,
                     const std::vector<std::string>& varies) {
  ojson m;
  m["brokersim_version"] = BROKERSIM_VERSION;
  m["scenario"] = space.base.is_object() && space.base.contains("name") ? space.base["name"] : json("");
  m["scenario_hash"] = hash_hex(space.base.dump());
  m["seed"] = space.effective_seed();
  m["replications"] = replications;
  m["set"] = sets;
  m["vary"] = varies;
  auto& grid = m["grid"];
  grid = ojson::array();
  for (const auto& a : space.axes) {
    ojson axis;
    axis["path"] = a.path;
    axis["values"] = ojson::array();
    for (const auto& v : a.values) axis["values"].push_back(ojson::parse(v.dump()));
    axis["labels"] = a.labels;
    grid.push_back(axis);
  }
  m["points"] = space.size();
  return m;
}

std::string csv_header(const std::vector<SweepAxis>& axes, const std::vector<std::string>& names, bool spread,
                       const std::vector<PooledQuantileColumn>& steady) {
  std::string h;
  for (const auto& a : axes) {
    h += csv_cell(a.path);
    h += ',';
  }
  h += "replications";
  for (const auto& n : names) {
    h += ',';
    h += csv_cell(n + "_mean");
    h += ',';
    h += csv_cell(n + "_ci95");
    if (spread) {
      h += ',';
      h += csv_cell(n + "_p05");
      h += ',';
      h += csv_cell(n + "_p95");
    }
  }
  // The steady-state quantiles of the point's pooled jobs: an estimate and its interval, no
  // spread across replications (there is one pooled figure).
  for (const auto& q : steady) {
    h += ',';
    h += csv_cell(q.name + "_mean");
    h += ',';
    h += csv_cell(q.name + "_ci95");
  }
  h += ",incomplete_runs\n";
  return h;
}

// sweep --window-columns: the windows given columns, the most any grid point has (a point with
// fewer leaves the rest empty). The count must be known before the runs (observe.window_ms,
// stop.time_ms, a fixed warmup_ms) and at most kMaxWindowColumns: each window adds a column pair
// per per-window figure (about 60), so a day of one-minute windows would be 170,000 columns.
std::size_t window_columns(const SweepSpace& space) {
  std::size_t most = 0;
  for (std::size_t p = 0; p < space.size(); ++p) {
    const Scenario s = space.point_scenario(p);
    const std::string label = space.point_label(p);
    const std::string at = label.empty() ? std::string() : " at " + label;
    if (!s.observe_window || *s.observe_window == 0)
      throw ScenarioError("--window-columns", "a scenario with observe.window_ms", "none" + at);
    const std::size_t n = window_count(s);
    if (n == 0)
      throw ScenarioError("--window-columns", "windows known before the run (stop.time_ms and a fixed warmup_ms, not \"auto\")",
                          "a span that is not" + at);
    if (n > kMaxWindowColumns)
      throw ScenarioError("--window-columns",
                          "at most " + std::to_string(kMaxWindowColumns) +
                              " windows a point (each adds a column pair per per-window figure; a wider observe.window_ms, or "
                              "a --set stop.time_ms / warmup_ms for the hours that matter, keeps it under)",
                          std::to_string(n) + " windows of observe.window_ms " + format_number(sim::to_ms(*s.observe_window)) +
                              " from warmup_ms to stop.time_ms" + at);
    most = std::max(most, n);
  }
  return most;
}

constexpr const char* kSweepHelp =
    "usage:\n"
    "  brokersim sweep SCENARIO.json [--vary PATH=LIST ...] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--out results.csv] [--shard K/N | --shard-count N]\n"
    "                [--resume] [--progress] [--precision REL] [--precision-abs A]\n"
    "                [--precision-metric NAME ...] [--max-replications N] [--spread] [--window-columns]\n"
    "\n"
    "Runs every point of the grid (the cartesian product of the --vary lists, the first varying\n"
    "slowest; without --vary, the scenario's \"sweep\" block, paths in sorted order) and prints one\n"
    "CSV row per point: the varied values, replications, then NAME_mean and NAME_ci95 for every\n"
    "numeric metric of `run --json` (--spread: also NAME_p05 and NAME_p95, the 5% and 95% quantiles\n"
    "across the point's replications, linearly interpolated; --window-columns: also windows.K.NAME for\n"
    "every window of observe.window_ms, at most 100 windows), then wait_ms.STAGE.pNN_pooled_mean and _ci95: the\n"
    "steady-state quantile of all the point's replications' jobs pooled, its interval from the runs' CDFs\n"
    "(NAME.pNN_mean is the mean of the runs' own quantiles). LIST: 1,2,4,8 | start:stop:step (inclusive) | [JSON values].\n"
    "With --precision REL each point runs Stein's two stages: a first stage of 10 replications (or\n"
    "--replications), then as many as that stage's spread says every --precision-metric needs for a 95%\n"
    "half-width within REL of its mean or within --precision-abs, at most --max-replications;\n"
    "`replications` is then the count used.\n";

// A line on stderr for every point whose runs may carry their start-up (run.warmup_doubtful, a
// metric only where a warm-up is in doubt): a sweep's CSV is read as steady-state figures, and a
// transient left in them biases every mean (2.5% low with consumers attaching at 30 s).
// `cells`: each point's cells after `replications` (with --precision led by the count used).
void warn_doubtful_warmups(std::ostream& err, const SweepSpace& space, const std::vector<std::size_t>& mine,
                           const std::vector<Scenario>& scenarios, const std::vector<std::string>& names,
                           const std::map<std::size_t, std::string>& cells, bool precision, bool spread) {
  const auto it = std::find(names.begin(), names.end(), "run.warmup_doubtful");
  if (it == names.end()) return;
  const std::size_t cell = (precision ? 1 : 0) + (spread ? 4 : 2) * static_cast<std::size_t>(it - names.begin());
  for (std::size_t k = 0; k < mine.size(); ++k) {
    const auto found = cells.find(mine[k]);
    if (found == cells.end()) continue;
    // Numeric cells only (format_number: never a comma), so the cell-th comma starts it.
    const std::string& row = found->second;
    std::size_t from = 0;
    for (std::size_t c = 0; c < cell; ++c) {
      const std::size_t comma = row.find(',', from);
      from = comma == std::string::npos ? row.size() : comma + 1;
    }
    if (from >= row.size() || row[from] == ',') continue;  // an empty cell: no value
    const double doubtful = std::strtod(row.c_str() + from, nullptr);
    if (!(doubtful > 0)) continue;
    const Scenario& s = scenarios[k];
    const std::string label = space.point_label(mine[k]);
    err << "brokersim: warning: sweep: " << (label.empty() ? std::string("the scenario's setting") : label) << ": ";
    std::size_t late = 0;
    while (late < s.consumers.size() && s.consumers[late].start == 0) ++late;
    if (s.auto_warmup)
      err << "under warmup_ms \"auto\" its pilots' average series reached no steady state, or the data kept after the"
             " cut failed the bias check (run.steady_state, run.warmup_trend_t)";
    else
      err << "warmup_ms is 0 while consumers." << late << " attaches at " << fmt(sim::to_ms(s.consumers[late].start))
          << " ms (consumers." << late << ".start_ms)";
    err << ": their figures may carry the start-up transient (column run.warmup_doubtful_mean "
        << fmt(doubtful, 4) << "; set warmup_ms past it" << (s.auto_warmup ? ", or run longer" : " or \"auto\"") << ")\n";
  }
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("vary", po::value<std::vector<std::string>>()->composing(), "PATH=LIST: a grid axis (repeatable)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replications", po::value<std::string>(), "runs per point, replication r = 0..R-1 (default 1)")
      ("threads", po::value<std::string>(), "worker threads (default: all cores)")
      ("out", po::value<std::string>(), "write the CSV here (and OUT.meta.json beside it when OUT is a regular file; - is stdout) instead of stdout")
      ("shard", po::value<std::string>(), "K/N: run only the points with index % N == K")
      ("shard-count", po::value<std::string>(), "N: shard count when the shard index comes from JOB_COMPLETION_INDEX")
      ("resume", "continue an interrupted sweep from OUT.journal")
      ("progress", "report progress on stderr even when it is not a terminal")
      ("spread", "add NAME_p05 and NAME_p95: each metric's 5% and 95% quantiles across the point's replications")
      ("window-columns", "add windows.K.NAME columns: every window's figures (observe.window_ms; at most 100 windows a point)");
  add_precision_options(opts, true);
  const auto parsed = parse_scenario_command(args, opts, out, kSweepHelp);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  if (!vm.count("scenario")) throw ScenarioError("sweep: expected a scenario file, got nothing");
  const std::uint64_t replications =
      vm.count("replications") ? parse_count("--replications", vm["replications"].as<std::string>(), 1) : 1;
  // The first stage is --replications only when given: sweep's default of 1 replication is no
  // first stage (it gave 3, the minimum, where the help and README say 10).
  const std::optional<PrecisionRule> precision = read_precision_options(vm, vm.count("replications") ? replications : 0);
  const unsigned threads =
      thread_count(vm.count("threads") ? std::optional<std::string>(vm["threads"].as<std::string>()) : std::nullopt);
  const bool resume = vm.count("resume") > 0;
  const bool spread = vm.count("spread") > 0;
  const std::optional<std::string> out_path =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;
  if (resume && !out_path) throw ScenarioError("--resume", "--out FILE (the journal is kept beside it)", "no --out");
  // A FIFO, a device or stdout is streamed into: there is no folder beside it for the metadata
  // and the journal (they would land in /dev), so neither is written, and --resume cannot be.
  const bool out_is_file = out_path && !is_stream_target(*out_path);
  if (resume && !out_is_file)
    throw ScenarioError("--resume", "--out naming a regular file (the journal is kept beside it)",
                        "\"" + *out_path + "\", which is not a regular file");
  const Shard shard = select_shard(vm);

  const std::vector<std::string> sets = option_list(vm, "set"), varies = option_list(vm, "vary");
  const SweepSpace space = load_sweep_space(vm["scenario"].as<std::string>(), sets, varies, seed_option(vm));
  const std::size_t total = space.size();
  check_grid_runs(total, precision ? precision->max_replications : replications);
  std::vector<std::size_t> mine;
  for (std::size_t p = shard.index; p < total; p += shard.count) mine.push_back(p);

  const std::vector<Scenario> scenarios = validate_points(space, mine);
  // The files this shard's scenarios read, by contents: written to its metadata (merge refuses
  // shards that read one file with two contents) and its journal (a resume refuses a file replaced).
  const std::vector<PinnedInput> inputs = pinned_inputs(scenarios);
  std::vector<std::string> names = metric_names(space);  // the whole grid's: shards agree
  const std::size_t windows = vm.count("window-columns") ? window_columns(space) : 0;
  if (windows > 0) {
    const std::vector<std::string> per_window = window_metric_names(space.point_scenario(0));
    for (std::size_t k = 0; k < windows; ++k)
      for (const auto& m : per_window) names.push_back("windows." + std::to_string(k) + "." + m);
  }
  for (const auto& s : scenarios)
    if (s.broker.queues.size() != scenarios[0].broker.queues.size() ||
        !std::equal(s.broker.queues.begin(), s.broker.queues.end(), scenarios[0].broker.queues.begin(),
                    [](const QueueSpec& a, const QueueSpec& b) { return a.name == b.name; }))
      throw ScenarioError("--vary: expected every grid point to have the same queues (the CSV columns), got different ones");
  const std::vector<std::size_t> precision_columns =
      precision ? precision_metric_columns(*precision, names) : std::vector<std::size_t>{};
  const std::vector<PooledQuantileColumn> steady = pooled_quantile_columns(names);
  const std::vector<PooledQuantileColumn> precision_steady =
      precision ? pooled_precision_columns(*precision, names) : std::vector<PooledQuantileColumn>{};

  if (out_path) {
    std::vector<NamedPath> read{{"the scenario file", vm["scenario"].as<std::string>()}};
    for (const PinnedInput& p : inputs) read.push_back({p.key, p.file});
    std::vector<NamedPath> outputs{{"--out", *out_path}};
    if (out_is_file) {
      outputs.push_back({"--out's metadata", *out_path + ".meta.json"});
      outputs.push_back({"--out's resume journal", *out_path + ".journal"});
    }
    check_distinct_files(outputs, read);
  }
  ojson identity = sweep_identity(space, replications, sets, varies);
  if (precision) {
    // Part of what identifies the sweep (a resume or a merge must use the same rule); absent
    // without --precision, so fixed-R metadata is as it was.
    std::vector<std::string> checked;
    for (std::size_t c : precision_columns) checked.push_back(names[c]);
    for (const auto& q : precision_steady) checked.push_back(q.name);
    identity["precision"] = {{"rel", precision->rel}, {"abs", precision->abs},
                             {"first_stage", precision->first}, {"max_replications", precision->max_replications},
                             {"metrics", checked}};
  }
  // Absent without --spread, so that metadata is as it was; a merge or resume must agree on it.
  if (spread) identity["spread"] = {{"quantiles", {0.05, 0.95}}, {"interpolation", "linear (type 7)"}};
  // Absent without --window-columns: the windows given columns (the most any point has).
  if (windows > 0) identity["window_columns"] = windows;
  // grid index -> row cells after `replications`: NAME_mean,NAME_ci95 (and with --spread
  // NAME_p05,NAME_p95) per metric, incomplete_runs
  std::map<std::size_t, std::string> cells;
  std::optional<Journal> journal;
  if (out_is_file) {
    std::string names_joined;
    for (const auto& n : names) names_joined += n + ",";
    for (const auto& q : steady) names_joined += q.name + ",";
    names_joined += "incomplete_runs";
    // With --precision a point's row starts with the replications it used (a cell more).
    if (precision) names_joined = "replications," + names_joined;
    const std::string header = "brokersim-sweep-journal v1 " +
                               hash_hex(identity.dump() + "|" + std::to_string(shard.index) + "/" +
                                        std::to_string(shard.count) + "|" + names_joined) +
                               "\n";
    journal.emplace(*out_path + ".journal", header, inputs);
    cells = journal->open(resume, (spread ? 4 : 2) * names.size() + 2 * steady.size() + 1 + (precision ? 1 : 0));
  }
  // Every output is checked before any point runs, not found unwritable after the whole sweep: a
  // regular file's partial file is created in its folder and removed again (nothing is left behind
  // if the sweep is killed), a stream target (FIFO, device, a folder, which fails) is opened now and
  // kept open. A FIFO that no process opens for reading within 5 s is refused instead of waited on
  // for ever.
  std::optional<OutputFile> stream_out;
  if (out_is_file) {
    try {
      OutputFile{*out_path};
      OutputFile{*out_path + ".meta.json"};
    } catch (...) {
      if (cells.empty()) journal->remove();  // a journal of nothing done is not left behind
      throw;
    }
  } else if (out_path) {
    int probe = -1;
    struct stat st {};
    const bool named = !is_standard_output(*out_path) && out_path->rfind("/dev/fd/", 0) != 0 &&
                       out_path->rfind("/proc/self/fd/", 0) != 0;
    if (named && ::stat(out_path->c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
      probe = open_fifo_writer(*out_path);
      if (probe < 0 && errno == ENXIO)
        throw ScenarioError("--out", "a FIFO that a process is reading (sweep waits 5 s for a reader)",
                            quote(*out_path) + ", which no process opened for reading");
    }
    // With the probe still open the reader cannot see end-of-file before the output is open.
    try {
      stream_out.emplace(*out_path, &out);
    } catch (...) {
      if (probe >= 0) ::close(probe);
      throw;
    }
    if (probe >= 0) ::close(probe);
  }

  // Tasks: the points still to run, each with its replications, in grid order.
  std::vector<std::size_t> todo;  // positions in `mine`
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (!cells.count(mine[i])) todo.push_back(i);
  const bool show = vm.count("progress") || (&err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
  Progress progress(show ? &err : nullptr, mine.size(), "sweep");
  std::size_t points_done = mine.size() - todo.size();
  progress.update(points_done);
  TaskRunStats stats;
  // Each point's runs' wait histograms, kept compact (RunTask::pool: its index in `todo`), cleared
  // once its row is made: the points in flight hold one set each (with --precision, every point
  // from its first stage to its last).
  std::vector<PooledWaits> pooled;
  stats.pooled_waits = &pooled;
  const auto pooled_set = [&](std::size_t k) -> const PooledWaits& {
    static const PooledWaits none;
    return k < pooled.size() ? pooled[k] : none;
  };
  // Points whose steady-state p99 comes from runs short beside their wait's correlation
  // (correlation_times, sectioning.hpp): its interval may be too narrow. By point, in grid order.
  std::map<std::size_t, std::pair<std::vector<std::pair<std::string, double>>, std::string>> short_tails;
  const auto check_tails = [&](std::size_t point, const PooledWaits& waits, const Scenario& s) {
    for (const auto& q : steady) {
      if (q.q < kTailQuantile) continue;  // no warning of it: its figure is not needed
      const double k = correlation_times(waits, q.wait);
      if (!warns_of_short_runs(q.q, k)) continue;
      short_tails[point].first.emplace_back(q.name, k);
      short_tails[point].second = runs_are_days(s);
    }
  };
  // One row's cells after `replications`: NAME_mean,NAME_ci95 per metric, the pooled quantiles,
  // then incomplete_runs.
  const std::vector<RatioColumn> ratios = ratio_columns(names);
  const auto row_cells = [&](const std::vector<const std::vector<double>*>& reps, std::size_t incomplete,
                             const PooledWaits& waits) {
    // With --precision the half-width is Stein's, from the first stage (precision.hpp).
    const Summary s = precision ? summarize_two_stage(reps, precision->first, ratios) : summarize(reps, ratios);
    std::string c;
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (j) c += ',';
      c += format_number(s.mean[j]) + "," + format_number(s.ci95[j]);
      if (spread) {
        std::vector<double> x;
        for (const auto* r : reps) x.push_back((*r)[j]);
        const double p05 = empirical_quantile(x, 0.05), p95 = empirical_quantile(std::move(x), 0.95);
        c += ',';
        c += format_number(p05);
        c += ',';
        c += format_number(p95);
      }
    }
    for (const QuantileInterval& i : pooled_quantiles(steady, waits)) {
      c += ',';
      c += format_number(i.estimate);
      c += ',';
      c += format_number(i.half_width);
    }
    c += ',';
    c += std::to_string(incomplete);
    return c;
  };
  if (precision) {
    std::vector<const Scenario*> points;
    for (std::size_t k : todo) points.push_back(&scenarios[k]);
    run_two_stage(
        points, *precision, threads, names,
        // A metric this point does not have (another broker kind's reason: every replication
        // NaN) needs nothing more (stein_replications).
        [&](std::size_t k, const std::vector<std::vector<double>>& first) {
          return std::max(needed_for_columns(*precision, first, precision_columns, ratios),
                          needed_for_pooled(*precision, first, precision_steady, pooled_set(k)));
        },
        [&](std::size_t k, const std::vector<std::vector<double>>& rows, std::size_t incomplete) {
          std::vector<const std::vector<double>*> reps;
          for (const auto& r : rows) reps.push_back(&r);
          // The replications used lead the cells, so that the journal keeps them too.
          std::string c = std::to_string(rows.size()) + "," + row_cells(reps, incomplete, pooled_set(k));
          const std::size_t point = mine[todo[k]];
          check_tails(point, pooled_set(k), scenarios[todo[k]]);
          if (k < pooled.size()) pooled[k] = {};
          if (journal) journal->append(point, c);
          cells[point] = std::move(c);
          progress.update(++points_done);
        },
        &stats,
        // Later stages: until a rare fraction's pooled events support the precision asked.
        [&](std::size_t, const std::vector<std::vector<double>>& rows) {
          return count_needed_for_columns(*precision, rows, precision_columns, ratios);
        });
  } else {
    std::vector<RunTask> tasks;
    tasks.reserve(todo.size() * replications);
    for (std::size_t i : todo)
      for (std::uint64_t r = 0; r < replications; ++r) tasks.push_back({&scenarios[i], r, tasks.size() / replications});
    std::vector<std::size_t> remaining(todo.size(), replications);
    run_tasks(
        tasks, threads, names,
        [&](std::size_t t, const std::vector<std::vector<double>>& rows) {
          const std::size_t k = t / replications;  // index into todo
          if (--remaining[k] > 0) return;
          std::vector<const std::vector<double>*> reps;
          for (std::uint64_t r = 0; r < replications; ++r) reps.push_back(&rows[k * replications + r]);
          std::size_t incomplete = 0;
          for (std::uint64_t r = 0; r < replications; ++r) incomplete += !stats.incomplete[k * replications + r].empty();
          std::string c = row_cells(reps, incomplete, pooled_set(k));
          const std::size_t point = mine[todo[k]];
          check_tails(point, pooled_set(k), scenarios[todo[k]]);
          if (k < pooled.size()) pooled[k] = {};  // under run_tasks' lock, as its merges are
          if (journal) journal->append(point, c);
          cells[point] = std::move(c);
          progress.update(++points_done);
        },
        &stats);
  }
  progress.finish();
  warn_doubtful_warmups(err, space, mine, scenarios, names, cells, precision.has_value(), spread);
  for (const auto& [point, tails] : short_tails) {
    const std::string label = space.point_label(point);
    err << "brokersim: warning: sweep: " << (label.empty() ? std::string("the scenario's setting") : label) << ": "
        << short_tails_warning(tails.first, tails.second);
  }

  std::string csv = csv_header(space.axes, names, spread, steady);
  for (std::size_t p : mine) {
    const auto coords = grid_coords(space.axes, p);
    for (std::size_t a = 0; a < space.axes.size(); ++a) csv += csv_cell(space.axes[a].labels[coords[a]]) + ",";
    csv += (precision ? std::string() : std::to_string(replications) + ",") + cells.at(p) + "\n";
  }

  if (out_is_file) {
    OutputFile meta(*out_path + ".meta.json");
    ojson shard_meta = identity;
    if (!inputs.empty()) shard_meta["inputs"] = inputs_json(inputs);
    meta.stream() << write_meta_text(shard_meta, shard, mine, csv);
    OutputFile file(*out_path);
    file.stream() << csv;
    meta.commit();
    file.commit();
    journal->remove();
  } else if (stream_out) {
    stream_out->stream() << csv;
    stream_out->commit();
  } else {
    out << csv;
  }
  return warn_incomplete_runs(err, stats);
}

}  // namespace brokersim
