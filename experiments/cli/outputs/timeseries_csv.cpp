#include "experiments/cli/outputs/timeseries_csv.hpp"

#include <ostream>

#include "models/metrics.hpp"
#include "models/world.hpp"

namespace brokersim {

void TimeseriesCsv::started(const World& w) {
  out_ << "time_ms";
  for (const auto& q : w.s.broker.queues) out_ << ',' << q.name << ".ready," << q.name << ".unacked";
  for (const auto& c : w.consumers) out_ << ",consumer." << c.index() << ".local,consumer." << c.index() << ".executing";
  // Per interval: the outcomes that became final in it (the row's interval ends at its time;
  // `in_system` is no final outcome), and the replicas of each group (requested and not yet
  // gone, as the fleet costs count them).
  for (Outcome o : kReportedOutcomes)
    if (o != Outcome::InSystem) out_ << ",outcomes." << outcome_name(o);
  for (std::size_t g = 0; g < w.s.consumers.size(); ++g) out_ << ",group." << g << ".replicas";
  out_ << '\n';
}

void TimeseriesCsv::observed(const World& w, const OutcomeCounts& decided) {
  out_ << sim::format_ms(w.now);
  for (std::size_t q = 0; q < w.s.broker.queues.size(); ++q) {
    const QueueBook& b = w.ledger.queue(static_cast<int>(q));
    out_ << ',' << b.ready << ',' << b.unacked;
  }
  for (const auto& c : w.consumers) out_ << ',' << c.local.size() << ',' << c.busy;
  for (Outcome o : kReportedOutcomes)
    if (o != Outcome::InSystem) out_ << ',' << decided[static_cast<std::size_t>(o)];
  for (std::size_t g = 0; g < w.s.consumers.size(); ++g) out_ << ',' << w.ledger.replicas(static_cast<int>(g));
  out_ << '\n';
}

}  // namespace brokersim
