// Command-line parsing shared by every brokersim subcommand, so that every option error reads
// the same way and exits with status 2 (a ScenarioError, like any other invalid input).
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace brokersim {

// Parse `args` against `opts`; any Boost.Program_options error becomes a ScenarioError.
boost::program_options::variables_map parse_command_line(
    const std::vector<std::string>& args, const boost::program_options::options_description& opts,
    const boost::program_options::positional_options_description& positional);

// A one-scenario command's options (SCENARIO.json is the positional "scenario"). With --help the
// help is printed on `out` (`about`, when given, ahead of the options) and nullopt returned.
std::optional<boost::program_options::variables_map> parse_scenario_command(
    const std::vector<std::string>& args, const boost::program_options::options_description& opts,
    std::ostream& out, const char* about = nullptr);

// The values of a repeatable string option (empty when not given).
std::vector<std::string> option_list(const boost::program_options::variables_map& vm, const char* name);

// Bounded work: at most this many replications per point (--replications), and at most this many
// runs in all (grid points x replications): beyond either, the tasks alone would not fit in memory.
inline constexpr std::uint64_t kMaxReplications = 1'000'000;
inline constexpr std::uint64_t kMaxGridRuns = 10'000'000;

// An unsigned integer option >= min: "OPTION: expected an integer >= MIN, got "TEXT"". The option
// --replications is also bounded above by kMaxReplications, in every command that reads it here.
std::uint64_t parse_count(const std::string& option, const std::string& text, std::uint64_t min);

// ScenarioError naming --replications when points x replications > kMaxGridRuns.
void check_grid_runs(std::uint64_t points, std::uint64_t replications);

struct Scenario;

// The scenario a one-scenario command names (its positional SCENARIO.json, after its --set
// overrides); "COMMAND: expected a scenario file, got nothing" without one.
Scenario load_command_scenario(const boost::program_options::variables_map& vm, const char* command);

}  // namespace brokersim
