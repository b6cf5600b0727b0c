#include "experiments/report.hpp"

#include "experiments/offered_load.hpp"
#include "experiments/text.hpp"
#include "models/ledger/windows.hpp"

#include <algorithm>
#include <tuple>
#include <cstdio>
#include <ostream>
#include <string>

namespace brokersim {

namespace {

// The reasons the broker's queues can give: its kind's, and a RabbitMQ classic broker holding a
// quorum queue (broker.queues.NAME.type) gives a quorum queue's too (delivery_limit). A broker
// whose queues are all of the kind's type keeps the kind's columns.
std::span<const DeathReason> death_reasons_of(const BrokerSpec& broker) {
  const bool has_quorum = std::any_of(broker.queues.begin(), broker.queues.end(),
                                      [](const QueueSpec& q) { return q.type == QueueType::Quorum; });
  return brokersim::death_reasons_of(broker.kind == "rabbitmq-classic" && has_quorum ? "rabbitmq-quorum" : broker.kind);
}

// A window's percentile needs window_min_samples(q) samples (models/ledger/windows.hpp): below
// that it is null, not its slowest job's figure.
template <class H>
nlohmann::ordered_json wait_json(const H& h, bool window = false) {
  nlohmann::ordered_json w;
  w["count"] = h.count();
  w["mean"] = h.mean() / sim::kNsPerMsF;
  for (const auto& [key, q] : {std::pair{"p50", 0.50}, std::pair{"p95", 0.95}, std::pair{"p99", 0.99}})
    w[key] = window && h.count() < window_min_samples(q) ? nlohmann::ordered_json(nullptr)
                                                         : nlohmann::ordered_json(h.quantile(q) / sim::kNsPerMsF);
  w["max"] = sim::to_ms(h.max());
  return w;
}

double per_s(std::uint64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0.0; }

// n as a percentage of the jobs generated in the measured span (0 when there were none): every
// share the summary prints.
double percent_of_jobs(const RunResult& r, std::uint64_t n) {
  return r.generated ? 100.0 * static_cast<double>(n) / static_cast<double>(r.generated) : 0.0;
}

// outcomes, fraction and wait_ms, alike for the whole run and for one window.
template <class H>
void tally_json(nlohmann::ordered_json& j, const Tally<H>& t, bool window = false) {
  auto& outcomes = j["outcomes"];
  outcomes["generated"] = t.generated;
  for (Outcome o : kReportedOutcomes) outcomes[std::string(outcome_name(o))] = t.outcomes[static_cast<std::size_t>(o)];
  auto& fraction = j["fraction"];
  for (Outcome o : kReportedOutcomes)
    fraction[std::string(outcome_name(o))] =
        t.generated ? static_cast<double>(t.outcomes[static_cast<std::size_t>(o)]) / static_cast<double>(t.generated) : 0.0;
  auto& waits = j["wait_ms"];
  for (const WaitMetric& m : kWaits) waits[std::string(m.name)] = wait_json(t.wait(m.wait), window);
}

// One window's figures, with the whole run's names (outcomes, fraction, wait_ms, throughput).
nlohmann::ordered_json window_json(const WindowResult& win) {
  nlohmann::ordered_json j;
  j["from_ms"] = sim::to_ms(win.from);
  j["to_ms"] = sim::to_ms(win.to);
  j["jobs"] = win.generated;  // the jobs created in the window: what its figures rest on
  tally_json(j, win, true);
  const double seconds = sim::to_ms(win.to - win.from) / 1000.0;
  j["throughput_per_s"] = per_s(win.completed, seconds);
  j["goodput_per_s"] = per_s(win.completed_on_time, seconds);
  return j;
}

// window_max / window_min: the extremes over the windows of every fraction and wait figure
// (and throughput). A window that created no job has no fractions, a wait with no sample no
// figures, a wait with fewer samples than window_min_samples(q) no percentile pq: none takes part
// (0 when no window has any; a percentile null when no window has enough samples for it).
void window_extremes(nlohmann::ordered_json& j, const nlohmann::ordered_json& windows) {
  auto& hi = j["window_max"];
  auto& lo = j["window_min"];
  const WindowResult empty;
  const nlohmann::ordered_json shape = window_json(empty);
  for (const char* key : {"fraction", "wait_ms"}) {
    for (auto it = shape[key].begin(); it != shape[key].end(); ++it) {
      const std::string name = it.key();
      auto extremes = [&](const std::string& stat) {
        double mx = 0, mn = 0;
        bool any = false;
        for (const auto& w : windows) {
          const bool has = std::string(key) == "fraction" ? w["outcomes"]["generated"].get<std::uint64_t>() > 0
                                                          : w["wait_ms"][name]["count"].get<std::uint64_t>() > 0;
          if (!has || (!stat.empty() && w[key][name][stat].is_null())) continue;
          const double v = stat.empty() ? w[key][name].get<double>() : w[key][name][stat].get<double>();
          mx = any ? std::max(mx, v) : v;
          mn = any ? std::min(mn, v) : v;
          any = true;
        }
        return std::tuple{mx, mn, any};
      };
      if (std::string(key) == "fraction") {
        const auto [mx, mn, any] = extremes("");
        hi[key][name] = mx;
        lo[key][name] = mn;
      } else {
        for (const char* stat : {"mean", "p50", "p95", "p99", "max"}) {
          const auto [mx, mn, any] = extremes(stat);
          const bool percentile = stat[0] == 'p';
          hi[key][name][stat] = percentile && !any ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mx);
          lo[key][name][stat] = percentile && !any ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(mn);
        }
      }
    }
  }
  for (const char* key : {"throughput_per_s", "goodput_per_s"}) {
    double mx = 0, mn = 0;
    for (std::size_t i = 0; i < windows.size(); ++i) {
      const double v = windows[i][key].get<double>();
      mx = i ? std::max(mx, v) : v;
      mn = i ? std::min(mn, v) : v;
    }
    hi[key] = mx;
    lo[key] = mn;
  }
}

// What the fleet cost: replica time per group and in total (only reported when the fleet
// changes or windows are asked for, so that fixed-fleet runs print what they always did).
void fleet_json(nlohmann::ordered_json& j, const Scenario& scenario, const RunResult& r) {
  auto& fleet = j["fleet"];
  double consumer_seconds = 0, slot_seconds = 0, mean_replicas = 0;
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (std::size_t g = 0; g < scenario.consumers.size(); ++g) {
    const GroupFleetResult fr = g < r.groups.size() ? r.groups[g] : GroupFleetResult{};
    auto& o = groups[std::to_string(g)];
    o["consumer_seconds"] = fr.consumer_seconds;
    o["slot_seconds"] = fr.slot_seconds;
    o["mean_replicas"] = fr.mean_replicas;
    o["peak_replicas"] = fr.peak_replicas;
    consumer_seconds += fr.consumer_seconds;
    slot_seconds += fr.slot_seconds;
    mean_replicas += fr.mean_replicas;
  }
  fleet["consumer_seconds"] = consumer_seconds;
  fleet["slot_seconds"] = slot_seconds;
  fleet["mean_replicas"] = mean_replicas;
  fleet["groups"] = groups;
}

// "N lapse, M crash": the non-zero causes, in table order.
std::string duplicate_causes(const RunResult& r) {
  std::string text;
  for (const DuplicateCauseMetric& m : kDuplicateCauses) {
    const std::uint64_t n = r.duplicates_by_cause[index(m.cause)];
    if (n == 0) continue;
    if (!text.empty()) text += ", ";
    text += grouped(n) + " " + std::string(m.said) + " (" + std::string(m.name) + ")";
  }
  return text;
}

// What a row of the wait table counts (docs/outcomes.md, "Waits and their populations"): the
// per-delivery waits count deliveries (a redelivered job twice), queue_expired and sojourn jobs.
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

// "97.20% of jobs completed on time": "on time" only for jobs that had a deadline; a job without
// one completes, never late (it counts in completed_on_time: docs/outcomes.md).
std::string completed_words(const RunResult& r) {
  const std::uint64_t without = r.completed_without_deadline;
  const std::uint64_t on_time = r.completed_on_time - std::min(without, r.completed_on_time);
  if (without == 0) return fmt("%.2f", percent_of_jobs(r, on_time)) + "% of jobs completed on time";
  if (on_time == 0 && r.outcomes[static_cast<std::size_t>(Outcome::CompletedLate)] == 0)
    return fmt("%.2f", percent_of_jobs(r, without)) + "% of jobs completed (no deadline)";
  return fmt("%.2f", percent_of_jobs(r, on_time)) + "% of jobs completed on time, " +
         fmt("%.2f", percent_of_jobs(r, without)) + "% completed without a deadline";
}

// The jobs that ended dead-lettered, and every message a queue dead-lettered by reason (summed
// over queues, in each broker's words); said only when there are any.
void dead_letter_sentence(std::ostream& out, const Scenario& s, const RunResult& r) {
  std::string reasons;
  for (DeathReason why : death_reasons_of(s.broker)) {
    std::uint64_t n = 0;
    for (const auto& q : r.queues) n += q.dl(why);
    if (n == 0) continue;
    if (!reasons.empty()) reasons += ", ";
    reasons += grouped(n) + " " + std::string(death_reason_name(why));
  }
  const std::uint64_t jobs = r.outcomes[static_cast<std::size_t>(Outcome::DeadLettered)];
  if (jobs == 0 && reasons.empty()) return;
  if (jobs == 0) {
    // Dead-lettering by itself decides nothing (a consumer's rejection of a stale job stays
    // expired_before_start in the dead-letter queue): say so rather than "0% dead-lettered".
    out << "Messages dead-lettered by reason: " << reasons << " (their jobs keep the outcome decided before, above).\n";
    return;
  }
  out << fmt("%.2f", percent_of_jobs(r, jobs)) << "% of jobs (" << grouped(jobs) << ") ended dead-lettered";
  if (!reasons.empty()) out << "; messages dead-lettered by reason: " << reasons;
  out << ".\n";
}

// The outcomes the "In short" paragraph does not name, so that its percentages add up to 100: a
// planner reading only that paragraph learns that early-acked work was lost in a crash, say. Any
// outcome added to kReportedOutcomes shows here by its JSON name until it is given words.
void rest_sentence(std::ostream& out, const RunResult& r) {
  std::uint64_t total = 0;
  std::string parts;
  for (Outcome o : kReportedOutcomes) {
    std::string words;
    switch (o) {
      case Outcome::CompletedOnTime: case Outcome::CompletedLate: case Outcome::TimedOut:
      case Outcome::ExpiredInQueue: case Outcome::ExpiredInTransit: case Outcome::ExpiredBeforeStart:
        continue;  // in the paragraph
      case Outcome::RejectedAtPublish: words = "rejected at publish (already stale in the producer's clock)"; break;
      case Outcome::Lost: words = "lost (gone without any consumer deciding them: docs/outcomes.md says how)"; break;
      case Outcome::DeadLettered: words = "dead-lettered"; break;
      case Outcome::InSystem: words = "still in the system when the run ended"; break;
      default: words = std::string(outcome_name(o)); break;
    }
    const std::uint64_t jobs = r.outcomes[static_cast<std::size_t>(o)];
    if (jobs == 0) continue;
    total += jobs;
    if (!parts.empty()) parts += ", ";
    parts += grouped(jobs) + " " + words;
  }
  if (total == 0) return;
  out << "The other " << fmt("%.2f", percent_of_jobs(r, total))
      << "% of jobs: " << parts << ".\n";
}

// amazon-sqs: how many messages each ReceiveMessage response carried (a long poll returns what is
// visible, up to the batch size): the responses, the messages, their mean and the count by size.
void receives_json(nlohmann::ordered_json& j, const RunResult& r) {
  std::uint64_t responses = 0, messages = 0;
  for (std::size_t n = 1; n < r.receives_by_size.size(); ++n) {
    responses += r.receives_by_size[n];
    messages += n * r.receives_by_size[n];
  }
  auto& o = j["receives"];
  o["responses"] = responses;
  o["messages"] = messages;
  o["mean_per_response"] = responses ? static_cast<double>(messages) / static_cast<double>(responses) : 0.0;
  auto& by = o["by_size"];
  for (std::size_t n = 1; n < r.receives_by_size.size(); ++n) by[std::to_string(n)] = r.receives_by_size[n];
}

// consumers[].framework: each setting, its value and the brokersim key it set, so that a planner
// sees what was simulated, in both outputs.
nlohmann::ordered_json frameworks_json(const Scenario& s) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const FrameworkMapping& m : s.frameworks) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& row : m.rows)
      rows.push_back({{"setting", row.setting}, {"value", row.value}, {"key", row.key}, {"key_value", row.key_value},
                      {"note", row.note}});
    all.push_back({{"group", m.group}, {"framework", m.framework}, {"mapping", rows}});
  }
  return all;
}

void print_frameworks(std::ostream& out, const Scenario& s) {
  for (const FrameworkMapping& m : s.frameworks) {
    out << "Consumer group " << m.group << " is framework \"" << m.framework << "\", read as:\n";
    for (const auto& row : m.rows) {
      // A row with no setting is the framework's fixed behaviour (no setting of its changes it).
      std::string left = row.setting.empty() ? "  (always, in this framework)" : "  " + row.setting + " = " + row.value;
      std::string right = row.key.empty() ? "(no key)" : row.key + " = " + row.key_value;
      if (left.size() < 58) left.resize(58, ' ');
      out << left << " -> " << right << (row.note.empty() ? "" : ": " + row.note) << '\n';
    }
  }
  if (!s.frameworks.empty()) out << '\n';
}

}  // namespace

nlohmann::ordered_json result_json(const Scenario& scenario, const RunResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = scenario.name;
  j["seed"] = scenario.seed;
  j["replication"] = scenario.replication;

  tally_json(j, r);

  j["throughput_per_s"] = per_s(r.span_completed, r.measured_s);
  j["goodput_per_s"] = per_s(r.span_completed_on_time, r.measured_s);
  j["slot_utilization"] = r.slot_utilization;
  j["idle_slots_with_backlog"] = r.idle_slots_with_backlog;
  j["idle_slots_with_stranded_work"] = r.idle_slots_with_stranded_work;
  {
    auto& split = j["expired_before_start_by_cause"];
    const double g = static_cast<double>(r.generated);
    split["on_receipt"] = r.stale_on_receipt;
    split["in_local_buffer"] = r.stale_in_local_buffer;
    split["fraction_on_receipt"] = r.generated ? static_cast<double>(r.stale_on_receipt) / g : 0.0;
    split["fraction_in_local_buffer"] = r.generated ? static_cast<double>(r.stale_in_local_buffer) / g : 0.0;
  }
  for (const CounterMetric& c : kCounters) j[std::string(c.name)] = r.*c.field;
  {
    auto& causes = j["duplicate_executions_by_cause"];
    for (const DuplicateCauseMetric& m : kDuplicateCauses) causes[std::string(m.name)] = r.duplicates_by_cause[index(m.cause)];
  }
  j["jobs_waited"] = r.generated - std::min(r.generated, r.started_at_once);
  if (scenario.broker.kind == "amazon-sqs") receives_json(j, r);
  if (!scenario.frameworks.empty()) j["frameworks"] = frameworks_json(scenario);

  auto& queues = j["queues"];
  for (const auto& q : r.queues) {
    auto& o = queues[q.name];
    o["published"] = q.published;
    o["delivered"] = q.delivered;
    o["expired"] = q.expired;
    auto& reasons = o["dead_lettered_by_reason"];
    reasons = nlohmann::ordered_json::object();
    for (DeathReason why : death_reasons_of(scenario.broker)) reasons[std::string(death_reason_name(why))] = q.dl(why);
    o["max_ready"] = q.max_ready;
    o["mean_ready"] = q.mean_ready;
    o["mean_unacked"] = q.mean_unacked;
    o["ready_at_end"] = q.ready_at_end;
    o["max_bytes"] = q.max_bytes;
    o["mean_bytes"] = q.mean_bytes;
    o["byte_seconds"] = q.byte_seconds;
    o["deletions"] = q.deletions;
  }

  auto& load = j["offered_load"];
  for (const QueueLoad& l : offered_load(scenario, r.groups)) {
    auto& o = load[scenario.broker.queues[l.queue].name];
    o["rate_per_s"] = l.rate_per_s;
    o["mean_service_ms"] = l.mean_service_ms;
    o["erlangs"] = l.erlangs();
    o["slots"] = l.slots;
    o["utilization"] = l.utilization();
    // What the fleet actually had, beside its ceiling: only where a group's size changes.
    if (reports_mean_slots(scenario, l.queue)) {
      o["mean_slots"] = l.mean_slots;
      o["mean_slots_utilization"] = l.mean_slots_utilization();
    }
    o["peak_rate_per_s"] = l.peak_rate_per_s;
    o["peak_utilization"] = l.peak_utilization();
  }

  if (scenario.observe_window) {
    nlohmann::ordered_json windows = nlohmann::ordered_json::array();
    for (const WindowResult& win : r.windows) windows.push_back(window_json(win));
    window_extremes(j, windows);
    j["windows"] = std::move(windows);
  }
  if (scenario.fleet_reported()) fleet_json(j, scenario, r);

  auto& run = j["run"];
  run["simulated_ms"] = sim::to_ms(r.end_time);
  run["measured_s"] = r.measured_s;
  run["events"] = r.events;
  if (scenario.stop_time) run["followed_ms"] = sim::to_ms(r.followed);
  run["peak_in_system"] = r.peak_in_system;
  run["stop_reason"] = stop_reason_name(r.stop_reason);
  // Only with warmup_ms "auto", so that every other run's JSON stays as it was.
  if (scenario.auto_warmup) {
    run["warmup_ms"] = sim::to_ms(scenario.warmup);
    run["steady_state"] = scenario.auto_warmup->steady;
  }
  return j;
}

namespace {

// A group scales or leaves (autoscale, stop_ms) or joins late (start_ms): the summary then says
// what the fleet cost, which a fixed fleet's slot count already says.
bool fleet_changes(const Scenario& s) {
  return std::any_of(s.consumers.begin(), s.consumers.end(),
                     [](const ConsumerSpec& c) { return c.autoscale || c.stop || c.start > 0; });
}

// Replica time in pod-hours (a replica is a pod), mean and peak replicas, per group and in all.
void print_fleet_cost(std::ostream& out, const Scenario& s, const RunResult& r) {
  double seconds = 0, mean = 0;
  for (const GroupFleetResult& g : r.groups) {
    seconds += g.consumer_seconds;
    mean += g.mean_replicas;
  }
  out << "Fleet cost over the measured " << fmt("%.0f", r.measured_s) << " s: " << fmt("%.2f", seconds / 3600.0)
      << " pod-hours, mean " << fmt("%.2f", mean) << " replicas, peak " << r.peak_replicas_total << " at once\n";
  for (std::size_t g = 0; g < s.consumers.size() && g < r.groups.size(); ++g) {
    const ConsumerSpec& c = s.consumers[g];
    out << "  group " << g << " (" << s.broker.queues[static_cast<std::size_t>(c.queue)].name << ", "
        << (c.autoscale ? "autoscaled " + std::to_string(c.autoscale->min) + ".." + std::to_string(c.autoscale->max)
                        : std::to_string(c.count) + (c.stop || c.start > 0 ? " for part of the run" : " fixed"))
        << "): " << fmt("%.2f", r.groups[g].consumer_seconds / 3600.0) << " pod-hours, mean "
        << fmt("%.2f", r.groups[g].mean_replicas) << " replicas, peak " << r.groups[g].peak_replicas << '\n';
  }
}

}  // namespace

void print_summary(std::ostream& out, const Scenario& s, const RunResult& r) {
  out << "brokersim " << BROKERSIM_VERSION << ": scenario \"" << s.name << "\", seed " << s.seed
      << ", " << fmt("%.0f", sim::to_ms(r.end_time)) << " ms simulated (stopped: " << stop_reason_name(r.stop_reason)
      << ")\n";
  if (s.auto_warmup) {
    out << "Warm-up chosen by MSER-5 on the " << (s.auto_warmup->stale ? "stale indicator" : "sojourn")
        << " of each job: " << fmt("%.0f", sim::to_ms(s.warmup)) << " ms (" << s.auto_warmup->jobs_discarded
        << " jobs discarded)";
    if (!s.auto_warmup->steady)
      out << "\nWARNING: no steady state was reached in this run: the series still trends at its end, so no warm-up"
             " makes the figures steady-state ones (a load above capacity, or a run too short)";
    out << '\n';
  }
  print_frameworks(out, s);
  // What is asked of the fleet, before what it did: a load near or above 100% explains the rest.
  // Over the measured span, as the throughput below; an autoscaled fleet at its ceiling and at
  // the replicas it had on average.
  const bool changes = fleet_changes(s);
  for (const QueueLoad& l : offered_load(s, r.groups)) {
    out << "Offered load on " << s.broker.queues[l.queue].name << ": " << fmt("%.2f", l.rate_per_s) << " jobs/s x "
        << fmt("%.1f", l.mean_service_ms) << " ms = " << fmt("%.2f", l.erlangs()) << " erlangs on " << l.slots
        << " slots" << (l.autoscaled ? " at autoscale.max" : "") << ": " << fmt("%.1f", 100 * l.utilization())
        << "% utilisation";
    if (changes && l.mean_slots > 0)
      out << "; on the run's mean " << fmt("%.2f", l.mean_slots) << " slots: " << fmt("%.1f", 100 * l.mean_slots_utilization())
          << "%";
    if (l.scheduled)
      out << "; peak " << fmt("%.2f", l.peak_rate_per_s) << " jobs/s from " << fmt("%.0f", l.peak_from_ms)
          << " ms: " << fmt("%.1f", 100 * l.peak_utilization()) << "%";
    out << '\n';
  }
  out << '\n';

  // The answer first, in one paragraph: how much work went stale, and where it waited.
  auto pct = [&](Outcome o) { return percent_of_jobs(r, r.outcomes[static_cast<std::size_t>(o)]); };
  auto share = [&](std::uint64_t n) { return percent_of_jobs(r, n); };
  auto mean_ms = [&](Wait w) { return r.wait(w).mean() / sim::kNsPerMsF; };
  const double stale = pct(Outcome::ExpiredInQueue) + pct(Outcome::ExpiredInTransit) + pct(Outcome::ExpiredBeforeStart);
  out << "In short: " << completed_words(r) << ", "
      << fmt("%.2f", pct(Outcome::CompletedLate) + pct(Outcome::TimedOut))
      << "% started but finished late or timed out,\n"
      << "and " << fmt("%.2f", stale) << "% expired before they started:\n  " << fmt("%.2f", pct(Outcome::ExpiredInQueue))
      << "% in the broker queue, " << fmt("%.2f", pct(Outcome::ExpiredInTransit)) << "% in transit,\n  "
      << fmt("%.2f", share(r.stale_on_receipt))
      << "% were already stale when a consumer received them (their budget was spent before delivery),\n  "
      << fmt("%.2f", share(r.stale_in_local_buffer)) << "% went stale waiting in a consumer's local (prefetch) buffer.\n";
  rest_sentence(out, r);
  out << "Mean wait: " << fmt("%.1f", mean_ms(Wait::Queue)) << " ms in the broker queue (per delivery";
  if (r.wait(Wait::QueueExpired).count() > 0)
    out << "; the " << grouped(r.wait(Wait::QueueExpired).count()) << " jobs that expired there waited "
        << fmt("%.1f", mean_ms(Wait::QueueExpired)) << " ms";
  out << "), " << fmt("%.1f", mean_ms(Wait::Transit)) << " ms in transit, " << fmt("%.1f", mean_ms(Wait::Local))
      << " ms in the consumers' local buffers.\n";
  dead_letter_sentence(out, s, r);
  if (r.duplicate_executions)
    out << grouped(r.duplicate_executions) << " executions were duplicates (a job started again): "
        << duplicate_causes(r) << ".\n";
  out << '\n';

  out << "Outcomes                          jobs        %\n";
  for (Outcome o : kReportedOutcomes) {
    const auto n = r.outcomes[static_cast<std::size_t>(o)];
    const double pct = percent_of_jobs(r, n);
    char line[128];
    std::snprintf(line, sizeof line, "  %-24s %12s %7.2f%%\n", std::string(outcome_name(o)).c_str(),
                  grouped(n).c_str(), pct);
    out << line;
  }
  {
    char line[128];
    std::snprintf(line, sizeof line, "  %-24s %12s\n\n", "generated", grouped(r.generated).c_str());
    out << line;
  }

  // Each row says what it counts (wait_unit): a job delivered twice is two deliveries.
  out << "Where the waiting happened (ms)        count of            mean        p50        p95        p99        max\n";
  for (const WaitMetric& m : kWaits) {
    const sim::Histogram& h = r.wait(m.wait);
    if (!m.shown_when_empty && h.count() == 0) continue;
    char label[64], line[224];
    std::snprintf(label, sizeof label, "%-8s (%s)", std::string(m.stage).c_str(), std::string(m.span).c_str());
    std::snprintf(line, sizeof line, "  %-32s %10s %-10s %10.2f %10.2f %10.2f %10.2f %10.2f\n", label,
                  grouped(h.count()).c_str(), wait_unit(m.wait), h.mean() / sim::kNsPerMsF, h.quantile(0.5) / sim::kNsPerMsF,
                  h.quantile(0.95) / sim::kNsPerMsF, h.quantile(0.99) / sim::kNsPerMsF, sim::to_ms(h.max()));
    out << line;
  }
  out << '\n';

  out << "Throughput " << fmt("%.3f", per_s(r.span_completed, r.measured_s)) << " jobs/s completed, goodput "
      << fmt("%.3f", per_s(r.span_completed_on_time, r.measured_s));
  if (r.span_completed_without_deadline == 0)
    out << " jobs/s on time\n";
  else if (r.span_completed_without_deadline == r.span_completed_on_time)
    out << " jobs/s (no deadline: every completion counts)\n";
  else
    out << " jobs/s on time or without a deadline\n";
  out << "Slot utilisation " << fmt("%.1f", 100 * r.slot_utilization)
      << "%; slots idle while the broker held ready messages: "
      << fmt("%.2f", 100 * r.idle_slots_with_backlog) << "% of slot time;\n"
      << "slots idle while another consumer's local buffer held unstarted jobs (stranded work): "
      << fmt("%.2f", 100 * r.idle_slots_with_stranded_work) << "% of slot time\n";
  out << "Clock skew: " << grouped(r.admitted_but_expired) << " admitted though already expired, "
      << grouped(r.rejected_but_valid) << " rejected though still valid (true time)\n";
  if (r.redeliveries || r.duplicate_executions || r.consumer_timeouts) {
    out << "Redeliveries " << grouped(r.redeliveries) << ", duplicate executions "
        << grouped(r.duplicate_executions) << ", consumer timeouts "
        << grouped(r.consumer_timeouts) << '\n';
    if (r.duplicate_executions) out << "Duplicate executions by cause: " << duplicate_causes(r) << '\n';
  }
  if (changes) print_fleet_cost(out, s, r);
  if (s.broker.kind == "amazon-sqs") {
    std::uint64_t responses = 0, messages = 0;
    std::string sizes;
    for (std::size_t n = 1; n < r.receives_by_size.size(); ++n) {
      responses += r.receives_by_size[n];
      messages += n * r.receives_by_size[n];
      if (r.receives_by_size[n]) sizes += (sizes.empty() ? "" : ", ") + std::to_string(n) + ": " + grouped(r.receives_by_size[n]);
    }
    out << "Receives " << grouped(responses) << " responses carried " << grouped(messages) << " messages, "
        << fmt("%.2f", responses ? static_cast<double>(messages) / static_cast<double>(responses) : 0.0)
        << " per response" << (sizes.empty() ? "" : " (by size " + sizes + ")") << '\n';
  }
  out << '\n';

  // One dl: column per reason the broker kind gives, named as in dead_lettered_by_reason.
  const auto reasons = death_reasons_of(s.broker);
  auto width = [](DeathReason why) { return static_cast<int>(std::max<std::size_t>(11, death_reason_name(why).size() + 3)); };
  out << "Queue              published  delivered    expired";
  for (DeathReason why : reasons) {
    char col[64];
    std::snprintf(col, sizeof col, " %*s", width(why), ("dl:" + std::string(death_reason_name(why))).c_str());
    out << col;
  }
  out << "  max_ready mean_ready mean_unacked\n";
  for (const auto& q : r.queues) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-16s %10s %10s %10s", q.name.c_str(), grouped(q.published).c_str(),
                  grouped(q.delivered).c_str(), grouped(q.expired).c_str());
    out << line;
    for (DeathReason why : reasons) {
      std::snprintf(line, sizeof line, " %*s", width(why), grouped(q.dl(why)).c_str());
      out << line;
    }
    std::snprintf(line, sizeof line, " %10s %10.2f %12.2f\n", grouped(q.max_ready).c_str(), q.mean_ready, q.mean_unacked);
    out << line;
  }
  if (stopped_by_limit(r.stop_reason))
    out << "\nWARNING: the run was stopped early by a limit (" << stop_reason_name(r.stop_reason)
        << "); the figures above cover only the simulated part.\n";
}

}  // namespace brokersim
