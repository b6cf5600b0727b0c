// AWS Lambda's event source mapping for an SQS standard queue (docs/framework-aws-lambda.md):
// each consumer of the group is one concurrent invocation (one batch in flight), and the mapping's
// pollers scale as Lambda documents them (services-sqs-scaling), drawn with brokersim's autoscaler.
#include <algorithm>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

// What Lambda's pollers do whatever the group says: receive with the queue's visibility timeout
// (the one the function's Timeout is checked against, `loaded` below) and leave a failed batch
// to come back. A group key saying otherwise would describe a mapping Lambda cannot run.
void refuse_client_keys(const Translation& t) {
  t.refuse_group_key("visibility_timeout_ms",
                     "the event source mapping receives with the queue's own visibility timeout, which Lambda checks the "
                     "function's Timeout against (services-sqs-configure): give the queue's visibility_timeout_ms");
  t.refuse_group_key("on_failure",
                     "Lambda returns a failed batch to the queue, its messages visible again when their visibility timeout "
                     "lapses (services-sqs-errorhandling): nothing deletes them");
}

void translate(Translation& t) {
  t.kinds({"amazon-sqs"}, "aws-lambda");
  refuse_client_keys(t);
  // BatchSize 1..10,000 on a standard queue; above 10 it needs MaximumBatchingWindowInSeconds >= 1
  // ("When you set BatchSize to a value greater than 10, you must set
  // MaximumBatchingWindowInSeconds to at least 1 second", services-sqs-parameters).
  const std::int64_t batch = t.integer("BatchSize", 10, 1, 10'000);
  const std::int64_t window = t.integer("MaximumBatchingWindowInSeconds", 0, 0, 300);
  if (batch > 10 && window < 1)
    t.refuse("MaximumBatchingWindowInSeconds",
             "below 1 with BatchSize " + t.shown("BatchSize") +
                 " (Lambda requires a batching window of at least 1 s when BatchSize is above 10, CreateEventSourceMapping "
                 "API reference)");
  // A batch of one, at once: one message per ReceiveMessage and invocation, brokersim's plain
  // client (the mapping as it was before batch handlers, row for row).
  const bool plain = batch == 1 && window == 0 && t.given("MemorySize") == nullptr;
  if (plain) t.no_key("MaximumBatchingWindowInSeconds", "0: each poll's batch goes to an invocation at once");
  // The current developer guide: at most 1,000 concurrent batches per mapping; MaximumConcurrency
  // (2..1000) caps it lower.
  const std::int64_t max = t.integer("ScalingConfig.MaximumConcurrency", 1000, 2, 1000, "1000 batches per mapping");
  const std::int64_t timeout = t.integer("Timeout", 3, 1, 900);  // whole seconds, as the function's configuration
  bool item_failures = false;
  if (const json* types = t.given("FunctionResponseTypes")) {
    if (!types->is_array()) fail(t.at("FunctionResponseTypes"), "an array, [] or [\"ReportBatchItemFailures\"]", *types);
    for (std::size_t i = 0; i < types->size(); ++i)
      if ((*types)[i] != "ReportBatchItemFailures")
        fail(join(t.at("FunctionResponseTypes"), i), "\"ReportBatchItemFailures\"", (*types)[i]);
    item_failures = !types->empty();
    t.text("FunctionResponseTypes", describe(*types));
  } else {
    t.text("FunctionResponseTypes", "[] (default)");
  }

  if (plain) t.set("batch_size", batch, "BatchSize", "one message per ReceiveMessage and invocation");
  else t.set("batch_size", std::min<std::int64_t>(batch, 10), "BatchSize", "ReceiveMessage takes at most 10 a call");
  t.set("prefetch", batch, "BatchSize", "an invocation holds its batch");
  t.set("slots", 1, "BatchSize", "one invocation per consumer");
  t.set("ack", "after-finish", "", "deleted when the invocation returns successfully");
  t.set("exec_timeout", timeout * 1000, "Timeout", "the function's timeout");
  t.set("on_timeout", "keep", "Timeout",
        "a timed-out invocation is an error: its message is not deleted and comes back when its visibility lapses");
  if (plain) {
    t.no_key("FunctionResponseTypes", "with batches of one, a failed invocation and a failed item are the same message");
    if (t.given("batch_execution") != nullptr) {
      t.choice("batch_execution", {"sequential", "concurrent"}, "sequential");
      t.no_key("batch_execution", "with batches of one there is one message to run");
    }
  } else {
    // The handler's code decides how it runs event.Records; the default is AWS's own example
    // ("Invoke a Lambda function from an Amazon SQS trigger", AWS SDK code examples:
    // `foreach (var message in evnt.Records) { await ProcessMessageAsync(message, context); }`),
    // one record after another.
    const std::string execution = t.choice("batch_execution", {"sequential", "concurrent"}, "sequential",
                                           "the handler loops over event.Records");
    // One invocation per batch (models/consumer_batch.cpp): its messages' service times summed,
    // Timeout and a failure for the whole batch, unless the function reports batch item failures.
    t.set("batch_handler",
          {{"max_messages", batch}, {"window_ms", window * 1000}, {"item_failures", item_failures}, {"execution", execution}},
          "BatchSize, MaximumBatchingWindowInSeconds, FunctionResponseTypes, batch_execution",
          std::string(item_failures ? "one invocation per batch; failure_probability per message, only failed items come back"
                                    : "one invocation per batch; a failed invocation returns the whole batch") +
              (execution == "sequential" ? "; its records run in turn" : "; its records run at once"));
  }
  // Scaling: five concurrent batches to start, up to 300 more per minute while messages are
  // available, back to five when traffic is low (services-sqs-scaling).
  const std::int64_t start = std::min<std::int64_t>(5, max);
  t.set("count", start, "ScalingConfig.MaximumConcurrency", "starts with five concurrent batches");
  json scale = {{"metric", "ready"},
                {"target_per_replica", batch},
                {"min", start},
                {"max", max},
                {"scale_up", {{"pods", 300}, {"percent", nullptr}, {"period_ms", 60000}, {"stabilization_ms", 0}}}};
  t.set("autoscale", scale, "ScalingConfig.MaximumConcurrency, BatchSize",
        "up to 300 more concurrent batches a minute while messages wait (one per BatchSize ready messages), "
        "scale-down by the HPA's default rule (Lambda documents no rate)");
  if (!plain) {
    // Lambda bills requests, and duration "rounded up to the nearest millisecond" x the function's
    // memory (128 to 10,240 MB): the group's `billing` figures (docs/framework-aws-lambda.md).
    const std::int64_t memory = t.integer("MemorySize", 128, 128, 10'240);
    t.no_key("MemorySize", "billing only: GB-seconds = each invocation's duration rounded up to 1 ms x MemorySize / 1024");
    t.bill({FrameworkMapping::Billing::Plan::Lambda, static_cast<double>(memory), 0, 0, ""});
  }
}

// "Lambda validates this requirement when you create or update an event source mapping and will
// return an error if the function timeout exceeds the queue's visibility timeout"
// (services-sqs-configure): Timeout against the visibility timeout of the group's queue.
void loaded(const Scenario& s, std::size_t group, const std::string& path) {
  const ConsumerSpec& c = s.consumers[group];
  const QueueSpec& q = s.broker.queues[static_cast<std::size_t>(c.queue)];
  const Time timeout = static_cast<Time>(c.exec_timeout_value.mean());
  if (timeout <= q.sqs.visibility_timeout) return;
  fail_message(join(join(path, "framework"), "Timeout"),
               "expected at most the visibility timeout of broker.queues." + q.name + " (visibility_timeout_ms " +
                   format_number(sim::to_ms(q.sqs.visibility_timeout)) +
                   "): Lambda refuses an event source mapping whose function timeout exceeds the queue's visibility timeout "
                   "(services-sqs-configure), got " + format_number(sim::to_ms(timeout) / 1000) + " s");
}

}  // namespace

const Framework& aws_lambda() {
  static const Framework f{"aws-lambda",
                           {"BatchSize", "MaximumBatchingWindowInSeconds", "ScalingConfig.MaximumConcurrency", "Timeout",
                            "FunctionResponseTypes", "MemorySize", "batch_execution"},
                           translate,
                           {{"ProvisionedPollerConfig", "provisioned-mode pollers"}},
                           loaded};
  return f;
}

}  // namespace brokersim::loader
