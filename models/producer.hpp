// The producer side of a run: a job is created (Ev::Arrival), carries its deadline in the
// producer's clock, and is published after an optional delay (Ev::Publish). The arrival process
// and the job's draws are the workload's (models/workload.hpp); the broker is reached only
// through the Broker interface.
#pragma once

#include <cstdint>

namespace brokersim {

struct World;

// Ev::Arrival for producer p: create the next job, publish it (now or after its delay), and
// schedule the producer's next arrival.
void create_job(World& w, std::uint32_t producer);
// Ev::Publish (gen already checked), or at once from create_job: the producer refuses to publish
// work that is already stale by its own clock, sets a remaining-budget TTL, and hands the job to
// the broker.
void publish_job(World& w, std::uint32_t job);

}  // namespace brokersim
