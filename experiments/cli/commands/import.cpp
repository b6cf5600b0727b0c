// `brokersim import FILE`: recognise the file's format from its content, read it into a broker
// section with the notes of what is not modelled, put a placeholder workload and fleet around it,
// check that the scenario loads and runs, print the notes on stderr and write the scenario
// (stdout without --out). An error writes nothing.
#include "experiments/cli/commands/import.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>
#include <ostream>

#include "experiments/cli/options.hpp"
#include "experiments/cli/import/common.hpp"
#include "experiments/cli/output_file.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "models/results.hpp"
#include "models/simulation.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

constexpr const char* kSynopsis =
    "usage:\n"
    "  brokersim import FILE [--out SCENARIO.json]\n"
    "\n"
    "FILE is recognised by its content: a RabbitMQ definitions export (rabbitmqctl export_definitions),\n"
    "an ARM template with Microsoft.ServiceBus/namespaces/queues, `az servicebus queue show` or `list`\n"
    "output, `aws sqs get-queue-attributes --attribute-names All` output, or a CloudFormation template\n"
    "(JSON) with AWS::SQS::Queue resources. The scenario has the file's queues, a placeholder workload\n"
    "and fleet, and in `notes` every setting read but not modelled (also printed on stderr).\n"
    "\n"
    "options";

// A value of the file's function app that the framework refuses (a host.json setting out of its
// range, a timeout above the plan's) is the file's error: named at the entry it came from.
void refused_function_app(const import::Imported& imported, const std::string& error) {
  if (!imported.consumer || error.rfind("consumers.0.", 0) != 0) return;
  for (const auto& [key, source] : imported.consumer_sources) {
    const std::string path = "consumers.0.framework." + key;
    if (error.rfind(path, 0) == 0 && error.size() > path.size() && error[path.size()] == ':')
      throw ScenarioError(source + " (the function app's " + key + ", " + path + " in the scenario)" + error.substr(path.size()));
  }
  throw ScenarioError("the function app's settings, as the scenario's consumers.0: " + error);
}

}  // namespace

int cmd_import(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(kSynopsis);
  opts.add_options()("help,h", "show this help")("out", po::value<std::string>(),
                                                 "write the scenario here (default: standard output)");
  po::options_description hidden;
  hidden.add_options()("file", po::value<std::string>(), "the file to import");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("file", 1);
  const po::variables_map vm = parse_command_line(args, all, pos);
  if (vm.count("help")) {
    out << opts << '\n';
    return 0;
  }
  if (!vm.count("file")) throw ScenarioError("import", "a file to import", "nothing");
  const std::string file = vm["file"].as<std::string>();
  const std::string out_path = vm.count("out") ? vm["out"].as<std::string>() : "";
  if (vm.count("out")) {
    if (out_path.empty()) throw ScenarioError("--out", "a file name", "\"\"");
    check_distinct_files({{"--out", out_path}}, {{"the imported file", file}});
  }
  // Opened before the work (a folder, a FIFO nobody reads, a read-only folder fail now); a
  // regular file's partial copy is removed again if the import fails.
  std::optional<OutputFile> file_out;
  if (!out_path.empty()) file_out.emplace(out_path, &out);

  const std::string text = loader::read_text(file, file);
  nlohmann::json doc;
  try {
    doc = parse_json_text(text, file);
  } catch (const ScenarioError& e) {
    import::not_json(text, file, e.what());
  }
  const import::Imported imported = import::import_document(doc, file);
  const import::ojson scenario = import::scenario_of(imported, file);

  // The scenario must load and run: checked here, so that a user never gets one that does not.
  const std::string base_dir =
      out_path.empty() || is_stream_target(out_path) ? "." : std::filesystem::path(out_path).parent_path().string();
  Scenario loaded;
  try {
    loaded = load_scenario(nlohmann::json::parse(scenario.dump()), base_dir);
  } catch (const ScenarioError& e) {
    refused_function_app(imported, e.what());
    throw InvariantError(std::string("brokersim import made a scenario that does not load: ") + e.what());
  }
  loaded.stop_time = sim::from_ms(60000);
  (void)simulate(loaded);

  err << "brokersim import: " << file << ": " << imported.format << ", " << imported.broker["queues"].size()
      << (imported.broker["queues"].size() == 1 ? " queue" : " queues") << ", broker.kind "
      << imported.broker["kind"].get<std::string>() << "\n";
  err << "notes (also in the scenario's \"notes\"):\n";
  for (const auto& n : scenario["notes"]) err << "  - " << n.get<std::string>() << '\n';

  if (out_path.empty()) {
    out << scenario.dump(2) << '\n';
  } else {
    file_out->stream() << scenario.dump(2) << '\n';
    file_out->commit();
    if (!is_standard_output(out_path)) err << "wrote " << out_path << " (loads and runs: checked)\n";
  }
  return 0;
}

}  // namespace brokersim
