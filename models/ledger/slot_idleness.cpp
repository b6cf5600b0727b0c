#include "models/ledger/slot_idleness.hpp"

namespace brokersim {

void SlotIdleness::warmup(Time now) {
  busy_slots_.reset(now);
  attached_slots_.reset(now);
  for (Queue& b : queues_) {
    refresh_backlog(b, now);
    refresh_stranded(b, now);
    b.backlog_area = b.stranded_area = 0;
  }
}

void SlotIdleness::finish(Time now, RunResult& r) {
  const double slot_area = attached_slots_.area(now);
  r.slot_utilization = slot_area > 0 ? busy_slots_.area(now) / slot_area : 0.0;
  double backlog_area = 0, stranded_area = 0;
  for (Queue& b : queues_) {
    refresh_backlog(b, now);
    refresh_stranded(b, now);
    backlog_area += b.backlog_area;
    stranded_area += b.stranded_area;
  }
  r.idle_slots_with_backlog = slot_area > 0 ? backlog_area / slot_area : 0.0;
  r.idle_slots_with_stranded_work = slot_area > 0 ? stranded_area / slot_area : 0.0;
}

}  // namespace brokersim
