#include "experiments/cli/report.hpp"

#include "experiments/cli/metrics/registry.hpp"
#include "experiments/cli/offered_load.hpp"
#include "experiments/cli/replication/warmup.hpp"
#include "experiments/cli/text.hpp"
#include "models/broker_kind.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>

namespace brokersim {

namespace {


// n as a percentage of the jobs generated in the measured span (0 when there were none): every
// share the summary prints.
double percent_of_jobs(const RunResult& r, std::uint64_t n) {
  return r.generated ? 100.0 * static_cast<double>(n) / static_cast<double>(r.generated) : 0.0;
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
  for (DeathReason why : reported_death_reasons(s.broker)) {
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

// producers[].framework and consumers[].framework, as run --json's `producer_frameworks` and
// `frameworks` say them (experiments/cli/metrics/registry.cpp).
void print_mapping(std::ostream& out, const FrameworkMapping& m, const char* entry) {
  out << entry << ' ' << m.group << " is framework \"" << m.framework << "\", read as:\n";
  for (const auto& row : m.rows) {
    // A row with no setting is the framework's fixed behaviour (no setting of its changes it).
    std::string left = row.setting.empty() ? "  (always, in this framework)" : "  " + row.setting + " = " + row.value;
    std::string right = row.key.empty() ? "(no key)" : row.key + " = " + row.key_value;
    if (left.size() < 58) left.resize(58, ' ');
    out << left << " -> " << right << (row.note.empty() ? "" : ": " + row.note) << '\n';
  }
}

void print_frameworks(std::ostream& out, const Scenario& s) {
  for (const FrameworkMapping& m : s.producer_frameworks) print_mapping(out, m, "Producer");
  for (const FrameworkMapping& m : s.frameworks) print_mapping(out, m, "Consumer group");
  if (!s.frameworks.empty() || !s.producer_frameworks.empty()) out << '\n';
}

// A group scales or leaves (autoscale, stop_ms) or joins late (start_ms): the summary then says
// what the fleet cost, which a fixed fleet's slot count already says.
bool fleet_changes(const Scenario& s) {
  return std::any_of(s.consumers.begin(), s.consumers.end(),
                     [](const ConsumerSpec& c) { return c.autoscale || c.stop || c.start > 0; });
}

// The offered load's peak, after its mean: a rate_schedule's highest step, or the busiest window of
// arrivals at given times (a burst the mean spreads over the whole run); nothing for a constant rate.
std::string peak_words(const QueueLoad& l) {
  if (!l.scheduled && l.peak_window_ms <= 0) return "";
  std::string s = "; peak " + fmt("%.2f", l.peak_rate_per_s) + " jobs/s";
  if (l.peak_window_ms > 0 && !l.scheduled)
    s += " in the busiest " + fmt("%g", l.peak_window_ms / 1000) + " s" + (l.peak_day >= 0 ? " of any day" : "") + ",";
  s += " from " + fmt("%.0f", l.peak_from_ms) + " ms";
  if (l.peak_day >= 0) s += " of day " + std::to_string(l.peak_day);
  return s + ": " + fmt("%.1f", 100 * l.peak_utilization()) + "%";
}

// Jobs by the queue they were published to: which queue's jobs pay for the slots.
void by_queue_sentence(std::ostream& out, const Scenario& s, const RunResult& r) {
  if (r.by_queue.empty()) return;
  out << "By the queue a job was published to (jobs_by_queue):\n";
  for (std::size_t q = 0; q < r.by_queue.size(); ++q) {
    const WindowResult& t = r.by_queue[q];
    if (t.generated == 0) continue;
    const auto pct = [&](std::uint64_t n) { return fmt("%.2f", 100.0 * static_cast<double>(n) / static_cast<double>(t.generated)); };
    const SparseHistogram& queue_wait = t.wait(Wait::Queue);
    std::uint64_t stale = 0;
    for (Outcome o : {Outcome::ExpiredInQueue, Outcome::ExpiredInTransit, Outcome::ExpiredBeforeStart})
      stale += t.outcomes[static_cast<std::size_t>(o)];
    // As the summary's first line: a job without a deadline completes, never "on time".
    const std::uint64_t with_deadline = t.completed_on_time - t.completed_without_deadline;
    out << "  " << s.broker.queues[q].name << ": " << grouped(t.generated) << " jobs, ";
    if (with_deadline > 0 || t.completed_without_deadline == 0) out << pct(with_deadline) << "% completed on time, ";
    if (t.completed_without_deadline > 0) out << pct(t.completed_without_deadline) << "% completed (no deadline), ";
    out << pct(stale) << "% expired before they started; broker-queue wait mean "
        << fmt("%.1f", queue_wait.mean() / sim::kNsPerMsF) << " ms, p95 " << fmt("%.1f", queue_wait.quantile(0.95) / sim::kNsPerMsF)
        << " ms; local-buffer wait mean " << fmt("%.1f", t.wait(Wait::Local).mean() / sim::kNsPerMsF) << " ms\n";
  }
}

// The queues a group reads, by name ("a" or "a+b").
std::string group_queues(const Scenario& s, const ConsumerSpec& c) {
  std::string names = s.broker.queues[static_cast<std::size_t>(c.queue)].name;
  for (int q : c.other_queues) names += "+" + s.broker.queues[static_cast<std::size_t>(q)].name;
  return names;
}

// A group a platform runs per invocation (aws-lambda): its replicas are concurrent invocations,
// not pods, and its bill is requests and GB-seconds (the "Billed" line), not replica time.
bool runs_per_invocation(const Scenario& s, std::size_t group) {
  for (const FrameworkMapping& m : s.frameworks)
    if (static_cast<std::size_t>(m.group) == group && m.framework == "aws-lambda") return true;
  return false;
}

// Replica time in pod-hours (a replica is a pod; an aws-lambda group's are concurrent invocations, in
// concurrency-hours), mean and peak replicas, per group and in all.
void print_fleet_cost(std::ostream& out, const Scenario& s, const RunResult& r) {
  double pod_seconds = 0, concurrency_seconds = 0, mean = 0;
  for (std::size_t g = 0; g < r.groups.size(); ++g) {
    (runs_per_invocation(s, g) ? concurrency_seconds : pod_seconds) += r.groups[g].consumer_seconds;
    mean += r.groups[g].mean_replicas;
  }
  if (concurrency_seconds == 0) {
    out << "Fleet cost over the measured " << fmt("%.0f", r.measured_s) << " s: " << fmt("%.2f", pod_seconds / 3600.0)
        << " pod-hours, mean " << fmt("%.2f", mean) << " replicas, peak " << r.peak_replicas_total << " at once\n";
  } else {
    out << "Fleet over the measured " << fmt("%.0f", r.measured_s) << " s: ";
    if (pod_seconds > 0) out << fmt("%.2f", pod_seconds / 3600.0) << " pod-hours of workers, ";
    out << fmt("%.2f", concurrency_seconds / 3600.0)
        << " concurrency-hours of functions (billed per request and GB-second, not by the hour), mean " << fmt("%.2f", mean)
        << (pod_seconds > 0 ? " replicas and concurrent invocations, peak " : " concurrent invocations, peak ")
        << r.peak_replicas_total << " at once\n";
  }
  for (std::size_t g = 0; g < s.consumers.size() && g < r.groups.size(); ++g) {
    const ConsumerSpec& c = s.consumers[g];
    const bool invocations = runs_per_invocation(s, g);
    out << "  group " << g << " (" << group_queues(s, c) << ", "
        << (c.autoscale ? "autoscaled " + std::to_string(c.autoscale->min) + ".." + std::to_string(c.autoscale->max)
                        : std::to_string(c.count) + (c.stop || c.start > 0 ? " for part of the run" : " fixed"))
        << "): " << fmt("%.2f", r.groups[g].consumer_seconds / 3600.0) << (invocations ? " concurrency-hours, mean " : " pod-hours, mean ")
        << fmt("%.2f", r.groups[g].mean_replicas) << (invocations ? " concurrent invocations, peak " : " replicas, peak ")
        << r.groups[g].peak_replicas << '\n';
  }
}

}  // namespace

// The registry writes it: the same entries sweeps and plans read their numbers from.
nlohmann::ordered_json result_json(const Scenario& scenario, const RunResult& r) {
  return MetricRegistry(scenario).json(scenario, r);
}

void print_summary(std::ostream& out, const Scenario& s, const RunResult& r) {
  out << "brokersim " << BROKERSIM_VERSION << ": scenario \"" << s.name << "\", seed " << s.seed
      << ", " << fmt("%.0f", sim::to_ms(r.end_time)) << " ms simulated (stopped: " << stop_reason_name(r.stop_reason)
      << ")\n";
  if (s.auto_warmup) {
    out << "Warm-up chosen by MSER-5 on the " << (s.auto_warmup->stale ? "stale indicator" : "sojourn")
        << " of each job, averaged over " << kWarmupPilots << " pilot replications (not among those reported): "
        << fmt("%.0f", sim::to_ms(s.warmup)) << " ms (the first " << s.auto_warmup->jobs_discarded
        << " jobs of each pilot cut, past where a new replication settles at 99%); bias check, the kept data's first half"
           " against its second: t = "
        << (std::isnan(s.auto_warmup->trend_t) ? std::string("n/a") : fmt("%.2f", s.auto_warmup->trend_t))
        << (s.auto_warmup->trending ? " (it still trends)" : "");
    if (!s.auto_warmup->steady)
      out << "\nWARNING: no steady state was reached in this run: the series still trends at its end, so no warm-up"
             " makes the figures steady-state ones (a load above capacity, or a run too short)";
    else if (s.auto_warmup->trending)
      out << "\nWARNING: the data kept after the warm-up still trends (its first half's mean differs from its second's"
             " at the 1% level over the pilots): the figures may carry the start-up; run longer";
    out << '\n';
  }
  print_frameworks(out, s);
  // What is asked of the fleet, before what it did: a load near or above 100% explains the rest.
  // Over the measured span, as the throughput below; an autoscaled fleet at its ceiling and at
  // the replicas it had on average.
  const bool changes = fleet_changes(s);
  for (const QueueLoad& l : offered_load(s, r.groups)) {
    out << "Offered load on " << s.broker.queues[l.queue].name << ": " << fmt("%.2f", l.rate_per_s) << " jobs/s x "
        << fmt("%.1f", l.mean_service_ms) << " ms = " << fmt("%.2f", l.erlangs()) << " erlangs";
    if (l.pool_queues > 1)  // its slots are shared: the pool's load is what they carry
      out << "; with the " << l.pool_queues - 1 << " other queue" << (l.pool_queues > 2 ? "s" : "")
          << " sharing its slots, " << fmt("%.2f", l.pool_erlangs) << " erlangs on " << l.pool_slots << " slots";
    else
      out << " on " << l.slots << " slots";
    out << (l.autoscaled ? " at autoscale.max" : "") << ": " << fmt("%.1f", 100 * l.utilization()) << "% utilisation";
    if (changes && l.mean_slots > 0)
      out << "; on the run's mean " << fmt("%.2f", l.mean_slots) << " slots: " << fmt("%.1f", 100 * l.mean_slots_utilization())
          << "%";
    out << peak_words(l) << '\n';
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
  by_queue_sentence(out, s, r);
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
  // A platform's own cost units (billing.hpp).
  for (const GroupBilling& b : billed_groups(s)) out << billing_line(b, r);
  if (s.broker.model != nullptr && s.broker.model->summary != nullptr)
    s.broker.model->summary(r.broker_figures, [](std::uint64_t n) { return grouped(n); }, out);
  out << '\n';

  // One dl: column per reason the broker kind gives, named as in dead_lettered_by_reason.
  const auto reasons = reported_death_reasons(s.broker);
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
