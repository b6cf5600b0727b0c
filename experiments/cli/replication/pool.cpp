#include "experiments/cli/replication/pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <ostream>
#include <thread>
#include <unordered_map>

#include "experiments/cli/options.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/replication/run_checks.hpp"
#include "experiments/cli/replication/warmup.hpp"
#include "models/metrics.hpp"

namespace brokersim {

std::vector<std::vector<double>> run_tasks(const std::vector<RunTask>& tasks, unsigned threads,
                                           const std::vector<std::string>& names,
                                           const TaskDone& on_done,
                                           TaskRunStats* stats) {
  std::vector<std::vector<double>> rows(tasks.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::exception_ptr failure;
  std::size_t limited_runs = 0, empty_runs = 0;
  if (stats) stats->incomplete.assign(tasks.size(), std::string());
  // Each point's columns are lined up once, before any run; a run then only reads its numbers.
  std::unordered_map<std::string, std::size_t> column_of;
  for (std::size_t k = 0; k < names.size(); ++k) column_of.emplace(names[k], k);
  std::unordered_map<const Scenario*, std::size_t> point_of;
  std::vector<PointColumns> points;
  std::vector<std::size_t> point(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto [it, fresh] = point_of.emplace(tasks[i].scenario, points.size());
    if (fresh) points.emplace_back(*tasks[i].scenario, names, column_of);
    point[i] = it->second;
  }
  // warmup_ms "auto": each point's cut is chosen once, from its pilot replications, before any of
  // its runs (warmup.hpp); every replication then runs with it.
  std::vector<Scenario> chosen;
  chosen.reserve(points.size());
  std::vector<const Scenario*> scenario_of(points.size(), nullptr);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const Scenario*& sc = scenario_of[point[i]];
    if (sc) continue;
    sc = tasks[i].scenario;
    if (sc->auto_warmup && !sc->auto_warmup->chosen) {
      chosen.push_back(*sc);
      choose_auto_warmup(chosen.back(), threads);
      sc = &chosen.back();
    }
  }

  const auto work = [&] {
    for (;;) {
      if (stop.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= tasks.size()) return;
      try {
        Scenario s = *scenario_of[point[i]];
        s.replication = tasks[i].replication;
        const RunResult r = simulate_with_warmup(s);
        std::vector<double> values;
        points[point[i]].fill(s, r, values);
        rows[i] = std::move(values);
        const std::string why = incomplete_run(s, r);
        std::lock_guard<std::mutex> lock(mu);
        if (stopped_by_limit(r.stop_reason))
          ++limited_runs;
        else if (!why.empty())
          ++empty_runs;
        if (stats) stats->incomplete[i] = why;
        if (stats && stats->pooled_waits) {
          auto& sets = *stats->pooled_waits;
          if (sets.size() <= tasks[i].pool) sets.resize(tasks[i].pool + 1);
          sets[tasks[i].pool].add(tasks[i].replication, r.waits);
        }
        if (on_done) on_done(i, rows);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  const unsigned n = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, threads), tasks.size()));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(n);
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  if (stats) {
    stats->limited += limited_runs;
    stats->measured_nothing += empty_runs;
  }
  return rows;
}

int warn_incomplete_runs(std::ostream& err, const TaskRunStats& stats) {
  if (stats.limited)
    err << "brokersim: warning: " << stats.limited << " run(s) stopped early at a limit: see limits in the README\n";
  if (stats.measured_nothing)
    err << "brokersim: warning: " << stats.measured_nothing
        << " run(s) measured nothing: they ended before warmup_ms, or no job was created after warmup_ms\n";
  return stats.limited || stats.measured_nothing ? 3 : 0;
}

unsigned thread_count(const std::optional<std::string>& option) {
  if (option) return static_cast<unsigned>(std::min<std::uint64_t>(parse_count("--threads", *option, 1), 4096));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace brokersim
