// The broker a scenario names: its kind's descriptor (models/broker_kind.hpp), which the loader
// found by broker.kind, builds it. Adding a broker: its files in models/brokers/ with its
// descriptor, and one line in the loader's registry (docs/architecture.md has the checklist).
#include "models/broker.hpp"
#include "models/broker_kind.hpp"
#include "models/world.hpp"

namespace brokersim {

std::unique_ptr<Broker> make_broker(World& w) {
  // The loader refuses every kind it cannot simulate with a clear error; reaching here is a bug.
  if (w.s.broker.model == nullptr) throw InvariantError("broker.kind " + w.s.broker.kind + " is not simulated");
  return w.s.broker.model->make(w);
}

}  // namespace brokersim
