// The parts of a RabbitMQ definitions export the importer works with, shared by its three files:
// rabbitmq.cpp reads the export into them and writes broker.queues, rabbitmq_policies.cpp applies
// policies and operator policies to a queue, rabbitmq_routing.cpp follows a dead letter through
// exchanges and bindings. Internal to the importer.
#pragma once

#include <map>
#include <memory>
#include <re2/re2.h>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "experiments/cli/import/common.hpp"

namespace brokersim::import::rabbitmq {

struct Policy {
  std::string name, vhost, apply_to, path;
  std::shared_ptr<const RE2> pattern;
  double priority = 0;
  json definition;
};

struct Queue {
  std::string raw, vhost, type, path, name;  // name: in the scenario
  json arguments = json::object();
};

struct Exchange {
  std::string type, path;
  std::string alternate;  // alternate-exchange (argument, else exchange policy); "" = none
  std::string alternate_how;
};

struct Binding {
  std::string source, vhost, destination, destination_type, routing_key;
  json arguments = json::object();
};

// One modelled key of a queue: its value after policy, operator policy and argument, and how.
struct Effective {
  json value;  // null: not set
  std::string how;
};

// The keys brokersim models, as policy keys (the queue argument is "x-" + key).
extern const std::vector<std::string> kModelled;

// Reading the export: a string member (with its default when not required), a top-level array,
// and the AMQP short-string limit on a name or key.
std::string text(const json& entry, const char* key, const std::string& path, const std::string& fallback, bool required);
const json& array_of(const json& doc, const char* key);
void short_string(const std::string& s, const std::string& path, const std::string& what);

// Policies (`policies`, `operator_policies`) and operator policies as a node exports them (runtime
// parameters of component "operator_policy").
std::vector<Policy> read_policies(const json& doc, const char* key);
std::vector<Policy> read_operator_parameters(const json& doc);

const Policy* match(const std::vector<Policy>& policies, const Queue& q, int version, std::vector<std::string>& notes,
                    const char* what);

// One modelled key of queue `q` after its policy, operator policy and arguments.
Effective effective(const std::string& key, const Queue& q, const Policy* policy, const Policy* op);

struct Topology {
  std::map<std::pair<std::string, std::string>, Exchange> exchanges;  // (vhost, name)
  std::vector<Binding> bindings;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> by_source;  // (vhost, source) -> bindings
};

// Where a dead letter goes: the queues it certainly reaches, what cannot be followed, and the
// routes that depend on message headers the file does not have (their outcome is unknown: never
// reported as dropped).
struct Route {
  std::set<std::string> queues;
  std::vector<std::string> problems;
  std::vector<std::string> unknown;
};

Route route(const Topology& t, const std::string& vhost, const std::string& start, const std::string& key);

}  // namespace brokersim::import::rabbitmq
