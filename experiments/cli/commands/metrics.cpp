// brokersim metrics: the metric names of a scenario, as sweep's columns and plan's targets use them.
#include <ostream>

#include <boost/program_options.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/metrics/registry.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "models/scenario.hpp"

namespace po = boost::program_options;

namespace brokersim {

int cmd_metrics(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts(
      "usage:\n"
      "  brokersim metrics SCENARIO.json [--set PATH=VALUE ...] [--describe]\n\n"
      "Prints every metric name of the scenario, one per line: the names --target and --cost of\n"
      "`brokersim plan` take, and the NAME_mean / NAME_ci95 columns of `brokersim sweep` (queue\n"
      "metrics depend on the scenario's queues, hence the scenario). plan also takes slots_total\n"
      "and the varied paths; --cost any numeric scenario path. --describe adds, tab-separated, each\n"
      "metric's unit and what it counts.");
  opts.add_options()
      ("help,h", "show this help")
      ("describe", "name<TAB>unit<TAB>what it counts, one metric per line")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)");
  const auto vm = parse_scenario_command(args, opts, out);
  if (!vm) return 0;
  const Scenario s = load_command_scenario(*vm, "metrics");
  if (vm->count("describe") == 0) {
    for (const auto& name : metric_names(s)) out << name << '\n';
    return 0;
  }
  // Window metrics (windows.K.NAME) are named per window; they are described once, as windows.K.NAME.
  const MetricRegistry registry(s);
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const RunMetric& m = registry.metric(i);
    out << m.name << '\t' << m.unit << '\t' << m.counts << '\n';
  }
  if (s.observe_window)
    for (const WindowMetric& m : window_metrics()) out << "windows.K." << m.name << '\t' << m.unit << '\t' << m.counts << '\n';
  (void)err;
  return 0;
}

}  // namespace brokersim
