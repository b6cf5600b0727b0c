// The registry of broker kinds: for each broker.kind, its model's descriptor (models/broker_kind.hpp:
// factory, death reasons, figures, summary line), the keys it accepts in each section and the
// code that validates them. Adding a broker is its model's files, one loader file here (its keys
// and its loader, like rabbitmq_classic.cpp) and one line in broker_kinds() (broker_kinds.cpp);
// the common sections take the kind's extra producer and consumer keys and its refusals from
// here and name the kind a foreign key belongs to, so nothing else branches on the kind.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "experiments/cli/loader/sections.hpp"
#include "models/broker_kind.hpp"

namespace brokersim::loader {

// Where a key sits: in "broker", in "broker.queues.NAME", in a producer or in a consumer group.
enum class Section : std::uint8_t { Broker, Queue, Producer, Consumer };

// A consumer ack mode (consumers[].ack) a kind cannot honour, and what its error expects.
struct RefusedAck {
  AckMode mode;
  std::string_view expected;
};

struct BrokerKind {
  const BrokerKindModel* model;  // the model's descriptor (its name is broker.kind's)
  // Every key the kind accepts in "broker" and in "broker.queues.NAME"; for producers and
  // consumers, the keys it adds to the common ones (workload.cpp, consumers.cpp).
  Keys broker_keys, queue_keys, producer_keys, consumer_keys;
  // Validates the whole "broker" object (kind included) and fills context.queue_names;
  // nullptr for a kind docs/scenario.md names that this version does not simulate.
  BrokerSpec (*load)(const json& broker, Context& context) = nullptr;
  // Read the kind's own producer / consumer keys (present in `v` only if listed above).
  void (*load_producer)(const json& v, const std::string& path, ProducerSpec& producer) = nullptr;
  void (*load_consumer)(const json& v, const std::string& path, ConsumerSpec& consumer) = nullptr;

  // The ack modes it refuses, and whether on_expired "defer" (Azure Service Bus's Defer()) is offered.
  std::span<const RefusedAck> refused_acks = {};
  bool defers = false;
  // Whether a consumer group's `queue` may be a list: one channel consuming several queues.
  bool reads_several_queues = false;

  std::string_view name() const { return model->name; }
  Keys keys(Section section) const;
};

// Every kind of docs/scenario.md, simulated or not; the first is the default for a missing broker.kind.
std::span<const BrokerKind* const> broker_kinds();

const BrokerKind& rabbitmq_classic();  // rabbitmq_classic.cpp
const BrokerKind& rabbitmq_quorum();   // rabbitmq_quorum.cpp
const BrokerKind& azure_servicebus();  // azure_servicebus.cpp
const BrokerKind& amazon_sqs();        // amazon_sqs.cpp

// What RabbitMQ kinds share (rabbitmq_classic.cpp): the broker keys and the classic queue keys,
// and the loader of "broker". A queue's type is its `type` key, else the kind's `default_type`;
// its keys are checked against its type's (a key of the other type names the queue's type), its
// classic keys read, and a quorum queue's own keys then by load_quorum_queue_keys.
Keys rabbitmq_broker_keys();
Keys rabbitmq_queue_keys();
// A RabbitMQ consumer group's own keys (prefetch_scope) and their reader, for both kinds.
Keys rabbitmq_consumer_keys();
void load_rabbitmq_consumer(const json& v, const std::string& path, ConsumerSpec& consumer);
BrokerSpec load_rabbitmq(const json& v, Context& context, const BrokerKind& kind, QueueType default_type);

// What quorum queues add (rabbitmq_quorum.cpp): their queue keys, the broker key of their
// at-least-once dead-letter worker, and the reader of their queue keys.
Keys quorum_queue_keys();
Keys quorum_broker_keys();
void load_quorum_queue_keys(const json& q, const std::string& at, QueueSpec& queue);

// What every kind's "broker" object starts with: its keys checked (a foreign key names its kind),
// the kind, and the delivery and ack latencies. `also`: keys accepted beyond the kind's (a
// rabbitmq-classic broker holding a quorum queue takes the quorum broker keys).
BrokerSpec load_broker_common(const json& v, const BrokerKind& kind, Keys also = {});

// The section's keys for `kind`: `common` (the keys every kind accepts there) and the kind's own.
std::vector<std::string_view> section_keys(Keys common, const BrokerKind& kind, Section section);

// For check_keys: names the other kinds that accept a key `kind` refuses in `section`.
KeyOwner foreign_key_owner(const BrokerKind& kind, Section section);

// Queue names are checked and collected in name order, before any queue is read, so that
// dead_letter_to can name a queue listed after it. `queues` is broker.queues.
void collect_queue_names(const json& queues, Context& context);

}  // namespace brokersim::loader
