#include "experiments/cli/options.hpp"

#include <charconv>
#include <ostream>

#include "experiments/cli/loader/scenario_load.hpp"

namespace po = boost::program_options;

namespace brokersim {

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

std::optional<po::variables_map> parse_scenario_command(const std::vector<std::string>& args,
                                                        const po::options_description& opts, std::ostream& out,
                                                        const char* about) {
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    if (about) out << about << '\n';
    out << opts << '\n';
    return std::nullopt;
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
  if (option == "--replications" && v > kMaxReplications)
    throw ScenarioError(option, "an integer >= " + std::to_string(min) + " and <= " + std::to_string(kMaxReplications),
                        "\"" + text + "\"");
  return v;
}

void check_grid_runs(std::uint64_t points, std::uint64_t replications) {
  if (replications != 0 && points > kMaxGridRuns / replications)
    throw ScenarioError("--replications " + std::to_string(replications) + " over " + std::to_string(points) +
                        " grid points: expected at most " + std::to_string(kMaxGridRuns) +
                        " runs in all (grid points x replications); vary fewer values or run fewer replications");
}

}  // namespace brokersim
