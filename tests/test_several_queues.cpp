// A consumer group reading several queues (consumers[].queue a list, RabbitMQ): one channel with a
// subscription per queue, its slots and local buffer shared; basic.qos per subscription or per
// channel (prefetch_scope). Exact start orders for small deterministic cases, the limiter's random
// choice within its binomial spread, one queue's backlog starving the other's jobs in the shared
// buffer, the per-queue job figures adding up, and the loader's refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

using brokersim::test::load_error;
using brokersim::test::run_scenario;

namespace {

// Queues a and b with ten jobs each at time 0; one consumer of one slot reading both from 1 ms on,
// prefetch 2, service 10 ms, no latencies.
constexpr const char* kTwoBacklogs = R"({"stop": {"time_ms": 10000},
  "broker": {"queues": {"a": {}, "b": {}}},
  "producers": [
    {"queue": "a", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 10},
    {"queue": "b", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 10}],
  "consumers": [{"queue": ["a", "b"], "prefetch": 2, "start_ms": 1}]})";

// The queue of each job in the order the slot started them.
std::string start_order(const brokersim::test::Run& run) {
  std::vector<std::pair<double, std::string>> starts;
  for (const auto& row : run.trace)
    if (!row.empty("started_ms")) starts.emplace_back(row.ms("started_ms"), row["queue"]);
  std::stable_sort(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string order;
  for (const auto& s : starts) order += s.second;
  return order;
}

// A bulk queue with 20 jobs at 0 and one urgent job at 1 ms; one consumer, one slot, service 100 ms.
constexpr const char* kBulkThenUrgent = R"({"stop": {"time_ms": 10000},
  "broker": {"queues": {"bulk": {}, "urgent": {}}},
  "producers": [
    {"queue": "bulk", "arrivals": {"at_ms": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}, "service_ms": 100},
    {"queue": "urgent", "arrivals": {"at_ms": [1]}, "deadline_ms": 250, "service_ms": 100}],
  "consumers": [{"queue": ["bulk", "urgent"], "prefetch": 4}]})";

double urgent_started(const brokersim::test::Run& run) {
  for (const auto& row : run.trace)
    if (row["queue"] == "urgent") return row.empty("started_ms") ? -1 : row.ms("started_ms");
  return -2;
}

}  // namespace

TEST_CASE("several queues per subscription - each queue has its own prefetch and the shared buffer serves them in arrival order") {
  // At consume, a's subscription takes 2 and b's takes 2 (a1 a2 b1 b2 in the buffer); each ack
  // returns credit to its own queue only, so the buffer refills by pairs: aabb aabb ...
  const auto run = run_scenario(kTwoBacklogs);
  CHECK(start_order(run) == "aabbaabbaabbaabbaabb");
  CHECK(run.outcome(brokersim::Outcome::CompletedOnTime) == 20);
  // Both queues' messages are held at once: 4 unacked at the start, 2 per queue.
  CHECK(run.queue("a").delivered == 10);
  CHECK(run.queue("b").delivered == 10);
}

TEST_CASE("several queues per channel - one window shared and the limiter picks among the waiting queues at random") {
  // prefetch 1 for the channel: every ack reopens the window and rabbit_limiter wakes the queues
  // with messages in a randomly rotated order, so each pick is a or b with chance 1/2 while both
  // wait. 400 jobs a queue, 1 ms each: of the first 400 starts, a's count is Binomial(400, 1/2)
  // (sd 10): within 4 sd of 200. Per subscription the same case alternates exactly.
  const std::string jobs = [] {
    std::string at;
    for (int i = 0; i < 400; ++i) at += (i ? ", 0" : "0");
    return at;
  }();
  const std::string scenario = R"({"stop": {"time_ms": 100000}, "broker": {"queues": {"a": {}, "b": {}}},
    "producers": [{"queue": "a", "arrivals": {"at_ms": [)" + jobs + R"(]}, "service_ms": 1},
                  {"queue": "b", "arrivals": {"at_ms": [)" + jobs + R"(]}, "service_ms": 1}],
    "consumers": [{"queue": ["a", "b"], "prefetch": 1, "prefetch_scope": "channel"}]})";
  const std::string order = start_order(run_scenario(scenario)).substr(0, 400);
  const auto a = std::count(order.begin(), order.end(), 'a');
  CHECK(std::abs(static_cast<double>(a) - 200) < 40);
  // Not a fixed alternation: some queue is picked twice in a row.
  CHECK(order.find("aa") != std::string::npos);
  CHECK(order.find("bb") != std::string::npos);
  const std::string per_subscription = start_order(run_scenario(scenario, {"consumers.0.prefetch_scope=\"consumer\""}));
  std::string alternating;
  for (int i = 0; i < 400; ++i) alternating += "ab";
  CHECK(per_subscription == alternating);
}

TEST_CASE("several queues - one queue's backlog starves the other's job in the shared buffer") {
  // Per subscription, prefetch 4: the urgent job is delivered at 1 ms (its queue's own credit) but
  // waits in the buffer behind the three bulk jobs already there (bulk 1 runs 0-100 ms): at 400 ms,
  // past its 250 ms deadline, it is expired before start. With prefetch 1 no bulk job waits ahead
  // of it, only the running one: it starts at 100 ms, on time.
  const auto deep = run_scenario(kBulkThenUrgent);
  CHECK(urgent_started(deep) == -1);
  CHECK(deep.outcome(brokersim::Outcome::ExpiredBeforeStart) == 1);
  CHECK(deep.outcome(brokersim::Outcome::CompletedOnTime) == 20);
  const auto shallow = run_scenario(kBulkThenUrgent, {"consumers.0.prefetch=1"});
  CHECK(urgent_started(shallow) == doctest::Approx(100));
  CHECK(shallow.outcome(brokersim::Outcome::CompletedOnTime) == 21);
  // The same fleet as two groups, one per queue (one slot each): the urgent job starts at once.
  const auto split = run_scenario(kBulkThenUrgent, {"consumers=[{\"queue\": \"bulk\", \"prefetch\": 4}, {\"queue\": \"urgent\", \"prefetch\": 4}]"});
  CHECK(urgent_started(split) == doctest::Approx(1));
}

TEST_CASE("several queues per channel - a full window keeps the other queue's job at the broker") {
  // Per channel, prefetch 4: the four bulk jobs fill the window at 0, so the urgent job stays in
  // its queue; each ack wakes bulk and urgent in random order. Whatever the draws, it waits at the
  // broker at least until the first ack (100 ms) and never in the buffer behind more than 3 jobs.
  const auto run = run_scenario(kBulkThenUrgent, {"consumers.0.prefetch_scope=\"channel\"", "producers.1.deadline_ms=100000"});
  for (const auto& row : run.trace) {
    if (row["queue"] != "urgent") continue;
    CHECK(row.ms("delivered_ms") >= 100);
    CHECK(row.ms("started_ms") - row.ms("delivered_ms") <= 300);
  }
}

TEST_CASE("several queues - jobs_by_queue adds up to the run and names each queue's jobs") {
  const auto run = run_scenario(kBulkThenUrgent);
  const auto j = run.json();
  REQUIRE(j.contains("jobs_by_queue"));
  CHECK(j["jobs_by_queue"]["bulk"]["outcomes"]["generated"] == 20);
  CHECK(j["jobs_by_queue"]["urgent"]["outcomes"]["generated"] == 1);
  CHECK(j["jobs_by_queue"]["urgent"]["outcomes"]["expired_before_start"] == 1);
  CHECK(j["jobs_by_queue"]["urgent"]["fraction"]["expired_before_start"] == 1.0);
  // The urgent job's local wait (1 -> 400 ms would have been its start; it was refused at 400 ms).
  CHECK(j["jobs_by_queue"]["bulk"]["wait_ms"]["local"]["count"] == 20);
  // With producers on one queue there is no such section.
  CHECK_FALSE(run_scenario(kBulkThenUrgent, {"consumers.0.queue=\"bulk\"", "producers.1.queue=\"bulk\""}).json().contains("jobs_by_queue"));
}

TEST_CASE("several queues - the offered load is the pool's: both queues' erlangs on the shared slots") {
  const std::string scenario = R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"a": {}, "b": {}}},
    "producers": [{"queue": "a", "arrivals": {"poisson": {"rate_per_s": 10}}, "service_ms": 100},
                  {"queue": "b", "arrivals": {"poisson": {"rate_per_s": 5}}, "service_ms": 200}],
    "consumers": [{"queue": ["a", "b"], "count": 2, "slots": 2}]})";
  const auto j = run_scenario(scenario).json();
  // a: 1 erlang, b: 1 erlang, 4 slots shared: 50% for both.
  CHECK(j["offered_load"]["a"]["erlangs"].get<double>() == doctest::Approx(1.0));
  CHECK(j["offered_load"]["a"]["utilization"].get<double>() == doctest::Approx(0.5));
  CHECK(j["offered_load"]["b"]["utilization"].get<double>() == doctest::Approx(0.5));
}

TEST_CASE("several queues - the loader's refusals") {
  const std::string base = R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"a": {}, "b": {}}},
    "producers": [{"queue": "a", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}],
    "consumers": [{"queue": ["a", "b"]}]})";
  CHECK(load_error(base) == "(no error)");
  CHECK(load_error(base, {"consumers.0.queue=[\"a\", \"a\"]"}) == "consumers.0.queue.1: expected a queue not already in the list, got \"a\"");
  CHECK(load_error(base, {"consumers.0.queue=[]"}) ==
        "consumers.0.queue: expected a queue's name or a list of 1 to 2 distinct queue names, got []");
  CHECK(load_error(base, {"consumers.0.queue=[\"a\", \"c\"]"}) == "consumers.0.queue.1: expected the name of a queue in broker.queues (a, b), got \"c\"");
  CHECK(load_error(base, {"consumers.0.prefetch_scope=\"global\""}) ==
        "consumers.0.prefetch_scope: expected one of \"consumer\", \"channel\", got \"global\"");
  CHECK(load_error(base, {"broker.kind=\"amazon-sqs\""}).find(
            "consumers.0.queue: expected the name of a queue in broker.queues (a list of queues read by one consumer is modelled on "
            "broker kind \"rabbitmq-classic\", \"rabbitmq-quorum\")") == 0);
  CHECK(load_error(base, {"broker.kind=\"rabbitmq-quorum\"", "consumers.0.prefetch_scope=\"channel\""}).find(
            "consumers.0.prefetch_scope: expected \"consumer\": quorum queues refuse a consumer on a channel with global QoS") == 0);
  CHECK(load_error(base, {"broker.queues.b={\"type\": \"quorum\"}"}).find("consumers.0.queue: expected queues of one type") == 0);
  CHECK(load_error(base, {"consumers.0.autoscale={\"target_per_replica\": 10}"}).find(
            "consumers.0.autoscale: expected null for a group reading several queues") == 0);
}

TEST_CASE("several queues - Celery's worker on -Q a,b shares one window on classic queues and not on quorum queues") {
  const std::string base = R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"a": {}, "b": {}}},
    "producers": [{"queue": "a", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}],
    "consumers": [{"queue": ["a", "b"], "framework": {"name": "celery", "worker_concurrency": 2}}]})";
  CHECK(run_scenario(base).scenario.consumers[0].prefetch_scope == brokersim::ConsumerSpec::PrefetchScope::Channel);
  CHECK(run_scenario(base, {"broker.kind=\"rabbitmq-quorum\""}).scenario.consumers[0].prefetch_scope ==
        brokersim::ConsumerSpec::PrefetchScope::Consumer);
  // Spring's container: per consumer unless globalQos.
  const std::string spring = R"({"stop": {"time_ms": 1000}, "broker": {"queues": {"a": {}, "b": {}}},
    "producers": [{"queue": "a", "arrivals": {"poisson": {"rate_per_s": 1}}, "service_ms": 1}],
    "consumers": [{"queue": ["a", "b"], "framework": {"name": "spring-amqp"}}]})";
  CHECK(run_scenario(spring).scenario.consumers[0].prefetch_scope == brokersim::ConsumerSpec::PrefetchScope::Consumer);
  CHECK(run_scenario(spring, {"consumers.0.framework.globalQos=true"}).scenario.consumers[0].prefetch_scope ==
        brokersim::ConsumerSpec::PrefetchScope::Channel);
}
