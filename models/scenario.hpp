// A scenario as plain data, after validation. Durations are in nanoseconds (sim::Time) or, for
// distributions, already scaled to nanoseconds; rates per nanosecond are avoided (arrivals keep
// their own units). Produced by load_scenario() (experiments/cli/loader/scenario_load.cpp) from JSON.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/brokers/amazon_sqs_spec.hpp"
#include "models/brokers/azure_servicebus_spec.hpp"
#include "models/brokers/rabbitmq_spec.hpp"
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
  // Each broker kind's own settings (models/brokers/*_spec.hpp); a kind reads only its own.
  RabbitQueueSettings rabbitmq;
  ServiceBusQueueSettings servicebus;
  SqsQueueSettings sqs;
};

struct BrokerKindModel;  // models/broker_kind.hpp

struct BrokerSpec {
  std::string kind = "rabbitmq-classic";
  // The kind's descriptor (factory, death reasons, figures), set by the loader from `kind`.
  const BrokerKindModel* model = nullptr;
  std::string version = "4.2";
  Distribution delivery_latency;  // broker -> consumer, ns
  Distribution ack_latency;       // consumer -> broker, ns
  RabbitBrokerSettings rabbitmq;  // RabbitMQ's own (models/brokers/rabbitmq_spec.hpp)
  std::vector<QueueSpec> queues;  // sorted by name (JSON objects are), so indices are deterministic
};

struct ArrivalSpec {
  enum class Kind : std::uint8_t { Poisson, Periodic, AtTimes, Trace, RateSchedule };
  Kind kind = Kind::Poisson;
  double rate_per_s = 0;                 // Poisson
  Time every = 0;                        // Periodic
  std::vector<Time> at;                  // AtTimes, sorted ascending
  // linear: the rate goes in a straight line from rate_per_s at `from` to the next step's rate
  // at its `from` (a ramp), instead of holding until it.
  struct Step { Time from; double rate_per_s; bool linear = false; };
  std::vector<Step> schedule;            // RateSchedule, from strictly ascending, first from >= 0 (no arrivals before it)
  struct TraceRow { Time publish; std::optional<Time> deadline; std::optional<Time> service; };
  std::vector<TraceRow> trace;           // Trace, publish ascending
  std::string trace_path;                // as resolved, for messages
  std::uint64_t trace_fnv1a64 = 0;       // FNV-1a 64 of the file's bytes as read: what runs made apart pin
  // {"days_csv": FILE}: a trace of whole days, each run replaying one of them, drawn uniformly
  // (whole days resampled: a day keeps its own volume and shape). Day d's rows are
  // trace[day_starts[d] .. day_starts[d + 1]); empty for an ordinary trace.
  std::vector<std::size_t> day_starts;
  std::size_t days() const { return day_starts.empty() ? 0 : day_starts.size() - 1; }
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
  // creation -> the job's ETA, ns (extension; Celery's countdown): a consumer whose `eta` holds
  // does not start it before then, by its own clock. nullopt: no ETA.
  std::optional<Distribution> countdown;
  Distribution clock_offset;              // producer clock - true clock, ns (extension; default 0)
  Distribution message_bytes;             // body size in bytes (default 0)
  bool persistent = false;                // delivery_mode 2: survives a broker restart
  // producers[].volume: every arrival rate times `volume_multiplier` (growth as a what-if) and
  // times a fresh draw of `volume_per_run` in each run (days that differ; the draw comes from its
  // own stream, so run r of every setting sees the same day). `volume_given`: the file names the
  // key, so the run reports its multiplier (a sweep varying it keeps one set of columns).
  double volume_multiplier = 1;
  std::optional<Distribution> volume_per_run;
  bool volume_given = false;
  // volume.fitted (written by fit --days): how many whole days the per_run spread was fitted from,
  // and its cv's 95% interval, which plan's risk statement repeats. 0 days: not given.
  int volume_fitted_days = 0;
  double volume_cv_low = 0, volume_cv_high = 0;
  // producers[].fitted (written by fit): how many service times `service` was fitted from and how
  // many arrivals the rates were counted from; 0: not given. With the scenario's
  // parameter_uncertainty (`draw_parameters`, copied here), each run redraws what they estimate
  // (models/input_uncertainty.hpp).
  std::uint64_t fitted_service_times = 0, fitted_arrivals = 0;
  bool draw_parameters = false;
  ServiceBusSenderSettings servicebus;  // azure-servicebus's own (models/brokers/azure_servicebus_spec.hpp)
};

enum class Admission : std::uint8_t { None, CheckBeforeStart, CheckAtReceiveAndStart };

// A Kubernetes HPA driven by a KEDA scaler on the group's queue (models/autoscaler.hpp). Defaults
// are Kubernetes' and KEDA's (README "Fleets that change").
struct AutoscaleSpec {
  enum class Metric : std::uint8_t { Ready, ReadyUnacked, PublishRate };
  Metric metric = Metric::ReadyUnacked;   // KEDA's rabbitmq QueueLength over HTTP: ready + unacked
  double target_per_replica = 0;          // required
  int min = 1, max = 100;                 // HPA minReplicas 1; KEDA maxReplicaCount 100
  Time sync = Time{15'000} * sim::kNsPerMs;  // --horizontal-pod-autoscaler-sync-period
  double tolerance = 0.1;
  double activation = 0;                  // KEDA activationValue: above it, scale from zero
  Time cooldown = Time{300'000} * sim::kNsPerMs;  // KEDA cooldownPeriod: back to zero (min 0 only)
  // One direction's rules: the highest change its policies allow per period (selectPolicy Max),
  // after the stabilization window. A policy < 0 is absent.
  struct Rules {
    double percent = -1;
    int pods = -1;
    Time period = Time{15'000} * sim::kNsPerMs;
    Time stabilization = 0;
  };
  Rules up{100, 4, Time{15'000} * sim::kNsPerMs, 0};
  Rules down{100, -1, Time{15'000} * sim::kNsPerMs, Time{300'000} * sim::kNsPerMs};
  Distribution start_latency;             // request -> the new consumer attaches, ns
};
// Defer: Azure Service Bus's Defer() (azure-servicebus only).
enum class OnExpired : std::uint8_t { Ack, Reject, Requeue, Defer };

// consumers[].ack: when the client acknowledges a message. AfterFinish: its settlement follows the
// execution (brokersim's behaviour before the key existed). BeforeStart: it acks as a slot takes
// the job, after the admission check (Celery's default, task_acks_late false). OnReceipt: no-ack /
// auto-ack; the broker settles the message as it sends it (Service Bus: ReceiveAndDelete).
enum class AckMode : std::uint8_t { AfterFinish, BeforeStart, OnReceipt };

struct ConsumerSpec {
  int queue = 0;
  // consumers[].queue as a list (RabbitMQ): the queues after the first, read on the same channel
  // by the same consumers, sharing their slots and their buffer (Celery -Q a,b; one Spring
  // listener container on two queues).
  std::vector<int> other_queues;
  // How basic.qos's prefetch counts across those queues: per subscription (RabbitMQ's global=false,
  // its default) or for the channel as a whole (global=true: the queues share one window).
  enum class PrefetchScope : std::uint8_t { Consumer, Channel };
  PrefetchScope prefetch_scope = PrefetchScope::Consumer;
  bool reads_several() const { return !other_queues.empty(); }
  // The ledger's slot book its slots are kept in (models/ledger/slot_idleness.hpp): its queue's,
  // or for a group reading several queues, one of its own past the queues' (set by the loader).
  int slot_book = -1;
  int book() const { return slot_book >= 0 ? slot_book : queue; }
  bool reads(int q) const {
    return q == queue || std::find(other_queues.begin(), other_queues.end(), q) != other_queues.end();
  }
  int count = 1;
  int prefetch = 0;                       // 0 = unlimited (RabbitMQ default) (a scenario file's default: 0, as RabbitMQ)
  int slots = 1;
  Time start = 0;
  Distribution clock_offset;              // drawn once per consumer, ns (may be negative)
  Time uncertainty = 0;
  Admission admission = Admission::CheckBeforeStart;
  Time min_window = 0;
  OnExpired on_expired = OnExpired::Ack;
  AckMode ack = AckMode::AfterFinish;
  enum class ExecTimeout : std::uint8_t { None, RemainingBudget, Fixed };
  ExecTimeout exec_timeout = ExecTimeout::None;
  Distribution exec_timeout_value;        // ns, when Fixed
  double failure_probability = 0;
  // What the client does with a delivery whose execution's process was killed under it
  // (faults[].kill_process; Celery's prefork pool): Ack it (the task is gone: `lost`), or Requeue
  // it (it runs again). None: the group's executions have no process of their own to lose, and a
  // kill_process fault on it is refused.
  enum class OnProcessLost : std::uint8_t { None, Ack, Requeue };
  OnProcessLost on_process_lost = OnProcessLost::None;
  // What the client does with a job that carries an ETA (producers[].countdown_ms) not yet come by
  // its clock: Ignore it (starts it as any other), Hold it in memory until then, unacked and
  // counted in the prefetch, or hold it and raise its basic.qos prefetch by one while it holds it
  // (Celery's worker with global QoS): HoldOutsidePrefetch.
  enum class Eta : std::uint8_t { Ignore, Hold, HoldOutsidePrefetch };
  Eta eta = Eta::Ignore;
  // What the platform running the group meters for its bill in its own units (set from the
  // framework's mapping, FrameworkMapping::billing; experiments/cli/metrics/billing.hpp): each
  // execution, billed at least `execution_minimum` (Functions Consumption: 100 ms); and each
  // instance's activity periods, from an idle instance's first execution start to its last
  // execution's end (Flex Consumption), billed at least `activity_minimum` and in whole steps of
  // `activity_step`. A batch handler's executions are metered whatever `executions` says.
  struct Metering {
    bool executions = false, activity = false;
    Time execution_minimum = 0, activity_minimum = 0, activity_step = 0;
  };
  Metering metering;
  int priority = 0;                       // x-priority (extension): higher is served first
  // consumers[].batch_handler (models/consumer_batch.cpp): one execution takes up to
  // `max_messages` received messages, after waiting up to `window` for them (AWS Lambda's SQS
  // event source mapping; the Azure Functions Service Bus trigger's batches). max_messages 0 = no
  // batches: one message per execution.
  struct Batch {
    int max_messages = 0;
    // A batch of at least this many starts without waiting for the window's end (the Functions
    // trigger's minMessageBatchSize); 0: max_messages (Lambda's rule: a full batch, or the window).
    int min_messages = 0;
    Time window = 0;
    // failure_probability per message (the handler reports the failed items, Lambda's
    // ReportBatchItemFailures) instead of per execution (the whole batch fails).
    bool item_failures = false;
    // How the handler runs the batch's messages (batch_handler.execution): all at once, every
    // message starting and ending with the batch; or in turn, as a handler that loops over its
    // array does: each message starts when the one before it ends, is judged by the admission
    // rule then, and the batch is settled when its last message ends.
    enum class Execution : std::uint8_t { Concurrent, Sequential };
    Execution execution = Execution::Concurrent;
  };
  Batch batch;
  // Each broker kind's own client settings (models/brokers/*_spec.hpp).
  ServiceBusReceiverSettings servicebus;
  SqsClientSettings sqs;
  // The group leaves at `stop` (a deploy, a scale-down): no new deliveries, executing jobs get
  // `shutdown_grace` to finish, then the connection closes (Kubernetes' terminationGracePeriod).
  std::optional<Time> stop;
  Time shutdown_grace = Time{30'000} * sim::kNsPerMs;
  std::optional<AutoscaleSpec> autoscale;  // `count` is then the initial replica count
  // The file names stop_ms or autoscale, even as null: a sweep varying them between null and a
  // value reports fleet costs at every point.
  bool fleet_keys = false;
  // Consumers the group may have at once: an autoscaled group keeps `max` of them (members
  // beyond the replica count wait detached).
  int members() const { return autoscale ? std::max(count, autoscale->max) : count; }
};

struct FaultSpec {
  // KillProcess: the process running one of the consumer's executions dies; the consumer lives on.
  enum class Kind : std::uint8_t { Stall, Crash, BrokerDown, ClockStep, KillProcess };
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

// warmup_ms "auto": the warm-up is chosen by MSER-5 on the average of a pilot set of replications
// (experiments/cli/replication/warmup.hpp); `warmup` holds the choice once it is made.
struct AutoWarmup {
  bool stale = false;    // the series: false = sojourn per job, true = the stale indicator
  bool chosen = false;   // the pilots have run and `Scenario::warmup` is their choice
  bool steady = true;    // MSER-5's minimum lies in the first half: the series reached a steady state
  std::uint64_t jobs_discarded = 0;  // the cut d: jobs of each pilot's series before the warm-up's end
  // The bias check on the pilots' kept data: the paired Student-t statistic of (first half's mean
  // - second half's mean) over the pilots (NaN when it cannot be computed: too few jobs kept, or
  // every pilot's halves equal); `trending` when |trend_t| exceeds the 1% two-sided critical value.
  double trend_t = 0;
  bool trending = false;
};

// A consumer group written in its worker framework's own settings (consumers[].framework), or a
// producer in its client's publish options (producers[].framework): what each setting became in
// brokersim's keys, kept for `run` to print. The model never reads it.
struct FrameworkMapping {
  int group = 0;
  std::string framework;
  struct Row {
    std::string setting, value;  // the framework's name and value ("(default)" when not given)
    std::string key, key_value;  // the brokersim key it set (empty: it sets none) and its value
    std::string note;            // how, or why it changes nothing here
  };
  std::vector<Row> rows;
  // The platform that bills the group in its own units (experiments/cli/metrics/billing.hpp):
  // its plan and what the bill multiplies by. Plan None: not billed so (no `billing` figures).
  struct Billing {
    enum class Plan : std::uint8_t { None, Lambda, FunctionsConsumption, FunctionsFlex, FunctionsPremium, FunctionsDedicated };
    Plan plan = Plan::None;
    // Lambda: MemorySize. Consumption: the memory an execution uses as billed (rounded up to
    // 128 MB; 0: not given, no GB-seconds). Flex: the instance memory. Premium: the SKU's.
    double memory_mb = 0;
    double vcpus = 0;       // Premium: the SKU's cores
    int always_ready = 0;   // Flex: the group's always-ready instances (its first members)
    std::string sku;        // Premium, Dedicated: the plan's SKU as given (shown)
  };
  Billing billing;
};

struct Scenario {
  std::string name;
  std::uint64_t seed = 1;
  std::uint64_t replication = 0;
  std::optional<Time> stop_time;
  std::optional<std::uint64_t> stop_jobs;
  // stop.follow_ms: how long past stop_time the run may follow the jobs created in its span
  // (default: as long again as the span; 0: it ends at stop_time, leaving them in_system).
  std::optional<Time> stop_follow;
  Time warmup = 0;
  std::optional<AutoWarmup> auto_warmup;  // warmup_ms "auto" (or {"auto": "stale"})
  BrokerSpec broker;
  std::vector<ProducerSpec> producers;
  std::vector<ConsumerSpec> consumers;    // groups, as in the file
  std::vector<FaultSpec> faults;
  std::optional<Time> observe_every;
  std::optional<Time> observe_window;     // per-window outcomes and waits (run --json `windows`)
  Limits limits;
  std::vector<FrameworkMapping> frameworks;  // consumers[].framework, in group order
  // producers[].framework, in producer order; FrameworkMapping::group is the producer's index.
  std::vector<FrameworkMapping> producer_frameworks;

  int consumer_count() const {
    int n = 0;
    for (const auto& c : consumers) n += c.members();
    return n;
  }
  // Whether some producer publishes to queue q.
  bool published_to(int q) const {
    for (const auto& p : producers)
      if (p.queue == q) return true;
    return false;
  }
  // Jobs are reported by the queue their producer publishes to (jobs_by_queue) when producers
  // publish to more than one queue: a shared fleet's and a split fleet's queues read the same way.
  bool reports_jobs_by_queue() const {
    int published = 0;
    for (std::size_t q = 0; q < broker.queues.size(); ++q) published += published_to(static_cast<int>(q));
    return published > 1;
  }
  // The fleet changes during the run (a group stops or autoscales): fleet costs are reported
  // (also whenever windows are, so that a sweep of fixed against autoscaled fleets has one
  // set of metrics).
  bool fleet_reported() const {
    if (observe_window) return true;
    for (const auto& c : consumers)
      if (c.stop || c.autoscale || c.fleet_keys) return true;
    return false;
  }
};

}  // namespace brokersim
