// The broker kinds brokersim simulates. Adding a broker: its file pair in models/brokers/, one
// line here, and its keys' validation in experiments/ (docs/architecture.md has the checklist).
#include "models/broker.hpp"
#include "models/brokers/azure_servicebus.hpp"
#include "models/brokers/amazon_sqs.hpp"
#include "models/brokers/rabbitmq.hpp"
#include "models/world.hpp"

namespace brokersim {

std::unique_ptr<Broker> make_broker(World& w) {
  // Both RabbitMQ kinds: the kind is each queue's default type (QueueSpec::type, set by the loader).
  if (w.s.broker.kind == "rabbitmq-classic" || w.s.broker.kind == "rabbitmq-quorum") return std::make_unique<RabbitMq>(w);
  if (w.s.broker.kind == "azure-servicebus") return std::make_unique<AzureServiceBus>(w);
  if (w.s.broker.kind == "amazon-sqs") return std::make_unique<AmazonSqs>(w);
  // The loader refuses every other kind with a clear error; reaching here is a bug.
  throw InvariantError("broker.kind " + w.s.broker.kind + " is not simulated");
}

}  // namespace brokersim
