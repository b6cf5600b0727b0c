// batch_handler.execution (models/consumer_batch.cpp): a batch handler runs its messages in turn
// ("sequential": each starts when the one before it ends) or all at once ("concurrent"). Small
// deterministic cases, exact; the frameworks' defaults; and a batched per-message log fitted back
// and checked against the setting that made it (docs/fit.md, "A batched handler's log").
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "sim/rng.hpp"
#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

namespace batch_execution_test {

using brokersim::test::load_error;
using brokersim::test::Run;
using brokersim::test::run_cli;
using brokersim::test::run_scenario;
using brokersim::test::ScratchDir;

// One SQS queue (visibility 10 s), no latencies, jobs of 100 ms at `at` with `producer` keys, one
// consumer of one slot whose handler takes up to `max` messages at once, run `execution`, with
// `consumer` keys.
std::string sqs_batch(const std::string& at, const std::string& execution, int max = 3, const std::string& producer = "",
                      const std::string& consumer = "") {
  return R"({"seed": 7, "stop": {"time_ms": 20000},
  "broker": {"kind": "amazon-sqs", "delivery_latency_ms": 0, "ack_latency_ms": 0,
             "queues": {"q": {"visibility_timeout_ms": 10000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [)" + at + R"(]}, "service_ms": 100)" + producer + R"(}],
  "consumers": [{"queue": "q", "prefetch": 10, "batch_size": 10)" + consumer + R"(,
                 "batch_handler": {"max_messages": )" + std::to_string(max) + R"(, "execution": ")" + execution + R"("}}]})";
}

// (started, finished, ended, stage_local, outcome) of every job, in order of start (an empty
// started_ms first).
using Row = std::tuple<double, double, double, double, std::string>;
std::vector<Row> rows_of(const Run& run) {
  std::vector<Row> out;
  for (const auto& r : run.trace)
    out.emplace_back(r.empty("started_ms") ? -1 : r.ms("started_ms"), r.empty("finished_ms") ? -1 : r.ms("finished_ms"),
                     r.ms("ended_ms"), r.ms("stage_local_ms"), r["outcome"]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("batch execution: in turn, each message starts when the one before it ends, its turn in its local wait") {
  const auto seq = run_scenario(sqs_batch("0, 0, 0", "sequential"));
  CHECK(rows_of(seq) == std::vector<Row>{{0, 100, 100, 0, "completed_on_time"},
                                         {100, 200, 200, 100, "completed_on_time"},
                                         {200, 300, 300, 200, "completed_on_time"}});
  CHECK(seq.result.wait(brokersim::Wait::Local).mean() / 1e6 == doctest::Approx(100));
  CHECK(seq.result.wait(brokersim::Wait::Service).mean() / 1e6 == doctest::Approx(100));
  // All at once: every message from the batch's start to its end, the invocation's 300 ms each.
  const auto all = run_scenario(sqs_batch("0, 0, 0", "concurrent"));
  CHECK(rows_of(all) == std::vector<Row>{{0, 300, 300, 0, "completed_on_time"},
                                         {0, 300, 300, 0, "completed_on_time"},
                                         {0, 300, 300, 0, "completed_on_time"}});
  CHECK(all.result.wait(brokersim::Wait::Local).mean() / 1e6 == doctest::Approx(0));
  CHECK(all.result.wait(brokersim::Wait::Service).mean() / 1e6 == doctest::Approx(300));
  // Either way one invocation of 300 ms: the slot's work is the same.
  for (const Run* r : {&seq, &all}) {
    CHECK(r->result.consumers[0].invocations == 1);
    CHECK(r->result.consumers[0].billed_ms == 300);
  }
}

TEST_CASE("batch execution: in turn, a message's deadline is judged at its own start") {
  // Deadline 150 ms. In turn: the first completes at 100; the second starts at 100, in time, and
  // completes late at 200; the third's turn comes at 200, past its deadline: rejected there (its
  // wait is its turn), and the invocation ends at 200, having run two messages.
  const auto seq = run_scenario(sqs_batch("0, 0, 0", "sequential", 3, R"(, "deadline_ms": 150)"));
  CHECK(rows_of(seq) == std::vector<Row>{{-1, -1, 200, 200, "expired_before_start"},
                                         {0, 100, 100, 0, "completed_on_time"},
                                         {100, 200, 200, 100, "completed_late"}});
  CHECK(seq.result.consumers[0].billed_ms == 200);
  // All at once, all three start at 0, in time, and end late at 300.
  const auto all = run_scenario(sqs_batch("0, 0, 0", "concurrent", 3, R"(, "deadline_ms": 150)"));
  CHECK(rows_of(all) == std::vector<Row>{{0, 300, 300, 0, "completed_late"},
                                         {0, 300, 300, 0, "completed_late"},
                                         {0, 300, 300, 0, "completed_late"}});
}

TEST_CASE("batch execution: exec_timeout stops an invocation in turn: every message times out, the rest never start") {
  // 250 ms for four messages of 100 ms: the third is cut at 250; the invocation failed, so the
  // two done before it time out with it, and the fourth, whose turn never came, too (each
  // deleted: on_timeout delete). Each job has one outcome; the fourth never started.
  const auto run = run_scenario(sqs_batch("0, 0, 0, 0", "sequential", 4, "", R"(, "exec_timeout": 250)"));
  CHECK(rows_of(run) == std::vector<Row>{{-1, -1, 250, 250, "timed_out"},
                                         {0, 100, 250, 0, "timed_out"},
                                         {100, 200, 250, 100, "timed_out"},
                                         {200, 250, 250, 200, "timed_out"}});
  CHECK(run.outcome(brokersim::Outcome::TimedOut) == 4);
  CHECK(run.result.consumers[0].billed_ms == 250);
  CHECK(run.result.consumers[0].started == 3);
}

TEST_CASE("batch execution: a failed invocation decides every message at its end, a failed item at its own") {
  // failure_probability 1 for the whole invocation: each message runs its turn, and all three
  // fail when the invocation ends at 300 (deleted: on_failure delete).
  const auto whole = run_scenario(sqs_batch("0, 0, 0", "sequential", 3, "",
                                            R"(, "failure_probability": 1, "on_failure": "delete")"));
  CHECK(rows_of(whole) == std::vector<Row>{{0, 100, 300, 0, "failed"}, {100, 200, 300, 100, "failed"}, {200, 300, 300, 200, "failed"}});
  // Per item (ReportBatchItemFailures): each fails at its own end.
  std::string items = sqs_batch("0, 0, 0", "sequential", 3, "", R"(, "failure_probability": 1, "on_failure": "delete")");
  items.replace(items.find("\"execution\""), 0, "\"item_failures\": true, ");
  const auto item = run_scenario(items);
  CHECK(rows_of(item) == std::vector<Row>{{0, 100, 100, 0, "failed"}, {100, 200, 200, 100, "failed"}, {200, 300, 300, 200, "failed"}});
}

TEST_CASE("batch execution: a crash in the middle of a batch in turn returns what it held, each job in one outcome") {
  // Service Bus, lock 1 s, a consumer that crashes at 150 and is back at once. Its batch had run
  // the first message (0-100, not yet settled: the batch settles as it ends), was running the
  // second and had not started the third. The locks lapse at 1000; all three are received again
  // and run in turn 1000-1300: the first two twice (duplicates by the crash), the third once.
  const std::string text = R"({"seed": 7, "stop": {"time_ms": 20000},
    "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 0, "ack_latency_ms": 0,
               "queues": {"q": {"lock_duration_ms": 1000, "max_delivery_count": 10}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 3, "max_auto_lock_renewal_ms": 0,
                   "batch_handler": {"max_messages": 3, "execution": "sequential"}}],
    "faults": [{"at_ms": 150, "consumer": 0, "crash": true, "restart_after_ms": 1}]})";
  const auto run = run_scenario(text);
  CHECK(rows_of(run) == std::vector<Row>{{1000, 1100, 1100, 0, "completed_on_time"},
                                         {1100, 1200, 1200, 100, "completed_on_time"},
                                         {1200, 1300, 1300, 200, "completed_on_time"}});
  CHECK(run.result.duplicate_executions == 2);
  CHECK(run.result.duplicates_by_cause[static_cast<std::size_t>(brokersim::DuplicateCause::Crash)] == 2);
  CHECK(run.outcome(brokersim::Outcome::CompletedOnTime) == 3);
}

TEST_CASE("batch execution: the key and the frameworks' defaults") {
  CHECK(load_error(sqs_batch("0", "serial")) ==
        "consumers.0.batch_handler.execution: expected one of \"concurrent\", \"sequential\", got \"serial\"");
  // Without the key a batch handler runs its messages at once.
  std::string bare = sqs_batch("0, 0, 0", "concurrent");
  bare.replace(bare.find(", \"execution\": \"concurrent\""), std::string(", \"execution\": \"concurrent\"").size(), "");
  CHECK(rows_of(run_scenario(bare)) == rows_of(run_scenario(sqs_batch("0, 0, 0", "concurrent"))));
  // aws-lambda and azure-functions run a batch in turn unless told otherwise (their handlers loop
  // over the records they receive).
  std::string lambda = sqs_batch("0, 0, 0", "concurrent");
  const auto from = lambda.find("{\"queue\": \"q\", \"prefetch\"");
  lambda.replace(from, lambda.find("]}", from) - from,
                 R"({"queue": "q", "framework": {"name": "aws-lambda", "BatchSize": 3, "Timeout": 1}})");
  const auto l = run_scenario(lambda);
  CHECK(l.scenario.consumers[0].batch.execution == brokersim::ConsumerSpec::Batch::Execution::Sequential);
  std::string lambda_all = lambda;
  lambda_all.replace(lambda_all.find("\"Timeout\": 1"), 12, R"("Timeout": 1, "batch_execution": "concurrent")");
  CHECK(run_scenario(lambda_all).scenario.consumers[0].batch.execution == brokersim::ConsumerSpec::Batch::Execution::Concurrent);
  const std::string functions = R"({"seed": 7, "stop": {"time_ms": 20000},
    "broker": {"kind": "azure-servicebus", "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "framework": {"name": "azure-functions", "isBatched": true}}]})";
  const auto f = run_scenario(functions);
  CHECK(f.scenario.consumers[0].batch.execution == brokersim::ConsumerSpec::Batch::Execution::Sequential);
  bool shown = false;
  for (const auto& row : f.scenario.frameworks[0].rows)
    if (row.key == "batch_handler") {
      shown = true;
      CHECK(row.setting == "maxMessageBatchSize, minMessageBatchSize, maxBatchWaitTime, batch_execution");
      CHECK(row.value.ends_with(", sequential (default: the function loops over the array it receives)"));
      CHECK(row.note.ends_with("; its messages run in turn"));
    }
  CHECK(shown);
  std::string single = functions;
  single.replace(single.find("\"isBatched\": true"), 17, R"("batch_execution": "concurrent")");
  CHECK(load_error(single) == "(no error)");
}


// A random batch scenario on Service Bus or SQS: short locks and visibility timeouts, deadlines,
// failures (per invocation or per item), exec_timeouts, crashes, outages, groups that leave or
// scale, batches run in turn or at once.
nlohmann::json random_batches(sim::Rng& rng, bool sb) {
  const auto pick = [&](std::uint64_t n) { return static_cast<int>(rng.below(n)); };
  nlohmann::json s;
  s["seed"] = rng.below(1000);
  s["stop"] = {{"time_ms", 3000 + pick(8000)}};
  nlohmann::json queue = sb ? nlohmann::json{{"lock_duration_ms", 100 + pick(1500)}, {"max_delivery_count", 1 + pick(5)}}
                            : nlohmann::json{{"visibility_timeout_ms", 100 + pick(2000)}};
  s["broker"] = {{"kind", sb ? "azure-servicebus" : "amazon-sqs"}, {"delivery_latency_ms", pick(10)},
                 {"ack_latency_ms", {{"exp", {{"mean", 1 + pick(10)}}}}}, {"queues", {{"q", queue}}}};
  nlohmann::json producer = {{"queue", "q"}, {"service_ms", {{"exp", {{"mean", 10 + pick(150)}}}}},
                             {"arrivals", {{"poisson", {{"rate_per_s", 5 + rng.uniform() * 40}}}}}};
  if (pick(2)) producer["deadline_ms"] = 100 + pick(2000);
  s["producers"] = nlohmann::json::array({producer});
  const int max = 1 + pick(8);
  nlohmann::json c = {{"queue", "q"}, {"count", 1 + pick(3)}, {"prefetch", max + pick(4)}, {"slots", 1 + pick(2)},
                      {"batch_handler", {{"max_messages", max}, {"window_ms", pick(3) * 100},
                                         {"item_failures", pick(2) == 0}, {"execution", pick(3) ? "sequential" : "concurrent"}}}};
  if (!sb) c["batch_size"] = std::min(max, 10);
  if (sb) c["max_auto_lock_renewal_ms"] = pick(2) * 1000;
  if (pick(3) == 0) c["failure_probability"] = rng.uniform() * 0.5;
  if (pick(3) == 0) c["exec_timeout"] = 50 + pick(400);
  if (pick(3) == 0) {
    c["stop_ms"] = 500 + pick(4000);
    c["shutdown_grace_ms"] = pick(300);
  }
  s["consumers"] = nlohmann::json::array({c});
  s["faults"] = nlohmann::json::array();
  for (int f = 0, n = pick(3); f < n; ++f) {
    if (pick(2))
      s["faults"].push_back({{"at_ms", pick(4000)}, {"consumer", 0}, {"crash", true}, {"restart_after_ms", 1 + pick(500)}});
    else
      s["faults"].push_back({{"at_ms", pick(4000)}, {"broker_down_ms", 1 + pick(800)}});
  }
  return s;
}

TEST_CASE("batch execution: on random batch scenarios every job keeps one outcome and its stages add up") {
  sim::Rng rng(20261207, 0, "batch-execution-property");
  std::uint64_t rows = 0, turns = 0;
  for (const bool sb : {true, false}) {
    for (int i = 0; i < 80; ++i) {
      const nlohmann::json doc = random_batches(rng, sb);
      CAPTURE(doc.dump());
      Run run;
      // simulate() checks that the outcomes add up to the jobs generated, and the duplicate causes.
      REQUIRE_NOTHROW(run = run_scenario(doc.dump()));
      for (const auto& row : run.trace) {
        ++rows;
        if (!row.empty("stage_local_ms") && brokersim::test::trace_cell_ns(row["stage_local_ms"]) > 0 && !row.empty("started_ms")) ++turns;
        if (row["outcome"] == "in_system") continue;
        std::int64_t sum = 0;
        for (const char* k : {"stage_publish_ms", "stage_queue_ms", "stage_held_ms", "stage_transit_ms", "stage_local_ms",
                              "stage_service_ms"}) {
          CHECK(brokersim::test::trace_cell_ns(row[k]) >= 0);
          sum += brokersim::test::trace_cell_ns(row[k]);
        }
        CHECK(sum == brokersim::test::trace_cell_ns(row["ended_ms"]) - brokersim::test::trace_cell_ns(row["created_ms"]));
        if (!row.empty("started_ms") && !row.empty("finished_ms")) CHECK(brokersim::test::trace_cell_ns(row["finished_ms"]) >= brokersim::test::trace_cell_ns(row["started_ms"]));
      }
    }
  }
  CHECK(rows > 10000);
  CHECK(turns > 1000);
}

// A batched function's per-message log with a known truth: two instances of a batched Azure
// Function (in turn, the default) on a Service Bus queue, Poisson arrivals. Its --trace is the
// log; `fit --check` against the same scenario agrees, and against the same fleet run "concurrent"
// (every message starting at its batch's start) finds the model's waits too short.
constexpr const char* kBatchedTruth = R"({"name": "batched-truth", "seed": 11, "stop": {"time_ms": 600000},
  "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 2, "ack_latency_ms": 2,
             "queues": {"orders": {"lock_duration_ms": 60000, "max_delivery_count": 10}}},
  "producers": [{"queue": "orders", "arrivals": {"poisson": {"rate_per_s": 20}},
                 "service_ms": {"gamma": {"shape": 2, "scale": 20}}}],
  "consumers": [{"queue": "orders", "count": 2,
                 "framework": {"name": "azure-functions", "isBatched": true, "maxMessageBatchSize": 32}}]})";

TEST_CASE("batch execution: fit --check on a batched per-message log agrees with the setting that wrote it") {
  ScratchDir dir("batch-execution-fit");
  const std::string truth = dir.write("truth.json", kBatchedTruth);
  const std::string log = dir.path("jobs.csv");
  REQUIRE(run_cli({"run", truth, "--trace", log}).status == 0);
  const std::string columns = "enqueued=created_ms,started=started_ms,finished=finished_ms,worker=consumer";
  const auto right = run_cli({"fit", log, "--columns", columns, "--check", truth, "--replications", "8"});
  INFO(right.out << right.err);
  CHECK(right.status == 0);
  // The per-message service times are the handler's own: gamma(2, 20 ms) comes back.
  CHECK(right.out.find("chosen: gamma") != std::string::npos);
  CHECK(right.out.find("Verdict: the model matches the log") != std::string::npos);
  nlohmann::json doc = nlohmann::json::parse(kBatchedTruth);
  doc["consumers"][0]["framework"]["batch_execution"] = "concurrent";
  const std::string all = dir.write("concurrent.json", doc.dump());
  const auto wrong = run_cli({"fit", log, "--columns", columns, "--check", all, "--replications", "8"});
  INFO(wrong.out << wrong.err);
  CHECK(wrong.status == 6);
  CHECK(wrong.out.find("Verdict: the model does not match the log") != std::string::npos);
  CHECK(wrong.out.find("the model's waits are too short there") != std::string::npos);
}

}  // namespace batch_execution_test
