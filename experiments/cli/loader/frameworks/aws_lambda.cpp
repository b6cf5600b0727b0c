// AWS Lambda's event source mapping for an SQS standard queue (docs/framework-aws-lambda.md):
// each consumer of the group is one concurrent invocation (one batch in flight), and the mapping's
// pollers scale as Lambda documents them (services-sqs-scaling), drawn with brokersim's autoscaler.
#include <algorithm>

#include "experiments/cli/loader/frameworks.hpp"

namespace brokersim::loader {

namespace {

void translate(Translation& t) {
  t.kinds({"amazon-sqs"}, "aws-lambda");
  // Lambda deletes a batch only when its invocation returns, and polls the next batch only then;
  // brokersim's client deletes each message as it finishes and receives into the room that frees.
  // The two agree for batches of one.
  const std::int64_t batch = t.integer("BatchSize", 10, 1, 10'000);
  if (batch != 1) {
    t.refuse("BatchSize", "above 1 (" + t.shown("BatchSize") +
                              ": the whole batch deleted when its invocation returns, the next batch polled only then) "
                              "cannot be honoured: give 1");
  }
  const std::int64_t window = t.integer("MaximumBatchingWindowInSeconds", 0, 0, 300);
  if (window != 0) t.refuse("MaximumBatchingWindowInSeconds", "above 0 (waiting to fill a batch) cannot be honoured: give 0");
  t.no_key("MaximumBatchingWindowInSeconds", "0: each poll's batch goes to an invocation at once");
  // The current developer guide: at most 1,000 concurrent batches per mapping; MaximumConcurrency
  // (2..1000) caps it lower.
  const std::int64_t max = t.integer("ScalingConfig.MaximumConcurrency", 1000, 2, 1000, "1000 batches per mapping");
  const std::int64_t timeout = t.integer("Timeout", 3, 1, 900);  // whole seconds, as the function's configuration
  if (const json* types = t.given("FunctionResponseTypes")) {
    if (!types->is_array()) fail(t.at("FunctionResponseTypes"), "an array, [] or [\"ReportBatchItemFailures\"]", *types);
    for (std::size_t i = 0; i < types->size(); ++i)
      if ((*types)[i] != "ReportBatchItemFailures")
        fail(join(t.at("FunctionResponseTypes"), i), "\"ReportBatchItemFailures\"", (*types)[i]);
    t.text("FunctionResponseTypes", describe(*types));
  } else {
    t.text("FunctionResponseTypes", "[] (default)");
  }

  t.set("batch_size", batch, "BatchSize", "one message per ReceiveMessage and invocation");
  t.set("prefetch", batch, "BatchSize", "an invocation holds its batch");
  t.set("slots", 1, "BatchSize", "one invocation per consumer");
  t.set("ack", "after-finish", "", "deleted when the invocation returns successfully");
  t.set("exec_timeout", timeout * 1000, "Timeout", "the function's timeout");
  t.set("on_timeout", "keep", "Timeout",
        "a timed-out invocation is an error: its message is not deleted and comes back when its visibility lapses");
  t.no_key("FunctionResponseTypes", "with batches of one, a failed invocation and a failed item are the same message");
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
}

}  // namespace

const Framework& aws_lambda() {
  static const Framework f{"aws-lambda",
                           {"BatchSize", "MaximumBatchingWindowInSeconds", "ScalingConfig.MaximumConcurrency", "Timeout",
                            "FunctionResponseTypes"},
                           translate,
                           {{"ProvisionedPollerConfig", "provisioned-mode pollers"}}};
  return f;
}

}  // namespace brokersim::loader
