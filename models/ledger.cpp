#include "models/ledger.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>
#include <utility>

#include "models/consumer.hpp"
#include "models/results.hpp"

namespace brokersim {

Ledger::Ledger(const Scenario& s, const RunOptions& o) : s_(s), opt_(o) {
  queues_.resize(s.broker.queues.size());
  for (const auto& c : s.consumers) queues_[c.queue].read = true;
  for (const auto& p : s.producers) track_bytes_ = track_bytes_ || !p.message_bytes.is_zero();
  r.consumers.resize(static_cast<std::size_t>(s.consumer_count()));
  tracing_ = o.trace != nullptr;
  idle_.assign(static_cast<std::size_t>(s.consumer_count()), 0);
  window_ = s.observe_window.value_or(0);
  series_ = o.timeseries != nullptr && s.observe_every.has_value();
  replicas_.assign(s.consumers.size(), 0);
  peak_replicas_.assign(s.consumers.size(), 0);
  replica_tw_.assign(s.consumers.size(), sim::TimeWeighted(0));
}

void Ledger::dead_lettered(const Job& job, int q, DeathReason why) {
  if (!job.counted) return;
  ++queues_[q].dead_lettered[static_cast<std::size_t>(why)];
}

void Ledger::copy_made(const Job& live) {
  auto [it, fresh] = copies_.try_emplace(live.id);
  if (fresh) it->second = {live.executions, 2};  // the ghost and the live copy
  else ++it->second.alive;
}

void Ledger::copy_gone(const Job& job) {
  const auto it = copies_.find(job.id);
  if (it != copies_.end() && --it->second.alive == 0) copies_.erase(it);
}

void Ledger::job_created(const Job& job) {
  if (job.counted) ++r.generated;
  if (WindowResult* win = window_of(job)) ++win->generated;
  ++unsettled_;
}

void Ledger::warmup(Time now) {
  for (auto& b : queues_) {
    b.ready_tw.reset(now);
    b.unacked_tw.reset(now);
    b.bytes_tw.reset(now);
    b.max_ready = b.counted_ready;
    b.max_bytes = b.counted_ready_bytes + b.counted_unacked_bytes;
  }
  busy_slots_.reset(now);
  attached_slots_.reset(now);
  for (std::size_t g = 0; g < replica_tw_.size(); ++g) {
    replica_tw_[g].reset(now);
    peak_replicas_[g] = replicas_[g];
  }
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    refresh_backlog(static_cast<int>(q), now);
    refresh_stranded(static_cast<int>(q), now);
    queues_[q].backlog_area = queues_[q].stranded_area = 0;
  }
}

void Ledger::record_sample(const Job& job, Outcome o) {
  auto& series = *opt_.job_series;
  if (series.size() <= job.id) series.resize(job.id + 1);
  const bool stale = o == Outcome::ExpiredInQueue || o == Outcome::ExpiredInTransit || o == Outcome::ExpiredBeforeStart;
  series[job.id] = {job.created, opt_.job_series_stale ? (stale ? 1.0 : 0.0) : sim::to_ms(job.ended - job.created)};
}

WindowResult* Ledger::window_at(Time created) {
  const auto k = static_cast<std::size_t>((created - s_.warmup) / window_);
  if (k >= r.windows.size()) r.windows.resize(k + 1);
  return &r.windows[k];
}

void Ledger::window_outcome(const Job& job, Outcome o) {
  WindowResult& win = *window_at(job.created);
  ++win.outcomes[static_cast<std::size_t>(o)];
  if (o == Outcome::InSystem) return;
  win.wait(Wait::Sojourn).add(job.ended - job.created);
  if (o == Outcome::CompletedOnTime || o == Outcome::CompletedLate) ++win.completed;
  if (o == Outcome::CompletedOnTime) ++win.completed_on_time;
}

// Every window of the measured span, empty ones included; a job created at the very end of the
// run (a window of length 0) joins the last full window.
void Ledger::finish_windows(Time now) {
  if (window_ == 0) return;
  const Time start = std::min(s_.warmup, now);
  const auto n = static_cast<std::size_t>(std::max<Time>(1, (now - start + window_ - 1) / window_));
  while (r.windows.size() > n) {
    r.windows[n - 1].merge(r.windows.back());
    r.windows.pop_back();
  }
  r.windows.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    r.windows[k].from = start + static_cast<Time>(k) * window_;
    r.windows[k].to = std::min(now, r.windows[k].from + window_);
  }
}

void Ledger::write_trace(const Job& job, Outcome o) {
  std::ostringstream row;
  auto t = [&](Time v) {
    row << ',';
    if (v >= 0) row << sim::format_ms(v);
  };
  row << job.id << ',' << job.producer << ',';
  if (job.delivered >= 0) row << s_.broker.queues[job.queue].name;
  row << ',';
  if (job.delivered >= 0) row << job.consumer;
  t(job.created);
  row << ',';
  if (job.deadline != sim::kNever) row << sim::format_ms(job.expires_at);
  t(job.published);
  t(job.delivered);
  t(job.received);
  t(job.started);
  t(job.finished);
  t(o == Outcome::InSystem ? -1 : job.ended);
  // warmup = 1: created before warmup_ms, so in no figure of the run (its row is here for
  // the record of what the system held).
  row << ',' << outcome_name(o) << ',' << job.redeliveries << ',' << job.deaths << ',' << (job.counted ? 0 : 1) << '\n';

  const std::uint64_t slot = job.id - trace_next_;
  if (trace_pending_.size() <= slot) trace_pending_.resize(slot + 1);
  trace_pending_[slot] = row.str();
  while (!trace_pending_.empty() && trace_pending_.front()) {
    *opt_.trace << *trace_pending_.front();
    trace_pending_.pop_front();
    ++trace_next_;
  }
}

void Ledger::finish(Time now, JobPool& jobs, const std::vector<Consumer>& consumers, RunResult& out) {
  // Jobs still alive: waiting in a queue some consumer reads, in transit, waiting locally or
  // executing (or whose requeue is on its way back) are in the system whatever was decided
  // before; a decided job resting in an unread queue, or whose ack is on its way, keeps its decision.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> alive;
  jobs.for_each_live([&](std::uint32_t i, Job& job) {
    if (!job.ghost) alive.emplace_back(job.id, i);  // a ghost is a copy, not a job
  });
  std::sort(alive.begin(), alive.end());
  for (auto [id, i] : alive) {
    Job& job = jobs[i];
    // A requeue on its way back to the broker is a job about to wait in the queue again.
    const bool moving = job.where == Where::Created || job.where == Where::Transit ||
                        job.where == Where::Local || job.where == Where::Executing ||
                        (job.where == Where::Settling && job.ack == Job::Ack::Requeue) ||
                        ((job.where == Where::Ready || job.where == Where::DeadLettering) && queues_[job.queue].read);
    count_outcome(job, moving || job.decision == Outcome::None ? Outcome::InSystem : job.decision);
  }
  if (opt_.trace) opt_.trace->flush();

  r.end_time = now;
  const Time span = now - std::min(s_.warmup, now);
  r.measured_s = sim::to_ms(span) / 1000.0;
  const double slot_area = attached_slots_.area(now);
  r.slot_utilization = slot_area > 0 ? busy_slots_.area(now) / slot_area : 0.0;
  double backlog_area = 0, stranded_area = 0;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    refresh_backlog(static_cast<int>(q), now);
    refresh_stranded(static_cast<int>(q), now);
    backlog_area += queues_[q].backlog_area;
    stranded_area += queues_[q].stranded_area;
  }
  r.idle_slots_with_backlog = slot_area > 0 ? backlog_area / slot_area : 0.0;
  r.idle_slots_with_stranded_work = slot_area > 0 ? stranded_area / slot_area : 0.0;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    const QueueBook& b = queues_[q];
    QueueResult qr;
    qr.name = s_.broker.queues[q].name;
    qr.published = b.published;
    qr.delivered = b.delivered;
    qr.dead_lettered = b.dead_lettered;
    qr.max_ready = b.max_ready;
    qr.mean_ready = b.ready_tw.mean(now);
    qr.mean_unacked = b.unacked_tw.mean(now);
    qr.ready_at_end = b.ready;  // every message: the state the run ends in
    qr.max_bytes = b.max_bytes;
    qr.mean_bytes = b.bytes_tw.mean(now);
    qr.byte_seconds = b.bytes_tw.area(now) / sim::kNsPerSF;
    qr.deletions = b.deletions;
    r.queues.push_back(qr);
  }
  for (const auto& c : consumers) {
    ConsumerResult& cr = r.consumers[static_cast<std::size_t>(c.index())];
    cr.utilization = c.busy_tw.mean(now) / static_cast<double>(c.slots());
    cr.mean_local = c.local_tw.mean(now);
  }

  finish_windows(now);
  for (std::size_t g = 0; g < s_.consumers.size(); ++g) {
    GroupFleetResult fr;
    fr.consumer_seconds = replica_tw_[g].area(now) / sim::kNsPerSF;
    fr.slot_seconds = fr.consumer_seconds * s_.consumers[g].slots;
    fr.mean_replicas = r.measured_s > 0 ? fr.consumer_seconds / r.measured_s : replicas_[g];
    fr.peak_replicas = peak_replicas_[g];
    r.groups.push_back(fr);
  }

  std::uint64_t sum = 0;
  for (auto n : r.outcomes) sum += n;
  if (sum != r.generated)
    throw InvariantError("outcomes add up to " + std::to_string(sum) + " but " +
                         std::to_string(r.generated) + " jobs were generated");
  out = std::move(r);
}

}  // namespace brokersim
