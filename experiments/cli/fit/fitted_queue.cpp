// How fit writes what it fitted to one queue (experiments/cli/fit/fitted_queue.hpp).
#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <system_error>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/fit/check.hpp"
#include "experiments/cli/fit/fitted_queue.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "experiments/cli/text.hpp"

namespace brokersim::fit {

// A queue name brokersim accepts: 1..255 bytes without '.', ',', '"' or control characters.
std::string queue_name(const std::string& raw, std::vector<std::string>& taken) {
  std::string s;
  for (unsigned char c : raw) s += (c < 0x20 || c == 0x7f || c == '.' || c == ',' || c == '"') ? '_' : static_cast<char>(c);
  if (s.size() > 240) s.resize(240);
  if (s.empty()) s = "work";
  std::string name = s;
  for (int i = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++i) name = s + "_" + std::to_string(i);
  taken.push_back(name);
  return name;
}

// A part of a file name from a queue name: no '/' or '\\' (a folder), no control characters,
// no quote (the report prints the name inside a shell's single quotes), no leading '.' (a hidden
// file, or "..": the folder above), at most `max_bytes` bytes (not cutting a UTF-8 character) and
// unique among `taken`.
std::string file_part(const std::string& raw, std::size_t max_bytes, std::vector<std::string>& taken) {
  std::string s;
  for (unsigned char c : raw)
    s += (c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '\'' || c == '"') ? '_' : static_cast<char>(c);
  if (!s.empty() && s.front() == '.') s.front() = '_';
  if (s.empty()) s = "queue";
  const auto cut = [](std::string text, std::size_t n) {
    if (text.size() <= n) return text;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;  // a continuation byte
    return text.substr(0, n);
  };
  std::string name = cut(s, max_bytes);
  for (int i = 2; std::find(taken.begin(), taken.end(), name) != taken.end(); ++i) {
    std::string suffix(1, '_');
    suffix += std::to_string(i);
    name = cut(s, max_bytes - suffix.size()) + suffix;
  }
  taken.push_back(name);
  return name;
}

// Six significant digits: what the fitted scenario shows. Through from_chars, checked: the text is
// our own %.6g of a finite number.
double round6(double x) {
  if (!std::isfinite(x)) return x;
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.6g", x);
  double y = x;
  const auto r = std::from_chars(buf, buf + n, y);
  return r.ec == std::errc() ? y : x;
}

std::string num(double x, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// A time of the log, as the log wrote it (ISO-8601 in UTC, or the number in its unit).
std::string log_time(const fit::JobLog& log, std::int64_t ns) {
  if (log.format == fit::TimeFormat::Iso8601) {
    const std::time_t secs = static_cast<std::time_t>(ns >= 0 ? ns / 1'000'000'000 : (ns - 999'999'999) / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    const long long frac = ns - static_cast<long long>(secs) * 1'000'000'000LL;
    char out[96];
    std::snprintf(out, sizeof out, "%s.%03lldZ", buf, frac / 1'000'000);
    return out;
  }
  if (log.format == fit::TimeFormat::Milliseconds) return sim::format_ms(ns) + " ms";
  return num(static_cast<double>(ns) / 1e9, "%.3f") + " s";
}

void print_days(std::ostream& out, const QueueFit& q, const fit::JobLog& log, std::size_t producer_index, double span_h,
                bool days_mode) {
  const fit::DayFit& d = q.days;
  const std::string path = "producers." + std::to_string(producer_index) + ".volume";
  if (!d.estimable()) {
    out << "  Days: " << d.days.size() << " whole day" << (d.days.size() == 1 ? "" : "s") << " in the log (" << num(span_h, "%.1f")
        << " h): day-to-day variation cannot be estimated from it. Plans over this fit mean copies of the one day fitted; "
           "to plan over days that differ, fit a log of several days, or give "
        << path << ".per_run from what you know (e.g. {\"lognormal\": {\"mean\": 1, \"cv\": 0.15}}; docs/fit.md, "
           "\"Days that differ\")\n";
    return;
  }
  out << "  Days: " << d.days.size() << " whole days";
  if (d.partial > 0) out << " (" << d.partial << " partial left out)";
  out << ", " << num(d.mean_jobs, "%.0f") << " jobs a day on average; day-to-day spread of the volume: ";
  if (d.lognormal)
    out << "cv " << num(d.cv, "%.3f") << " (95% interval " << num(d.cv_lo, "%.3f") << " to " << num(d.cv_hi, "%.3f")
        << ", lognormal over the " << d.days.size() << " days; sample cv " << num(d.sample_cv, "%.3f") << ")\n";
  else
    out << "sample cv " << num(d.sample_cv, "%.3f") << " (a day without jobs: not lognormal, no interval)\n";
  // Every day when there are few; the first and last ten of a longer log.
  for (std::size_t i = 0; i < d.days.size(); ++i) {
    if (d.days.size() > 24 && i == 10) {
      out << "    ... " << d.days.size() - 20 << " more days ...\n";
      i = d.days.size() - 10;
    }
    out << "    day from " << log_time(log, d.days[i].start) << ": " << d.days[i].jobs << " jobs, busiest hour "
        << num(d.days[i].peak_per_s, "%.3g") << " jobs/s\n";
  }
  if (d.lognormal && !days_mode)
    out << "  To plan over days that differ like these (fit --days writes it so), run one day with this spread (each run draws its day's volume):\n"
           "    --set '"
        << path << "={\"per_run\": {\"lognormal\": {\"mean\": 1, \"cv\": " << num(d.cv, "%.3g")
        << "}}}' on a one-day scenario (the fitted schedule replays all " << d.days.size()
        << " days; docs/fit.md, \"Days that differ\")\n";
}

ojson rate_schedule(const fit::ArrivalFit& a) {
  ojson steps = ojson::array();
  for (const auto& s : a.segments) steps.push_back({{"from_ms", s.from_ms}, {"rate_per_s", round6(s.rate_per_s)}});
  return {{"rate_schedule", steps}};
}

// The data the plot script draws: per queue, a histogram of the service times with each fitted
// density on a grid, QQ points per family, the rates with their intervals and the fleet.
ojson plot_data(const std::vector<QueueFit>& queues, const fit::JobLog& log, std::int64_t span) {
  ojson out;
  out["log"] = log.file;
  out["queues"] = ojson::array();
  for (const auto& q : queues) {
    ojson j;
    j["name"] = q.name;
    const auto& sample = q.service.sample;
    const double top = std::max(fit::sorted_quantile(sample, 0.995), 1e-6);
    constexpr int kBins = 60;
    std::vector<double> counts(kBins, 0);
    for (double x : sample)
      if (x <= top) counts[static_cast<std::size_t>(std::min<double>(kBins - 1, std::floor(x / top * kBins)))] += 1;
    ojson edges = ojson::array(), density = ojson::array();
    for (int i = 0; i <= kBins; ++i) edges.push_back(top * i / kBins);
    for (double c : counts) density.push_back(c / (static_cast<double>(sample.size()) * top / kBins));
    j["service"]["histogram"] = {{"edges", edges}, {"density", density}};
    j["service"]["n"] = q.service.n;
    j["service"]["chosen"] = q.service.fits[q.service.chosen].name;
    ojson fits = ojson::array();
    for (const auto& f : q.service.fits) {
      ojson fj{{"name", f.name}, {"syntax", f.syntax}, {"aic", std::isnan(f.aic) ? ojson() : ojson(f.aic)}, {"ks", f.ks}};
      ojson params = ojson::array();
      if (f.family != fit::FittedDistribution::Family::Empirical)
        for (const auto& p : f.params) params.push_back({{"name", p.name}, {"value", p.value}, {"lo95", p.lo}, {"hi95", p.hi}});
      fj["params"] = params;
      ojson xs = ojson::array(), pdf = ojson::array(), qs = ojson::array(), qm = ojson::array();
      if (f.family != fit::FittedDistribution::Family::Empirical) {
        for (int i = 1; i <= 200; ++i) {
          const double x = top * i / 200;
          xs.push_back(x);
          pdf.push_back(f.pdf(x));
        }
      }
      for (int i = 0; i < 200; ++i) {
        const double p = (i + 0.5) / 200;
        qs.push_back(fit::sorted_quantile(sample, p));
        qm.push_back(f.quantile(p));
      }
      fj["x"] = xs;
      fj["pdf"] = pdf;
      fj["qq_sample"] = qs;
      fj["qq_model"] = qm;
      fits.push_back(fj);
    }
    j["service"]["fits"] = fits;
    ojson from = ojson::array(), rate = ojson::array(), lo = ojson::array(), hi = ojson::array();
    for (const auto& s : q.arrivals.steps) {
      from.push_back(s.from_ms);
      rate.push_back(s.rate_per_s);
      lo.push_back(s.lo);
      hi.push_back(s.hi);
    }
    ojson seg_from = ojson::array(), seg_rate = ojson::array();
    for (const auto& s : q.arrivals.segments) {
      seg_from.push_back(s.from_ms);
      seg_rate.push_back(s.rate_per_s);
    }
    j["arrivals"] = {{"interval_ms", sim::to_ms(q.arrivals.interval)}, {"from_ms", from}, {"rate_per_s", rate},
                     {"lo", lo}, {"hi", hi}, {"schedule_from_ms", seg_from}, {"schedule_rate_per_s", seg_rate},
                     {"span_ms", sim::to_ms(span)}, {"poisson", q.arrivals.poisson}, {"verdict", q.arrivals.verdict}};
    j["fleet"] = {{"from_workers", q.fleet.from_workers}, {"active", q.fleet.active}, {"busy", q.fleet.busy}};
    out["queues"].push_back(j);
  }
  return out;
}

void print_fits(std::ostream& out, const QueueFit& q) {
  const auto& s = q.service;
  out << "  Service times (finished - started): " << s.n << " jobs, mean " << num(s.mean) << " ms, cv " << num(s.cv)
      << '\n';
  if (s.zeros > 0)
    out << "    " << s.zeros << " are 0 (below the log's resolution): the parametric fits use the other " << s.n - s.zeros
        << "\n";
  out << "    fit          AIC             KS D     KS p     parameters (95% interval)\n";
  for (std::size_t i = 0; i < s.fits.size(); ++i) {
    const auto& f = s.fits[i];
    std::string params;
    for (const auto& p : f.params) {
      if (!params.empty()) params += ", ";
      if (std::isnan(p.lo)) {
        params += num(p.value, "%.0f") + " " + p.name;
      } else {
        params += p.name + " " + num(p.value) + " (" + num(p.lo) + " .. " + num(p.hi) + ")";
      }
    }
    char buf[128];
    std::snprintf(buf, sizeof buf, "    %-10s %-15s %-8.4f %-8s ", f.name.c_str(),
                  std::isnan(f.aic) ? "-" : num(f.aic, "%.1f").c_str(), f.ks,
                  std::isnan(f.ks_p) ? "-" : num(f.ks_p, "%.2g").c_str());
    out << buf << params << (i == s.chosen ? "   <- chosen" : "") << '\n';
  }
  const auto& c = s.fits[s.chosen];
  out << "    chosen: " << c.name << ", " << s.why << '\n';
  if (c.family != fit::FittedDistribution::Family::Empirical)
    out << "    service_ms: " << c.syntax.dump() << '\n';
  else
    out << "    service_ms: {\"empirical\": [" << c.values.size() << " values]} (in the fitted scenario)\n";
}

void print_arrivals(std::ostream& out, const QueueFit& q, const std::string& why_interval, const std::string& trace_file,
                    std::size_t producer_index, bool days_mode) {
  const auto& a = q.arrivals;
  double lo = a.steps.front().rate_per_s, hi = lo, total = 0, exposure = 0;
  for (const auto& s : a.steps) {
    lo = std::min(lo, s.rate_per_s);
    hi = std::max(hi, s.rate_per_s);
    total += static_cast<double>(s.count);
    exposure += s.exposure_s;
  }
  out << "  Arrivals: " << a.n << " jobs, " << num(total / exposure) << " /s on average, from " << num(lo) << " to "
      << num(hi) << " /s in " << a.steps.size() << " intervals of " << fit::format_interval(a.interval) << " ("
      << why_interval << ")\n    " << (days_mode ? "over the whole log (--days writes the mean day's, below): " : "rate_schedule: ")
      << a.segments.size()
      << (a.segments.size() == 1 ? " step" : " steps") << " (adjacent intervals merged where their rates do not differ at the 0.1% level):";
  for (std::size_t i = 0; i < a.segments.size() && i < 6; ++i)
    out << (i ? ", " : " ") << num(a.segments[i].rate_per_s) << " /s from " << num(a.segments[i].from_ms / 1000, "%.6g") << " s";
  out << (a.segments.size() > 6 ? ", ..." : "") << '\n';
  if (days_mode) {
    // The fitted scenario is the mean day: its own counts judge whether a day's arrivals are
    // Poisson (over the whole log, the day's own peaks make every long interval look bursty), and
    // a trace of the whole log is not a day (days_csv is: print_mean_day says how).
    out << "    the mean day (--days), counted per " << fit::format_interval(q.mean_day.interval) << ": " << q.mean_day.verdict << '\n';
    if (!q.mean_day.poisson)
      out << "    The mean day's rate_schedule will not reproduce a day's arrivals: replay whole days instead (days_csv, below)\n";
    return;
  }
  out << "    " << a.verdict << '\n';
  if (!a.poisson) {
    out << "    The rate_schedule will not reproduce these arrivals: replay the log's own arrival times as a trace";
    if (!trace_file.empty())
      out << ":\n      --set 'producers." << producer_index << ".arrivals={\"trace_csv\": \""
          << std::filesystem::path(trace_file).filename().string() << "\"}'\n";
    else
      out << " (--out writes one beside the fitted scenario)\n";
  }
}

namespace {

std::string in_queue(const QueueFit& q, const fit::JobLog& log) {
  return log.has_queue() ? " in queue " + loader::quoted(q.log_name) : "";
}

}  // namespace

// The chosen service-time fit must be one brokersim draws from (the loader's checks on a
// distribution): a parametric fit it refuses (a gamma or Weibull whose largest draw is beyond
// 1e12 ms) gives way to the empirical distribution, and the report says why. The empirical one
// holds the log's own service times, each at most 1e11 ms (the reader's limit).
void drawable_service(QueueFit& q) {
  fit::ServiceFit& s = q.service;
  const fit::FittedDistribution& chosen = s.fits[s.chosen];
  if (chosen.family == fit::FittedDistribution::Family::Empirical) return;
  try {
    (void)loader::distribution(nlohmann::json::parse(chosen.syntax.dump()), "service_ms", loader::Range::Duration);
  } catch (const ScenarioError& e) {
    s.why = "the best by AIC (" + chosen.name + ") is one brokersim cannot draw from (" + e.what() +
            "): the empirical distribution is used";
    s.chosen = s.fits.size() - 1;  // the empirical, always last
  }
}

// brokersim's limits on a scenario's consumers (over all groups) and on one consumer's slots
// (experiments/cli/loader/consumers.cpp), checked here so that a log beyond them is named by its
// line rather than by the generated scenario's consumers.N.slots.
constexpr std::int64_t kMaxFleet = 1'000'000;

void check_fleet(const std::vector<QueueFit>& queues, const fit::JobLog& log) {
  std::int64_t total = 0;
  for (const auto& q : queues) {
    if (q.fleet.peak > kMaxFleet) {
      const fit::JobRow& row = log.rows[q.fleet.peak_row];
      const std::string where = log.file + " line " + std::to_string(log.line_of(q.fleet.peak_row)) + ", column " +
                                log.columns.started;
      const std::string got = "this job" + in_queue(q, log) + " starting while " + grouped(q.fleet.peak - 1) + " others ran";
      if (log.has_worker())
        throw ScenarioError(where, "at most " + grouped(kMaxFleet) + " jobs running at once on one worker (brokersim's limit on a consumer's slots)",
                            got + " on worker " + loader::quoted(log.workers[row.worker]));
      throw ScenarioError(where, "at most " + grouped(kMaxFleet) + " jobs running at once (without a worker column each is "
                                 "a one-slot consumer, and a scenario has at most " + grouped(kMaxFleet) + "; name the "
                                 "log's worker column with --columns worker=NAME)",
                          got);
    }
    total += q.fleet.count;
  }
  if (total > kMaxFleet) {
    throw ScenarioError(log.file + ", column " + (log.has_worker() ? log.columns.worker : log.columns.started),
                        "at most " + grouped(kMaxFleet) + " consumers over all queues (brokersim's limit; " +
                            (log.has_worker() ? "a worker that ran several queues' jobs is a consumer of each"
                                              : "without a worker column, the most jobs of each queue running at once") + ")",
                        grouped(total));
  }
}

// The column(s) finish times come from: "finished_at", "succeeded/failed".
std::string finish_column(const fit::JobLog& log) {
  if (!log.columns.finished.empty()) return log.columns.finished;
  if (log.columns.succeeded.empty()) return log.columns.failed;
  return log.columns.failed.empty() ? log.columns.succeeded : log.columns.succeeded + "/" + log.columns.failed;
}

// A loader error on the scenario fitted from the log (a backstop: the reader's limits and the
// checks above are meant to leave none), named by what in the log it came from.
std::string about_the_log(const ScenarioError& e, const std::vector<QueueFit>& queues, const fit::JobLog& log) {
  const std::string& path = e.path;
  std::string what = "data", where = log.file;
  for (const std::string section : {"producers.", "consumers."}) {
    if (!path.starts_with(section)) continue;
    std::size_t index = 0;
    const char* first = path.data() + section.size();
    const auto r = std::from_chars(first, path.data() + path.size(), index);
    if (r.ec != std::errc() || index >= queues.size()) break;
    const QueueFit& q = queues[index];
    const std::string rest(r.ptr, path.data() + path.size());
    if (section == "consumers.") {
      where += ", column " + (log.has_worker() ? log.columns.worker : log.columns.started);
      what = "a fleet" + in_queue(q, log) + " (" + q.fleet.why + ")";
    } else if (rest.starts_with(".service_ms")) {
      // The longest service time, the usual culprit, named by its line.
      std::size_t longest = q.rows.front();
      for (std::size_t row : q.rows) {
        const fit::JobRow& j = log.rows[row];
        const fit::JobRow& l = log.rows[longest];
        if (j.finished != fit::kNoTime &&
            (l.finished == fit::kNoTime || j.finished - j.started > l.finished - l.started)) longest = row;
      }
      where += " line " + std::to_string(log.line_of(longest)) + ", column " + finish_column(log);
      what = "service times" + in_queue(q, log) + " (" + finish_column(log) + " - " + log.columns.started + ", " +
             grouped(static_cast<std::int64_t>(q.service.n)) + " jobs, mean " + num(q.service.mean) + " ms, the longest " +
             num(q.service.sample.empty() ? 0.0 : q.service.sample.back()) + " ms on this line)";
    } else {
      where += ", column " + log.columns.enqueued;
      what = "arrivals" + in_queue(q, log) + " (" + grouped(static_cast<std::int64_t>(q.arrivals.n)) + " jobs)";
    }
    break;
  }
  return where + ": expected a log brokersim can model, got " + what + " that a scenario cannot hold (" + e.what() + ")";
}

// Per outcome, the jobs, and of them those with a start and a finish time.
ojson outcome_counts(const fit::JobLog& log) {
  std::size_t n[5] = {}, finished[5] = {}, started[5] = {};
  for (const auto& r : log.rows) {
    const auto o = static_cast<std::size_t>(r.outcome);
    ++n[o];
    if (r.started != fit::kNoTime) ++started[o];
    if (r.finished != fit::kNoTime) ++finished[o];
  }
  ojson out = ojson::object();
  for (std::size_t o = 0; o < 5; ++o)
    if (n[o]) out[fit::outcome_name(static_cast<fit::Outcome>(o))] = {{"jobs", n[o]}, {"started", started[o]}, {"with_finish_time", finished[o]}};
  return out;
}

namespace {
std::string ms_text(double ns) { return num(ns / 1e6, "%.4g") + " ms"; }
}  // namespace

// Sentences for the report and the fitted scenario's notes: the rows clamped for clock skew, and
// the outcomes read from the log's outcome columns.
std::vector<std::string> reading_notes(const fit::JobLog& log) {
  std::vector<std::string> notes;
  const auto& k = log.skew;
  const std::string tol = ms_text(static_cast<double>(log.skew_tolerance_ns));
  if (k.rows > 0) {
    std::string s = "clock skew: " + grouped(static_cast<std::int64_t>(k.rows)) + " of " +
                    grouped(static_cast<std::int64_t>(log.rows.size())) + " rows (" +
                    num(100.0 * static_cast<double>(k.rows) / static_cast<double>(log.rows.size()), "%.1f") +
                    "%) clamped, each by at most --skew-tolerance " + tol + ":";
    if (k.starts)
      s += " " + grouped(static_cast<std::int64_t>(k.starts)) + " " + log.columns.started + " before " + log.columns.enqueued +
           " by up to " + ms_text(static_cast<double>(k.start_max)) + " (mean " +
           ms_text(k.start_sum / static_cast<double>(k.starts)) +
           "), their waits counted as 0 (start and finish kept on the worker's clock, so its executions do not overlap)";
    if (k.finishes)
      s += std::string(k.starts ? ";" : "") + " " + grouped(static_cast<std::int64_t>(k.finishes)) + " finishes before " +
           log.columns.started + " by up to " + ms_text(static_cast<double>(k.finish_max)) + " (mean " +
           ms_text(k.finish_sum / static_cast<double>(k.finishes)) + "), moved to it (service time 0)";
    if (log.has_worker() && !k.per_worker.empty()) {
      const auto most = static_cast<std::size_t>(std::max_element(k.per_worker.begin(), k.per_worker.end()) - k.per_worker.begin());
      s += "; most on worker " + loader::quoted(log.workers[most]) + " (" + grouped(static_cast<std::int64_t>(k.per_worker[most])) +
           " of its " + grouped(static_cast<std::int64_t>(k.rows_per_worker[most])) + " rows: its clock is behind)";
    }
    notes.push_back(s);
  }
  if (log.has_outcome) {
    std::size_t n[5] = {}, with_finish[5] = {}, started_no_finish[5] = {};
    for (const auto& r : log.rows) {
      const auto o = static_cast<std::size_t>(r.outcome);
      ++n[o];
      if (r.finished != fit::kNoTime) ++with_finish[o];
      else if (r.started != fit::kNoTime) ++started_no_finish[o];
    }
    const auto at = [](fit::Outcome o) { return static_cast<std::size_t>(o); };
    std::string s = "outcomes (from " +
                    (!log.columns.state.empty() ? "the column " + log.columns.state + (log.state_by_name ? ", found by its name" : "")
                                                : std::string("the columns ") + log.columns.succeeded +
                                                      (log.columns.succeeded.empty() || log.columns.failed.empty() ? "" : " and ") +
                                                      log.columns.failed) +
                    "): " + grouped(static_cast<std::int64_t>(n[at(fit::Outcome::Succeeded)] + n[at(fit::Outcome::Finished)])) +
                    " succeeded, " + grouped(static_cast<std::int64_t>(n[at(fit::Outcome::Failed)])) + " failed (" +
                    grouped(static_cast<std::int64_t>(with_finish[at(fit::Outcome::Failed)])) +
                    " with a finish time: in the fleet, they held a worker, but not in the service times: their durations are fitted on their own; " +
                    grouped(static_cast<std::int64_t>(started_no_finish[at(fit::Outcome::Failed)])) +
                    " started without one: left out of the service times and the slots; the rest never started), " +
                    grouped(static_cast<std::int64_t>(n[at(fit::Outcome::Running)])) + " running, " +
                    grouped(static_cast<std::int64_t>(n[at(fit::Outcome::Queued)])) + " queued when the log was taken";
    const std::size_t ok_unfinished = started_no_finish[at(fit::Outcome::Succeeded)];
    if (ok_unfinished)
      s += "; " + grouped(static_cast<std::int64_t>(ok_unfinished)) + " succeeded without a finish time: left out of the service times and the slots";
    notes.push_back(s);
  }
  return notes;
}

}  // namespace brokersim::fit

namespace brokersim::fit {

namespace {

std::string share(std::size_t part, std::size_t whole) {
  return whole ? num(100.0 * static_cast<double>(part) / static_cast<double>(whole), "%.3g") + "%" : "-";
}

std::string count(std::size_t n) { return grouped(static_cast<std::int64_t>(n)); }

}  // namespace

std::string attempts_sentence(const QueueFit& q, const fit::JobLog& log) {
  const fit::Messages& m = q.messages;
  return "attempts" + in_queue(q, log) + ": " + count(m.attempts) + " rows are " + count(m.count()) +
         " messages (by the column " + log.columns.id + (log.id_by_name ? ", found by its name" : "") + "): " +
         num(m.attempts_per_message(), "%.4g") + " attempts per message on average, " + count(m.retried) + " messages (" +
         share(m.retried, m.count()) + ") tried more than once, at most " + count(m.most) +
         " times; arrivals count each message once, at its first enqueue";
}

std::vector<std::string> failure_sentences(const QueueFit& q, const fit::JobLog& log) {
  const fit::FailureFit& f = q.failures;
  std::string s = "failed attempts" + in_queue(q, log) + ": " + count(f.failed) + " of " + count(f.ended) +
                  " attempts that ended (" + share(f.failed, f.ended) + ")";
  if (f.durations) {
    const fit::ServiceFit& d = *f.durations;
    const fit::FittedDistribution& law = d.fits[d.chosen];
    s += "; " + count(f.failed_timed) + " with a finish time, left out of the service times and fitted on their own: mean " +
         num(d.mean) + " ms, cv " + num(d.cv) + ", " + num(f.fraction_of_service, "%.3g") + " of the service times' mean; " +
         (law.family == fit::FittedDistribution::Family::Empirical ? "their own " + std::to_string(d.n) + " values" : law.syntax.dump()) +
         " (" + law.name + ": " + d.why + ")";
  } else {
    s += "; none with a finish time";
  }
  if (q.messages.by_id)
    s += "; per message, " + count(f.messages_failed) + " of " + count(f.messages_ended) + " (" +
         share(f.messages_failed, f.messages_ended) + ") ended failed (no attempt of theirs succeeded)";
  std::vector<std::string> out{s};
  if (!q.failure_key.empty()) {
    out.push_back("in the written scenario, " + q.failure_key + " " + num(round6(q.failure_probability), "%.6g") +
                  (q.failures_tried_again ? ": the chance that an attempt fails (the scenario's broker offers a failed message again)"
                                          : ": the chance that a message ends failed (in the scenario a failed execution is final)") +
                  "; brokersim runs a failed execution for a whole service time: no scenario key says when in its execution a job "
                  "fails" + (f.durations ? " (the log's failed attempts ran " + num(f.fraction_of_service, "%.3g") + " of the service times' mean)" : ""));
  } else if (!q.failure_not_written.empty()) {
    out.push_back(q.failure_not_written);
  }
  return out;
}

ojson attempts_data(const QueueFit& q) {
  const fit::Messages& m = q.messages;
  return {{"by_id", m.by_id}, {"rows", m.attempts}, {"messages", m.count()}, {"attempts_per_message", round6(m.attempts_per_message())},
          {"retried", m.retried}, {"most", m.most}};
}

ojson failures_data(const QueueFit& q) {
  const fit::FailureFit& f = q.failures;
  ojson j{{"ended", f.ended}, {"failed", f.failed}, {"per_attempt", round6(f.per_attempt())},
          {"messages_ended", f.messages_ended}, {"messages_failed", f.messages_failed}, {"per_message", round6(f.per_message())},
          {"with_finish_time", f.failed_timed}};
  if (f.durations) {
    const fit::ServiceFit& d = *f.durations;
    j["durations"] = {{"n", d.n}, {"mean_ms", round6(d.mean)}, {"cv", round6(d.cv)},
                      {"fraction_of_service", round6(f.fraction_of_service)}, {"law", d.fits[d.chosen].name},
                      {"syntax", d.fits[d.chosen].family == fit::FittedDistribution::Family::Empirical ? ojson() : d.fits[d.chosen].syntax}};
  }
  j["scenario_key"] = q.failure_key.empty() ? ojson() : ojson(q.failure_key);
  j["failure_probability"] = q.failure_key.empty() ? ojson() : ojson(round6(q.failure_probability));
  j["tried_again"] = q.failures_tried_again;
  return j;
}

}  // namespace brokersim::fit
