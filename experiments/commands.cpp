#include "experiments/commands.hpp"

#include <boost/program_options.hpp>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <cstdio>
#include <optional>
#include <vector>

#include "experiments/analytic_cmd.hpp"
#include "experiments/cli_options.hpp"
#include "experiments/offered_load.hpp"
#include "experiments/output_file.hpp"
#include "experiments/precision.hpp"
#include "experiments/report.hpp"
#include "experiments/scenario_load.hpp"
#include "models/simulation.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

constexpr const char* kUsage =
    "brokersim: discrete-event simulation of broker queues, consumer prefetch and job deadlines\n"
    "\n"
    "usage:\n"
    "  brokersim run SCENARIO.json [--json] [--seed N] [--replication R] [--set PATH=VALUE ...]\n"
    "                [--trace jobs.csv] [--timeseries series.csv] [--compare-analytic] [--progress]\n"
    "                [--precision REL] [--precision-abs A] [--precision-metric NAME ...] [--max-replications N]\n"
    "  brokersim sweep SCENARIO.json [--vary PATH=LIST ...] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--out results.csv] [--shard K/N | --shard-count N]\n"
    "                [--resume] [--progress] [--precision REL] [--precision-abs A]\n"
    "                [--precision-metric NAME ...] [--max-replications N]\n"
    "  brokersim merge SHARD1.csv SHARD2.csv ... --out results.csv\n"
    "  brokersim plan SCENARIO.json [--vary PATH=LIST ...] --target 'EXPR<=VALUE' ... [--cost EXPR]\n"
    "                [--bisect PATH|none] [--conservative] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--json] [--progress]\n"
    "                [--precision REL] [--precision-abs A] [--max-replications N]\n"
    "  brokersim metrics SCENARIO.json [--set PATH=VALUE ...]\n"
    "  brokersim analytic SCENARIO.json [--json] [--set PATH=VALUE ...]\n"
    "  brokersim analytic --validate [--replications R] [--jobs N]\n"
    "                [--precision REL] [--precision-abs A] [--max-replications N]\n"
    "  brokersim --help | --version\n"
    "\n"
    "Run `brokersim COMMAND --help` for a command's options.\n";

std::string format_ms(Time t) {
  if (t % sim::kNsPerMs == 0) return std::to_string(t / sim::kNsPerMs) + " ms";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f ms", static_cast<double>(t) / static_cast<double>(sim::kNsPerMs));
  return buf;
}

}  // namespace

std::string incomplete_run(const Scenario& scenario, const RunResult& result) {
  if (stopped_by_limit(result.stop_reason)) return std::string(stop_reason_name(result.stop_reason));
  if (result.end_time < scenario.warmup) return "before_warmup";
  if (result.generated == 0) return "no_job_measured";
  return "";
}

std::string incomplete_run_warning(const Scenario& scenario, const RunResult& result) {
  const std::string why = incomplete_run(scenario, result);
  if (why == "before_warmup")
    return "the run ended at " + format_ms(result.end_time) + ", before warmup_ms (" + format_ms(scenario.warmup) +
           "): it measured nothing (every outcome is 0, the rates and utilisation mean nothing); lower warmup_ms or run longer";
  if (why == "no_job_measured")
    return "no job was created after warmup_ms (" + format_ms(scenario.warmup) +
           "): the run measured nothing, every outcome is 0";
  return "run stopped early (" + why + "): see limits in the README";
}

po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& opts,
                                     const po::positional_options_description& positional) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ScenarioError(e.what());
  }
  return vm;
}

Scenario load_command_scenario(const po::variables_map& vm, const char* command) {
  if (!vm.count("scenario")) throw ScenarioError(command, "a scenario file", "nothing");
  return load_scenario_file(vm["scenario"].as<std::string>(), option_list(vm, "set"));
}

std::vector<std::string> option_list(const po::variables_map& vm, const char* name) {
  return vm.count(name) ? vm[name].as<std::vector<std::string>>() : std::vector<std::string>{};
}

std::uint64_t parse_count(const std::string& option, const std::string& text, std::uint64_t min) {
  std::uint64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || v < min)
    throw ScenarioError(option, "an integer >= " + std::to_string(min), "\"" + text + "\"");
  return v;
}

int cmd_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "usage:\n"
      "  brokersim run SCENARIO.json [--json] [--seed N] [--replication R] [--set PATH=VALUE ...]\n"
      "                [--trace jobs.csv] [--timeseries series.csv] [--compare-analytic] [--progress]\n"
      "                [--precision REL] [--precision-abs A] [--precision-metric NAME ...] [--max-replications N]\n"
      "\n"
      "options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("json", "print the result as one JSON object instead of the summary table")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replication", po::value<std::string>(), "replication number (selects independent random streams)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key (repeatable)")
      ("trace", po::value<std::string>(), "write one CSV row per job to this file")
      ("timeseries", po::value<std::string>(), "write the observe.every_ms time series to this CSV file")
      ("compare-analytic", "also print the exact queueing model's values beside the simulated ones, where one fits")
      ("progress", "report progress on stderr (every ~4 million events)");
  add_precision_options(opts, true);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const po::variables_map vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    out << opts << '\n';
    return 0;
  }
  Scenario scenario = load_command_scenario(vm, "run");
  if (vm.count("seed")) scenario.seed = parse_count("--seed", vm["seed"].as<std::string>(), 0);
  if (vm.count("replication")) scenario.replication = parse_count("--replication", vm["replication"].as<std::string>(), 0);
  if (const auto rule = read_precision_options(vm, kMinSequentialReplications)) {
    // Replications 0..R-1 are chosen by the rule: one trace or series, or one replication
    // number, would describe none of them.
    for (const char* o : {"trace", "timeseries", "replication", "compare-analytic"})
      if (vm.count(o)) throw ScenarioError(std::string("--") + o, "no --precision beside it (a single run's option)", "both");
    for (const auto& w : scenario_warnings(scenario)) err << "brokersim: warning: " << w << '\n';
    return run_with_precision(scenario, *rule, vm.count("json") > 0, out, err);
  }
  if (vm.count("timeseries") && !scenario.observe_every)
    throw ScenarioError("--timeseries needs observe.every_ms in the scenario (e.g. --set observe.every_ms=1000)");

  // Every file named must be distinct before anything is written: a trace over the scenario, or two
  // outputs into one file, would destroy what was there.
  std::vector<NamedPath> inputs{{"the scenario file", vm["scenario"].as<std::string>()}};
  for (std::size_t i = 0; i < scenario.producers.size(); ++i)
    if (scenario.producers[i].arrivals.kind == ArrivalSpec::Kind::Trace)
      inputs.push_back({"producers." + std::to_string(i) + ".arrivals.trace_csv", scenario.producers[i].arrivals.trace_path});
  std::vector<NamedPath> outputs;
  if (vm.count("trace")) outputs.push_back({"--trace", vm["trace"].as<std::string>()});
  if (vm.count("timeseries")) outputs.push_back({"--timeseries", vm["timeseries"].as<std::string>()});
  check_distinct_files(outputs, inputs);
  // "-" shares stdout with the summary, which then follows the CSV; --json would no longer parse.
  for (const auto& o : outputs)
    if (is_standard_output(o.path) && vm.count("json"))
      throw ScenarioError(o.role, "a file (stdout carries the --json object)", "\"" + o.path + "\"");

  std::optional<OutputFile> trace, series;
  RunOptions options;
  if (vm.count("trace")) {
    trace.emplace(vm["trace"].as<std::string>(), &out);
    trace->stream() << kTraceHeader << '\n';
    options.trace = &trace->stream();
  }
  if (vm.count("timeseries")) {
    series.emplace(vm["timeseries"].as<std::string>(), &out);
    options.timeseries = &series->stream();
  }
  if (vm.count("progress")) options.progress = &err;
  // Likely unit mistakes: said before the run, which still goes ahead (exit status unchanged).
  for (const auto& w : scenario_warnings(scenario)) err << "brokersim: warning: " << w << '\n';
  const RunResult result = simulate_with_warmup(scenario, options);
  if (trace) trace->commit();
  if (series) series->commit();

  if (vm.count("json")) {
    nlohmann::ordered_json j = result_json(scenario, result);
    if (vm.count("compare-analytic")) j["analytic"] = compare_analytic_json(scenario, result);
    out << j.dump(2) << '\n';
  } else {
    print_summary(out, scenario, result);
    if (vm.count("compare-analytic")) print_compare_analytic(out, scenario, result);
  }

  if (!incomplete_run(scenario, result).empty()) {
    err << "brokersim: warning: " << incomplete_run_warning(scenario, result) << '\n';
    return 3;
  }
  return 0;
}

int cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (args.empty()) {
      err << kUsage;
      return 2;
    }
    const std::string& cmd = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      out << kUsage;
      return 0;
    }
    if (cmd == "--version") {
      out << "brokersim " << BROKERSIM_VERSION << '\n';
      return 0;
    }
    if (cmd == "run") return cmd_run(rest, out, err);
    if (cmd == "sweep") return cmd_sweep(rest, out, err);
    if (cmd == "merge") return cmd_merge(rest, out, err);
    if (cmd == "plan") return cmd_plan(rest, out, err);
    if (cmd == "metrics") return cmd_metrics(rest, out, err);
    if (cmd == "analytic") return cmd_analytic(rest, out, err);
    err << "brokersim: unknown command \"" << cmd << "\"\n\n" << kUsage;
    return 2;
  } catch (const ScenarioError& e) {
    err << "brokersim: error: " << e.what() << '\n';
    return 2;
  } catch (const InvariantError& e) {
    err << "brokersim: internal error (please report): " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    err << "brokersim: error: " << e.what() << '\n';
    return 2;
  }
}

}  // namespace brokersim
