// Deliveries on one channel reach the client in the order they were sent, whatever latency each
// draws (an AMQP 0-9-1 channel, a Service Bus receive link, one SQS ReceiveMessage response), and
// a client subscribing to several queues subscribes in the order of its `queue` list, the first
// subscription filling the window before the next exists. Exact orders for small cases with a
// jittered delivery latency, over several seeds; the queue-change fraction of the real pika runs'
// shape.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

using brokersim::test::Run;
using brokersim::test::run_scenario;

namespace {

// Every job of a run that started, in the order its consumer started them (one slot: the order
// its local buffer received them).
std::vector<const brokersim::test::TraceRow*> rows_by_start(const Run& run) {
  std::vector<const brokersim::test::TraceRow*> rows;
  for (const auto& row : run.trace)
    if (!row.empty("started_ms")) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* x, const auto* y) { return x->ms("started_ms") < y->ms("started_ms"); });
  return rows;
}

std::string queues_by_start(const Run& run) {
  std::string order;
  for (const auto* row : rows_by_start(run)) order += (*row)["queue"];
  return order;
}

// Backlogs of n jobs in queues a and b at time 0; one consumer of one slot subscribing to
// `queues` at 1 ms, prefetch 4, service 10 ms; each delivery's latency lognormal, mean 2 ms, cv 0.5.
std::string two_backlogs(int n, const std::string& queues, const std::string& scope) {
  std::string at;
  for (int i = 0; i < n; ++i) at += i ? ", 0" : "0";
  return R"({"stop": {"time_ms": 100000},
    "broker": {"delivery_latency_ms": {"lognormal": {"mean": 2, "cv": 0.5}}, "queues": {"a": {}, "b": {}}},
    "producers": [{"queue": "a", "arrivals": {"at_ms": [)" + at + R"(]}, "service_ms": 10},
                  {"queue": "b", "arrivals": {"at_ms": [)" + at + R"(]}, "service_ms": 10}],
    "consumers": [{"queue": )" + queues + R"(, "prefetch": 4, "start_ms": 1, "prefetch_scope": ")" + scope + R"("}]})";
}

std::string repeated(const std::string& unit, int times) {
  std::string s;
  for (int i = 0; i < times; ++i) s += unit;
  return s;
}

// The fraction of consecutive deliveries (in the order received) that change queue.
double queue_changes(const std::string& order) {
  int changes = 0;
  for (std::size_t i = 1; i < order.size(); ++i) changes += order[i] != order[i - 1];
  return static_cast<double>(changes) / static_cast<double>(order.size() - 1);
}

// Jobs of one queue, n at time 0, read by one consumer of one slot with a window of n, each
// delivery's latency lognormal (mean 2 ms, cv 0.5): the whole queue is sent at 1 ms in queue order.
std::string one_window(const std::string& broker, const std::string& consumer_extra) {
  std::string at;
  for (int i = 0; i < 20; ++i) at += i ? ", 0" : "0";
  return R"({"stop": {"time_ms": 100000},
    "broker": {)" + broker + R"(, "delivery_latency_ms": {"lognormal": {"mean": 2, "cv": 0.5}}, "queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [)" + at + R"(]}, "service_ms": 10}],
    "consumers": [{"queue": "q", "prefetch": 20, "start_ms": 1)" + consumer_extra + R"(}]})";
}

// Started in job order (the queue's order, in which the window was sent), and received no
// earlier than the delivery sent before.
void check_received_in_queue_order(const Run& run) {
  const auto rows = rows_by_start(run);
  REQUIRE(rows.size() == 20);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK((*rows[i])["job"] == std::to_string(i));
    if (i > 0) CHECK(rows[i]->ms("received_ms") >= rows[i - 1]->ms("received_ms"));
  }
}

}  // namespace

TEST_CASE("delivery order - a channel on two queues hands over its deliveries in the order sent, whatever latency each draws") {
  // Per subscription (basic.qos global=false), prefetch 4: at consume a's subscription is sent 4,
  // then b's 4; each ack gives credit back to its own queue, so the buffer, received in the order
  // sent, refills by fours: aaaabbbb... exactly, in every seed, jitter or not.
  for (int seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    const auto run = run_scenario(two_backlogs(12, R"(["a", "b"])", "consumer"), {"seed=" + std::to_string(seed)});
    CHECK(queues_by_start(run) == repeated("aaaabbbb", 3));
    // Each queue's jobs in its own order (job numbers rise), each received no earlier than the
    // one before.
    const auto rows = rows_by_start(run);
    int last_a = -1, last_b = -1;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      int& last = (*rows[i])["queue"] == "a" ? last_a : last_b;
      CHECK(std::stoi((*rows[i])["job"]) > last);
      last = std::stoi((*rows[i])["job"]);
      if (i > 0) CHECK(rows[i]->ms("received_ms") >= rows[i - 1]->ms("received_ms"));
    }
  }
}

TEST_CASE("delivery order - the real runs' shape changes queue a quarter of the time") {
  // The pika consumers of queues A and B with prefetch 4 (per consumer): AAAABBBB... in every run,
  // 0.244 of consecutive deliveries changing queue. 100 jobs a queue, received in blocks of four:
  // 49 changes in 199 pairs, whatever the latency draws.
  for (int seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    const std::string order = queues_by_start(run_scenario(two_backlogs(100, R"(["a", "b"])", "consumer"), {"seed=" + std::to_string(seed)}));
    REQUIRE(order.size() == 200);
    CHECK(queue_changes(order) == doctest::Approx(49.0 / 199.0));
    CHECK(queue_changes(order) == doctest::Approx(0.244).epsilon(0.03));
  }
}

TEST_CASE("delivery order - a RabbitMQ window, acked or not, and a Service Bus receive link arrive in queue order") {
  for (int seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    const std::string s = "seed=" + std::to_string(seed);
    check_received_in_queue_order(run_scenario(one_window(R"("kind": "rabbitmq-classic")", ""), {s}));
    check_received_in_queue_order(run_scenario(one_window(R"("kind": "rabbitmq-quorum")", ""), {s}));
    check_received_in_queue_order(run_scenario(one_window(R"("kind": "rabbitmq-classic")", R"(, "ack": "on-receipt")"), {s}));
    check_received_in_queue_order(run_scenario(one_window(R"("kind": "azure-servicebus")", ""), {s}));
  }
}

TEST_CASE("delivery order - one SQS ReceiveMessage response arrives at one instant, in queue order") {
  // Two responses of 10 (batch_size 10, room for 20): each shares one latency draw.
  for (int seed = 1; seed <= 3; ++seed) {
    CAPTURE(seed);
    const auto run = run_scenario(one_window(R"("kind": "amazon-sqs")", R"(, "batch_size": 10)"), {"seed=" + std::to_string(seed)});
    const auto rows = rows_by_start(run);
    REQUIRE(rows.size() == 20);
    for (std::size_t first : {std::size_t{0}, std::size_t{10}})
      for (std::size_t i = first + 1; i < first + 10; ++i) {
        CHECK(rows[i]->ms("received_ms") == rows[first]->ms("received_ms"));
        CHECK(std::stoi((*rows[i])["job"]) > std::stoi((*rows[i - 1])["job"]));
      }
  }
}

TEST_CASE("subscription order - the first window goes to the first queue of the group's list") {
  // One window for the channel (global QoS), prefetch 4, both queues waiting: the client
  // subscribes to its list's first queue first, which fills the window before the second
  // subscription exists. Then every ack wakes the two queues in a random order.
  for (int seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const std::string s = "seed=" + std::to_string(seed);
    CHECK(queues_by_start(run_scenario(two_backlogs(8, R"(["b", "a"])", "channel"), {s})).substr(0, 4) == "bbbb");
    CHECK(queues_by_start(run_scenario(two_backlogs(8, R"(["a", "b"])", "channel"), {s})).substr(0, 4) == "aaaa");
  }
  // Per subscription, each queue's window in the list's order.
  CHECK(queues_by_start(run_scenario(two_backlogs(8, R"(["b", "a"])", "consumer"))) == "bbbbaaaabbbbaaaa");
}
