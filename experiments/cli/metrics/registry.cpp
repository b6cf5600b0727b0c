#include "experiments/cli/metrics/registry.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>

#include "models/broker_kind.hpp"
#include "models/ledger/windows.hpp"

namespace brokersim {

namespace {

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();

template <class Ctx>
using Entries = std::vector<MetricEntry<Ctx>>;

template <class Ctx>
void add(Entries<Ctx>& out, std::vector<std::string> path, MetricKind kind, std::string unit, std::string counts,
         std::function<double(const Ctx&)> value) {
  MetricEntry<Ctx> e;
  for (const auto& k : path) e.name += (e.name.empty() ? "" : ".") + k;
  e.path = std::move(path);
  e.kind = kind;
  e.unit = std::move(unit);
  e.counts = std::move(counts);
  e.value = std::move(value);
  out.push_back(std::move(e));
}

template <class Ctx>
void add_field(Entries<Ctx>& out, std::vector<std::string> path, std::function<nlohmann::ordered_json(const Ctx&)> json) {
  MetricEntry<Ctx> e;
  for (const auto& k : path) e.name += (e.name.empty() ? "" : ".") + k;
  e.path = std::move(path);
  e.kind = MetricKind::Field;
  e.json = std::move(json);
  out.push_back(std::move(e));
}


template <class T>
double fraction_of(const T& t, Outcome o) {
  return t.generated ? static_cast<double>(t.outcomes[static_cast<std::size_t>(o)]) / static_cast<double>(t.generated) : 0.0;
}

// A wait's figures; q < 0 is the mean, q > 1 the max. A window's percentile needs
// window_min_samples(q) samples (models/ledger/windows.hpp): below that it is missing, not its
// slowest job's figure.
struct Stat {
  const char* name;
  double q;
};
constexpr Stat kStats[] = {{"mean", -1}, {"p50", 0.50}, {"p95", 0.95}, {"p99", 0.99}, {"max", 2}};

template <class H>
double wait_stat(const H& h, const Stat& s, bool window) {
  if (s.q < 0) return h.mean() / sim::kNsPerMsF;
  if (s.q > 1) return sim::to_ms(h.max());
  if (window && h.count() < window_min_samples(s.q)) return kMissing;
  return h.quantile(s.q) / sim::kNsPerMsF;
}

// outcomes, fraction and wait_ms, alike for the whole run and for one window.
template <class Ctx, class GetTally>
void add_tally(Entries<Ctx>& out, GetTally tally, bool window) {
  add<Ctx>(out, {"outcomes", "generated"}, MetricKind::Count, "jobs", "counted jobs created (the sum of the outcomes)",
           [tally](const Ctx& c) { return static_cast<double>(tally(c).generated); });
  for (Outcome o : kReportedOutcomes)
    add<Ctx>(out, {"outcomes", std::string(outcome_name(o))}, MetricKind::Count, "jobs",
             "counted jobs whose outcome is " + std::string(outcome_name(o)),
             [tally, o](const Ctx& c) { return static_cast<double>(tally(c).outcomes[static_cast<std::size_t>(o)]); });
  for (Outcome o : kReportedOutcomes)
    add<Ctx>(out, {"fraction", std::string(outcome_name(o))}, MetricKind::Real, "fraction",
             "share of the counted jobs whose outcome is " + std::string(outcome_name(o)),
             [tally, o](const Ctx& c) { return fraction_of(tally(c), o); });
  for (const WaitMetric& m : kWaits) {
    const Wait w = m.wait;
    const std::string span = std::string(m.span);
    add<Ctx>(out, {"wait_ms", std::string(m.name), "count"}, MetricKind::Count, wait_unit(w),
             std::string(wait_unit(w)) + " with a " + span + " wait",
             [tally, w](const Ctx& c) { return static_cast<double>(tally(c).wait(w).count()); });
    for (const Stat& s : kStats)
      add<Ctx>(out, {"wait_ms", std::string(m.name), s.name},
               window && s.q >= 0 && s.q <= 1 ? MetricKind::MaybeReal : MetricKind::Real, "ms",
               std::string(s.name) + " of the " + span + " wait",
               [tally, w, s, window](const Ctx& c) { return wait_stat(tally(c).wait(w), s, window); });
  }
}

Entries<WindowResult> make_window_metrics() {
  Entries<WindowResult> out;
  add<WindowResult>(out, {"from_ms"}, MetricKind::Real, "ms", "the window's start",
                    [](const WindowResult& w) { return sim::to_ms(w.from); });
  add<WindowResult>(out, {"to_ms"}, MetricKind::Real, "ms", "the window's end",
                    [](const WindowResult& w) { return sim::to_ms(w.to); });
  // The jobs created in the window: what its figures rest on.
  add<WindowResult>(out, {"jobs"}, MetricKind::Count, "jobs", "counted jobs created in the window",
                    [](const WindowResult& w) { return static_cast<double>(w.generated); });
  add_tally<WindowResult>(out, [](const WindowResult& w) -> const WindowResult& { return w; }, true);
  add<WindowResult>(out, {"throughput_per_s"}, MetricKind::Real, "jobs/s", "completions of the window's jobs per second",
                    [](const WindowResult& w) { return per_s(w.completed, sim::to_ms(w.to - w.from) / 1000.0); });
  add<WindowResult>(out, {"goodput_per_s"}, MetricKind::Real, "jobs/s", "on-time completions of the window's jobs per second",
                    [](const WindowResult& w) { return per_s(w.completed_on_time, sim::to_ms(w.to - w.from) / 1000.0); });
  return out;
}

// The highest (or lowest) of a window figure over the windows that have it: a window that created
// no job has no fractions, a wait with no sample no figures, a percentile on too few samples none.
// 0 when no window has it; a percentile missing then.
template <class Has, class Value>
double extreme(const std::vector<WindowResult>& windows, bool highest, bool percentile, Has has, Value value) {
  double best = 0;
  bool any = false;
  for (const WindowResult& w : windows) {
    if (!has(w)) continue;
    const double v = value(w);
    if (std::isnan(v)) continue;
    best = !any ? v : highest ? std::max(best, v) : std::min(best, v);
    any = true;
  }
  return percentile && !any ? kMissing : best;
}

void add_window_extremes(Entries<RunView>& out) {
  for (const bool highest : {true, false}) {
    const std::string top = highest ? "window_max" : "window_min";
    const std::string which = highest ? "highest" : "lowest";
    for (Outcome o : kReportedOutcomes)
      add<RunView>(out, {top, "fraction", std::string(outcome_name(o))}, MetricKind::Real, "fraction",
                   which + " fraction." + std::string(outcome_name(o)) + " of a window that created jobs",
                   [highest, o](const RunView& v) {
                     return extreme(v.result.windows, highest, false, [](const WindowResult& w) { return w.generated > 0; },
                                    [o](const WindowResult& w) { return fraction_of(w, o); });
                   });
    for (const WaitMetric& m : kWaits)
      for (const Stat& s : kStats) {
        const Wait w = m.wait;
        const bool percentile = s.q >= 0 && s.q <= 1;
        add<RunView>(out, {top, "wait_ms", std::string(m.name), s.name}, percentile ? MetricKind::MaybeReal : MetricKind::Real,
                     "ms", which + " wait_ms." + std::string(m.name) + "." + s.name + " of a window that has it",
                     [highest, percentile, w, s](const RunView& v) {
                       return extreme(v.result.windows, highest, percentile,
                                      [w](const WindowResult& x) { return x.wait(w).count() > 0; },
                                      [w, s](const WindowResult& x) { return wait_stat(x.wait(w), s, true); });
                     });
      }
    for (const bool good : {false, true}) {
      const std::string name = good ? "goodput_per_s" : "throughput_per_s";
      add<RunView>(out, {top, name}, MetricKind::Real, "jobs/s", which + " " + name + " of a window",
                   [highest, good](const RunView& v) {
                     return extreme(v.result.windows, highest, false, [](const WindowResult&) { return true; },
                                    [good](const WindowResult& w) {
                                      return per_s(good ? w.completed_on_time : w.completed, sim::to_ms(w.to - w.from) / 1000.0);
                                    });
                   });
    }
  }
}

// consumers[].framework and producers[].framework: each setting, its value and the brokersim key
// it set, so that a planner sees what was simulated.
// `entry`: "group" for consumers[].framework, "producer" for producers[].framework.
nlohmann::ordered_json frameworks_json(const std::vector<FrameworkMapping>& mappings, const char* entry) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const FrameworkMapping& m : mappings) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : m.rows)
      rows.push_back({{"setting", row.setting}, {"value", row.value}, {"key", row.key}, {"key_value", row.key_value},
                      {"note", row.note}});
    all.push_back({{entry, m.group}, {"framework", m.framework}, {"mapping", rows}});
  }
  return all;
}

// Some consumer group attaches after the start (consumers[].start_ms > 0): until then the queue
// only fills, and a run without a warm-up counts that backlog's draining as steady state.
bool late_consumers(const Scenario& s) {
  for (const auto& c : s.consumers)
    if (c.start > 0) return true;
  return false;
}

double fraction_of_jobs(const RunResult& r, std::uint64_t n) {
  return r.generated ? static_cast<double>(n) / static_cast<double>(r.generated) : 0.0;
}

// amazon-sqs: how many messages each ReceiveMessage response carried (a long poll returns what is
// visible, up to the batch size).
// The figures only the scenario's broker kind knows (SQS's receives), as its descriptor lists them.
void add_broker_figures(Entries<RunView>& out, const BrokerKindModel& kind) {
  using V = const RunView&;
  const std::vector<BrokerFigure>& figures = kind.figures();
  for (std::size_t i = 0; i < figures.size(); ++i)
    add<RunView>(out, figures[i].path, figures[i].count ? MetricKind::Count : MetricKind::Real, figures[i].unit,
                 figures[i].counts, [i](V v) { return v.result.broker_figures.at(i); });
}

void add_queue(Entries<RunView>& out, const Scenario& scenario, std::size_t q) {
  using V = const RunView&;
  const std::string name = scenario.broker.queues[q].name;
  const auto count = [&](const char* key, const char* unit, const char* counts, std::uint64_t QueueResult::*field) {
    add<RunView>(out, {"queues", name, key}, MetricKind::Count, unit, counts,
                 [q, field](V v) { return static_cast<double>(v.result.queues[q].*field); });
  };
  const auto real = [&](const char* key, const char* unit, const char* counts, double QueueResult::*field) {
    add<RunView>(out, {"queues", name, key}, MetricKind::Real, unit, counts,
                 [q, field](V v) { return v.result.queues[q].*field; });
  };
  count("published", "messages", "messages into the queue (publishes, dead letters)", &QueueResult::published);
  count("delivered", "deliveries", "deliveries from the queue", &QueueResult::delivered);
  count("expired", "messages", "messages whose TTL ended in the queue", &QueueResult::expired);
  // The empty object stays for a kind that gives no reason.
  add_field<RunView>(out, {"queues", name, "dead_lettered_by_reason"}, [](V) { return nlohmann::ordered_json::object(); });
  for (DeathReason why : reported_death_reasons(scenario.broker))
    add<RunView>(out, {"queues", name, "dead_lettered_by_reason", std::string(death_reason_name(why))}, MetricKind::Count,
                 "messages", "messages the queue dead-lettered for " + std::string(death_reason_name(why)),
                 [q, why](V v) { return static_cast<double>(v.result.queues[q].dl(why)); });
  count("max_ready", "messages", "most ready messages at once", &QueueResult::max_ready);
  real("mean_ready", "messages", "time-weighted mean of ready messages", &QueueResult::mean_ready);
  real("mean_unacked", "messages", "time-weighted mean of unacknowledged messages", &QueueResult::mean_unacked);
  count("ready_at_end", "messages", "ready messages at the span's end", &QueueResult::ready_at_end);
  count("max_bytes", "bytes", "most bytes held at once", &QueueResult::max_bytes);
  real("mean_bytes", "bytes", "time-weighted mean of bytes held", &QueueResult::mean_bytes);
  real("byte_seconds", "byte-seconds", "bytes held integrated over time", &QueueResult::byte_seconds);
  count("deletions", "deletions", "times x-expires deleted the queue", &QueueResult::deletions);
}

// With producers publishing to several queues (read by one group or by a group each): the counted
// jobs by the queue their producer publishes to, with the whole run's outcome, fraction and wait
// figures (RunResult::by_queue), for each queue some producer publishes to.
void add_jobs_by_queue(Entries<RunView>& out, const Scenario& scenario) {
  using V = const RunView&;
  if (!scenario.reports_jobs_by_queue()) return;
  Entries<WindowResult> tally;
  add_tally<WindowResult>(tally, [](const WindowResult& w) -> const WindowResult& { return w; }, false);
  add_field<RunView>(out, {"jobs_by_queue"}, [](V) { return nlohmann::ordered_json::object(); });
  for (std::size_t q = 0; q < scenario.broker.queues.size(); ++q) {
    if (!scenario.published_to(static_cast<int>(q))) continue;
    const std::string name = scenario.broker.queues[q].name;
    for (const MetricEntry<WindowResult>& e : tally) {
      std::vector<std::string> path{"jobs_by_queue", name};
      path.insert(path.end(), e.path.begin(), e.path.end());
      add<RunView>(out, std::move(path), e.kind, e.unit, e.counts + " (jobs published to " + name + ")",
                   [q, f = e.value](V v) { return f(v.result.by_queue[q]); });
    }
  }
}

void add_load(Entries<RunView>& out, const std::string& queue, std::size_t l, bool mean_slots) {
  using V = const RunView&;
  const auto real = [&](const char* key, const char* unit, const char* counts, double (*f)(const QueueLoad&)) {
    add<RunView>(out, {"offered_load", queue, key}, MetricKind::Real, unit, counts, [l, f](V v) { return f(v.loads[l]); });
  };
  real("rate_per_s", "jobs/s", "mean arrival rate over the measured span", [](const QueueLoad& x) { return x.rate_per_s; });
  real("mean_service_ms", "ms", "mean service time", [](const QueueLoad& x) { return x.mean_service_ms; });
  real("erlangs", "erlangs", "rate x mean service time", [](const QueueLoad& x) { return x.erlangs(); });
  add<RunView>(out, {"offered_load", queue, "slots"}, MetricKind::Count, "slots", "slots reading the queue (autoscaled: at max)",
               [l](V v) { return static_cast<double>(v.loads[l].slots); });
  real("utilization", "fraction", "erlangs over slots", [](const QueueLoad& x) { return x.utilization(); });
  // What the fleet actually had, beside its ceiling: only where a group's size changes.
  if (mean_slots) {
    real("mean_slots", "slots", "the groups' mean replicas x slots", [](const QueueLoad& x) { return x.mean_slots; });
    real("mean_slots_utilization", "fraction", "erlangs over mean_slots",
         [](const QueueLoad& x) { return x.mean_slots_utilization(); });
  }
  real("peak_rate_per_s", "jobs/s",
       "the busiest rate in the span: a rate_schedule's highest step, given times' busiest minute (days_csv: of any day), "
       "else the mean",
       [](const QueueLoad& x) { return x.peak_rate_per_s; });
  real("peak_utilization", "fraction", "the peak rate's utilisation", [](const QueueLoad& x) { return x.peak_utilization(); });
}

// What the fleet cost: replica time per group and in total (only reported when the fleet changes
// or windows are asked for, so that fixed-fleet runs print what they always did).
void add_fleet(Entries<RunView>& out, std::size_t groups) {
  using V = const RunView&;
  const auto group = [](const RunResult& r, std::size_t g) { return g < r.groups.size() ? r.groups[g] : GroupFleetResult{}; };
  const auto sum = [group](V v, double GroupFleetResult::*field) {
    double total = 0;
    for (std::size_t g = 0; g < v.scenario.consumers.size(); ++g) total += group(v.result, g).*field;
    return total;
  };
  add<RunView>(out, {"fleet", "consumer_seconds"}, MetricKind::Real, "replica-seconds", "replica time of every group",
               [sum](V v) { return sum(v, &GroupFleetResult::consumer_seconds); });
  add<RunView>(out, {"fleet", "slot_seconds"}, MetricKind::Real, "slot-seconds", "slot time of every group",
               [sum](V v) { return sum(v, &GroupFleetResult::slot_seconds); });
  add<RunView>(out, {"fleet", "mean_replicas"}, MetricKind::Real, "replicas", "mean replicas of all groups together",
               [sum](V v) { return sum(v, &GroupFleetResult::mean_replicas); });
  add_field<RunView>(out, {"fleet", "groups"}, [](V) { return nlohmann::ordered_json::object(); });
  for (std::size_t g = 0; g < groups; ++g) {
    const std::string G = std::to_string(g);
    add<RunView>(out, {"fleet", "groups", G, "consumer_seconds"}, MetricKind::Real, "replica-seconds", "the group's replica time",
                 [group, g](V v) { return group(v.result, g).consumer_seconds; });
    add<RunView>(out, {"fleet", "groups", G, "slot_seconds"}, MetricKind::Real, "slot-seconds", "the group's slot time",
                 [group, g](V v) { return group(v.result, g).slot_seconds; });
    add<RunView>(out, {"fleet", "groups", G, "mean_replicas"}, MetricKind::Real, "replicas", "the group's mean replicas",
                 [group, g](V v) { return group(v.result, g).mean_replicas; });
    add<RunView>(out, {"fleet", "groups", G, "peak_replicas"}, MetricKind::Count, "replicas", "the group's most replicas at once",
                 [group, g](V v) { return static_cast<double>(group(v.result, g).peak_replicas); });
  }
}

// A platform's own cost units (billing.hpp): each figure some billed group has, summed over the
// groups that have it, then per billed group; only scenarios with a billed group have the keys.
void add_billing(Entries<RunView>& out, const Scenario& scenario) {
  using V = const RunView&;
  const std::vector<GroupBilling> billed = billed_groups(scenario);
  if (billed.empty()) return;
  struct Figure {
    BillingFigure figure;
    const char* unit;
    const char* all;    // what the sum counts
    const char* group;  // what the group's counts
  };
  static const Figure kFigures[] = {
      {BillingFigure::Requests, "requests", "invocations of every billed group (a batch is one)", "the group's invocations"},
      {BillingFigure::Executions, "executions", "executions of every group billed per execution (a batch is one)",
       "the group's executions"},
      {BillingFigure::GbSeconds, "GB-seconds", "every billed group's executions (Flex: on-demand instances' active time) x memory",
       "the group's executions, each rounded up to its platform's unit, x its memory"},
      {BillingFigure::AlwaysReadyGbSeconds, "GB-seconds", "always-ready instances' active time x memory",
       "the group's always-ready instances' active time x memory"},
      {BillingFigure::BaselineGbSeconds, "GB-seconds", "always-ready instances' memory over the span",
       "the group's always-ready instances' memory over the span"},
      {BillingFigure::InstanceHours, "instance-hours", "instances allocated (Premium: at least one)", "the group's instances allocated"},
      {BillingFigure::VcpuSeconds, "vCPU-seconds", "Premium instances allocated x their cores", "the group's instances x cores"},
      {BillingFigure::MemoryGbSeconds, "GB-seconds", "Premium instances allocated x their memory", "the group's instances x memory"},
  };
  const auto kind = [](BillingFigure f) {
    return f == BillingFigure::Requests || f == BillingFigure::Executions ? MetricKind::Count : MetricKind::Real;
  };
  for (const Figure& fig : kFigures) {
    std::vector<GroupBilling> having;
    for (const GroupBilling& b : billed)
      if (b.has(fig.figure)) having.push_back(b);
    if (having.empty()) continue;
    const BillingFigure f = fig.figure;
    add<RunView>(out, {"billing", std::string(billing_figure_name(f))}, kind(f), fig.unit, fig.all, [having, f](V v) {
      double x = 0;
      for (const GroupBilling& b : having) x += b.value(f, v.result);
      return x;
    });
  }
  for (const GroupBilling& b : billed) {
    const std::string G = std::to_string(b.group);
    for (const Figure& fig : kFigures) {
      if (!b.has(fig.figure)) continue;
      const BillingFigure f = fig.figure;
      add<RunView>(out, {"billing", "groups", G, std::string(billing_figure_name(f))}, kind(f), fig.unit, fig.group,
                   [b, f](V v) { return b.value(f, v.result); });
    }
  }
}

template <class Ctx>
void write_entries(nlohmann::ordered_json& j, const Entries<Ctx>& entries, const Ctx& c) {
  for (const auto& e : entries) {
    nlohmann::ordered_json* at = &j;
    for (const auto& k : e.path) at = &(*at)[k];
    switch (e.kind) {
      case MetricKind::Count: *at = static_cast<std::uint64_t>(e.value(c)); break;
      case MetricKind::Real: *at = e.value(c); break;
      case MetricKind::MaybeReal: {
        const double v = e.value(c);
        *at = std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
        break;
      }
      case MetricKind::Field: *at = e.json(c); break;
    }
  }
}

}  // namespace

const char* wait_unit(Wait w) {
  switch (w) {
    case Wait::Queue: return "deliveries";
    case Wait::QueueExpired: return "jobs";
    case Wait::Transit: return "receipts";
    case Wait::Local: return "receipts";
    case Wait::Service: return "executions";
    case Wait::Sojourn: return "jobs";
  }
  return "";
}

std::span<const DeathReason> reported_death_reasons(const BrokerSpec& broker) {
  if (broker.model == nullptr) return {};
  return broker.model->death_reasons(broker);
}

const std::vector<WindowMetric>& window_metrics() {
  static const std::vector<WindowMetric> metrics = make_window_metrics();
  return metrics;
}

nlohmann::ordered_json window_json(const WindowResult& window) {
  nlohmann::ordered_json j;
  write_entries(j, window_metrics(), window);
  return j;
}

MetricRegistry::MetricRegistry(const Scenario& scenario) {
  Entries<RunView>& out = entries_;
  using V = const RunView&;
  add_field<RunView>(out, {"scenario"}, [](V v) { return nlohmann::ordered_json(v.scenario.name); });
  // The seed and the replication say which run this is; they are no figure of it.
  add_field<RunView>(out, {"seed"}, [](V v) { return nlohmann::ordered_json(v.scenario.seed); });
  add_field<RunView>(out, {"replication"}, [](V v) { return nlohmann::ordered_json(v.scenario.replication); });
  add_tally<RunView>(out, [](V v) -> const RunResult& { return v.result; }, false);
  add<RunView>(out, {"throughput_per_s"}, MetricKind::Real, "jobs/s", "completions inside the measured span per second",
               [](V v) { return per_s(v.result.span_completed, v.result.measured_s); });
  add<RunView>(out, {"goodput_per_s"}, MetricKind::Real, "jobs/s", "on-time completions inside the measured span per second",
               [](V v) { return per_s(v.result.span_completed_on_time, v.result.measured_s); });
  add<RunView>(out, {"slot_utilization"}, MetricKind::Real, "fraction", "busy slot time over slot time",
               [](V v) { return v.result.slot_utilization; });
  add<RunView>(out, {"idle_slots_with_backlog"}, MetricKind::Real, "fraction",
               "slot time idle while the broker held ready messages", [](V v) { return v.result.idle_slots_with_backlog; });
  add<RunView>(out, {"idle_slots_with_stranded_work"}, MetricKind::Real, "fraction",
               "slot time idle while another consumer's local buffer held unstarted jobs",
               [](V v) { return v.result.idle_slots_with_stranded_work; });
  const std::vector<std::string> by_cause{"expired_before_start_by_cause"};
  auto at = [](std::vector<std::string> path, std::string key) {
    path.push_back(std::move(key));
    return path;
  };
  add<RunView>(out, at(by_cause, "on_receipt"), MetricKind::Count, "jobs", "expired_before_start: already stale on receipt",
               [](V v) { return static_cast<double>(v.result.stale_on_receipt); });
  add<RunView>(out, at(by_cause, "in_local_buffer"), MetricKind::Count, "jobs",
               "expired_before_start: went stale in a local buffer",
               [](V v) { return static_cast<double>(v.result.stale_in_local_buffer); });
  add<RunView>(out, at(by_cause, "fraction_on_receipt"), MetricKind::Real, "fraction", "on_receipt over the counted jobs",
               [](V v) { return fraction_of_jobs(v.result, v.result.stale_on_receipt); });
  add<RunView>(out, at(by_cause, "fraction_in_local_buffer"), MetricKind::Real, "fraction",
               "in_local_buffer over the counted jobs",
               [](V v) { return fraction_of_jobs(v.result, v.result.stale_in_local_buffer); });
  for (const CounterMetric& c : kCounters) {
    const auto field = c.field;
    add<RunView>(out, {std::string(c.name)}, MetricKind::Count, std::string(c.unit), std::string(c.counts),
                 [field](V v) { return static_cast<double>(v.result.*field); });
  }
  // A killed pool process is a cause only where a fault kills one: the other scenarios' outputs
  // keep their keys.
  const bool kills = std::any_of(scenario.faults.begin(), scenario.faults.end(),
                                 [](const FaultSpec& f) { return f.kind == FaultSpec::Kind::KillProcess; });
  for (const DuplicateCauseMetric& m : kDuplicateCauses) {
    const DuplicateCause cause = m.cause;
    if (cause == DuplicateCause::WorkerLost && !kills) continue;
    add<RunView>(out, {"duplicate_executions_by_cause", std::string(m.name)}, MetricKind::Count, "executions",
                 "duplicate executions " + std::string(m.said),
                 [cause](V v) { return static_cast<double>(v.result.duplicates_by_cause[index(cause)]); });
  }
  add<RunView>(out, {"jobs_waited"}, MetricKind::Count, "jobs", "counted jobs that did not start the instant they were created",
               [](V v) { return static_cast<double>(v.result.generated - std::min(v.result.generated, v.result.started_at_once)); });
  if (scenario.broker.model != nullptr && scenario.broker.model->figures != nullptr)
    add_broker_figures(out, *scenario.broker.model);
  if (!scenario.frameworks.empty())
    add_field<RunView>(out, {"frameworks"}, [](V v) { return frameworks_json(v.scenario.frameworks, "group"); });
  if (!scenario.producer_frameworks.empty())
    add_field<RunView>(out, {"producer_frameworks"},
                       [](V v) { return frameworks_json(v.scenario.producer_frameworks, "producer"); });
  // The day each run drew (producers[].volume), where the file gives a volume.
  for (std::size_t p = 0; p < scenario.producers.size(); ++p)
    if (scenario.producers[p].volume_given || (scenario.producers[p].draw_parameters && scenario.producers[p].fitted_arrivals > 0))
      add<RunView>(out, {"producers", std::to_string(p), "volume"}, MetricKind::Real, "multiplier",
                   "this run's volume: volume.multiplier times its per_run draw",
                   [p](V v) { return v.result.volumes.at(p); });
  // The service times' mean each run drew (parameter_uncertainty: a redraw of the fitted law).
  for (std::size_t p = 0; p < scenario.producers.size(); ++p)
    if (scenario.producers[p].draw_parameters && scenario.producers[p].fitted_service_times > 0)
      add<RunView>(out, {"producers", std::to_string(p), "service_mean_ms"}, MetricKind::Real, "ms",
                   "the mean of this run's service-time law: the fitted one redrawn (parameter_uncertainty)",
                   [p](V v) { return v.result.service_means_ms.at(p); });
  // The day of a days_csv trace each run replayed (whole days resampled).
  for (std::size_t p = 0; p < scenario.producers.size(); ++p)
    if (scenario.producers[p].arrivals.days() > 0)
      add<RunView>(out, {"producers", std::to_string(p), "day"}, MetricKind::Count, "day",
                   "the day of the days_csv trace this run replayed (0 = its first)",
                   [p](V v) { return v.result.days.at(p); });

  // A scenario without queues (or loads) still has the key, null.
  add_field<RunView>(out, {"queues"}, [](V) { return nlohmann::ordered_json(); });
  for (std::size_t q = 0; q < scenario.broker.queues.size(); ++q) add_queue(out, scenario, q);
  add_jobs_by_queue(out, scenario);
  add_field<RunView>(out, {"offered_load"}, [](V) { return nlohmann::ordered_json(); });
  const std::vector<QueueLoad> loads = offered_load(scenario);
  for (std::size_t l = 0; l < loads.size(); ++l)
    add_load(out, scenario.broker.queues[static_cast<std::size_t>(loads[l].queue)].name, l,
             reports_mean_slots(scenario, loads[l].queue));

  if (scenario.observe_window) {
    add_window_extremes(out);
    add_field<RunView>(out, {"windows"}, [](V v) {
      nlohmann::ordered_json windows = nlohmann::ordered_json::array();
      for (const WindowResult& w : v.result.windows) windows.push_back(window_json(w));
      return windows;
    });
  }
  if (scenario.fleet_reported()) add_fleet(out, scenario.consumers.size());
  add_billing(out, scenario);

  const std::vector<std::string> run{"run"};
  add<RunView>(out, at(run, "simulated_ms"), MetricKind::Real, "ms", "simulated time at the run's end",
               [](V v) { return sim::to_ms(v.result.end_time); });
  add<RunView>(out, at(run, "measured_s"), MetricKind::Real, "s", "the measured span (end less warm-up)",
               [](V v) { return v.result.measured_s; });
  add<RunView>(out, at(run, "events"), MetricKind::Count, "events", "events the simulator ran",
               [](V v) { return static_cast<double>(v.result.events); });
  if (scenario.stop_time)
    add<RunView>(out, at(run, "followed_ms"), MetricKind::Real, "ms", "how long the run followed its jobs past stop.time_ms",
                 [](V v) { return sim::to_ms(v.result.followed); });
  add<RunView>(out, at(run, "peak_in_system"), MetricKind::Count, "jobs", "most jobs in the system at once",
               [](V v) { return static_cast<double>(v.result.peak_in_system); });
  add_field<RunView>(out, at(run, "stop_reason"),
                     [](V v) { return nlohmann::ordered_json(std::string(stop_reason_name(v.result.stop_reason))); });
  // Only with warmup_ms "auto", so that every other run's JSON stays as it was.
  if (scenario.auto_warmup) {
    add<RunView>(out, at(run, "warmup_ms"), MetricKind::Real, "ms", "the warm-up MSER-5 chose on the pilots' average series",
                 [](V v) { return sim::to_ms(v.scenario.warmup); });
    add_field<RunView>(out, at(run, "steady_state"),
                       [](V v) { return nlohmann::ordered_json(v.scenario.auto_warmup && v.scenario.auto_warmup->steady); });
    add<RunView>(out, at(run, "warmup_trend_t"), MetricKind::MaybeReal, "t",
                 "the bias check: paired t of the pilots' kept data, first half's mean less second half's",
                 [](V v) { return v.scenario.auto_warmup ? v.scenario.auto_warmup->trend_t : 0.0; });
  }
  // Only where a warm-up is in doubt, so that every other run's JSON and sweep CSV stay as they
  // were: a sweep averages it into run.warmup_doubtful_mean and warns (sweep.cpp).
  if (scenario.auto_warmup || (scenario.warmup == 0 && late_consumers(scenario)))
    add<RunView>(out, at(run, "warmup_doubtful"), MetricKind::Count, "runs",
                 "1 when the run's figures may carry its start-up: no steady state or a failed bias check under warmup_ms auto, or no warm-up while consumers attach late",
                 [](V v) {
                   const bool not_steady =
                       v.scenario.auto_warmup && (!v.scenario.auto_warmup->steady || v.scenario.auto_warmup->trending);
                   return not_steady || (v.scenario.warmup == 0 && late_consumers(v.scenario)) ? 1.0 : 0.0;
                 });
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].kind != MetricKind::Field) metrics_.push_back(i);
}

std::vector<std::string> MetricRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(metrics_.size());
  for (std::size_t i : metrics_) out.push_back(entries_[i].name);
  return out;
}

void MetricRegistry::values(const Scenario& scenario, const RunResult& result, double* out) const {
  const std::vector<QueueLoad> loads = offered_load(scenario, result.groups);
  const RunView view{scenario, result, loads};
  for (std::size_t i = 0; i < metrics_.size(); ++i) out[i] = entries_[metrics_[i]].value(view);
}

nlohmann::ordered_json MetricRegistry::json(const Scenario& scenario, const RunResult& result) const {
  const std::vector<QueueLoad> loads = offered_load(scenario, result.groups);
  const RunView view{scenario, result, loads};
  nlohmann::ordered_json j;
  write_entries(j, entries_, view);
  return j;
}

}  // namespace brokersim
