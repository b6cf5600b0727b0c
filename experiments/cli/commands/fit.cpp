// `brokersim fit LOG.csv`: read the log, fit each queue's service times, arrivals and fleet, write
// the fitted scenario (checked by the project's own loader and a short run) with its plot data and
// arrival trace beside it, and with --check compare the user's scenario fed the fitted workload.
#include "experiments/cli/commands/fit.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <system_error>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/fit/arrivals.hpp"
#include "experiments/cli/fit/check.hpp"
#include "experiments/cli/fit/fitted_queue.hpp"
#include "experiments/cli/fit/fitted_scenario.hpp"
#include "experiments/cli/fit/into.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/fit/mle.hpp"
#include "experiments/cli/output_file.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/text.hpp"
#include "models/simulation.hpp"

namespace po = boost::program_options;
using ojson = nlohmann::ordered_json;

namespace brokersim {

// What fit writes for each queue (experiments/cli/fit/fitted_queue.hpp).
using fit::about_the_log;
using fit::check_fleet;
using fit::drawable_service;
using fit::file_part;
using fit::kNameMax;
using fit::finish_column;
using fit::log_time;
using fit::num;
using fit::outcome_counts;
using fit::plot_data;
using fit::print_arrivals;
using fit::print_fits;
using fit::QueueFit;
using fit::queue_name;
using fit::rate_schedule;
using fit::reading_notes;
using fit::round6;

namespace {

constexpr const char* kSynopsis =
    "usage:\n"
    "  brokersim fit LOG.csv [--out fitted.json] [--columns FIELD=NAME,...] [--time-unit auto|iso|s|ms]\n"
    "                [--interval DURATION] [--skew-tolerance DURATION] [--days] [--parameter-uncertainty]\n"
    "                [--into SCENARIO.json [--into-queue NAME]]\n"
    "                [--check SCENARIO.json] [--check-tolerance 10%,20ms] [--replications R] [--seed N]\n"
    "\n"
    "options";

}  // namespace

// --days: the arrivals of the log's whole days folded onto one day (time of day from midnight), fit
// as one schedule whose counts are the days' sums, its rates divided by the number of days: the
// mean day. A queue with fewer than two whole days cannot give one.
static void fit_mean_day(QueueFit& q, const std::vector<std::int64_t>& absolute, std::int64_t requested_interval, const fit::JobLog& log) {
  if (!q.days.estimable())
    throw ScenarioError("--days", "a log covering at least 2 whole days (UTC midnight to midnight, 23.5 h of each) in every queue",
                        (log.has_queue() ? "queue " + loader::quoted(q.log_name) + ": " : std::string()) +
                            std::to_string(q.days.days.size()) + " whole day" + (q.days.days.size() == 1 ? "" : "s"));
  std::vector<std::int64_t> folded;
  std::size_t d = 0;
  for (const std::int64_t t : absolute) {
    while (d < q.days.days.size() && t >= q.days.days[d].start + fit::kDayNs) ++d;
    if (d == q.days.days.size()) break;
    if (t >= q.days.days[d].start) {
      folded.push_back(t - q.days.days[d].start);
      q.day_times.push_back(t - q.days.days.front().start);
    }
  }
  std::sort(folded.begin(), folded.end());
  const double n = static_cast<double>(q.days.days.size());
  std::string why;
  // One day's intervals: the default for a day's average count, at most the day itself (a small
  // log's default would be longer).
  const std::int64_t interval =
      requested_interval ? requested_interval
                         : std::min(fit::kDayNs, fit::default_interval(fit::kDayNs, static_cast<std::size_t>(static_cast<double>(folded.size()) / n), why));
  q.mean_day = fit::fit_arrivals(folded, 0, fit::kDayNs, interval);
  for (auto* steps : {&q.mean_day.steps, &q.mean_day.segments})
    for (fit::RateStep& s : *steps) {
      s.rate_per_s /= n;
      s.lo /= n;
      s.hi /= n;
    }
}

static void print_uncertainty(std::ostream& out, const QueueFit& q, bool days_mode, bool uncertainty) {
  const std::size_t n = fit::redrawable_service_times(q.service);
  std::vector<std::string> what;
  if (n > 0) what.push_back("the service law");
  if (!days_mode) what.push_back("the rates' level");
  else if (q.days.lognormal) what.push_back("the days' level and spread");
  out << "  Fitted from " << grouped(static_cast<std::int64_t>(n)) << " service times"
      << (days_mode ? std::string(" and ") + std::to_string(q.days.days.size()) + " whole days"
                    : " and " + grouped(static_cast<std::int64_t>(q.arrival_times.size())) + " arrivals");
  if (what.empty()) {
    out << ": nothing to redraw (fewer than 2 service times, and a day without jobs: the spread is the sample cv)\n";
    return;
  }
  out << (uncertainty ? ": each run redraws " : ": with --parameter-uncertainty each run would redraw ") << what[0]
      << (what.size() > 1 ? " and " + what[1] : std::string())
      << " from what a log of this size leaves unknown (parameter_uncertainty" << (uncertainty ? " true" : "")
      << ", docs/fit.md)\n";
}

static void print_mean_day(std::ostream& out, const QueueFit& q, std::size_t producer) {
  double lo = q.mean_day.segments.front().rate_per_s, hi = lo;
  for (const auto& s : q.mean_day.segments) {
    lo = std::min(lo, s.rate_per_s);
    hi = std::max(hi, s.rate_per_s);
  }
  out << "  --days: the fitted scenario is one mean day of these " << q.days.days.size()
      << " (time 0 at midnight, stop at 24 h): a rate_schedule of " << q.mean_day.segments.size() << " step"
      << (q.mean_day.segments.size() == 1 ? "" : "s") << " from " << num(lo) << " to " << num(hi) << " /s (intervals of "
      << fit::format_interval(q.mean_day.interval) << ", the days' counts summed), and each run's volume drawn as lognormal with cv "
      << num(q.days.lognormal ? q.days.cv : q.days.sample_cv, "%.3g") << (q.days.lognormal ? "" : " (the sample cv: a day had no jobs)")
      << "\n";
  if (!q.days_path.empty())
    out << "  To replay whole days instead (each run one of the log's days, drawn uniformly: its own volume and shape):\n"
           "    --set 'producers." << producer << ".arrivals={\"days_csv\": \""
        << std::filesystem::path(q.days_path).filename().string() << "\"}' --set 'producers." << producer
        << ".volume={\"multiplier\": 1}'\n";
}

// --into's scenario is read, and written over only when --out itself names it: no side file may.
static void check_into(const std::vector<NamedPath>& outputs, const std::string& into) {
  if (into.empty() || outputs.size() < 2) return;
  check_distinct_files({outputs.begin() + 1, outputs.end()}, {{"--into's scenario", into}});
}

// Queue q's arrivals (one per message), waits (one per started attempt), service times (the
// executions that finished normally) and failed attempts, from its rows.
static void fit_queue_rows(QueueFit& q, const fit::JobLog& log, std::int64_t origin) {
  q.messages = fit::group_messages(log, q.rows, origin);
  q.arrival_times = q.messages.arrivals;
  std::vector<double> service;
  for (std::size_t r : q.rows) {
    const auto& row = log.rows[r];
    if (row.started != fit::kNoTime) q.waits_ms.push_back(sim::to_ms(row.wait()));
    if (fit::finished_normally(row)) service.push_back(sim::to_ms(row.finished - row.started));
  }
  if (service.empty())
    throw ScenarioError(log.file, "jobs with both " + log.columns.started + " and " + finish_column(log) +
                                      (log.has_outcome ? " that did not fail" : "") +
                                      (log.has_queue() ? " in queue " + loader::quoted(q.log_name) : ""),
                        "none");
  std::sort(q.waits_ms.begin(), q.waits_ms.end());
  q.service = fit::fit_service_times(std::move(service));
  drawable_service(q);
  if (log.has_outcome) q.failures = fit::fit_failures(log, q.rows, q.messages, q.service.mean);
}

// What the log's reading and each queue's attempts and failures say, for the report and the
// scenario's notes.
static std::vector<std::string> queue_notes(const QueueFit& q, const fit::JobLog& log) {
  std::vector<std::string> notes;
  if (q.messages.by_id) notes.push_back(fit::attempts_sentence(q, log));
  if (log.has_outcome)
    for (const std::string& s : fit::failure_sentences(q, log)) notes.push_back(s);
  return notes;
}

int cmd_fit(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kSynopsis);
  opts.add_options()
      ("help,h", "show this help")
      ("out", po::value<std::string>(), "write the fitted scenario here (FILE.json), with FILE.plot.json (plot data), "
                                        "FILE.arrivals.csv (the log's arrivals as a trace) and FILE.overtime.csv beside it")
      ("columns", po::value<std::string>(), "the log's column names: enqueued=NAME,started=NAME,finished=NAME,queue=NAME,"
                                            "worker=NAME,state=NAME,succeeded=NAME,failed=NAME,id=NAME (defaults enqueued_at, "
                                            "started_at, finished_at; the others optional: state an outcome column (found by "
                                            "the name status or state), succeeded / failed timestamp columns giving the finish "
                                            "time and outcome, id the message id of a log with a row per attempt (found by the "
                                            "name message_id, task_id or id); state=- or id=- reads none)")
      ("skew-tolerance", po::value<std::string>(), "clock skew: a start before its enqueue, or a finish before its start, by "
                                                   "at most this is clamped and counted (default 1s; 0: refused)")
      ("time-unit", po::value<std::string>(), "auto (default: ISO-8601, or numbers in the unit the column name "
                                              "ends in, _ms or _s, else by magnitude), iso, s or ms")
      ("interval", po::value<std::string>(), "the interval arrivals are counted over: 500ms, 10s, 5min, 1h, 1d (default: from the log's span); the "
                                            "rate_schedule merges adjacent intervals of one rate")
      ("days", "write the fitted scenario as one mean day of the log's whole days (2 or more), each run drawing its "
               "day's volume from their spread (producers[].volume.per_run)")
      ("parameter-uncertainty", "write parameter_uncertainty true: each run redraws the fitted service-time law, and the "
                                "volume's level and spread, from their sampling distributions (what a log of this size "
                                "leaves unknown)")
      ("into", po::value<std::string>(), "fit into this scenario (imported or written): replace only what the log tells "
                                         "(the producer, its service law, and the fleet where the log names workers), keep "
                                         "its broker, queues and framework settings; --out writes the result")
      ("into-queue", po::value<std::string>(), "--into: the scenario's queue the log's jobs go to (default: the one its "
                                               "producers publish to, or the log's queue name)")
      ("check", po::value<std::string>(), "run the fitted workload through this scenario (its broker and consumers) "
                                          "and compare its waits with the log's (exit status 6 when they do not match)")
      ("check-tolerance", po::value<std::string>(), "--check: a figure outside its interval by less than this "
                                                    "differs slightly, and the command succeeds: 10%, 50ms, or 10%,20ms "
                                                    "for the larger (default 10%,20ms)")
      ("replications", po::value<std::string>(), "--check: replications (default 10, at least 2)")
      ("seed", po::value<std::string>(), "--check: override the scenario's seed");
  po::options_description hidden;
  hidden.add_options()("log", po::value<std::string>(), "the job log (CSV)");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("log", 1);
  const po::variables_map vm = parse_command_line(args, all, pos);
  if (vm.count("help")) {
    out << opts << '\n';
    return 0;
  }
  if (!vm.count("log")) throw ScenarioError("fit", "a job log (CSV)", "nothing");
  const std::string log_path = vm["log"].as<std::string>();
  const fit::ColumnNames columns = vm.count("columns") ? fit::parse_column_names(vm["columns"].as<std::string>())
                                                       : fit::ColumnNames{};
  const fit::TimeFormat format =
      vm.count("time-unit") ? fit::parse_time_format(vm["time-unit"].as<std::string>()) : fit::TimeFormat::Auto;
  const std::string interval_text = vm.count("interval") ? vm["interval"].as<std::string>() : "";
  const std::int64_t requested_interval = vm.count("interval") ? fit::parse_interval(interval_text) : 0;
  std::size_t replications = 10;
  if (vm.count("replications")) replications = parse_count("--replications", vm["replications"].as<std::string>(), 2);
  if (replications > 10000) throw ScenarioError("--replications", "an integer between 2 and 10000", loader::quoted(vm["replications"].as<std::string>()));
  std::optional<std::uint64_t> seed;
  if (vm.count("seed")) seed = parse_count("--seed", vm["seed"].as<std::string>(), 0);
  fit::ReadOptions read_options;
  read_options.skew_tolerance_ns = fit::kDefaultSkewNs;
  if (vm.count("skew-tolerance"))
    read_options.skew_tolerance_ns = fit::parse_skew_tolerance(vm["skew-tolerance"].as<std::string>(), "--skew-tolerance");
  double tol_rel = 0.10, tol_abs_ms = 20;
  if (vm.count("check-tolerance")) fit::parse_check_tolerance(vm["check-tolerance"].as<std::string>(), tol_rel, tol_abs_ms);
  const bool days_mode = vm.count("days") > 0;
  if (days_mode && requested_interval > fit::kDayNs)
    throw ScenarioError("--interval", "at most 1d with --days (the fitted scenario is one day)", loader::quoted(interval_text));
  if (days_mode && vm.count("check"))
    throw ScenarioError("--days", "no --check beside it (--check compares the fitted workload over the log's own span)", "--check");
  const bool uncertainty = vm.count("parameter-uncertainty") > 0;
  if (uncertainty && vm.count("check"))
    throw ScenarioError("--parameter-uncertainty", "no --check beside it (--check compares the fitted workload itself with the log)",
                        "--check");
  for (const char* o : {"replications", "seed", "check-tolerance"})
    if (vm.count(o) && !vm.count("check")) throw ScenarioError(std::string("--") + o, "--check beside it", "no --check");
  fit::IntoOptions into;
  if (vm.count("into")) {
    into.path = vm["into"].as<std::string>();
    if (into.path.empty()) throw ScenarioError("--into", "a scenario file", "\"\"");
  }
  if (vm.count("into-queue")) {
    if (into.path.empty()) throw ScenarioError("--into-queue", "--into beside it", "no --into");
    into.queue = vm["into-queue"].as<std::string>();
  }

  // Outputs: checked and opened (as partial files beside their targets) before anything is read,
  // written only when everything succeeded.
  std::string out_path, stem;
  std::vector<NamedPath> outputs;
  std::vector<NamedPath> inputs{{"the job log", log_path}};
  if (vm.count("check")) inputs.push_back({"--check's scenario", vm["check"].as<std::string>()});
  std::unique_ptr<OutputFile> scenario_file, plot_file, series_file;
  std::size_t stem_bytes = 0;
  // A side file is always written as a file: an existing FIFO or device under its name would be
  // written in place, and a FIFO nobody reads blocks for ever.
  const auto check_side_file = [&](const NamedPath& o) {
    if (is_stream_target(o.path))
      throw ScenarioError(o.role, "a name that is not an existing FIFO, device or folder (--out's files are written beside it as files)",
                          loader::quoted(o.path));
  };
  if (vm.count("out")) {
    out_path = vm["out"].as<std::string>();
    if (is_stream_target(out_path) || out_path.empty())
      throw ScenarioError("--out", "a file name (files are written beside it)", loader::quoted(out_path));
    stem = out_path.size() > 5 && out_path.ends_with(".json") ? out_path.substr(0, out_path.size() - 5) : out_path;
    stem_bytes = std::filesystem::path(stem).filename().string().size();
    // The longest side file name: STEM.arrivals.QUEUE.csv with a queue name of at least 16 bytes.
    constexpr std::size_t kSideBytes = std::string_view(".arrivals..csv").size() + 16;
    if (stem_bytes + kSideBytes > kNameMax)
      throw ScenarioError("--out", "a file name of at most " + std::to_string(kNameMax - kSideBytes) +
                                       " bytes before .json (its side files add up to .arrivals.QUEUE.csv, and a file "
                                       "name holds at most " + std::to_string(kNameMax) + ")",
                          std::to_string(stem_bytes) + " bytes");
    outputs = {{"--out", out_path}, {"--out's plot data", stem + ".plot.json"},
               {"--out's time series", stem + ".overtime.csv"}};
    for (std::size_t i = 1; i < outputs.size(); ++i) check_side_file(outputs[i]);
    check_distinct_files(outputs, inputs);
    check_into(outputs, into.path);
    scenario_file = std::make_unique<OutputFile>(out_path, &out);
    plot_file = std::make_unique<OutputFile>(stem + ".plot.json", &out);
    series_file = std::make_unique<OutputFile>(stem + ".overtime.csv", &out);
  }

  if (!into.path.empty()) fit::validate_into(into);
  const fit::JobLog log = fit::read_job_log(log_path, columns, format, read_options);

  // Time origin: the first enqueue; the span ends at the last one (at most kMaxSpanNs: the reader
  // refused a row beyond it, naming its line).
  std::int64_t origin = log.rows.front().enqueued, end = origin;
  for (const auto& r : log.rows) {
    origin = std::min(origin, r.enqueued);
    end = std::max(end, r.enqueued);
  }
  if (end - origin > fit::kMaxSpanNs)
    throw InvariantError(log.file + ": a span beyond 1e11 ms passed the reader");
  std::string why_interval = "as --interval says";
  const std::int64_t interval = requested_interval ? requested_interval
                                                   : fit::default_interval(end - origin, log.rows.size(), why_interval);
  // Before any interval is allocated: --interval 1ms over a log of 1e8 s would be 1e11 of them.
  fit::check_interval_count(end - origin, interval, log.queues.size(),
                            requested_interval ? interval_text : fit::format_interval(interval));

  std::vector<QueueFit> queues(log.queues.size());
  // Queues in name order, as brokersim numbers them; their scenario names and trace files are
  // chosen, and the traces opened, before the work.
  std::vector<std::size_t> order(queues.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return log.queues[a] < log.queues[b]; });
  std::vector<std::string> taken, taken_files;
  std::vector<std::unique_ptr<OutputFile>> traces, day_traces;
  {
    std::vector<QueueFit> named(queues.size());
    for (std::size_t k = 0; k < order.size(); ++k) {
      QueueFit& q = named[k];
      q.log_name = log.queues[order[k]];
      q.name = queue_name(log.has_queue() ? q.log_name : "work", taken);
      if (!out_path.empty()) {
        q.trace_path = order.size() > 1 ? stem + ".arrivals." + file_part(q.name, kNameMax - stem_bytes - 14, taken_files) + ".csv"
                                        : stem + ".arrivals.csv";
        outputs.push_back({"--out's arrival trace" + (order.size() > 1 ? " for queue " + loader::quoted(q.name) : ""), q.trace_path});
        check_side_file(outputs.back());
        if (days_mode) {
          q.days_path = order.size() > 1 ? stem + ".days." + file_part(q.name, kNameMax - stem_bytes - 14, taken_files) + ".csv"
                                         : stem + ".days.csv";
          outputs.push_back({"--out's days trace" + (order.size() > 1 ? " for queue " + loader::quoted(q.name) : ""), q.days_path});
          check_side_file(outputs.back());
        }
      }
    }
    check_distinct_files(outputs, inputs);
    check_into(outputs, into.path);
    for (const auto& q : named)
      if (!q.trace_path.empty()) traces.push_back(std::make_unique<OutputFile>(q.trace_path, &out));
    for (const auto& q : named)
      if (!q.days_path.empty()) day_traces.push_back(std::make_unique<OutputFile>(q.days_path, &out));
    queues = std::move(named);
  }
  std::vector<std::vector<std::size_t>> rows_of(log.queues.size());
  for (std::size_t i = 0; i < log.rows.size(); ++i) rows_of[log.rows[i].queue].push_back(i);
  // The fleets first: their limits (consumers, slots) are checked before the fits.
  for (std::size_t k = 0; k < order.size(); ++k) {
    QueueFit& q = queues[k];
    q.rows = std::move(rows_of[order[k]]);
    q.fleet = fit::fit_fleet(log, q.rows, origin, end, interval);
  }
  check_fleet(queues, log);
  for (QueueFit& q : queues) {
    fit_queue_rows(q, log, origin);
    q.arrivals = fit::fit_arrivals(q.arrival_times, 0, end - origin, interval);
    std::vector<std::int64_t> absolute(q.arrival_times);
    for (std::int64_t& t : absolute) t += origin;
    q.days = fit::fit_days(absolute, origin, end);
    if (days_mode) fit_mean_day(q, absolute, requested_interval, log);
  }

  // What the reader clamped (clock skew) and the outcomes: in the report, the fitted scenario's
  // notes and the plot data.
  const std::vector<std::string> log_notes = reading_notes(log);

  // The fitted scenario: the placeholder around the fit, or --into's own.
  const double span_ms = std::max(sim::to_ms(end - origin), 1.0);
  fit::WriteOptions write;
  write.log_file = log.file;
  write.span_ms = span_ms;
  write.days_mode = days_mode;
  write.uncertainty = uncertainty;
  write.notes = log_notes;
  std::vector<std::string> into_said;
  // Where the scenario's relative files are read from: beside --out, or (not written) beside --into.
  into.out_dir = std::filesystem::path(out_path.empty() ? into.path : out_path).parent_path().string();
  if (into.out_dir.empty()) into.out_dir = ".";
  ojson doc = into.path.empty() ? fit::placeholder_scenario(queues, log, write) : fit::fit_into(queues, log, write, into, into_said);
  for (const auto& q : queues)
    for (const std::string& n : queue_notes(q, log)) {
      if (!doc.contains("notes")) doc["notes"] = ojson::array();
      doc["notes"].push_back(n);
    }
  double longest_ms = 0;
  const bool no_consumer_timeout = into.path.empty() && fit::beyond_consumer_timeout(queues, longest_ms);
  // Validated by the loader, and run (over a stretch of at most 200,000 arrivals) so that a
  // scenario that loads but cannot run is found here, not by the user.
  Scenario fitted;
  try {
    fitted = load_scenario(nlohmann::json::parse(doc.dump()), into.out_dir);
  } catch (const ScenarioError& e) {
    if (!into.path.empty()) throw;  // fit_into loaded it: unreachable
    throw ScenarioError(about_the_log(e, queues, log));
  }
  {
    Scenario trial = fitted;
    const double fraction = std::min(1.0, 200000.0 / static_cast<double>(log.rows.size()));
    trial.stop_time = std::max<Time>(1, static_cast<Time>(static_cast<double>(*fitted.stop_time) * fraction));
    // The trial has only to show that the scenario runs: bounded in events (20 per arrival, at
    // least a million), so that a log spanning years (a broker's periodic ticks all the way) or
    // one whose jobs the model keeps busy does not hold the command (a fuzzed log of 2,000 jobs
    // with --interval 1ms ran 20 million events in 113 s and 8 GB).
    const std::uint64_t trial_events =
        std::max<std::uint64_t>(1'000'000, 20 * static_cast<std::uint64_t>(std::min(200'000.0, static_cast<double>(log.rows.size()))));
    trial.limits.max_events = std::min<std::uint64_t>(trial.limits.max_events, trial_events);
    const RunResult run = simulate(trial);
    if (run.stop_reason == StopReason::MaxEvents)
      err << "brokersim: warning: the fitted scenario's trial run (" << sim::format_ms(trial.stop_time.value_or(0))
          << " ms of it) was cut at " << grouped(static_cast<std::int64_t>(trial_events))
          << " events: it loads and runs, but a run of it is long\n";
    else if (stopped_by_limit(run.stop_reason))
      err << "brokersim: warning: the fitted scenario stopped early in a trial run (" << stop_reason_name(run.stop_reason)
          << "): its fleet is too small for its arrivals\n";
  }

  // The report.
  out << "brokersim fit: " << log.file << ": " << log.rows.size() << " jobs, " << log.queues.size()
      << (log.queues.size() == 1 ? " queue" : " queues") << (log.has_worker() ? ", " + std::to_string(log.workers.size()) + " workers" : "")
      << "\n  times: " << log.format_reason << (log.naive_iso ? " (no time zone given: read as UTC)" : "")
      << "\n  from " << log_time(log, origin) << " to " << log_time(log, end) << " (" << num(span_ms / 1000, "%.1f")
      << " s; time 0 of the fitted scenario is the first enqueue)\n";
  if (no_consumer_timeout)
    out << "  jobs ran up to " << num(longest_ms / 60000, "%.1f")
        << " min, longer than RabbitMQ's default consumer timeout (30 min): the log's broker did not enforce one, "
           "nor does the fitted scenario (broker.consumer_timeout_ms null)\n";
  if (log.not_started || log.not_finished)
    out << "  " << log.not_started << " jobs never started and " << log.not_finished
        << " never finished in the log: " << (log.has_id() ? "their messages count as arrivals" : "they count as arrivals")
        << "; the started ones count in the waits; a job without a finish time is in neither the service times nor the "
           "fleet's slots\n";
  for (const auto& n : log_notes) out << "  " << n << '\n';
  if (!log.has_id())
    out << "  arrivals: one per row (no message id column: one named message_id, task_id or id, or --columns id=NAME, "
           "counts each message once however many attempts it had)\n";
  if (!into.path.empty()) {
    out << "  --into " << into.path << ":\n";
    for (const auto& n : into_said) out << "    " << n << '\n';
  }
  for (const auto& q : queues) {
    out << "\nQueue " << loader::quoted(q.name) << (q.name != q.log_name && log.has_queue() ? " (" + loader::quoted(q.log_name) + " in the log)" : "")
        << ": " << q.rows.size() << " jobs\n";
    print_fits(out, q);
    for (const std::string& n : queue_notes(q, log)) out << "  " << static_cast<char>(std::toupper(static_cast<unsigned char>(n[0]))) << n.substr(1) << '\n';
    print_arrivals(out, q, why_interval, q.trace_path, q.producer, days_mode);
    print_days(out, q, log, q.producer, span_ms / 3'600'000.0, days_mode);
    if (days_mode) print_mean_day(out, q, q.producer);
    print_uncertainty(out, q, days_mode, uncertainty);
    out << "  Fleet: " << q.fleet.why << '\n';
  }

  int status = 0;
  if (vm.count("check")) {
    std::vector<fit::CheckQueue> cq;
    for (const auto& q : queues) {
      fit::CheckQueue c;
      c.log_name = log.has_queue() ? q.log_name : "";
      c.arrivals = rate_schedule(q.arrivals);
      c.service = q.service.fits[q.service.chosen].syntax;
      c.replay = !q.arrivals.poisson;
      if (c.replay) c.arrivals_ns = q.arrival_times;
      c.log_waits_ms = q.waits_ms;
      cq.push_back(std::move(c));
    }
    fit::CheckOptions options;
    options.tol_rel = tol_rel;
    options.tol_abs_ms = tol_abs_ms;
    options.scenario_path = vm["check"].as<std::string>();
    options.replications = replications;
    options.seed = seed;
    options.span_ms = span_ms;
    // The runs create as many messages as the log has (its attempts beyond the first are the
    // model's own retries, if any).
    options.jobs = 0;
    for (const auto& q : queues) options.jobs += q.messages.count();
    const fit::CheckResult result = fit::run_check(cq, options);
    fit::print_check(out, result);
    if (!result.no_verdict.empty()) {
      err << "brokersim: warning: fit --check gives no verdict: " << result.no_verdict << '\n';
      status = 3;
    } else if (!result.match) {
      status = 6;
    }
  }

  if (!out_path.empty()) {
    scenario_file->stream() << doc.dump(2) << '\n';
    {
      ojson plot = plot_data(queues, log, end - origin);
      for (std::size_t i = 0; i < queues.size(); ++i) {
        plot["queues"][i]["attempts"] = fit::attempts_data(queues[i]);
        if (log.has_outcome) plot["queues"][i]["failures"] = fit::failures_data(queues[i]);
      }
      const auto& k = log.skew;
      plot["skew"] = {{"tolerance_ms", sim::to_ms(log.skew_tolerance_ns)}, {"rows", k.rows},
                      {"starts", k.starts}, {"start_max_ms", sim::to_ms(k.start_max)},
                      {"start_mean_ms", k.starts ? k.start_sum / static_cast<double>(k.starts) / 1e6 : 0.0},
                      {"finishes", k.finishes}, {"finish_max_ms", sim::to_ms(k.finish_max)},
                      {"finish_mean_ms", k.finishes ? k.finish_sum / static_cast<double>(k.finishes) / 1e6 : 0.0}};
      plot["outcomes"] = outcome_counts(log);
      plot["notes"] = log_notes;
      plot_file->stream() << plot.dump() << '\n';
    }
    {
      std::ostream& s = series_file->stream();
      s << "from_ms";
      for (const auto& q : queues)
        s << ',' << q.name << ".arrivals," << q.name << ".rate_per_s," << q.name << ".busy"
          << (log.has_worker() ? "," + q.name + ".workers" : "");
      s << '\n';
      for (std::size_t k = 0; k < queues.front().arrivals.steps.size(); ++k) {
        s << queues.front().arrivals.steps[k].from_ms;
        for (const auto& q : queues) {
          const auto& st = q.arrivals.steps[std::min(k, q.arrivals.steps.size() - 1)];
          s << ',' << st.count << ',' << round6(st.rate_per_s) << ',' << round6(q.fleet.busy[std::min(k, q.fleet.busy.size() - 1)]);
          if (log.has_worker()) s << ',' << q.fleet.active[std::min(k, q.fleet.active.size() - 1)];
        }
        s << '\n';
      }
    }
    for (std::size_t i = 0; i < queues.size(); ++i) {
      std::ostream& t = traces[i]->stream();
      t << "publish_ms\n";
      for (std::int64_t a : queues[i].arrival_times) t << sim::format_ms(a) << '\n';
    }
    for (std::size_t i = 0; i < day_traces.size(); ++i) {
      std::ostream& t = day_traces[i]->stream();
      t << "publish_ms\n";
      for (std::int64_t a : queues[i].day_times) t << sim::format_ms(a) << '\n';
    }
    scenario_file->commit();
    plot_file->commit();
    series_file->commit();
    for (auto& t : traces) t->commit();
    for (auto& t : day_traces) t->commit();
    out << "\nWrote " << out_path << (into.path.empty() ? "" : " (--into " + into.path + " with the log's fit)") << " (loads and runs: checked), " << stem << ".plot.json, " << stem
        << ".overtime.csv and the arrival trace" << (queues.size() > 1 ? "s " + stem + ".arrivals.QUEUE.csv" : " " + stem + ".arrivals.csv")
        << ".\nPlots: /usr/bin/python3 experiments/fit/plot_fit.py " << stem << ".plot.json --out " << stem << "-plots\n";
  }
  return status;
}

}  // namespace brokersim
