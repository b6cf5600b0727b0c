#include "experiments/cli/fit/attempts.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

#include "sim/time.hpp"

namespace brokersim::fit {

Messages group_messages(const JobLog& log, const std::vector<std::size_t>& rows, std::int64_t origin) {
  Messages m;
  m.by_id = log.has_id();
  m.attempts = rows.size();
  m.arrivals.reserve(rows.size());
  if (!m.by_id) {
    for (std::size_t r : rows) m.arrivals.push_back(log.rows[r].enqueued - origin);
    std::sort(m.arrivals.begin(), m.arrivals.end());
    m.last_attempts = rows;
    m.most = rows.empty() ? 0 : 1;
    return m;
  }
  // A message's attempts in the order they were made: by enqueue, then by start (a redelivery
  // keeps its message's enqueue time on some brokers), a row never started last among equals.
  struct Attempt {
    std::uint64_t key;
    std::int64_t enqueued, started;
    std::size_t row;
  };
  std::vector<Attempt> attempts;
  attempts.reserve(rows.size());
  for (std::size_t r : rows) {
    const JobRow& row = log.rows[r];
    const std::int64_t started = row.started == kNoTime ? std::numeric_limits<std::int64_t>::max() : row.started;
    attempts.push_back({log.message_keys[r], row.enqueued, started, r});
  }
  std::sort(attempts.begin(), attempts.end(), [](const Attempt& a, const Attempt& b) {
    return std::tie(a.key, a.enqueued, a.started, a.row) < std::tie(b.key, b.enqueued, b.started, b.row);
  });
  for (std::size_t i = 0; i < attempts.size();) {
    std::size_t j = i + 1;
    while (j < attempts.size() && attempts[j].key == attempts[i].key) ++j;
    m.arrivals.push_back(attempts[i].enqueued - origin);
    m.last_attempts.push_back(attempts[j - 1].row);
    if (j - i > 1) ++m.retried;
    m.most = std::max(m.most, j - i);
    i = j;
  }
  std::sort(m.arrivals.begin(), m.arrivals.end());
  return m;
}

namespace {

bool ended(const JobRow& r) {
  return r.started != kNoTime && (r.outcome == Outcome::Failed || r.outcome == Outcome::Succeeded || r.outcome == Outcome::Finished);
}

}  // namespace

FailureFit fit_failures(const JobLog& log, const std::vector<std::size_t>& rows, const Messages& messages,
                        double service_mean_ms) {
  FailureFit f;
  std::vector<double> durations;
  for (std::size_t r : rows) {
    const JobRow& row = log.rows[r];
    if (!ended(row)) continue;
    ++f.ended;
    if (row.outcome != Outcome::Failed) continue;
    ++f.failed;
    if (row.finished != kNoTime) durations.push_back(sim::to_ms(row.finished - row.started));
  }
  for (std::size_t r : messages.last_attempts) {
    const JobRow& row = log.rows[r];
    if (!ended(row)) continue;
    ++f.messages_ended;
    if (row.outcome == Outcome::Failed) ++f.messages_failed;
  }
  f.failed_timed = durations.size();
  if (!durations.empty()) {
    f.durations = fit_service_times(std::move(durations));
    if (service_mean_ms > 0) f.fraction_of_service = f.durations->mean / service_mean_ms;
  }
  return f;
}

}  // namespace brokersim::fit
