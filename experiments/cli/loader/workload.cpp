// The workload: producers, their arrival processes and the jobs they create. Trace CSV files are
// read by trace_csv.cpp.
#include <algorithm>
#include <filesystem>
#include <vector>

#include "experiments/cli/loader/broker_kinds.hpp"
#include "models/input_uncertainty.hpp"

namespace brokersim::loader {

namespace {

constexpr std::string_view kProducerKeys[] = {"queue",           "arrivals",        "deadline_ms",   "expiration_ms", "service_ms",
                                              "publish_delay_ms", "clock_offset_ms", "message_bytes", "persistent",
                                              "volume",          "fitted",          "framework",     "countdown_ms"};

ArrivalSpec load_arrivals(const json& v, const std::string& path, const Context& context) {
  static constexpr std::string_view kKinds[] = {"poisson", "periodic", "at_ms", "trace_csv", "days_csv", "rate_schedule"};
  object_at(v, path, "an object with one of " + list(kKinds));
  check_keys(v, path, {"poisson", "periodic", "at_ms", "trace_csv", "days_csv", "rate_schedule"});
  if (v.size() != 1) fail(path, "exactly one of " + list(kKinds), v);
  const std::string& kind = v.begin().key();
  const json& p = v.begin().value();
  const std::string at = join(path, kind);
  ArrivalSpec arrivals;
  if (kind == "poisson") {
    arrivals.kind = ArrivalSpec::Kind::Poisson;
    object_at(p, at, "an object {\"rate_per_s\": r}");
    check_keys(p, at, {"rate_per_s"});
    arrivals.rate_per_s = rate_per_s(member(p, "rate_per_s"), join(at, "rate_per_s"), false);
  } else if (kind == "periodic") {
    arrivals.kind = ArrivalSpec::Kind::Periodic;
    object_at(p, at, "an object {\"every_ms\": d}");
    check_keys(p, at, {"every_ms"});
    arrivals.every = ms_positive(member(p, "every_ms"), join(at, "every_ms"));
  } else if (kind == "at_ms") {
    arrivals.kind = ArrivalSpec::Kind::AtTimes;
    non_empty_array(p, at, "a non-empty array of times >= 0");
    for (std::size_t i = 0; i < p.size(); ++i) arrivals.at.push_back(ms_non_negative(p[i], join(at, i)));
    std::sort(arrivals.at.begin(), arrivals.at.end());
  } else if (kind == "trace_csv" || kind == "days_csv") {
    arrivals.kind = ArrivalSpec::Kind::Trace;
    if (!p.is_string() || p.get_ref<const std::string&>().empty()) fail(at, "the path of a CSV file", p);
    std::filesystem::path file(p.get<std::string>());
    if (file.is_relative() && !context.base_dir.empty()) file = std::filesystem::path(context.base_dir) / file;
    arrivals.trace_path = file.string();
    read_trace(arrivals, at);
    if (kind == "days_csv") {
      // Whole days from time 0: day d is [d, d + 1) x 24 h; the last row's day is the last day.
      constexpr Time kDay = Time{86'400'000} * sim::kNsPerMs;
      const auto days = static_cast<std::size_t>(arrivals.trace.back().publish / kDay) + 1;
      // The table has a row per day; the reader bounds publish_ms by sim::kMaxMs (1e12 ms), so at
      // most 11,575 days.
      if (days < 2)
        fail(at, "a trace of at least 2 whole days (publish_ms from midnight of its first day; fit --days --out writes one)",
             json(arrivals.trace_path + ": 1 day"));
      arrivals.day_starts.assign(days + 1, arrivals.trace.size());
      for (std::size_t i = arrivals.trace.size(); i-- > 0;)
        arrivals.day_starts[static_cast<std::size_t>(arrivals.trace[i].publish / kDay)] = i;
      // A day without rows starts where the next one does.
      for (std::size_t d = days; d-- > 0;) arrivals.day_starts[d] = std::min(arrivals.day_starts[d], arrivals.day_starts[d + 1]);
    }
  } else {  // rate_schedule
    arrivals.kind = ArrivalSpec::Kind::RateSchedule;
    non_empty_array(p, at, "a non-empty array of {\"from_ms\": t, \"rate_per_s\": r}");
    for (std::size_t i = 0; i < p.size(); ++i) {
      const std::string step_path = join(at, i);
      const json& step = object_at(p[i], step_path, "an object {\"from_ms\": t, \"rate_per_s\": r}");
      check_keys(step, step_path, {"from_ms", "rate_per_s", "linear"});
      const std::string from_path = join(step_path, "from_ms");
      ArrivalSpec::Step s{};
      if (i == 0) {
        s.from = ms_non_negative(member(step, "from_ms"), from_path);
      } else {
        const std::string expected = "a number > " + describe(p[i - 1]["from_ms"]) + " (the previous from_ms)";
        s.from = sim::from_ms(real(member(step, "from_ms"), from_path, expected));
        if (s.from <= arrivals.schedule.back().from) fail(from_path, expected, step["from_ms"]);
      }
      s.rate_per_s = rate_per_s(member(step, "rate_per_s"), join(step_path, "rate_per_s"), true);
      if (has(step, "linear")) {
        const std::string linear_path = join(step_path, "linear");
        if (!step["linear"].is_boolean()) fail(linear_path, "true or false", step["linear"]);
        s.linear = step["linear"].get<bool>();
        if (s.linear && i + 1 == p.size()) {
          fail_message(linear_path, "a linear ramp goes to the next step's rate_per_s at its from_ms; the last step has no next step");
        }
      }
      arrivals.schedule.push_back(s);
    }
  }
  return arrivals;
}

void check_max_bytes(const sim::Distribution& d, const std::string& path, const json& given) {
  constexpr double kMaxMessageBytes = 536870912.0;
  double largest = d.param_a();
  switch (d.kind()) {
    case sim::Distribution::Kind::Uniform: largest = d.param_b(); break;
    case sim::Distribution::Kind::Empirical:
      for (double x : d.values()) largest = std::max(largest, x);
      break;
    case sim::Distribution::Kind::Normal: largest = d.param_a() + 6 * d.param_b(); break;
    default: break;
  }
  if (largest > kMaxMessageBytes) fail(path, "message sizes of at most 536870912 bytes (512 MiB)", given);
}

// A million times the volume is far past any fleet's capacity; the bound keeps every scaled period
// and mean gap a finite time.
constexpr double kMaxVolume = 1e6;
constexpr const char* kVolumeRange = "a number > 0 and at most 1e6";

// producers[].volume: {"multiplier": x > 0, "per_run": a distribution of multipliers >= 0}, both
// optional. Arrivals at given times (at_ms, trace_csv) have no rate to scale.
void load_volume(const json& v, const std::string& path, ProducerSpec& producer) {
  const json& volume = object_at(v, path, "an object {\"multiplier\": x, \"per_run\": distribution}");
  check_keys(volume, path, {"multiplier", "per_run", "fitted"});
  producer.volume_given = true;
  if (has(volume, "multiplier")) {
    const std::string at = join(path, "multiplier");
    const double m = real(volume["multiplier"], at, kVolumeRange);
    if (!(m > 0 && m <= kMaxVolume)) fail(at, kVolumeRange, volume["multiplier"]);
    producer.volume_multiplier = m;
  }
  if (has(volume, "per_run") && !volume["per_run"].is_null())
    producer.volume_per_run = distribution(volume["per_run"], join(path, "per_run"), Range::Duration).scaled(1e-6);
  if (has(volume, "fitted") && !volume["fitted"].is_null()) {
    // What fit --days measured the spread from: informational, repeated by plan's risk statement.
    const std::string at = join(path, "fitted");
    const json& f = object_at(volume["fitted"], at, "an object {\"days\": n, \"cv_low\": x, \"cv_high\": y}");
    check_keys(f, at, {"days", "cv_low", "cv_high"});
    producer.volume_fitted_days = static_cast<int>(integer(member(f, "days"), join(at, "days"), 2, 36'600, "an integer from 2 to 36600"));
    producer.volume_cv_low = non_negative(member(f, "cv_low"), join(at, "cv_low"));
    producer.volume_cv_high = non_negative(member(f, "cv_high"), join(at, "cv_high"));
    if (producer.volume_cv_high < producer.volume_cv_low)
      fail(join(at, "cv_high"), "a number >= cv_low (" + describe(f["cv_low"]) + ")", f["cv_high"]);
    if (!producer.volume_per_run) fail(at, "a per_run beside it (the spread it describes)", volume["fitted"]);
  }
  const auto kind = producer.arrivals.kind;
  if ((kind == ArrivalSpec::Kind::AtTimes || kind == ArrivalSpec::Kind::Trace) &&
      (producer.volume_multiplier != 1 || producer.volume_per_run))
    fail(path, std::string("no volume with arrivals ") +
                   (kind == ArrivalSpec::Kind::Trace ? (producer.arrivals.days() ? "days_csv" : "trace_csv") : "at_ms") +
                   " (their times are given; scale a poisson, periodic or rate_schedule producer, or write the trace "
                   "you want)", volume);
}

// producers[].fitted: {"service_times": n, "arrivals": m} (fit writes it), the sizes of the log the
// service distribution and the rates were fitted from; what parameter_uncertainty redraws from.
void load_fitted(const json& v, const std::string& path, ProducerSpec& producer) {
  const json& f = object_at(v, path, "an object {\"service_times\": n, \"arrivals\": m}");
  check_keys(f, path, {"service_times", "arrivals"});
  constexpr std::int64_t kMaxCount = 1'000'000'000'000;
  if (has(f, "service_times") && !f["service_times"].is_null()) {
    const std::string at = join(path, "service_times");
    producer.fitted_service_times = static_cast<std::uint64_t>(integer(f["service_times"], at, 2, kMaxCount, "an integer from 2 to 1e12"));
    if (!redrawable(producer.service))
      fail(at, "no count beside a service_ms that was not fitted (exp, lognormal, gamma, weibull or empirical: the families "
               "fit writes and parameter_uncertainty redraws)", f["service_times"]);
  }
  if (has(f, "arrivals") && !f["arrivals"].is_null()) {
    const std::string at = join(path, "arrivals");
    producer.fitted_arrivals = static_cast<std::uint64_t>(integer(f["arrivals"], at, 1, kMaxCount, "an integer from 1 to 1e12"));
    // Arrivals at given times (a fitted scenario switched to replay the log's own trace, as fit
    // suggests for bursty arrivals) have no rate whose level is uncertain: the count has nothing to say.
    const auto kind = producer.arrivals.kind;
    if (kind == ArrivalSpec::Kind::AtTimes || kind == ArrivalSpec::Kind::Trace) producer.fitted_arrivals = 0;
  }
}

}  // namespace

ProducerSpec load_producer(const json& v, const std::string& path, const Context& context) {
  object_at(v, path);
  const BrokerKind& kind = *context.broker;
  check_keys(v, path, section_keys(kProducerKeys, kind, Section::Producer), foreign_key_owner(kind, Section::Producer));
  ProducerSpec producer;
  producer.queue = queue_index(member(v, "queue"), join(path, "queue"), context);
  producer.arrivals = load_arrivals(member(v, "arrivals"), join(path, "arrivals"), context);
  if (has(v, "deadline_ms") && !v["deadline_ms"].is_null()) {
    producer.deadline = distribution(v["deadline_ms"], join(path, "deadline_ms"), Range::Duration);
  }
  if (has(v, "expiration_ms") && !v["expiration_ms"].is_null()) {
    const json& e = v["expiration_ms"];
    if (e.is_string()) {
      if (e.get_ref<const std::string&>() != "remaining-budget") {
        fail(join(path, "expiration_ms"), "null, \"remaining-budget\" or a duration", e);
      }
      producer.expiration = ProducerSpec::Expiration::RemainingBudget;
    } else {
      producer.expiration = ProducerSpec::Expiration::Fixed;
      producer.expiration_value = distribution(e, join(path, "expiration_ms"), Range::Duration);
    }
  }
  producer.service = distribution(member(v, "service_ms"), join(path, "service_ms"), Range::Duration);
  producer.publish_delay = optional_distribution(v, "publish_delay_ms", path, Range::Duration);
  if (has(v, "countdown_ms") && !v["countdown_ms"].is_null())
    producer.countdown = distribution(v["countdown_ms"], join(path, "countdown_ms"), Range::Duration);
  producer.clock_offset = optional_distribution(v, "clock_offset_ms", path, Range::Signed);
  if (has(v, "message_bytes")) {
    // Sizes are counts, not durations: no ms -> ns scaling. RabbitMQ's largest message is 512 MiB.
    producer.message_bytes = distribution(v["message_bytes"], join(path, "message_bytes"), Range::Duration).scaled(1e-6);
    check_max_bytes(producer.message_bytes, join(path, "message_bytes"), v["message_bytes"]);
  }
  if (has(v, "persistent")) {
    if (!v["persistent"].is_boolean()) fail(join(path, "persistent"), "true or false", v["persistent"]);
    producer.persistent = v["persistent"].get<bool>();
  }
  if (has(v, "volume") && !v["volume"].is_null()) load_volume(v["volume"], join(path, "volume"), producer);
  if (has(v, "fitted") && !v["fitted"].is_null()) load_fitted(v["fitted"], join(path, "fitted"), producer);
  if (kind.load_producer != nullptr) kind.load_producer(v, path, producer);
  return producer;
}


}  // namespace brokersim::loader
