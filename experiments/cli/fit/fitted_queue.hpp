// One queue of a job log and what `fit` fitted to it, and the pieces of fit's output built from
// it: queue and file names, numbers as the fitted scenario shows them, the plot data, the report's
// sections and the checks of a log against brokersim's limits. Internal to experiments/fit.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/fit/arrivals.hpp"
#include "experiments/cli/fit/attempts.hpp"
#include "experiments/cli/fit/days.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/fit/mle.hpp"
#include "models/scenario.hpp"

namespace brokersim::fit {

using ojson = nlohmann::ordered_json;

// The longest file name the system takes: --out's stem and its side files' names are cut to it.
#ifdef NAME_MAX
constexpr std::size_t kNameMax = NAME_MAX;
#else
constexpr std::size_t kNameMax = 255;
#endif

// One queue of the log and what was fitted to it.
struct QueueFit {
  std::string log_name, name;        // as in the log; as a scenario queue name
  std::string trace_path;            // --out's arrival trace for it ("" without --out)
  std::vector<std::size_t> rows;     // indices into the log's rows
  fit::ServiceFit service;
  fit::ArrivalFit arrivals;
  fit::FleetFit fleet;
  fit::DayFit days;                  // its whole days' volumes and their spread
  fit::ArrivalFit mean_day;          // fit --days: the whole days folded onto one, rates per day
  std::vector<std::int64_t> day_times;  // fit --days: the whole days' arrivals from the first one's midnight
  std::string days_path;             // fit --days --out: the days_csv trace of them
  std::vector<std::int64_t> arrival_times;  // sorted, from the origin: each message's first enqueue
  std::vector<double> waits_ms;      // sorted, one per started attempt
  fit::Messages messages;            // its rows as attempts of messages
  fit::FailureFit failures;          // its failed attempts (with an outcome column)
  // Where it went in the written scenario: its producer and consumer group (fit --into: the
  // scenario's own), and what of its failures: the failure_probability key written ("" when none),
  // whether that scenario tries a failed message again, and why no key was written.
  static constexpr std::size_t kNoGroup = static_cast<std::size_t>(-1);
  std::size_t producer = 0, group = 0;  // group kNoGroup: no one group (several read it, no workers named)
  std::string failure_key, failure_not_written;
  bool failures_tried_again = false;
  double failure_probability = 0;
};

// A queue name brokersim accepts: 1..255 bytes without '.', ',', '"' or control characters.
std::string queue_name(const std::string& raw, std::vector<std::string>& taken);

// A part of a file name from a queue name: no '/' or '\\' (a folder), no control characters,
// no quote (the report prints the name inside a shell's single quotes), no leading '.' (a hidden
// file, or "..": the folder above), at most `max_bytes` bytes (not cutting a UTF-8 character) and
// unique among `taken`.
std::string file_part(const std::string& raw, std::size_t max_bytes, std::vector<std::string>& taken);

// Six significant digits: what the fitted scenario shows. Through from_chars, checked: the text is
// our own %.6g of a finite number.
double round6(double x);

std::string num(double x, const char* fmt = "%.4g");

// A time of the log, as the log wrote it (ISO-8601 in UTC, or the number in its unit).
// The report's Days lines for queue q (producer `producer_index` of the fitted scenario): each whole
// day's volume and peak hour, the day-to-day spread and the volume.per_run that gives a plan that
// spread; with fewer than two whole days, that the spread cannot be estimated and how to give it.
// `days_mode`: fit --days wrote the spread into the scenario itself (no suggestion printed).
void print_days(std::ostream& out, const QueueFit& q, const fit::JobLog& log, std::size_t producer_index, double span_h,
                bool days_mode);
std::string log_time(const fit::JobLog& log, std::int64_t ns);

ojson rate_schedule(const fit::ArrivalFit& a);

// The data the plot script draws: per queue, a histogram of the service times with each fitted
// density on a grid, QQ points per family, the rates with their intervals and the fleet.
ojson plot_data(const std::vector<QueueFit>& queues, const fit::JobLog& log, std::int64_t span);

void print_fits(std::ostream& out, const QueueFit& q);

void print_arrivals(std::ostream& out, const QueueFit& q, const std::string& why_interval, const std::string& trace_file,
                    std::size_t producer_index, bool days_mode);

// The chosen service-time fit must be one brokersim draws from (the loader's checks on a
// distribution): a parametric fit it refuses (a gamma or Weibull whose largest draw is beyond
// 1e12 ms) gives way to the empirical distribution, and the report says why. The empirical one
// holds the log's own service times, each at most 1e11 ms (the reader's limit).
void drawable_service(QueueFit& q);

void check_fleet(const std::vector<QueueFit>& queues, const fit::JobLog& log);

// The column(s) finish times come from: "finished_at", "succeeded/failed".
std::string finish_column(const fit::JobLog& log);

// A loader error on the scenario fitted from the log (a backstop: the reader's limits and the
// checks above are meant to leave none), named by what in the log it came from.
std::string about_the_log(const ScenarioError& e, const std::vector<QueueFit>& queues, const fit::JobLog& log);

// Per outcome, the jobs, and of them those with a start and a finish time.
ojson outcome_counts(const fit::JobLog& log);

// Sentences for the report and the fitted scenario's notes: the rows clamped for clock skew, the
// outcomes read from the log's outcome columns, and how arrivals are counted (by message id, or one
// per row).
std::vector<std::string> reading_notes(const fit::JobLog& log);

// The report's Attempts line for queue q (with an id column) and its failed attempts' lines (with
// an outcome column), and the same sentences for the fitted scenario's notes.
std::string attempts_sentence(const QueueFit& q, const fit::JobLog& log);
std::vector<std::string> failure_sentences(const QueueFit& q, const fit::JobLog& log);
// The plot data's "attempts" and "failures" of queue q.
ojson attempts_data(const QueueFit& q);
ojson failures_data(const QueueFit& q);

}  // namespace brokersim::fit
