#include "models/job.hpp"

namespace brokersim {

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::None: return "none";
    case Outcome::RejectedAtPublish: return "rejected_at_publish";
    case Outcome::ExpiredInQueue: return "expired_in_queue";
    case Outcome::ExpiredInTransit: return "expired_in_transit";
    case Outcome::ExpiredBeforeStart: return "expired_before_start";
    case Outcome::CompletedOnTime: return "completed_on_time";
    case Outcome::CompletedLate: return "completed_late";
    case Outcome::TimedOut: return "timed_out";
    case Outcome::Failed: return "failed";
    case Outcome::Lost: return "lost";
    case Outcome::DeadLettered: return "dead_lettered";
    case Outcome::InSystem: return "in_system";
  }
  return "none";
}

}  // namespace brokersim
