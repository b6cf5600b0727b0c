#include "experiments/cli/fit/check.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <streambuf>
#include <string_view>
#include <system_error>

#include "experiments/cli/fit/mle.hpp"
#include "experiments/cli/outputs/trace_csv.hpp"
#include "experiments/cli/report.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/text.hpp"
#include "models/simulation.hpp"

namespace brokersim::fit {

namespace {

// At most this many waits per sample in the distance computations: quantiles of the full sample
// (the distance moves by at most 1/kThin).
constexpr std::size_t kThin = 100'000;

std::vector<double> thinned(const std::vector<double>& sorted) {
  if (sorted.size() <= kThin) return sorted;
  std::vector<double> out;
  out.reserve(kThin);
  for (std::size_t i = 0; i < kThin; ++i)
    out.push_back(sorted[static_cast<std::size_t>((static_cast<double>(i) + 0.5) / kThin * static_cast<double>(sorted.size()))]);
  return out;
}

// The run's --trace, read as it is written: per queue name, published -> started in ms.
class TraceWaits : public std::streambuf {
 public:
  std::map<std::string, std::vector<double>> waits;
  void flush_all() {
    process(true);
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) buffer_ += static_cast<char>(c);
    if (buffer_.size() > (1 << 20)) process(false);
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    buffer_.append(s, static_cast<std::size_t>(n));
    if (buffer_.size() > (1 << 20)) process(false);
    return n;
  }

 private:
  void process(bool all) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t nl = buffer_.find('\n', start);
      if (nl == std::string::npos) break;
      line(std::string_view(buffer_).substr(start, nl - start));
      start = nl + 1;
    }
    if (all && start < buffer_.size()) {
      line(std::string_view(buffer_).substr(start));
      start = buffer_.size();
    }
    buffer_.erase(0, start);
  }
  void line(std::string_view text) {
    std::vector<std::string_view> cells;
    for (std::size_t s = 0;;) {
      const std::size_t c = text.find(',', s);
      cells.push_back(text.substr(s, c == std::string_view::npos ? std::string_view::npos : c - s));
      if (c == std::string_view::npos) break;
      s = c + 1;
    }
    if (!header_) {
      header_ = true;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == "queue") queue_ = i;
        if (cells[i] == "published_ms") published_ = i;
        if (cells[i] == "started_ms") started_ = i;
      }
      return;
    }
    if (cells.size() <= std::max({queue_, published_, started_})) return;
    if (cells[published_].empty() || cells[started_].empty()) return;
    waits[std::string(cells[queue_])].push_back(number(cells[started_]) - number(cells[published_]));
  }
  // The trace is the program's own output: a cell that is not a number is a bug, not an input error.
  static double number(std::string_view cell) {
    double x = 0;
    const auto r = std::from_chars(cell.data(), cell.data() + cell.size(), x);
    if (r.ec != std::errc() || r.ptr != cell.data() + cell.size())
      throw InvariantError("fit --check: the simulated trace has \"" + std::string(cell) + "\" where a time in ms belongs");
    return x;
  }
  std::string buffer_;
  bool header_ = false;
  std::size_t queue_ = 0, published_ = 0, started_ = 0;
};

struct Spread {
  double mean = 0, sd = 0;
};
Spread spread(const std::vector<double>& v) {
  Spread s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.sd += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(s.sd / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

std::string ms(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f ms", x);
  return buf;
}

}  // namespace

double sorted_quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double rank = std::max(1.0, std::ceil(q * static_cast<double>(sorted.size()) - 1e-9));
  return sorted[static_cast<std::size_t>(std::min(rank, static_cast<double>(sorted.size()))) - 1];
}

namespace {

// max_events scaled from the jobs created to the log's jobs, with half again for the settling.
std::uint64_t events_needed(std::uint64_t max_events, std::uint64_t created, std::size_t jobs) {
  const double need = static_cast<double>(max_events) / static_cast<double>(std::max<std::uint64_t>(created, 1)) *
                      static_cast<double>(std::max<std::size_t>(jobs, 1)) * 1.5;
  const double ceiling = 1e19;  // below the largest uint64
  return static_cast<std::uint64_t>(std::min(std::ceil(need / 1000) * 1000, ceiling));
}

// The two-sample Kolmogorov-Smirnov distance with each value allowed to move by the tolerance t(v)
// (the larger of rel x v and abs): sup over x of F_a(x) - G_b(x) and the same with a and b
// swapped, where G_b(x) counts the b within tolerance of being at or below x: b <= x + t(x) or
// b - t(b) <= x (the larger of the two counts: a lower bound on their union, so the distance is
// never understated). A relative tolerance moves a zero wait by nothing, so t(b) of the larger value
// matters. With no tolerance it is the plain distance. Both samples sorted; O(n log n).
double ks_tolerant(const std::vector<double>& a, const std::vector<double>& b, double rel, double abs) {
  if (a.empty() || b.empty()) return std::nan("");
  const auto tol = [&](double v) { return std::max(rel * std::fabs(v), abs); };
  const auto one_way = [&](const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> lowered(y.size());
    for (std::size_t i = 0; i < y.size(); ++i) lowered[i] = y[i] - tol(y[i]);
    std::sort(lowered.begin(), lowered.end());
    double d = 0;
    const double nx = static_cast<double>(x.size()), ny = static_cast<double>(y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (i + 1 < x.size() && x[i + 1] == x[i]) continue;  // F_x at the last of equal values
      const auto up = static_cast<double>(std::upper_bound(y.begin(), y.end(), x[i] + tol(x[i])) - y.begin());
      const auto down = static_cast<double>(std::upper_bound(lowered.begin(), lowered.end(), x[i]) - lowered.begin());
      d = std::max(d, static_cast<double>(i + 1) / nx - std::max(up, down) / ny);
    }
    return d;
  };
  return std::max(one_way(a, b), one_way(b, a));
}

// Why a replication stopped at a limit gives no verdict, and what to change.
std::string no_verdict(const Scenario& scenario, const RunResult& run, std::size_t replication, const CheckOptions& options) {
  const std::string jobs = "after creating " + grouped(run.generated) + " of the log's " + grouped(options.jobs) + " jobs";
  const std::string head = "replication " + std::to_string(replication) + " stopped at ";
  switch (run.stop_reason) {
    case StopReason::MaxEvents:
      return head + "limits.max_events (" + grouped(scenario.limits.max_events) + " events) " + jobs +
             ", so its waits cover only part of the log's span: raise limits.max_events in " + options.scenario_path +
             " (to about " + grouped(events_needed(scenario.limits.max_events, run.generated, options.jobs)) +
             ", what the log's jobs need at the rate events went, and then some) and check again";
    case StopReason::MaxInSystem:
      return head + "limits.max_in_system (" + grouped(scenario.limits.max_in_system) + " jobs at once) " + jobs +
             ", so its waits cover only part of the log's span: jobs pile up in your scenario (a fleet too small for "
             "the log's arrivals?); raise limits.max_in_system in " + options.scenario_path + " if that is what you mean";
    default:
      return head + std::string(stop_reason_name(run.stop_reason)) + " (more than 50 million events at one simulated instant: "
             "time stopped moving) " + jobs + "; no limit can be raised for this: the scenario loops at one instant "
             "(e.g. a consumer requeueing an expired job at once)";
  }
}

}  // namespace

CheckResult run_check(const std::vector<CheckQueue>& queues, const CheckOptions& options) {

  CheckResult result;
  result.replications = options.replications;
  nlohmann::json doc = read_json_file(options.scenario_path);
  const std::string file = "--check: " + options.scenario_path;
  if (!doc.is_object()) throw ScenarioError(file, "a JSON object (the scenario)", loader::describe(doc));
  const nlohmann::json& producers = loader::member(doc, "producers");
  if (!producers.is_array() || producers.empty())
    throw ScenarioError(file + ": producers", "a non-empty array of producers", loader::describe(producers));
  // Each producer the fitted workload may take its other keys from is an object: a number or a
  // string there is named as it is, not as a missing key.
  for (std::size_t i = 0; i < producers.size(); ++i)
    if (!producers[i].is_object())
      throw ScenarioError(file + ": " + loader::join("producers", i), "an object (a producer)", loader::describe(producers[i]));
  const nlohmann::json& broker = loader::member(doc, "broker");
  if (!broker.is_object()) throw ScenarioError(file + ": broker", "an object with \"queues\"", loader::describe(broker));
  const nlohmann::json& scenario_queues = loader::member(broker, "queues");
  if (!scenario_queues.is_object() || scenario_queues.empty())
    throw ScenarioError(file + ": broker.queues", "an object of queues", loader::describe(scenario_queues));
  nlohmann::json new_producers = nlohmann::json::array();
  std::vector<std::string> target_names;
  std::vector<std::size_t> source_producer;  // per new producer: the scenario's producer it keeps the keys of
  for (const CheckQueue& q : queues) {
    std::string target;
    if (scenario_queues.contains(q.log_name)) {
      target = q.log_name;
    } else if (queues.size() == 1) {
      const nlohmann::json& first = producers[0];
      if (!first.contains("queue") || !first["queue"].is_string())
        throw ScenarioError(file + ": producers.0.queue", "a queue name", loader::describe(loader::member(first, "queue")));
      target = first["queue"].get<std::string>();
      if (!q.log_name.empty())
        result.notes.push_back("the log's queue " + loader::quoted(q.log_name) + " is not in the scenario: its jobs go to " +
                               loader::quoted(target) + ", the queue of producers.0");
    } else {
      std::string names;
      for (auto it = scenario_queues.begin(); it != scenario_queues.end(); ++it) names += (names.empty() ? "" : ", ") + loader::quoted(it.key());
      throw ScenarioError(file, "a queue named as the log's " + loader::quoted(q.log_name) + " (the log has several queues)",
                          "the queues " + names);
    }
    nlohmann::json producer;
    std::size_t from = 0;
    for (std::size_t p = 0; p < producers.size(); ++p)
      if (producers[p].contains("queue") && producers[p]["queue"] == target) {
        producer = producers[p];
        from = p;
        break;
      }
    if (producer.is_null()) producer = producers[0];
    source_producer.push_back(from);
    producer["queue"] = target;
    producer["arrivals"] = nlohmann::json::parse(q.arrivals.dump());
    producer["service_ms"] = nlohmann::json::parse(q.service.dump());
    new_producers.push_back(producer);
    target_names.push_back(target);
  }
  doc["producers"] = new_producers;
  // Like the log, which goes on recording the jobs enqueued before its end until they start, the
  // runs create the log's number of jobs and let them settle.
  doc["stop"] = {{"jobs", std::max<std::size_t>(options.jobs, 1)}, {"time_ms", 2 * options.span_ms + 3.6e6}};
  doc["warmup_ms"] = 0;
  doc.erase("sweep");
  Scenario scenario;
  try {
    scenario = load_scenario(doc, std::filesystem::path(options.scenario_path).parent_path().string());
  } catch (const ScenarioError& e) {
    // Named in the user's file: producers.N of the run is the scenario's producer it kept the
    // keys of (the fitted arrivals and service times in it were checked when they were fitted).
    std::string what = e.what(), path = e.path;
    if (path.starts_with("producers.")) {
      const std::size_t dot = path.find('.', 10);
      const std::string index = path.substr(10, dot == std::string::npos ? std::string::npos : dot - 10);
      std::size_t n = 0;
      const auto r = std::from_chars(index.data(), index.data() + index.size(), n);
      if (r.ec == std::errc() && r.ptr == index.data() + index.size() && n < source_producer.size()) {
        const std::string mapped = loader::join("producers", source_producer[n]) +
                                   (dot == std::string::npos ? "" : path.substr(dot));
        what = mapped + what.substr(std::min(what.size(), path.size())) + " (with the log's queue " +
               loader::quoted(queues[n].log_name.empty() ? target_names[n] : queues[n].log_name) + "'s fitted workload)";
        path = mapped;
      }
    }
    throw ScenarioError(file + ": " + what);
  }
  if (options.seed) scenario.seed = *options.seed;
  for (std::size_t i = 0; i < queues.size(); ++i) {
    if (!queues[i].replay) continue;
    ArrivalSpec a;
    a.kind = ArrivalSpec::Kind::Trace;
    a.trace_path = "the log's arrivals";
    a.trace.reserve(queues[i].arrivals_ns.size());
    for (std::int64_t t : queues[i].arrivals_ns) a.trace.push_back({t, std::nullopt, std::nullopt});
    scenario.producers[i].arrivals = std::move(a);
    result.notes.push_back("queue " + loader::quoted(target_names[i]) +
                           ": the log's arrivals are not Poisson, so its own arrival times are replayed");
  }

  // Per queue: every replication's sorted waits (thinned) and statistics.
  const std::size_t nq = queues.size();
  std::vector<std::vector<std::vector<double>>> sims(nq);
  std::vector<std::vector<std::array<double, 4>>> stats(nq);
  std::vector<double> started(nq, 0);
  for (std::size_t r = 0; r < options.replications; ++r) {
    scenario.replication = r;
    TraceWaits waits;
    std::ostream trace(&waits);
    TraceCsv trace_writer(trace, scenario);
    RunOptions run_options;
    run_options.job_observer = &trace_writer;
    trace << kTraceHeader << '\n';
    const RunResult run = simulate(scenario, run_options);
    trace.flush();
    waits.flush_all();
    if (stopped_by_limit(run.stop_reason)) {
      // Its waits cover the part of the span before the limit: compared with the whole log's, they
      // say nothing (250 of 3,572 jobs can "match"). No verdict, and no more replications.
      result.no_verdict = no_verdict(scenario, run, r, options);
      result.stopped_by = std::string(stop_reason_name(run.stop_reason));
      return result;
    }
    for (std::size_t i = 0; i < nq; ++i) {
      std::vector<double>& w = waits.waits[target_names[i]];
      std::sort(w.begin(), w.end());
      started[i] += static_cast<double>(w.size());
      double mean = 0;
      for (double x : w) mean += x;
      mean = w.empty() ? 0 : mean / static_cast<double>(w.size());
      stats[i].push_back({mean, sorted_quantile(w, 0.5), sorted_quantile(w, 0.95), sorted_quantile(w, 0.99)});
      sims[i].push_back(thinned(w));
    }
  }

  const double t = t975(static_cast<double>(options.replications) - 1);
  static constexpr const char* kNames[] = {"mean", "p50", "p95", "p99"};
  double worst_ratio = 0;
  result.tol_rel = options.tol_rel;
  result.tol_abs_ms = options.tol_abs_ms;
  for (std::size_t i = 0; i < nq; ++i) {
    CheckQueueResult q;
    q.log_name = queues[i].log_name;
    q.scenario_queue = target_names[i];
    const std::vector<double>& lw = queues[i].log_waits_ms;
    q.log_n = lw.size();
    q.sim_n = started[i] / static_cast<double>(options.replications);
    double log_mean = 0;
    for (double x : lw) log_mean += x;
    log_mean = lw.empty() ? 0 : log_mean / static_cast<double>(lw.size());
    const double log_values[4] = {log_mean, sorted_quantile(lw, 0.5), sorted_quantile(lw, 0.95), sorted_quantile(lw, 0.99)};
    const std::string where = queues.size() > 1 || !q.log_name.empty() ? " (queue " + loader::quoted(q.scenario_queue) + ")" : "";
    for (int m = 0; m < 4; ++m) {
      std::vector<double> v;
      for (const auto& s : stats[i]) v.push_back(s[static_cast<std::size_t>(m)]);
      const Spread sp = spread(v);
      CheckMetric metric;
      metric.name = kNames[m];
      metric.log = log_values[m];
      metric.sim_mean = sp.mean;
      const double n = static_cast<double>(v.size());
      const double half_ci = std::isfinite(t) ? t * sp.sd / std::sqrt(n) : 0;
      const double half_pi = std::isfinite(t) ? t * sp.sd * std::sqrt(1 + 1 / n) : 0;
      metric.ci_lo = std::max(0.0, sp.mean - half_ci);
      metric.ci_hi = sp.mean + half_ci;
      metric.pi_lo = std::max(0.0, sp.mean - half_pi);  // a wait is never negative
      metric.pi_hi = sp.mean + half_pi;
      // Waits are printed to 0.1 ms: a difference below that is no mismatch.
      metric.match = metric.log >= metric.pi_lo - 0.05 && metric.log <= metric.pi_hi + 0.05;
      metric.diff = metric.log - sp.mean;
      metric.diff_lo = metric.diff - half_pi;
      metric.diff_hi = metric.diff + half_pi;
      metric.tolerance = std::max(options.tol_rel * std::fabs(metric.log), options.tol_abs_ms);
      metric.verdict = metric.match ? Verdict::Matches
                       : std::fabs(metric.diff) <= metric.tolerance ? Verdict::DiffersSlightly
                                                                     : Verdict::DoesNotMatch;
      if (!metric.match) {
        const bool above = metric.log > metric.pi_hi;
        const std::string sentence =
            metric.name + " wait" + where + ": the log's " + ms(metric.log) + " is " + (above ? "above" : "below") +
            " what the model gives (" + ms(sp.mean) + " on average, 95% of runs between " + ms(metric.pi_lo) + " and " +
            ms(metric.pi_hi) + "), a difference of " + ms(metric.diff) + " (" + ms(metric.diff_lo) + " .. " +
            ms(metric.diff_hi) + ")" +
            (metric.verdict == Verdict::DiffersSlightly
                 ? ", within the tolerance of " + ms(metric.tolerance) + ": it differs slightly"
                 : ", beyond the tolerance of " + ms(metric.tolerance) + ": the model's waits are too " +
                       (above ? "short" : "long") + " there");
        (metric.verdict == Verdict::DiffersSlightly ? q.slight : q.mismatches).push_back(sentence);
        // The first to fail: the farthest beyond its tolerance.
        const double ratio = std::fabs(metric.diff) / std::max(metric.tolerance, 1e-9);
        if (ratio > worst_ratio) {
          worst_ratio = ratio;
          result.fails_first = sentence;
        }
      }
      q.metrics.push_back(metric);
    }
    // Distances: log vs each replication, and each pair of replications.
    const std::vector<double> log_thin = thinned(lw);
    std::vector<double> dl, ds;
    std::vector<double> dt;
    for (const auto& s : sims[i]) {
      dl.push_back(ks_distance_two_sample(log_thin, s));
      dt.push_back(ks_tolerant(log_thin, s, options.tol_rel, options.tol_abs_ms));
    }
    dt.erase(std::remove_if(dt.begin(), dt.end(), [](double x) { return std::isnan(x); }), dt.end());
    if (!dt.empty()) q.ks_log_tolerant = spread(dt).mean;
    for (std::size_t a = 0; a < sims[i].size(); ++a)
      for (std::size_t b = a + 1; b < sims[i].size(); ++b) ds.push_back(ks_distance_two_sample(sims[i][a], sims[i][b]));
    dl.erase(std::remove_if(dl.begin(), dl.end(), [](double x) { return std::isnan(x); }), dl.end());
    ds.erase(std::remove_if(ds.begin(), ds.end(), [](double x) { return std::isnan(x); }), ds.end());
    std::sort(dl.begin(), dl.end());
    std::sort(ds.begin(), ds.end());
    if (!dl.empty()) {
      q.ks_log_mean = spread(dl).mean;
      q.ks_log_min = dl.front();
      q.ks_log_max = dl.back();
    }
    if (!ds.empty()) {
      q.ks_sim_median = sorted_quantile(ds, 0.5);
      q.ks_sim_p95 = sorted_quantile(ds, 0.95);
      q.ks_match = q.ks_log_mean <= q.ks_sim_p95;
      q.ks_verdict = q.ks_match ? Verdict::Matches
                     : q.ks_log_tolerant <= q.ks_sim_p95 ? Verdict::DiffersSlightly
                                                         : Verdict::DoesNotMatch;
      if (!q.ks_match) {
        char buf[600];
        std::snprintf(buf, sizeof buf,
                      "the distribution of waits%s: the log's is %.3f away from the simulated ones (Kolmogorov-Smirnov "
                      "distance, mean over replications), more than two runs of the model differ (95%% of pairs within %.3f); "
                      "with each wait allowed to move by the tolerance (%s) it is %.3f away: %s",
                      where.c_str(), q.ks_log_mean, q.ks_sim_p95, describe_tolerance(options.tol_rel, options.tol_abs_ms).c_str(),
                      q.ks_log_tolerant, q.ks_verdict == Verdict::DiffersSlightly ? "it differs slightly" : "it does not match");
        (q.ks_verdict == Verdict::DiffersSlightly ? q.slight : q.mismatches).push_back(buf);
        if (result.fails_first.empty() && q.ks_verdict == Verdict::DoesNotMatch) result.fails_first = buf;
      }
    } else if (q.log_n == 0 || q.sim_n == 0) {
      q.ks_match = q.log_n == 0 && q.sim_n == 0;
      if (!q.ks_match)
        q.mismatches.push_back("waits" + where + ": " + (q.log_n == 0 ? "the log has no started job, the model has"
                                                                      : "the model started no job, the log has " + std::to_string(q.log_n)));
    }
    if (!q.mismatches.empty()) {
      result.match = false;
      result.verdict = Verdict::DoesNotMatch;
    } else if (!q.slight.empty() && result.verdict == Verdict::Matches) {
      result.verdict = Verdict::DiffersSlightly;
    }
    result.queues.push_back(std::move(q));
  }
  return result;
}

}  // namespace brokersim::fit
