#include "models/ledger/outcome_book.hpp"

namespace brokersim {

void OutcomeBook::record_sample(const Job& job, Outcome o) {
  auto& series = *series_;
  if (series.size() <= job.id) series.resize(job.id + 1);
  const bool stale = o == Outcome::ExpiredInQueue || o == Outcome::ExpiredInTransit || o == Outcome::ExpiredBeforeStart;
  series[job.id] = {job.created, series_stale_ ? (stale ? 1.0 : 0.0) : sim::to_ms(job.ended - job.created)};
}

}  // namespace brokersim
