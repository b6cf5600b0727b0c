#include "experiments/cli/outputs/trace_csv.hpp"

#include <ostream>
#include <sstream>

namespace brokersim {

void TraceCsv::job_ended(const Job& job, Outcome o, const JobAccount& account) {
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
  row << ',' << outcome_name(o) << ',' << job.redeliveries << ',' << job.deaths << ',' << (job.counted ? 0 : 1) << ','
      << account.executions;
  t(account.first_started);
  // The stages add up to ended - created (docs/outcomes.md); none for a job still in the system.
  const JobStages& st = account.stages;
  for (Time v : {st.publish, st.queue, st.held, st.transit, st.local, st.service}) t(o == Outcome::InSystem ? -1 : v);
  row << '\n';

  const std::uint64_t slot = job.id - next_;
  if (pending_.size() <= slot) pending_.resize(slot + 1);
  pending_[slot] = row.str();
  while (!pending_.empty() && pending_.front()) {
    out_ << *pending_.front();
    pending_.pop_front();
    ++next_;
  }
}

void TraceCsv::run_ended() { out_.flush(); }

}  // namespace brokersim
