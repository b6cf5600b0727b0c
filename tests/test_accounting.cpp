// Every copy of a job accounted for (docs/outcomes.md): duplicate executions split by cause, and
// per job in the trace, stages that add up to its sojourn, with times that never go backwards.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "experiments/cli/report.hpp"

#include "sim/rng.hpp"
#include "tests/test_util.hpp"

using brokersim::test::run_scenario;
using brokersim::test::TraceRow;
using nlohmann::json;

namespace {

std::int64_t ns(const std::string& cell) { return brokersim::test::trace_cell_ns(cell); }

// Built by appending: g++ 12 warns (-Wrestrict, a false positive) on "q" + std::to_string(i).
std::string queue_name(int i) {
  std::string name = "q";
  name += std::to_string(i);
  return name;
}

const char* const kStages[] = {"stage_publish_ms", "stage_queue_ms", "stage_held_ms",
                               "stage_transit_ms", "stage_local_ms", "stage_service_ms"};

// The row's stages add up to its sojourn (creation -> outcome), none negative; its lifecycle
// times run forward; executions and first_started_ms agree with started_ms.
void check_row(const TraceRow& row) {
  CAPTURE(row["job"]);
  CAPTURE(row["outcome"]);
  std::int64_t last = ns(row["created_ms"]);
  for (const char* k : {"published_ms", "delivered_ms", "received_ms", "started_ms", "finished_ms", "ended_ms"}) {
    if (row.empty(k)) continue;
    CHECK_MESSAGE(ns(row[k]) >= last, k << " goes back in time");
    last = ns(row[k]);
  }
  const std::uint64_t executions = std::stoull(row["executions"]);
  if (!row.empty("started_ms")) {
    CHECK(executions >= 1);
    REQUIRE_FALSE(row.empty("first_started_ms"));
    CHECK(ns(row["first_started_ms"]) <= ns(row["started_ms"]));
  }
  if (!row.empty("first_started_ms")) CHECK(ns(row["first_started_ms"]) >= ns(row["published_ms"]));
  else CHECK(executions == 0);
  if (row["outcome"] == "in_system") {
    for (const char* k : kStages) CHECK(row.empty(k));
    return;
  }
  std::int64_t sum = 0;
  for (const char* k : kStages) {
    const std::int64_t v = ns(row[k]);
    CHECK_MESSAGE(v >= 0, k);
    sum += v;
  }
  CHECK(sum == ns(row["ended_ms"]) - ns(row["created_ms"]));
}

// A random scenario of broker kind `kind`, with what makes copies: short locks and visibility
// timeouts, consumer timeouts, crashes, broker outages, failures, and groups that leave or scale.
json random_scenario(sim::Rng& rng, const std::string& kind) {
  auto pick = [&](std::uint64_t n) { return static_cast<int>(rng.below(n)); };
  const bool sb = kind == "azure-servicebus", sqs = kind == "amazon-sqs", rabbit = !sb && !sqs;
  json s;
  s["seed"] = rng.below(1000);
  s["stop"] = {{"time_ms", 3000 + pick(12000)}};
  const int nq = 1 + pick(2);
  json queues = json::object();
  for (int q = 0; q < nq; ++q) {
    json spec = json::object();
    const std::string other = queue_name(1 - q);
    if (sb) {
      spec["lock_duration_ms"] = 100 + pick(2000);
      spec["max_delivery_count"] = 1 + pick(6);
      if (nq == 2 && pick(2)) spec["dead_letter_to"] = other;
      if (pick(3) == 0) spec["default_ttl_ms"] = 200 + pick(4000);
    } else if (sqs) {
      spec["visibility_timeout_ms"] = pick(2500);
      if (nq == 2 && pick(2)) {
        spec["dead_letter_to"] = other;
        spec["max_receive_count"] = 1 + pick(5);
      }
      if (pick(4) == 0) spec["delay_ms"] = pick(300);
    } else {
      if (pick(2)) spec["message_ttl_ms"] = 50 + pick(3000);
      if (nq == 2 && pick(2)) spec["dead_letter_to"] = other;
      if (kind == "rabbitmq-quorum" && pick(2)) spec["delivery_limit"] = pick(4) - 1;
    }
    queues[queue_name(q)] = spec;
  }
  s["broker"] = {{"kind", kind}, {"delivery_latency_ms", pick(20)}, {"ack_latency_ms", {{"exp", {{"mean", 1 + pick(20)}}}}},
                 {"queues", queues}};
  if (rabbit) {
    s["broker"]["version"] = json::array({"3.13", "4.2", "4.3"})[pick(3)];
    if (pick(2)) s["broker"]["consumer_timeout_ms"] = 100 + pick(2000);
  }
  s["producers"] = json::array();
  for (int p = 0, n = 1 + pick(2); p < n; ++p) {
    json prod = {{"queue", queue_name(pick(nq))},
                 {"service_ms", {{"exp", {{"mean", 20 + pick(400)}}}}},
                 {"arrivals", {{"poisson", {{"rate_per_s", 2 + rng.uniform() * 30}}}}}};
    if (pick(2)) prod["deadline_ms"] = 200 + pick(3000);
    if (pick(4) == 0) prod["publish_delay_ms"] = pick(50);
    if (rabbit && pick(2)) prod["persistent"] = true;
    s["producers"].push_back(prod);
  }
  s["consumers"] = json::array();
  int consumers = 0;
  for (int g = 0, n = 1 + pick(3); g < n; ++g) {
    json c = {{"queue", queue_name(pick(nq))}, {"count", 1 + pick(3)}, {"prefetch", pick(6)},
              {"slots", 1 + pick(2)}};
    c["admission"] = json::array({"none", "check-before-start", "check-at-receive-and-start"})[pick(3)];
    c["on_expired"] = sqs ? json::array({"ack", "requeue"})[pick(2)] : json::array({"ack", "reject", "requeue"})[pick(3)];
    if (pick(3) == 0) c["failure_probability"] = rng.uniform() * 0.5;
    if (pick(4) == 0) c["exec_timeout"] = 50 + pick(300);
    if (sb && pick(5) == 0) c["receive_mode"] = "receive-and-delete";
    // consumers[].ack: early acks on RabbitMQ (on-receipt settles at send: on_expired must be ack).
    if (rabbit && pick(3) == 0) {
      c["ack"] = pick(2) ? "before-start" : "on-receipt";
      if (c["ack"] == "on-receipt") c["on_expired"] = "ack";
    }
    // Early deletes on SQS: with visibility timeouts this short, deletes that arrive after a
    // lapse (with the latest receipt handle or not), during outages and after crashes.
    if (sqs && pick(3) == 0) c["ack"] = "before-start";
    // Deferred messages received back: their deferred time is a queue stage.
    if (sb && !c.contains("receive_mode") && pick(4) == 0) {
      c["on_expired"] = "defer";
      c["receive_deferred_after_ms"] = pick(500);
    }
    switch (pick(3)) {
      case 0:
        c["stop_ms"] = 500 + pick(5000);
        c["shutdown_grace_ms"] = pick(300);
        break;
      case 1:
        c["autoscale"] = {{"target_per_replica", 1 + pick(4)}, {"min", 1}, {"max", 6}, {"sync_ms", 200 + pick(800)},
                          {"scale_down", {{"percent", 100}, {"pods", nullptr}, {"period_ms", 200}, {"stabilization_ms", pick(1000)}}}};
        c["shutdown_grace_ms"] = pick(300);
        break;
      default: break;
    }
    consumers += c["count"].get<int>();
    s["consumers"].push_back(c);
  }
  s["faults"] = json::array();
  for (int f = 0, n = pick(3); f < n; ++f) {
    json fault = {{"at_ms", pick(4000)}};
    if (pick(2)) {
      fault.update({{"consumer", pick(consumers)}, {"crash", true}});
      if (pick(2)) fault["restart_after_ms"] = 1 + pick(800);
    } else {
      fault["broker_down_ms"] = 1 + pick(1000);
    }
    s["faults"].push_back(fault);
  }
  return s;
}

}  // namespace

TEST_CASE("every job's stages add up to its sojourn and its times run forward, on all four broker kinds") {
  sim::Rng rng(20261203, 0, "accounting-property");
  std::uint64_t duplicates = 0, held = 0, rows = 0;
  for (const char* kind : {"rabbitmq-classic", "rabbitmq-quorum", "azure-servicebus", "amazon-sqs"}) {
    for (int i = 0; i < 60; ++i) {
      const json doc = random_scenario(rng, kind);
      CAPTURE(doc.dump());
      brokersim::test::Run run;
      // simulate() checks that the outcomes and the duplicate causes add up.
      REQUIRE_NOTHROW(run = run_scenario(doc.dump()));
      const json j = run.json();
      std::uint64_t by_cause = 0;
      for (const auto& [name, n] : j["duplicate_executions_by_cause"].items()) by_cause += n.get<std::uint64_t>();
      CHECK(by_cause == j["duplicate_executions"].get<std::uint64_t>());
      duplicates += by_cause;
      for (const auto& row : run.trace) {
        check_row(row);
        ++rows;
        if (row["outcome"] != "in_system" && ns(row["stage_held_ms"]) > 0) ++held;
      }
    }
  }
  // The scenarios do make copies: otherwise the property says little.
  CHECK(duplicates > 100);
  CHECK(held > 100);
  CHECK(rows > 10000);
}

namespace {

std::string summary_of(const brokersim::test::Run& run) {
  std::ostringstream out;
  brokersim::print_summary(out, run.scenario, run.result);
  return out.str();
}

// Every cause but `name` is 0, and `name` is `n`, as is the total.
void only_cause(const json& j, const char* name, std::uint64_t n) {
  CHECK(j["duplicate_executions"] == n);
  // A plain loop variable: clang 14 cannot capture a structured binding in CHECK_MESSAGE's lambda.
  for (const auto& item : j["duplicate_executions_by_cause"].items()) {
    const std::string cause = item.key();
    CHECK_MESSAGE(item.value().get<std::uint64_t>() == (cause == name ? n : 0), cause);
  }
}

}  // namespace

TEST_CASE("duplicate cause crash - a rabbitmq execution cut by a crash runs again, its first delivery held time") {
  const auto run = run_scenario(R"({"stop": {"time_ms": 10000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 1}],
    "faults": [{"at_ms": 400, "consumer": 0, "crash": true, "restart_after_ms": 100}]})");
  only_cause(run.json(), "crash", 1);
  const auto& row = run.trace.at(0);
  CHECK(row["outcome"] == "completed_on_time");
  CHECK(row["executions"] == "2");
  CHECK(row["first_started_ms"] == "0");
  CHECK(row["delivered_ms"] == "500");  // the last delivery, after the restart
  CHECK(row["started_ms"] == "500");
  CHECK(row["stage_held_ms"] == "400");   // the first delivery, until the crash returned it
  CHECK(row["stage_queue_ms"] == "100");  // back in the queue until the consumer reconnected
  CHECK(row["stage_service_ms"] == "1000");
  check_row(row);
}

TEST_CASE("a consumer's own books through a crash - executions started, slot utilisation, buffer mean, by hand") {
  // One slot, prefetch 3, three jobs of 50 ms at 0: A runs [0, 50), B from 50 until the crash at
  // 75 cuts it, C waits in the buffer until then; after the restart at 175 B runs [175, 225) and C
  // [225, 275). Started: A, B, B, C = 4 (3 ended, 1 cut), then D. Busy 75 + 100 ms; the buffer
  // held 2 on [0, 50), 1 on [50, 75) and 1 on [175, 225): 175 ms. A stall from 300 to 400 holds
  // job D (at 350) in the buffer: 50 ms more, and D runs [400, 450): busy 225 ms in all.
  const auto run = run_scenario(R"({"stop": {"time_ms": 1000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0, 350]}, "service_ms": 50}],
    "consumers": [{"queue": "q", "prefetch": 3}],
    "faults": [{"at_ms": 75, "consumer": 0, "crash": true, "restart_after_ms": 100},
               {"at_ms": 300, "consumer": 0, "stall_ms": 100}]})");
  const auto& c = run.result.consumers.at(0);
  CHECK(c.started == 5);
  CHECK(c.utilization == doctest::Approx(225.0 / 1000).epsilon(1e-12));
  CHECK(c.mean_local == doctest::Approx(225.0 / 1000).epsilon(1e-12));
  CHECK(run.trace.at(3).ms("started_ms") == 400);
  CHECK(run.trace.at(1)["executions"] == "2");
}

TEST_CASE("a receipt's transit wait, carried by its event up to 2^32 - 1 ns and read from the delivery beyond") {
  // World::receive_at puts the transit wait in the receipt's event, so that the receipt reads one
  // line of the job; a transit of 2^32 - 1 ns (4.29 s) or more is read from `delivered` instead.
  // Both give the delivery latency exactly, and a job received at its creation's instant starts
  // at once only with no latency.
  for (const std::int64_t latency_ns : {std::int64_t{0}, std::int64_t{3'000'000'000}, std::int64_t{4'294'967'294},
                                        std::int64_t{4'294'967'295}, std::int64_t{5'000'000'000}}) {
    CAPTURE(latency_ns);
    const auto run = run_scenario(R"({"stop": {"time_ms": 20000},
      "broker": {"queues": {"q": {}}},
      "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 100]}, "service_ms": 10}],
      "consumers": [{"queue": "q", "prefetch": 2}]})",
                                  {"broker.delivery_latency_ms=" + std::to_string(static_cast<double>(latency_ns) / 1e6)});
    const auto& transit = run.result.wait(brokersim::Wait::Transit);
    CHECK(transit.count() == 2);
    CHECK(transit.min() == latency_ns);
    CHECK(transit.max() == latency_ns);
    CHECK(run.result.started_at_once == (latency_ns == 0 ? 2u : 0u));
  }
}

TEST_CASE("duplicate cause shutdown_grace - a removed Service Bus pod holds its lock until it lapses, held time") {
  const auto run = run_scenario(R"({"stop": {"time_ms": 60000},
    "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 0, "ack_latency_ms": 0,
               "queues": {"q": {"lock_duration_ms": 5000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 0, "stop_ms": 600, "shutdown_grace_ms": 100},
                  {"queue": "q", "prefetch": 0, "start_ms": 1000}]})");
  only_cause(run.json(), "shutdown_grace", 1);
  const auto& row = run.trace.at(0);
  // Cut at 700 (stop 600 + grace 100); its renewed lock runs a lock duration on, to 5,700.
  CHECK(row["outcome"] == "completed_on_time");
  CHECK(row["consumer"] == "1");
  CHECK(row["delivered_ms"] == "5700");
  CHECK(row["stage_held_ms"] == "5700");
  CHECK(row["stage_queue_ms"] == "0");
  CHECK(row["stage_service_ms"] == "1000");
  CHECK(row["ended_ms"] == "6700");
  CHECK(row["executions"] == "2");
  check_row(row);
}

TEST_CASE("duplicate cause lapse - a Service Bus lock lapses in the prefetch buffer and both copies run") {
  const auto run = run_scenario(R"({"stop": {"time_ms": 60000},
    "broker": {"kind": "azure-servicebus", "delivery_latency_ms": 0, "ack_latency_ms": 0,
               "queues": {"q": {"lock_duration_ms": 1000}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 1500}],
    "consumers": [{"queue": "q", "prefetch": 2, "slots": 1},
                  {"queue": "q", "prefetch": 0, "start_ms": 500}]})");
  only_cause(run.json(), "lapse", 1);
  const auto& row = run.trace.at(1);
  CHECK(row["outcome"] == "completed_on_time");
  CHECK(row["delivered_ms"] == "1000");  // the broker's copy, to the second consumer, at the lapse
  CHECK(row["stage_held_ms"] == "1000");  // the first delivery, its lock lapsing in the buffer
  CHECK(row["first_started_ms"] == "1000");
  check_row(row);
}

TEST_CASE("duplicate cause failed_retry - SQS does not delete a failed job - redriven after max_receive_count and said so") {
  const auto run = run_scenario(R"({"stop": {"time_ms": 60000},
    "broker": {"kind": "amazon-sqs", "delivery_latency_ms": 0, "ack_latency_ms": 0,
               "queues": {"q": {"visibility_timeout_ms": 1000, "max_receive_count": 3, "dead_letter_to": "dlq"},
                          "dlq": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 1, "failure_probability": 1}]})");
  only_cause(run.json(), "failed_retry", 2);
  const auto& row = run.trace.at(0);
  CHECK(row["outcome"] == "dead_lettered");
  CHECK(row["executions"] == "3");
  CHECK(ns(row["stage_held_ms"]) == ns(row["ended_ms"]));  // every delivery held it until its visibility lapsed
  check_row(row);
  const std::string text = summary_of(run);
  CHECK(text.find("100.00% of jobs (1) ended dead-lettered; messages dead-lettered by reason: 1 max_receive_count") != std::string::npos);
  CHECK(text.find("2 retries of failed executions (failed_retry)") != std::string::npos);
}

TEST_CASE("duplicate cause broker_restart and consumer_timeout - RabbitMQ closing connections") {
  const auto restart = run_scenario(R"({"stop": {"time_ms": 10000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1000, "persistent": true}],
    "consumers": [{"queue": "q", "prefetch": 1}],
    "faults": [{"at_ms": 400, "broker_down_ms": 100}]})");
  only_cause(restart.json(), "broker_restart", 1);
  check_row(restart.trace.at(0));
  // The timeout is checked on the channel's 60 s tick: a 90 s job is cut at 60, 120 and 180 s.
  const auto timeout = run_scenario(R"({"stop": {"time_ms": 200000},
    "broker": {"version": "4.2", "consumer_timeout_ms": 1000, "delivery_latency_ms": 0, "ack_latency_ms": 0,
               "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 90000}],
    "consumers": [{"queue": "q", "prefetch": 1}]})");
  only_cause(timeout.json(), "consumer_timeout", 3);
  CHECK(timeout.json()["consumer_timeouts"] == 3);
}

TEST_CASE("duplicate_executions_by_cause reaches sweep columns through the flattened JSON - the example scale-down splits by cause") {
  brokersim::test::ScratchDir d("accounting-sweep");
  const std::string scenario = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/servicebus-scale-down.json";
  const auto r = brokersim::test::run_cli({"sweep", scenario, "--vary", "seed=21,22", "--set", "stop.time_ms=7200000",
                                           "--out", d.path("out.csv")});
  REQUIRE(r.status == 0);
  const auto lines = brokersim::test::lines_of(brokersim::test::read_file(d.path("out.csv")));
  REQUIRE(lines.size() == 3);
  const auto header = brokersim::test::split_csv_line(lines[0]);
  for (const auto& m : brokersim::kDuplicateCauses) {
    // A killed pool process is a column only where a fault kills one (test_celery_tasks.cpp).
    if (m.cause == brokersim::DuplicateCause::WorkerLost) continue;
    const std::string column = "duplicate_executions_by_cause." + std::string(m.name) + "_mean";
    CHECK_MESSAGE(std::find(header.begin(), header.end(), column) != header.end(), column);
  }
}

TEST_CASE("summary - the In short paragraph names the outcomes it does not count, so its shares add up to 100%") {
  // Three jobs, early acks, a crash at 50 ms: job 0 is lost (acked as it started), jobs 1 and 2
  // come back and complete (test_ack_modes.cpp has the timeline).
  const auto lost = run_scenario(R"({"stop": {"time_ms": 10000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0, 0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 3, "ack": "before-start"}],
    "faults": [{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 1000}]})");
  REQUIRE(lost.outcome(brokersim::Outcome::Lost) == 1);
  const std::string text = summary_of(lost);
  CHECK(text.find("In short: 66.67% of jobs completed (no deadline)") != std::string::npos);
  CHECK(text.find("The other 33.33% of jobs: 1 lost (gone without any consumer deciding them") != std::string::npos);
  // Several at once, in the table's order: one job fails, one is still executing at the stop
  // (follow_ms 0: the run ends at stop.time_ms).
  const auto mixed = run_scenario(R"({"stop": {"time_ms": 1500, "follow_ms": 0},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 1000]}, "service_ms": 1000}],
    "consumers": [{"queue": "q", "prefetch": 1, "failure_probability": 1}]})");
  CHECK(summary_of(mixed).find("The other 100.00% of jobs: 1 failed, 1 still in the system when the run ended.") != std::string::npos);
  // Nothing to add: no sentence.
  const auto plain = run_scenario(R"({"stop": {"time_ms": 10000},
    "broker": {"delivery_latency_ms": 0, "ack_latency_ms": 0, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 100}],
    "consumers": [{"queue": "q", "prefetch": 1}]})");
  CHECK(summary_of(plain).find("The other") == std::string::npos);
}
