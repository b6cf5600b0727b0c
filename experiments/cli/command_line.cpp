// The command hub: the usage text and the dispatch to each subcommand (experiments/cli/commands/).
#include "experiments/cli/command_line.hpp"

#include <exception>
#include <ostream>

#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/commands/fit.hpp"
#include "experiments/cli/commands/import.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"

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
    "                [--precision-metric NAME ...] [--max-replications N] [--spread] [--window-columns]\n"
    "  brokersim merge SHARD1.csv SHARD2.csv ... --out results.csv\n"
    "  brokersim plan SCENARIO.json [--vary PATH=LIST ...] --target 'EXPR<=VALUE' ... [--cost EXPR]\n"
    "                [--bisect PATH|none] [--conservative] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--json] [--progress]\n"
    "                [--precision REL] [--precision-abs A] [--max-replications N] [--headroom]\n"
    "                [--stage-dir DIR --tasks N]\n"
    "  brokersim plan --run-task DIR [--task K/N | --task-count N] [--threads T]\n"
    "  brokersim metrics SCENARIO.json [--set PATH=VALUE ...] [--describe]\n"
    "  brokersim analytic SCENARIO.json [--json] [--set PATH=VALUE ...]\n"
    "  brokersim analytic --validate [--replications R] [--jobs N]\n"
    "                [--precision REL] [--precision-abs A] [--max-replications N]\n"
    "  brokersim analytic --coverage SEEDS [--quantiles | --skew | --warmup] [--jobs N] [--replications R | --precision REL ...]\n"
    "  brokersim fit LOG.csv [--out fitted.json] [--columns FIELD=NAME,...] [--time-unit auto|iso|s|ms]\n"
    "                [--interval DURATION] [--skew-tolerance DURATION] [--days] [--parameter-uncertainty]\n"
    "                [--into SCENARIO.json [--into-queue NAME]]\n"
    "                [--check SCENARIO.json] [--check-tolerance 10%,20ms] [--replications R] [--seed N]\n"
    "  brokersim import FILE [--out SCENARIO.json]\n"
    "  brokersim --help | --version\n"
    "\n"
    "Run `brokersim COMMAND --help` for a command's options.\n";

}  // namespace

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
    if (cmd == "fit") return cmd_fit(rest, out, err);
    if (cmd == "import") return cmd_import(rest, out, err);
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
