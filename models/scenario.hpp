// A scenario as plain data, after validation. Durations are in nanoseconds (sim::Time) or, for
// distributions, already scaled to nanoseconds; rates per nanosecond are avoided (arrivals keep
// their own units). Produced by load_scenario() (experiments/scenario_load.cpp) from JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/distribution.hpp"
#include "sim/time.hpp"

namespace brokersim {

using sim::Distribution;
using sim::Time;

// A validation failure at the edge: `path` is written as --set takes it (consumers.0.prefetch).
struct ScenarioError : std::runtime_error {
  ScenarioError(std::string path, std::string expected, std::string got)
      : std::runtime_error(path.empty() ? "expected " + expected + ", got " + got
                                        : path + ": expected " + expected + ", got " + got),
        path(std::move(path)) {}
  explicit ScenarioError(const std::string& message) : std::runtime_error(message) {}
  std::string path;
};

enum class Overflow : std::uint8_t { DropHead, RejectPublish, RejectPublishDlx };

struct QueueSpec {
  std::string name;
  std::optional<Time> message_ttl;        // x-message-ttl
  std::optional<std::string> dead_letter_to;
  int dead_letter_index = -1;             // resolved index into Scenario::queues, -1 = drop
  std::optional<std::int64_t> max_length;
  Overflow overflow = Overflow::DropHead;
  std::optional<Time> expires;            // x-expires: deleted after being unused that long
  std::optional<std::int64_t> max_length_bytes;  // max-length-bytes (sum of ready message bodies)
  std::optional<Time> declare_every;      // a client re-declares the queue this often (extension)
  std::vector<Time> declare_at;           // ... or at these times (extension)
  // rabbitmq-quorum only: x-delivery-limit (nullopt = the version's default: 20 from 4.0, none in
  // 3.13; -1 = disabled) and the dead-letter strategy.
  std::optional<std::int64_t> delivery_limit;
  bool dead_letter_at_least_once = false;
  // azure-servicebus only: the peek-lock duration, MaxDeliveryCount, the entity's default (and
  // ceiling) message TTL, dead-lettering on expiration, and sessions.
  Time lock_duration = Time{60'000} * sim::kNsPerMs;
  int max_delivery_count = 10;
  std::optional<Time> default_ttl;
  bool dead_letter_on_expiration = false;
  bool requires_session = false;
  // amazon-sqs only: the visibility timeout, retention from the original enqueue, the queue's
  // delivery delay, and the redrive policy's maxReceiveCount (with dead_letter_to).
  Time visibility_timeout = Time{30'000} * sim::kNsPerMs;
  Time retention = Time{345'600'000} * sim::kNsPerMs;
  Time delay = 0;
  std::optional<int> max_receive_count;
};

struct BrokerSpec {
  std::string kind = "rabbitmq-classic";
  std::string version = "4.2";
  Distribution delivery_latency;  // broker -> consumer, ns
  Distribution ack_latency;       // consumer -> broker, ns
  // Delivery acknowledgement timeout (RabbitMQ consumer_timeout, default 30 min); nullopt = off.
  std::optional<Time> consumer_timeout = Time{1'800'000} * sim::kNsPerMs;
  Distribution expiry_slack;      // added to every head-expiry timer firing, ns (default 0)
  std::vector<QueueSpec> queues;  // sorted by name (JSON objects are), so indices are deterministic
};

struct ArrivalSpec {
  enum class Kind : std::uint8_t { Poisson, Periodic, AtTimes, Trace, RateSchedule };
  Kind kind = Kind::Poisson;
  double rate_per_s = 0;                 // Poisson
  Time every = 0;                        // Periodic
  std::vector<Time> at;                  // AtTimes, sorted ascending
  struct Step { Time from; double rate_per_s; };
  std::vector<Step> schedule;            // RateSchedule, from strictly ascending, first from >= 0 (no arrivals before it)
  struct TraceRow { Time publish; std::optional<Time> deadline; std::optional<Time> service; };
  std::vector<TraceRow> trace;           // Trace, publish ascending
  std::string trace_path;                // as resolved, for messages
};

struct ProducerSpec {
  int queue = 0;                          // index into BrokerSpec::queues
  ArrivalSpec arrivals;
  std::optional<Distribution> deadline;   // relative to creation, ns; nullopt = no deadline
  enum class Expiration : std::uint8_t { None, Fixed, RemainingBudget };
  Expiration expiration = Expiration::None;
  Distribution expiration_value;          // ns, when Fixed
  Distribution service;                   // ns
  Distribution publish_delay;             // creation -> publish, ns (extension; default 0)
  Distribution clock_offset;              // producer clock - true clock, ns (extension; default 0)
  Distribution message_bytes;             // body size in bytes (default 0)
  bool persistent = false;                // delivery_mode 2: survives a broker restart
  // azure-servicebus only: a scheduled enqueue this long after the publish (the TTL starts at
  // activation), and the session id each message carries (drawn per message, rounded).
  std::optional<Distribution> scheduled_delay;
  std::optional<Distribution> session;
};

enum class Admission : std::uint8_t { None, CheckBeforeStart, CheckAtReceiveAndStart };
enum class OnExpired : std::uint8_t { Ack, Reject, Requeue };

struct ConsumerSpec {
  int queue = 0;
  int count = 1;
  int prefetch = 0;                       // 0 = unlimited (RabbitMQ default) (a scenario file's default: 0, as RabbitMQ)
  int slots = 1;
  Time start = 0;
  Distribution clock_offset;              // drawn once per consumer, ns (may be negative)
  Time uncertainty = 0;
  Admission admission = Admission::CheckBeforeStart;
  Time min_window = 0;
  OnExpired on_expired = OnExpired::Ack;
  enum class ExecTimeout : std::uint8_t { None, RemainingBudget, Fixed };
  ExecTimeout exec_timeout = ExecTimeout::None;
  Distribution exec_timeout_value;        // ns, when Fixed
  double failure_probability = 0;
  int priority = 0;                       // x-priority (extension): higher is served first
  // azure-servicebus only: ReceiveAndDelete settles a message when it is sent (lost on a crash).
  bool receive_and_delete = false;
  // amazon-sqs only: messages per ReceiveMessage call (1..10).
  int batch_size = 1;
};

struct FaultSpec {
  enum class Kind : std::uint8_t { Stall, Crash, BrokerDown, ClockStep };
  Kind kind = Kind::Stall;
  Time at = 0;
  int consumer = -1;                      // global consumer index (numbered across groups)
  Time duration = 0;                      // stall_ms, broker_down_ms, restart_after_ms
  bool restart = false;                   // crash: restart_after_ms given
  Time step = 0;                          // clock_step_ms (may be negative)
};

struct Limits {
  std::uint64_t max_in_system = 20'000'000;
  std::uint64_t max_events = 2'000'000'000;
};

// warmup_ms "auto": the warm-up is chosen by MSER-5 on a pilot run's job-level series (see
// experiments/precision.hpp); `warmup` holds the choice once it is made.
struct AutoWarmup {
  bool stale = false;    // the series: false = sojourn per job, true = the stale indicator
  bool chosen = false;   // the pilot has run and `Scenario::warmup` is its choice
  bool steady = true;    // MSER-5's minimum lies in the first half: the series reached a steady state
  std::uint64_t jobs_discarded = 0;
};

struct Scenario {
  std::string name;
  std::uint64_t seed = 1;
  std::uint64_t replication = 0;
  std::optional<Time> stop_time;
  std::optional<std::uint64_t> stop_jobs;
  Time warmup = 0;
  std::optional<AutoWarmup> auto_warmup;  // warmup_ms "auto" (or {"auto": "stale"})
  BrokerSpec broker;
  std::vector<ProducerSpec> producers;
  std::vector<ConsumerSpec> consumers;    // groups, as in the file
  std::vector<FaultSpec> faults;
  std::optional<Time> observe_every;
  Limits limits;

  int consumer_count() const {
    int n = 0;
    for (const auto& c : consumers) n += c.count;
    return n;
  }
};

}  // namespace brokersim
