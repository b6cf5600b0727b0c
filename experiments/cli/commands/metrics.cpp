// brokersim metrics: the metric names of a scenario, as sweep's columns and plan's targets use them.
#include <ostream>

#include <boost/program_options.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "models/scenario.hpp"

namespace po = boost::program_options;

namespace brokersim {

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
  const auto vm = parse_scenario_command(args, opts, out);
  if (!vm) return 0;
  const Scenario s = load_command_scenario(*vm, "metrics");
  for (const auto& name : metric_names(s)) out << name << '\n';
  (void)err;
  return 0;
}

}  // namespace brokersim
