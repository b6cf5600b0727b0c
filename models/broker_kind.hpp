// A broker kind, registered once: what the model needs to know of a broker.kind beyond its
// Broker class. Each kind defines its descriptor in its own files (models/brokers/); the
// scenario loader's registry (experiments/cli/loader/broker_kinds.cpp) lists each kind once,
// with its keys, its loader and this descriptor, and the loaded BrokerSpec points at it. Nothing
// shared compares kind names: the run builds the broker, the ledger's reports and the CLI's
// outputs take the kind's death reasons, figures and summary line from here.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/death_reason.hpp"

namespace brokersim {

class Broker;
struct BrokerSpec;
struct World;

// A figure only one broker kind knows (SQS's receive sizes): where it sits in run --json (and
// so its sweep column and plan name), its unit, and what it counts. The broker writes the
// values, in its kind's order, when the measured span closes (Broker::report).
struct BrokerFigure {
  std::vector<std::string> path;
  std::string unit, counts;
  bool count = true;  // a count of events (written as an integer); else a real number
};

struct BrokerKindModel {
  std::string_view name;  // as broker.kind spells it
  std::unique_ptr<Broker> (*make)(World& world);
  // The reasons its runs report in dead_lettered_by_reason (and the sweep columns made from
  // them), in output order, whatever a run produced: every run of a kind has the same columns.
  std::span<const DeathReason> (*death_reasons)(const BrokerSpec& broker);
  // The prefetch `import` writes for a placeholder consumer group: where prefetch 0 means
  // unlimited (RabbitMQ) a bounded 10; where it means "nothing beyond what a receive takes" 0.
  int import_prefetch = 10;
  // Its own figures, in the order Broker::report writes them (RunResult::broker_figures); none
  // if nullptr.
  const std::vector<BrokerFigure>& (*figures)() = nullptr;
  // Its line in the text summary from those figures (nullptr: none). `grouped` writes a count
  // as the rest of the summary does (thousands separated).
  void (*summary)(std::span<const double> figures, std::string (*grouped)(std::uint64_t), std::ostream& out) = nullptr;
};

}  // namespace brokersim
