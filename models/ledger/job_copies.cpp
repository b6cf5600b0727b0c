#include "models/ledger/job_copies.hpp"

namespace brokersim {

void JobCopies::made(const Job& live) {
  auto [it, fresh] = copies_.try_emplace(live.id);
  if (fresh) it->second = {live.executions, 2, live.first_started(), live.again};  // the ghost and the live copy
  else ++it->second.alive;
}

void JobCopies::gone(const Job& job) {
  const auto it = copies_.find(job.id);
  if (it != copies_.end() && --it->second.alive == 0) copies_.erase(it);
}

}  // namespace brokersim
