// What the hostile-input tests of fit share (test_fit_hostile.cpp, test_fit_hostile_command.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>
#include <sys/stat.h>
#include "experiments/cli/fit/arrivals.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/fit/mle.hpp"
#include "sim/distribution.hpp"
#include "tests/test_util.hpp"

// A named namespace, not an anonymous one: the test files are compiled several to a unit.
namespace fit_hostile_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
namespace fs = std::filesystem;

inline const std::string kHeader = "enqueued_at,started_at,finished_at\n";

inline std::string reader_error(const std::string& text, const fit::ColumnNames& columns = {},
                         fit::TimeFormat format = fit::TimeFormat::Auto) {
  try {
    fit::read_job_log_text(text, "log.csv", columns, format);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "accepted";
}

inline std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The per-interval busy executions and active workers, the obvious way: each execution walks every
// interval it spans (what fit_fleet did, in time proportional to executions x intervals).
struct NaiveFleet {
  std::vector<double> busy, active;
};
inline NaiveFleet naive_fleet(const fit::JobLog& log, std::int64_t origin, std::int64_t end, std::int64_t interval) {
  const std::int64_t k = (end - origin) / interval + 1;
  NaiveFleet f{std::vector<double>(static_cast<std::size_t>(k), 0.0), std::vector<double>(static_cast<std::size_t>(k), 0.0)};
  std::vector<std::vector<bool>> seen(log.workers.size(), std::vector<bool>(static_cast<std::size_t>(k), false));
  for (const auto& r : log.rows) {
    // An execution without a finish time is left out of the busy and active counts (issue 39: a
    // failed job without one counted as running until the log's end).
    if (r.started == fit::kNoTime || r.finished == fit::kNoTime) continue;
    const std::int64_t fin = r.finished;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int64_t lo = origin + i * interval, hi = lo + interval;
      const std::int64_t overlap = std::min(fin, hi) - std::max(r.started, lo);
      if (overlap > 0) f.busy[static_cast<std::size_t>(i)] += static_cast<double>(overlap) / static_cast<double>(interval);
      // Busy over [started, finished); an instant job counts in its own interval.
      const bool in = (r.started < hi && fin > lo) || (fin == r.started && r.started >= lo && r.started < hi);
      if (in && log.has_worker()) seen[r.worker][static_cast<std::size_t>(i)] = true;
    }
  }
  for (const auto& w : seen)
    for (std::size_t i = 0; i < w.size(); ++i) f.active[i] += w[i];
  return f;
}

}  // namespace fit_hostile_test
