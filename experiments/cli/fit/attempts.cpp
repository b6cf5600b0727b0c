#include "experiments/cli/fit/attempts.hpp"

#include <algorithm>
#include <tuple>

#include "sim/time.hpp"

namespace brokersim::fit {

Messages group_messages(const JobLog& log, const std::vector<std::size_t>& rows, std::int64_t origin) {
  Messages m;
  m.by_id = log.has_id();
  m.attempts = rows.size();
  m.arrivals.reserve(rows.size());
  if (!m.by_id) {
    for (std::size_t r : rows) {
      const JobRow& row = log.rows[r];
      m.arrivals.push_back(row.enqueued - origin);
      if (attempt_ended(row)) {
        ++m.ended;
        if (row.outcome == Outcome::Failed) ++m.ended_failed;
      }
    }
    std::sort(m.arrivals.begin(), m.arrivals.end());
    m.most = rows.empty() ? 0 : 1;
    return m;
  }
  // A message's attempts together, by key; its first enqueue is its arrival.
  struct Attempt {
    std::uint64_t key;
    std::int64_t enqueued;
    std::size_t row;
  };
  std::vector<Attempt> attempts;
  attempts.reserve(rows.size());
  for (std::size_t r : rows) attempts.push_back({log.message_keys[r], log.rows[r].enqueued, r});
  std::sort(attempts.begin(), attempts.end(), [](const Attempt& a, const Attempt& b) {
    return std::tie(a.key, a.enqueued, a.row) < std::tie(b.key, b.enqueued, b.row);
  });
  for (std::size_t i = 0; i < attempts.size();) {
    std::size_t j = i;
    bool ended = false, succeeded = false;
    for (; j < attempts.size() && attempts[j].key == attempts[i].key; ++j) {
      const JobRow& row = log.rows[attempts[j].row];
      ended = ended || attempt_ended(row);
      succeeded = succeeded || (attempt_ended(row) && row.outcome != Outcome::Failed);
    }
    m.arrivals.push_back(attempts[i].enqueued - origin);
    m.ended += ended;
    m.ended_failed += ended && !succeeded;
    if (j - i > 1) ++m.retried;
    m.most = std::max(m.most, j - i);
    i = j;
  }
  std::sort(m.arrivals.begin(), m.arrivals.end());
  return m;
}

FailureFit fit_failures(const JobLog& log, const std::vector<std::size_t>& rows, const Messages& messages,
                        double service_mean_ms) {
  FailureFit f;
  std::vector<double> durations;
  for (std::size_t r : rows) {
    const JobRow& row = log.rows[r];
    if (!attempt_ended(row)) continue;
    ++f.ended;
    if (row.outcome != Outcome::Failed) continue;
    ++f.failed;
    if (row.finished != kNoTime) durations.push_back(sim::to_ms(row.finished - row.started));
  }
  f.messages_ended = messages.ended;
  f.messages_failed = messages.ended_failed;
  f.failed_timed = durations.size();
  if (!durations.empty()) {
    f.durations = fit_service_times(std::move(durations));
    if (service_mean_ms > 0) f.fraction_of_service = f.durations->mean / service_mean_ms;
  }
  return f;
}

}  // namespace brokersim::fit
