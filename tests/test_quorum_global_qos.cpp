// Global QoS on a quorum queue: RabbitMQ answers a basic.consume from a quorum queue on a channel
// with basic.qos global=true with a connection error, so a group that asks for it (prefetch_scope
// channel, Spring's globalQos, Celery without quorum detection) could never consume. Refused at
// load, one queue or several, naming the queue, the setting and the reason.
#include <doctest/doctest.h>

#include <string>

#include "tests/load_error.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::load_error;

// One queue "work" of broker kind `kind` (its own `type` when given), one group `consumer`.
std::string global_qos_scenario(const std::string& kind, const std::string& queue, const std::string& consumer) {
  return R"({"stop": {"time_ms": 1000}, "broker": {"kind": ")" + kind + R"(", "queues": {"work": )" + queue + R"(}},
    "producers": [{"queue": "work", "arrivals": {"at_ms": [0, 10]}, "service_ms": 1}],
    "consumers": [)" + consumer + "]}";
}

const std::string kGlobalQosRefusal =
    "consumers.0.prefetch_scope: expected \"consumer\": quorum queues refuse a consumer on a channel with global QoS, and "
    "\"work\" is a quorum queue (RabbitMQ answers the group's basic.consume with 540 NOT_IMPLEMENTED \"does not support "
    "global qos\" and closes the connection: the group could never consume; quorum-queues guide, \"Global QoS\"), got "
    "\"channel\"";

}  // namespace

TEST_CASE("global QoS on one quorum queue is refused naming the queue and the setting") {
  const std::string channel = R"({"queue": "work", "prefetch": 1, "prefetch_scope": "channel"})";
  CHECK(load_error(global_qos_scenario("rabbitmq-quorum", "{}", channel)) == kGlobalQosRefusal);
  // A quorum queue of a rabbitmq-classic broker, by its own type.
  CHECK(load_error(global_qos_scenario("rabbitmq-classic", R"({"type": "quorum"})", channel)) == kGlobalQosRefusal);
  // Per-consumer QoS on the quorum queue, and global QoS on a classic queue, consume.
  CHECK(load_error(global_qos_scenario("rabbitmq-quorum", "{}", R"({"queue": "work", "prefetch_scope": "consumer"})")) ==
        "(no error)");
  CHECK(load_error(global_qos_scenario("rabbitmq-classic", "{}", channel)) == "(no error)");
  // Spring AMQP's container with globalQos: the error says which setting asked for it.
  CHECK(load_error(global_qos_scenario("rabbitmq-quorum", "{}",
                                       R"({"queue": "work", "framework": {"name": "spring-amqp", "globalQos": true}})")) ==
        kGlobalQosRefusal + " (set by consumers.0.framework from globalQos = true)");
  CHECK(load_error(global_qos_scenario("rabbitmq-quorum", "{}", R"({"queue": "work", "framework": {"name": "spring-amqp"}})")) ==
        "(no error)");
  brokersim::test::ScratchDir d("global-qos");
  const auto r = brokersim::test::run_cli({"run", d.write("s.json", global_qos_scenario("rabbitmq-quorum", "{}", channel))});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: " + kGlobalQosRefusal + "\n");
}

TEST_CASE("global QoS on a quorum queue: Celery consumes with worker_detect_quorum_queues and is refused without it") {
  const std::string celery = R"({"queue": "work", "framework": {"name": "celery", "worker_concurrency": 2}})";
  std::string undetected = celery;
  undetected.insert(undetected.find('}'), R"(, "worker_detect_quorum_queues": false)");
  // Celery 5.5's default turns global QoS off on a quorum queue: the prefetch is the queue's.
  const auto run = brokersim::test::run_scenario(global_qos_scenario("rabbitmq-quorum", "{}", celery));
  CHECK(run.scenario.consumers[0].prefetch_scope == brokersim::ConsumerSpec::PrefetchScope::Consumer);
  CHECK(run.scenario.consumers[0].prefetch == 8);
  // Without the detection (false, or any Celery before 5.5) the worker asks for global QoS.
  CHECK(load_error(global_qos_scenario("rabbitmq-quorum", "{}", undetected)) ==
        kGlobalQosRefusal + " (set by consumers.0.framework from worker_detect_quorum_queues = false)");
  CHECK(load_error(global_qos_scenario("rabbitmq-classic", R"({"type": "quorum"})", undetected)) ==
        kGlobalQosRefusal + " (set by consumers.0.framework from worker_detect_quorum_queues = false)");
  // On a classic queue there is nothing to detect: global QoS stays on, and it consumes.
  CHECK(load_error(global_qos_scenario("rabbitmq-classic", "{}", undetected)) == "(no error)");
  CHECK(load_error(global_qos_scenario("rabbitmq-quorum", "{}",
                                       R"({"queue": "work", "framework": {"name": "celery", "worker_concurrency": 2, )"
                                       R"("worker_detect_quorum_queues": 1}})")) ==
        "consumers.0.framework.worker_detect_quorum_queues: expected true or false, got 1");
}
