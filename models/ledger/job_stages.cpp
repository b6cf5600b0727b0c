#include "models/ledger/job_stages.hpp"

#include <algorithm>

namespace brokersim {

JobStages stages_of(const Job& job, Outcome o) {
  JobStages s;
  const Time end = job.ended;
  if (job.published < 0) {  // refused before it was published
    s.publish = end - job.created;
    return s;
  }
  s.publish = job.published - job.created;
  if (job.delivered < 0) {  // never delivered: the broker's all along
    s.queue = end - job.published;
    return s;
  }
  // Before the last delivery (World::sent keeps these): the broker's time and earlier deliveries.
  s.held = job.stage_held;
  s.queue = job.delivered - job.published - job.stage_held;
  const Time delivered = job.delivered;
  if (decided_by_client(o)) {
    // The deciding delivery, stage by stage, until the decision (the end of its execution, or
    // the admission check's rejection).
    Time* stage[] = {&s.transit, &s.local, &s.service};
    Time at = delivered;
    std::size_t k = 0;
    for (Time next : {job.received, job.started, job.finished}) {
      if (next < 0 || k == 2) break;
      next = std::max(at, std::min(next, end));
      *stage[k++] += next - at;
      at = next;
    }
    *stage[k] += end - at;
  } else if (job.back >= delivered && job.back <= end) {
    // The broker decided after it had the message back: the delivery held it until then.
    s.held += job.back - delivered;
    s.queue += end - job.back;
  } else {
    // The broker decided while a client held it (a receive-and-delete client's crash).
    s.held += end - delivered;
  }
  return s;
}

}  // namespace brokersim
