// Helpers for tests: build a scenario from JSON text, run it, read the per-job trace back.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "experiments/cli/command_line.hpp"
#include "experiments/cli/outputs/timeseries_csv.hpp"
#include "experiments/cli/outputs/trace_csv.hpp"
#include "experiments/cli/report.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "models/simulation.hpp"

namespace brokersim::test {

// The command line in-process: what a user would see, and the exit status.
struct CliResult {
  int status;
  std::string out, err;
};
inline CliResult run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int status = cli_main(args, out, err);
  return {status, out.str(), err.str()};
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A temporary folder of its own (process id + a counter), removed at the end of the test.
struct ScratchDir {
  std::filesystem::path dir;
  explicit ScratchDir(const std::string& prefix) {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

// A trace time (exact decimal milliseconds, docs/outcomes.md) in ns, so sums are checked exactly.
inline std::int64_t trace_cell_ns(const std::string& cell) {
  const auto dot = cell.find('.');
  std::int64_t v = std::stoll(cell.substr(0, dot)) * 1'000'000;
  if (dot != std::string::npos) {
    std::string frac = cell.substr(dot + 1);
    frac.resize(6, '0');
    v += std::stoll(frac);
  }
  return v;
}

struct TraceRow {
  std::map<std::string, std::string> cells;
  const std::string& operator[](const std::string& k) const { return cells.at(k); }
  double ms(const std::string& k) const { return std::stod(cells.at(k)); }
  bool empty(const std::string& k) const { return cells.at(k).empty(); }
};

struct Run {
  Scenario scenario;
  RunResult result;
  std::vector<TraceRow> trace;
  std::vector<std::map<std::string, double>> series;
  nlohmann::ordered_json json() const { return result_json(scenario, result); }
  std::uint64_t outcome(Outcome o) const { return result.outcomes[static_cast<std::size_t>(o)]; }
  const QueueResult& queue(const std::string& name) const {
    for (const auto& q : result.queues)
      if (q.name == name) return q;
    throw std::runtime_error("no queue " + name);
  }
};

// Windows of 1 s over 3 s with one consumer, one slot, prefetch 1, service 50 ms, deadline 120 ms:
// three jobs in the first second all finish on time; a burst of five at 1000 ms: two on time, one
// late (admitted with 20 ms left), two stale before they start; nothing in the third second (the
// window tests, plan's window targets and their margins).
inline constexpr const char* kWindowBurst = R"({"name": "windows", "stop": {"time_ms": 3000},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 100, 200, 1000, 1000, 1000, 1000, 1000]},
                 "deadline_ms": 120, "service_ms": 50}],
  "consumers": [{"queue": "work", "prefetch": 1}],
  "observe": {"window_ms": 1000}})";

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

inline Run run_scenario(const std::string& json_text, const std::vector<std::string>& sets = {}) {
  nlohmann::json doc = parse_json_text(json_text, "test");
  for (const auto& s : sets) apply_set(doc, s);
  Run run{load_scenario(doc, "."), {}, {}, {}};
  std::ostringstream trace, series;
  trace << kTraceHeader << '\n';
  RunOptions opt;
  TraceCsv trace_writer(trace, run.scenario);
  TimeseriesCsv series_writer(series);
  opt.job_observer = &trace_writer;
  if (run.scenario.observe_every) opt.state_observer = &series_writer;
  run.result = simulate(run.scenario, opt);

  std::istringstream tin(trace.str());
  std::string line;
  std::getline(tin, line);
  const auto header = split_csv_line(line);
  while (std::getline(tin, line)) {
    const auto cells = split_csv_line(line);
    TraceRow row;
    for (std::size_t i = 0; i < header.size(); ++i) row.cells[header[i]] = i < cells.size() ? cells[i] : "";
    run.trace.push_back(row);
  }
  std::istringstream sin(series.str());
  if (std::getline(sin, line)) {
    const auto cols = split_csv_line(line);
    while (std::getline(sin, line)) {
      const auto cells = split_csv_line(line);
      std::map<std::string, double> row;
      for (std::size_t i = 0; i < cols.size(); ++i) row[cols[i]] = std::stod(cells.at(i));
      run.series.push_back(row);
    }
  }
  return run;
}

}  // namespace brokersim::test
