// Scenario loading: a complete scenario read field by field, --set paths, and the exact text of
// the errors users see for bad input.
#include <doctest/doctest.h>

#include <atomic>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "experiments/scenario/broker_kinds.hpp"
#include "experiments/scenario_load.hpp"
#include "tests/test_util.hpp"

using brokersim::ScenarioError;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A fresh folder per call, so tests do not see each other's files.
fs::path temp_dir() {
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() /
                       ("brokersim_scenario_load_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

constexpr double kNs = 1e6;  // ns per ms

// The smallest valid scenario; bad-input tests change one thing in it.
json minimal() {
  return json::parse(R"({
    "stop": {"time_ms": 60000},
    "broker": {"queues": {"work": {"dead_letter_to": "dlq"}, "dlq": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}}, "service_ms": 50}],
    "consumers": [{"queue": "work", "count": 4}]
  })");
}

// Every key docs/scenario.md defines for rabbitmq-classic, in use; its trace_csv is "jobs.csv".
json complete() {
  return json::parse(R"({
    "name": "everything",
    "seed": 7,
    "stop": {"time_ms": 60000, "jobs": 500},
    "warmup_ms": 1000,
    "broker": {
      "kind": "rabbitmq-classic",
      "version": "3.13",
      "delivery_latency_ms": 0.5,
      "ack_latency_ms": {"exp": {"mean": 0.25}},
      "queues": {
        "work": {"message_ttl_ms": 600, "dead_letter_to": "dlq", "max_length": 1000,
                 "overflow": "reject-publish-dlx", "expires_ms": 30000},
        "dlq": {"message_ttl_ms": null, "dead_letter_to": null, "max_length": null}
      }
    },
    "producers": [
      {"queue": "work", "arrivals": {"poisson": {"rate_per_s": 20}}, "deadline_ms": 600,
       "expiration_ms": "remaining-budget", "service_ms": {"exp": {"mean": 50}}},
      {"queue": "dlq", "arrivals": {"at_ms": [30, 10, 20.5]},
       "deadline_ms": {"uniform": {"min": 100, "max": 200}}, "expiration_ms": 300,
       "service_ms": {"lognormal": {"mean": 40, "cv": 0.5}},
       "publish_delay_ms": {"normal": {"mean": 2, "sd": 1}},
       "clock_offset_ms": {"normal": {"mean": -5, "sd": 3}}},
      {"queue": "work", "arrivals": {"trace_csv": "jobs.csv"}, "service_ms": {"empirical": [1, 2, 3]}},
      {"queue": "work", "arrivals": {"rate_schedule": [{"from_ms": 0, "rate_per_s": 5}, {"from_ms": 1000, "rate_per_s": 0}]},
       "service_ms": {"const": 4}, "expiration_ms": null, "deadline_ms": null},
      {"queue": "work", "arrivals": {"periodic": {"every_ms": 2.5}}, "service_ms": 1}
    ],
    "consumers": [
      {"queue": "work", "count": 4, "prefetch": 1, "slots": 2, "start_ms": 100,
       "clock_offset_ms": {"uniform": {"min": -20, "max": 20}}, "uncertainty_ms": 100,
       "admission": "check-at-receive-and-start", "min_window_ms": 10, "on_expired": "requeue",
       "exec_timeout": "remaining-budget", "failure_probability": 0.25, "priority": -3},
      {"queue": "dlq", "count": 2.0, "prefetch": 0, "admission": "none", "on_expired": "reject",
       "exec_timeout": {"const": 250}, "clock_offset_ms": -7}
    ],
    "faults": [
      {"at_ms": 0, "consumer": 0, "stall_ms": 1050},
      {"at_ms": 500, "consumer": 5, "crash": true, "restart_after_ms": 200},
      {"at_ms": 600, "consumer": 1, "crash": true},
      {"at_ms": 700, "broker_down_ms": 50},
      {"at_ms": 800, "consumer": 2, "clock_step_ms": -12.5}
    ],
    "observe": {"every_ms": 100},
    "limits": {"max_in_system": 1000, "max_events": 1e6},
    "sweep": {"consumers.0.prefetch": [1, 2, 4]}
  })");
}

std::string load_error(const json& doc, const std::string& base_dir = "") {
  try {
    brokersim::load_scenario(doc, base_dir);
  } catch (const ScenarioError& error) {
    return error.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a complete scenario loads with every field") {
  const fs::path dir = temp_dir();
  write_file(dir / "jobs.csv", "service_ms,publish_ms,deadline_ms\n5,0,100\n,10,\n7.5,10,-3\n");
  const json doc = complete();
  const brokersim::Scenario s = brokersim::load_scenario(doc, dir.string());
  using sim::Distribution;

  CHECK(s.name == "everything");
  CHECK(s.seed == 7);
  CHECK(s.stop_time == 60000 * sim::kNsPerMs);
  CHECK(s.stop_jobs == 500u);
  CHECK(s.warmup == 1000 * sim::kNsPerMs);

  CHECK(s.broker.kind == "rabbitmq-classic");
  CHECK(s.broker.version == "3.13");
  CHECK(s.broker.delivery_latency.kind() == Distribution::Kind::Const);
  CHECK(s.broker.delivery_latency.param_a() == doctest::Approx(0.5 * kNs));
  CHECK(s.broker.ack_latency.kind() == Distribution::Kind::Exp);
  CHECK(s.broker.ack_latency.param_a() == doctest::Approx(0.25 * kNs));

  // Queues are stored in name order: dlq before work, whatever the file says.
  REQUIRE(s.broker.queues.size() == 2);
  const auto& dlq = s.broker.queues[0];
  const auto& work = s.broker.queues[1];
  CHECK(dlq.name == "dlq");
  CHECK(!dlq.message_ttl);
  CHECK(!dlq.dead_letter_to);
  CHECK(dlq.dead_letter_index == -1);
  CHECK(!dlq.max_length);
  CHECK(dlq.overflow == brokersim::Overflow::DropHead);
  CHECK(!dlq.expires);
  CHECK(work.name == "work");
  CHECK(work.message_ttl == 600 * sim::kNsPerMs);
  CHECK(work.dead_letter_to == "dlq");
  CHECK(work.dead_letter_index == 0);
  CHECK(work.max_length == 1000);
  CHECK(work.overflow == brokersim::Overflow::RejectPublishDlx);
  CHECK(work.expires == 30000 * sim::kNsPerMs);

  REQUIRE(s.producers.size() == 5);
  const auto& p0 = s.producers[0];
  CHECK(p0.queue == 1);
  CHECK(p0.arrivals.kind == brokersim::ArrivalSpec::Kind::Poisson);
  CHECK(p0.arrivals.rate_per_s == 20);
  REQUIRE(p0.deadline);
  CHECK(p0.deadline->kind() == Distribution::Kind::Const);
  CHECK(p0.deadline->param_a() == doctest::Approx(600 * kNs));
  CHECK(p0.expiration == brokersim::ProducerSpec::Expiration::RemainingBudget);
  CHECK(p0.service.kind() == Distribution::Kind::Exp);
  CHECK(p0.service.mean() == doctest::Approx(50 * kNs));
  CHECK(p0.publish_delay.is_zero());
  CHECK(p0.clock_offset.is_zero());

  const auto& p1 = s.producers[1];
  CHECK(p1.queue == 0);
  CHECK(p1.arrivals.kind == brokersim::ArrivalSpec::Kind::AtTimes);
  CHECK(p1.arrivals.at == std::vector<sim::Time>{10'000'000, 20'500'000, 30'000'000});
  REQUIRE(p1.deadline);
  CHECK(p1.deadline->kind() == Distribution::Kind::Uniform);
  CHECK(p1.deadline->param_a() == doctest::Approx(100 * kNs));
  CHECK(p1.deadline->param_b() == doctest::Approx(200 * kNs));
  CHECK(p1.expiration == brokersim::ProducerSpec::Expiration::Fixed);
  CHECK(p1.expiration_value.param_a() == doctest::Approx(300 * kNs));
  CHECK(p1.service.kind() == Distribution::Kind::Lognormal);
  CHECK(p1.service.mean() == doctest::Approx(40 * kNs));
  CHECK(p1.service.param_b() == doctest::Approx(0.5));  // cv is scale-free
  CHECK(p1.publish_delay.kind() == Distribution::Kind::Normal);
  CHECK(p1.publish_delay.param_a() == doctest::Approx(2 * kNs));
  CHECK(p1.publish_delay.param_b() == doctest::Approx(1 * kNs));
  CHECK(p1.clock_offset.kind() == Distribution::Kind::Normal);
  CHECK(p1.clock_offset.param_a() == doctest::Approx(-5 * kNs));
  // Durations' normals are truncated at 0, signed ones are not; draws tell them apart
  // (untruncated, mean 2 sd 1 goes negative 2.3% of the time; mean -5 sd 3 mostly does).
  {
    sim::Rng rng(3, 0, "test");
    bool delay_negative = false, offset_negative = false;
    for (int i = 0; i < 2000; ++i) {
      delay_negative |= p1.publish_delay.sample(rng) < 0;
      offset_negative |= p1.clock_offset.sample(rng) < 0;
    }
    CHECK(!delay_negative);
    CHECK(offset_negative);
  }

  const auto& p2 = s.producers[2];
  CHECK(p2.arrivals.kind == brokersim::ArrivalSpec::Kind::Trace);
  CHECK(p2.arrivals.trace_path == (dir / "jobs.csv").string());
  REQUIRE(p2.arrivals.trace.size() == 3);
  CHECK(p2.arrivals.trace[0].publish == 0);
  CHECK(p2.arrivals.trace[0].deadline == 100 * sim::kNsPerMs);
  CHECK(p2.arrivals.trace[0].service == 5 * sim::kNsPerMs);
  CHECK(p2.arrivals.trace[1].publish == 10 * sim::kNsPerMs);
  CHECK(!p2.arrivals.trace[1].deadline);
  CHECK(!p2.arrivals.trace[1].service);
  CHECK(p2.arrivals.trace[2].deadline == -3 * sim::kNsPerMs);  // kept: rejected at publish later
  CHECK(p2.arrivals.trace[2].service == 7'500'000);
  CHECK(!p2.deadline);
  CHECK(p2.service.kind() == Distribution::Kind::Empirical);
  CHECK(p2.service.values() == std::vector<double>{1 * kNs, 2 * kNs, 3 * kNs});

  const auto& p3 = s.producers[3];
  CHECK(p3.arrivals.kind == brokersim::ArrivalSpec::Kind::RateSchedule);
  REQUIRE(p3.arrivals.schedule.size() == 2);
  CHECK(p3.arrivals.schedule[0].from == 0);
  CHECK(p3.arrivals.schedule[0].rate_per_s == 5);
  CHECK(p3.arrivals.schedule[1].from == 1000 * sim::kNsPerMs);
  CHECK(p3.arrivals.schedule[1].rate_per_s == 0);
  CHECK(!p3.deadline);
  CHECK(p3.expiration == brokersim::ProducerSpec::Expiration::None);
  CHECK(p3.service.param_a() == doctest::Approx(4 * kNs));

  const auto& p4 = s.producers[4];
  CHECK(p4.arrivals.kind == brokersim::ArrivalSpec::Kind::Periodic);
  CHECK(p4.arrivals.every == 2'500'000);

  REQUIRE(s.consumers.size() == 2);
  const auto& c0 = s.consumers[0];
  CHECK(c0.queue == 1);
  CHECK(c0.count == 4);
  CHECK(c0.prefetch == 1);
  CHECK(c0.slots == 2);
  CHECK(c0.start == 100 * sim::kNsPerMs);
  CHECK(c0.clock_offset.kind() == Distribution::Kind::Uniform);
  CHECK(c0.clock_offset.param_a() == doctest::Approx(-20 * kNs));
  CHECK(c0.clock_offset.param_b() == doctest::Approx(20 * kNs));
  CHECK(c0.uncertainty == 100 * sim::kNsPerMs);
  CHECK(c0.admission == brokersim::Admission::CheckAtReceiveAndStart);
  CHECK(c0.min_window == 10 * sim::kNsPerMs);
  CHECK(c0.on_expired == brokersim::OnExpired::Requeue);
  CHECK(c0.exec_timeout == brokersim::ConsumerSpec::ExecTimeout::RemainingBudget);
  CHECK(c0.failure_probability == 0.25);
  CHECK(c0.priority == -3);
  const auto& c1 = s.consumers[1];
  CHECK(c1.queue == 0);
  CHECK(c1.count == 2);
  CHECK(c1.prefetch == 0);
  CHECK(c1.slots == 1);
  CHECK(c1.admission == brokersim::Admission::None);
  CHECK(c1.on_expired == brokersim::OnExpired::Reject);
  CHECK(c1.exec_timeout == brokersim::ConsumerSpec::ExecTimeout::Fixed);
  CHECK(c1.exec_timeout_value.param_a() == doctest::Approx(250 * kNs));
  CHECK(c1.clock_offset.param_a() == doctest::Approx(-7 * kNs));
  CHECK(s.consumer_count() == 6);

  REQUIRE(s.faults.size() == 5);
  using Fault = brokersim::FaultSpec;
  CHECK(s.faults[0].kind == Fault::Kind::Stall);
  CHECK(s.faults[0].at == 0);
  CHECK(s.faults[0].consumer == 0);
  CHECK(s.faults[0].duration == 1050 * sim::kNsPerMs);
  CHECK(s.faults[1].kind == Fault::Kind::Crash);
  CHECK(s.faults[1].at == 500 * sim::kNsPerMs);
  CHECK(s.faults[1].consumer == 5);
  CHECK(s.faults[1].restart);
  CHECK(s.faults[1].duration == 200 * sim::kNsPerMs);
  CHECK(s.faults[2].kind == Fault::Kind::Crash);
  CHECK(!s.faults[2].restart);
  CHECK(s.faults[3].kind == Fault::Kind::BrokerDown);
  CHECK(s.faults[3].consumer == -1);
  CHECK(s.faults[3].duration == 50 * sim::kNsPerMs);
  CHECK(s.faults[4].kind == Fault::Kind::ClockStep);
  CHECK(s.faults[4].consumer == 2);
  CHECK(s.faults[4].step == -12'500'000);

  CHECK(s.observe_every == 100 * sim::kNsPerMs);
  CHECK(s.limits.max_in_system == 1000u);
  CHECK(s.limits.max_events == 1'000'000u);

  fs::remove_all(dir);
}

TEST_CASE("defaults of a minimal scenario") {
  const brokersim::Scenario s = brokersim::load_scenario(minimal(), "");
  CHECK(s.name.empty());
  CHECK(s.seed == 1);
  CHECK(s.stop_time == 60000 * sim::kNsPerMs);
  CHECK(!s.stop_jobs);
  CHECK(s.warmup == 0);
  CHECK(s.broker.version == "4.2");
  CHECK(s.broker.delivery_latency.is_zero());
  CHECK(s.broker.ack_latency.is_zero());
  CHECK(s.producers[0].queue == 1);
  CHECK(!s.producers[0].deadline);
  CHECK(s.producers[0].expiration == brokersim::ProducerSpec::Expiration::None);
  REQUIRE(s.consumers.size() == 1);
  const auto& c = s.consumers[0];
  CHECK(c.prefetch == 0);  // RabbitMQ: 0 = unlimited
  CHECK(c.slots == 1);
  CHECK(c.start == 0);
  CHECK(c.clock_offset.is_zero());
  CHECK(c.admission == brokersim::Admission::CheckBeforeStart);
  CHECK(c.on_expired == brokersim::OnExpired::Ack);
  CHECK(c.exec_timeout == brokersim::ConsumerSpec::ExecTimeout::None);
  CHECK(c.failure_probability == 0);
  CHECK(c.priority == 0);
  CHECK(s.faults.empty());
  CHECK(!s.observe_every);
  CHECK(s.limits.max_in_system == brokersim::Limits{}.max_in_system);

  json no_consumers = minimal();
  no_consumers["consumers"] = json::array();
  CHECK(brokersim::load_scenario(no_consumers, "").consumers.empty());
  json jobs_only = minimal();
  jobs_only["stop"] = {{"jobs", 10}};
  const auto by_jobs = brokersim::load_scenario(jobs_only, "");
  CHECK(!by_jobs.stop_time);
  CHECK(by_jobs.stop_jobs == 10u);
}

TEST_CASE("apply_set: nested paths, arrays, new keys and the string fallback") {
  json doc = minimal();
  brokersim::apply_set(doc, "consumers.0.prefetch=8");
  CHECK(doc["consumers"][0]["prefetch"] == 8);
  brokersim::apply_set(doc, "broker.queues.work.message_ttl_ms=250.5");
  CHECK(doc["broker"]["queues"]["work"]["message_ttl_ms"] == 250.5);
  brokersim::apply_set(doc, "broker.queues.work.overflow=drop-head");  // not JSON: a string
  CHECK(doc["broker"]["queues"]["work"]["overflow"] == "drop-head");
  brokersim::apply_set(doc, "producers.0.arrivals.poisson.rate_per_s=40");
  CHECK(doc["producers"][0]["arrivals"]["poisson"]["rate_per_s"] == 40);
  brokersim::apply_set(doc, "producers.0.service_ms={\"exp\": {\"mean\": 7}}");
  CHECK(doc["producers"][0]["service_ms"]["exp"]["mean"] == 7);
  brokersim::apply_set(doc, "observe.every_ms=50");  // creates observe
  CHECK(doc["observe"]["every_ms"] == 50);
  brokersim::apply_set(doc, "broker.queues.work.dead_letter_to=null");
  CHECK(doc["broker"]["queues"]["work"]["dead_letter_to"].is_null());
  brokersim::apply_set(doc, "name=a=b");  // only the first '=' separates
  CHECK(doc["name"] == "a=b");
  brokersim::apply_set(doc, "name=\"7\"");
  CHECK(doc["name"] == "7");
  brokersim::apply_set(doc, "consumers.0.queue=");
  CHECK(doc["consumers"][0]["queue"] == "");

  json arrays = json::parse(R"({"xs": [[1, 2], [3, 4]]})");
  brokersim::set_path(arrays, "xs.1.0", json("new"));
  CHECK(arrays == json::parse(R"({"xs": [[1, 2], ["new", 4]]})"));
  json empty;
  brokersim::set_path(empty, "a.b.c", json(true));
  CHECK(empty == json::parse(R"({"a": {"b": {"c": true}}})"));
}

TEST_CASE("apply_set and set_path errors name the path") {
  json doc = minimal();
  doc["name"] = "demo";
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, "consumers.5.prefetch=1"),
                       "consumers.5.prefetch: expected an index below 1 (consumers has 1 element), got 5", ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, "consumers.first.prefetch=1"),
                       "consumers.first.prefetch: expected an array index (consumers is an array of 1 element), got \"first\"",
                       ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, "name.x=1"),
                       "name.x: expected an object or array at name to set \"x\" in, got \"demo\"", ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, "seed"), "--set: expected PATH=VALUE, got \"seed\"", ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, "=3"), "--set: expected a key path before '=', got \"=3\"", ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, "broker..kind=x"),
                       "broker..kind: expected keys and array indices separated by single dots, got \"broker..kind\"",
                       ScenarioError);
  CHECK(doc == [] { json d = minimal(); d["name"] = "demo"; return d; }());  // failed sets change nothing
}

TEST_CASE("bad scenarios give exact errors") {
  struct Case {
    std::function<void(json&)> change;
    std::string expected;
  };
  const auto set = [](std::string path, json value) {
    return [path = std::move(path), value = std::move(value)](json& doc) { brokersim::set_path(doc, path, value); };
  };
  const auto set_text = [](std::string assignment) {
    return [assignment = std::move(assignment)](json& doc) { brokersim::apply_set(doc, assignment); };
  };
  const std::vector<Case> cases = {
      {set("consumers.0.prefetch", -1), "consumers.0.prefetch: expected an integer >= 0, got -1"},
      {set("consumers.0.prefetch", true), "consumers.0.prefetch: expected an integer >= 0, got true"},
      {set("consumers.0.prefetch", 70000), "consumers.0.prefetch: expected an integer between 0 and 65535, got 70000"},
      {set("consumers.0.prefech", 1), "consumers.0.prefech: unknown key (did you mean \"prefetch\"?)"},
      {set("consumers.0.foo", 1),
       "consumers.0.foo: unknown key (allowed: queue, count, prefetch, slots, start_ms, clock_offset_ms, uncertainty_ms, "
       "admission, min_window_ms, on_expired, exec_timeout, failure_probability, priority, stop_ms, shutdown_grace_ms, "
       "autoscale, ack, framework)"},
      {set("consumers.0.count", 4.5), "consumers.0.count: expected an integer >= 1, got 4.5"},
      {set("consumers.0.count", "4"), "consumers.0.count: expected an integer >= 1, got \"4\""},
      {set("consumers.0.admission", "check"),
       "consumers.0.admission: expected one of \"none\", \"check-before-start\", \"check-at-receive-and-start\", got \"check\""},
      {set("consumers.0.failure_probability", 1.5), "consumers.0.failure_probability: expected a number between 0 and 1, got 1.5"},
      {set("consumers.0.exec_timeout", "forever"),
       "consumers.0.exec_timeout: expected null, \"remaining-budget\" or a duration, got \"forever\""},
      {set("consumers.0.batch_size", 5),
       "consumers.0.batch_size: this key belongs to broker kind \"amazon-sqs\"; broker kind \"rabbitmq-classic\" has no such key"},
      {set("consumers.0.clock_offset_ms", json::parse(R"({"uniform": {"min": 5, "max": -5}})")),
       "consumers.0.clock_offset_ms.uniform.max: expected a number >= min (5), got -5"},
      {set("consumers", json::object()), "consumers: expected an array of consumer groups, got {}"},
      {set("broker.kind", "kafka"),
       "broker.kind: expected one of \"rabbitmq-classic\", \"rabbitmq-quorum\", \"azure-servicebus\", \"amazon-sqs\" (the broker kinds this version simulates), got \"kafka\""},
      {set("broker.version", "5.0"), "broker.version: expected one of \"3.13\", \"4.0\", \"4.2\", \"4.3\", got \"5.0\""},
      {set("broker.queues.work.delivery_limit", 20),
       "broker.queues.work.delivery_limit: this key belongs to quorum queues; broker.queues.work.type is \"classic\" "
       "(the broker kind's type; set it to \"quorum\" or drop this key)"},
      {set("broker.queues.work.dead_letter_to", "nope"),
       "broker.queues.work.dead_letter_to: expected the name of a queue in broker.queues (dlq, work), got \"nope\""},
      {set_text("broker.queues.work.overflow=drop-tail"),
       "broker.queues.work.overflow: expected one of \"drop-head\", \"reject-publish\", \"reject-publish-dlx\", got \"drop-tail\""},
      {set("broker.queues.work.message_ttl_ms", -1), "broker.queues.work.message_ttl_ms: expected a number >= 0 or null, got -1"},
      {set("broker.queues.work.max_length", 2.5), "broker.queues.work.max_length: expected an integer >= 0 or null, got 2.5"},
      {set("broker.queues.work.expires_ms", 0), "broker.queues.work.expires_ms: expected a number > 0 or null, got 0"},
      {set("broker.queues.dlq", json::array()), "broker.queues.dlq: expected an object (the queue's arguments), got []"},
      {set("broker.queues", json::object()), "broker.queues: expected a non-empty object of queues by name, got {}"},
      {set("broker.queues", json::parse(R"({"a.b": {}})")),
       "broker.queues: expected queue names of 1 to 255 bytes without '.', ',', '\"' or control characters, got \"a.b\""},
      {[](json& d) { d["broker"].erase("queues"); }, "broker.queues: expected a non-empty object of queues by name, got nothing"},
      {set("stop", json::object()), "stop: expected at least one of time_ms, jobs, got {}"},
      {[](json& d) { d.erase("stop"); }, "stop: expected an object with time_ms and/or jobs, got nothing"},
      {set("stop.time_ms", 0), "stop.time_ms: expected a number > 0, got 0"},
      {set("stop.jobs", 0), "stop.jobs: expected an integer >= 1, got 0"},
      {set("warmup_ms", 60000), "warmup_ms: expected a number >= 0 and < stop.time_ms (60000), got 60000"},
      {set("seed", -3), "seed: expected an integer >= 0, got -3"},
      {set("name", 5), "name: expected a string, got 5"},
      {set("brokr", json::object()), "brokr: unknown key (did you mean \"broker\"?)"},
      {set("producers", json::array()), "producers: expected a non-empty array of producers, got []"},
      {set("producers.0.queue", "wrk"), "producers.0.queue: expected the name of a queue in broker.queues (dlq, work), got \"wrk\""},
      {set("producers.0.session", "s"),
       "producers.0.session: this key belongs to broker kind \"azure-servicebus\"; broker kind \"rabbitmq-classic\" has no such "
       "key"},
      {set("producers.0.arrivals.poisson.rate_per_s", 0), "producers.0.arrivals.poisson.rate_per_s: expected a number > 0, got 0"},
      {set("producers.0.arrivals", json::object()),
       "producers.0.arrivals: expected exactly one of poisson, periodic, at_ms, trace_csv, rate_schedule, got {}"},
      {set("producers.0.arrivals", json::parse(R"({"poison": {"rate_per_s": 1}})")),
       "producers.0.arrivals.poison: unknown key (did you mean \"poisson\"?)"},
      {set("producers.0.arrivals", json::parse(R"({"at_ms": [5, -1]})")),
       "producers.0.arrivals.at_ms.1: expected a number >= 0, got -1"},
      {set("producers.0.arrivals", json::parse(R"({"periodic": {"every_ms": 0.0000001}})")),
       "producers.0.arrivals.periodic.every_ms: expected a number > 0 of at least 0.000001 (1 ns, the clock's resolution), got "
       "1e-07"},
      {set("producers.0.arrivals",
           json::parse(R"({"rate_schedule": [{"from_ms": 100, "rate_per_s": 1}, {"from_ms": 100, "rate_per_s": 2}]})")),
       "producers.0.arrivals.rate_schedule.1.from_ms: expected a number > 100 (the previous from_ms), got 100"},
      {set("producers.0.service_ms", "fast"),
       "producers.0.service_ms: expected a duration: a number or an object with one of const, exp, uniform, normal, lognormal, "
       "gamma, weibull, empirical, got \"fast\""},
      {[](json& d) { d["producers"][0].erase("service_ms"); },
       "producers.0.service_ms: expected a duration: a number or an object with one of const, exp, uniform, normal, lognormal, "
       "gamma, weibull, empirical, got nothing"},
      {set("producers.0.service_ms", -2), "producers.0.service_ms: expected a number >= 0, got -2"},
      {set("producers.0.service_ms", json::parse(R"({"uniform": {"min": 5, "max": 3}})")),
       "producers.0.service_ms.uniform.max: expected a number >= min (5), got 3"},
      {set("producers.0.service_ms", json::parse(R"({"exp": {"mean": 0}})")),
       "producers.0.service_ms.exp.mean: expected a number > 0, got 0"},
      {set("producers.0.service_ms", json::parse(R"({"exp": {}})")),
       "producers.0.service_ms.exp.mean: expected a number > 0, got nothing"},
      {set("producers.0.service_ms", json::parse(R"({"expo": {"mean": 1}})")),
       "producers.0.service_ms.expo: unknown key (did you mean \"exp\"?)"},
      {set("producers.0.service_ms", json::parse(R"({"const": 1, "exp": {"mean": 1}})")),
       "producers.0.service_ms: expected exactly one of const, exp, uniform, normal, lognormal, gamma, weibull, empirical, got "
       "{\"const\":1,\"exp\":{\"mean\":1}}"},
      {set("producers.0.service_ms", json::parse(R"({"normal": {"mean": -1, "sd": 1}})")),
       "producers.0.service_ms.normal.mean: expected a number >= 0, got -1"},
      {set("producers.0.service_ms", json::parse(R"({"empirical": []})")),
       "producers.0.service_ms.empirical: expected a non-empty array of numbers, got []"},
      {set("producers.0.service_ms", json::parse(R"({"empirical": [1, null]})")),
       "producers.0.service_ms.empirical.1: expected a number >= 0, got null"},
      {set("producers.0.expiration_ms", "remaining"),
       "producers.0.expiration_ms: expected null, \"remaining-budget\" or a duration, got \"remaining\""},
      {set("faults", json::parse(R"([{"at_ms": 0, "consumer": 4, "stall_ms": 10}])")),
       "faults.0.consumer: expected an integer >= 0 and < 4 (consumers are numbered across all groups from 0), got 4"},
      {set("faults", json::parse(R"([{"at_ms": 0, "consumer": 0}])")),
       "faults.0: expected exactly one of stall_ms, crash, broker_down_ms, clock_step_ms, got {\"at_ms\":0,\"consumer\":0}"},
      {set("faults", json::parse(R"([{"at_ms": 0, "consumer": 0, "broker_down_ms": 5}])")),
       "faults.0.consumer: not allowed with broker_down_ms (the whole broker is down)"},
      {set("faults", json::parse(R"([{"at_ms": 0, "consumer": 0, "crash": false}])")), "faults.0.crash: expected true, got false"},
      {set("faults", json::parse(R"([{"at_ms": 0, "consumer": 0, "stall_ms": 5, "restart_after_ms": 5}])")),
       "faults.0.restart_after_ms: only allowed with \"crash\": true"},
      {set("faults", json::parse(R"([{"consumer": 0, "stall_ms": 5}])")), "faults.0.at_ms: expected a number >= 0, got nothing"},
      {set("observe.every_ms", 0), "observe.every_ms: expected a number > 0, got 0"},
      {set("limits.max_events", 0), "limits.max_events: expected an integer >= 1, got 0"},
      {set("sweep", json::parse(R"({"consumers.0.prefetch": []})")),
       "sweep.consumers.0.prefetch: expected a non-empty array of values, got []"},
  };
  CHECK(cases.size() >= 20);
  {
    // Too large to keep times far from int64 overflow (the bound is sim::kMaxMs, printed shortest).
    char bound[32];
    const auto end = std::to_chars(bound, bound + sizeof bound, sim::kMaxMs).ptr;
    json doc = minimal();
    doc["producers"][0]["service_ms"] = sim::kMaxMs * 4;
    CHECK(load_error(doc) == "producers.0.service_ms: expected a number >= 0 (at most " + std::string(bound, end) +
                                 " in magnitude), got " + json(sim::kMaxMs * 4).dump());
    doc["producers"][0]["service_ms"] = sim::kMaxMs;  // the bound itself is fine
    CHECK(brokersim::load_scenario(doc, "").producers[0].service.param_a() == doctest::Approx(sim::kMaxMs * 1e6));
  }
  for (const auto& c : cases) {
    json doc = minimal();
    REQUIRE_NOTHROW(brokersim::load_scenario(doc, ""));
    c.change(doc);
    INFO("expected: " << c.expected);
    CHECK(load_error(doc) == c.expected);
  }
  CHECK(load_error(json::array()) == "expected a JSON object (the scenario), got []");
}

TEST_CASE("integral floats are integers - booleans and huge numbers are not numbers") {
  json doc = minimal();
  doc["consumers"][0]["count"] = 4.0;
  doc["seed"] = 18446744073709551615u;
  const auto s = brokersim::load_scenario(doc, "");
  CHECK(s.consumers[0].count == 4);
  CHECK(s.seed == 18446744073709551615u);
  doc["seed"] = 1.8446744073709552e19;  // 2^64 as a float
  CHECK(load_error(doc) == "seed: expected an integer >= 0, got 1.8446744073709552e+19");
  doc = minimal();
  doc["producers"][0]["service_ms"] = false;
  CHECK(load_error(doc) ==
        "producers.0.service_ms: expected a duration: a number or an object with one of const, exp, uniform, normal, "
        "lognormal, gamma, weibull, empirical, got false");
  doc = minimal();
  doc["broker"]["version"] = 4.0;  // --set broker.version=4.0 gives a number
  CHECK(brokersim::load_scenario(doc, "").broker.version == "4.0");
}

TEST_CASE("trace_csv errors name the file and line") {
  const fs::path dir = temp_dir();
  json doc = minimal();
  doc["producers"][0]["arrivals"] = {{"trace_csv", "t.csv"}};
  const std::string file = (dir / "t.csv").string();
  const std::string prefix = "producers.0.arrivals.trace_csv: " + file;
  const auto error_for = [&](const std::string& csv) {
    write_file(dir / "t.csv", csv);
    return load_error(doc, dir.string());
  };
  CHECK(error_for("publish_ms,when\n1,2\n") ==
        prefix + " line 1: expected a column name among publish_ms, deadline_ms, service_ms, got \"when\"");
  CHECK(error_for("deadline_ms\n5\n") == prefix + " line 1: expected a header row naming a publish_ms column, got \"deadline_ms\"");
  CHECK(error_for("publish_ms,publish_ms\n1,1\n") == prefix + " line 1: expected each column once, got \"publish_ms\" twice");
  CHECK(error_for("publish_ms,service_ms\n1,2\n3,x\n") == prefix + " line 3: expected service_ms to be a number >= 0, got \"x\"");
  CHECK(error_for("publish_ms\n10\n5\n") == prefix + " line 3: expected publish_ms >= 10 (the line before's), got 5");
  CHECK(error_for("publish_ms,deadline_ms\n1\n") == prefix + " line 2: expected 2 cells (publish_ms,deadline_ms), got 1");
  CHECK(error_for("publish_ms\n-1\n") == prefix + " line 2: expected publish_ms to be a number >= 0, got -1");
  CHECK(error_for("publish_ms,deadline_ms\n1,nan\n") == prefix + " line 2: expected deadline_ms to be a number, got \"nan\"");
  CHECK(error_for("publish_ms\n\n") == prefix + ": expected at least one data row after the header, got none");
  CHECK(error_for("") == prefix + " line 1: expected a header row naming a publish_ms column, got an empty file");
  // CRLF line ends, blank lines and spaces around cells are fine.
  CHECK(error_for("publish_ms , deadline_ms\r\n1, 0\r\n\r\n2,\r\n") == "(no error)");
  fs::remove(dir / "t.csv");
  CHECK(load_error(doc, dir.string()) == prefix + ": cannot read file (No such file or directory)");
  fs::remove_all(dir);
}

TEST_CASE("JSON text: errors carry origin, line and column - nothing crashes") {
  CHECK_THROWS_WITH_AS(brokersim::parse_json_text("{\"a\": 1", "t.json"),
                       "t.json:1:8: invalid JSON: syntax error while parsing object - unexpected end of input; expected '}'",
                       ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::parse_json_text("{\"a\":\n  tru}", "t.json"),
                       "t.json:2:6: invalid JSON: syntax error while parsing value - invalid literal; last read: "
                       "'\"a\":<U+000A>  tru}'",
                       ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::parse_json_text("\"\xff\"", "bin"),
                       "bin:1:2: invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 byte; "
                       "last read: '\"\\xff'",
                       ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::parse_json_text("{\"x\":\n [1e400]}", "big.json"),
                       "big.json:2:7: invalid JSON: number overflow parsing '1e400'", ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::parse_json_text(std::string(100000, '[') + std::string(100000, ']'), "deep.json"),
                       "deep.json:1:513: invalid JSON: nested deeper than 512 levels", ScenarioError);
  // Brackets inside strings do not count as nesting.
  CHECK(brokersim::parse_json_text("[\"" + std::string(1000, '[') + "\"]", "s")[0].get<std::string>().size() == 1000);
  CHECK(brokersim::parse_json_text(std::string(512, '[') + std::string(512, ']'), "ok").is_array());

  // Random bytes: always a ScenarioError or a value, never a crash.
  sim::Rng rng(11, 0, "fuzz");
  int errors = 0;
  for (int i = 0; i < 300; ++i) {
    static constexpr std::string_view kAlphabet = "{}[]\":,0123456789.eE-+ntrufals\\\xff\x01 abc";
    std::string text(rng.below(40), '\0');
    for (char& c : text) c = kAlphabet[rng.below(kAlphabet.size())];
    try {
      const json doc = brokersim::parse_json_text(text, "fuzz");
      CHECK_THROWS_AS(brokersim::load_scenario(doc, ""), ScenarioError);
    } catch (const ScenarioError& e) {
      ++errors;
      CHECK(std::string(e.what()).starts_with("fuzz:"));
    }
  }
  CHECK(errors > 0);

  // A deep document built in code (not parsed) still gets a bounded error message.
  json deep = minimal();
  json* node = &deep["name"];
  for (int i = 0; i < 100000; ++i) node = &((*node = json::array()).emplace_back());
  const std::string error = load_error(deep);
  CHECK(error.starts_with("name: expected a string, got [[[[[[[...]"));
  CHECK(error.size() < 300);
}

TEST_CASE("load_scenario_file: file folder, --set overrides, unreadable files") {
  const fs::path dir = temp_dir();
  write_file(dir / "trace.csv", "publish_ms\n0\n5\n");
  json doc = minimal();
  doc["producers"][0]["arrivals"] = {{"trace_csv", "trace.csv"}};
  write_file(dir / "s.json", doc.dump(2));
  const auto s = brokersim::load_scenario_file((dir / "s.json").string(), {"consumers.0.prefetch=3", "seed=9"});
  CHECK(s.consumers[0].prefetch == 3);
  CHECK(s.seed == 9);
  CHECK(s.producers[0].arrivals.trace.size() == 2);
  CHECK(s.producers[0].arrivals.trace[1].publish == 5 * sim::kNsPerMs);

  CHECK_THROWS_WITH_AS(brokersim::load_scenario_file((dir / "s.json").string(), {"consumers.0.prefetch=-1"}),
                       "consumers.0.prefetch: expected an integer >= 0, got -1", ScenarioError);
  const std::string missing = (dir / "missing.json").string();
  CHECK_THROWS_WITH_AS(brokersim::read_json_file(missing), (missing + ": cannot read file (No such file or directory)").c_str(),
                       ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::read_json_file(dir.string()), (dir.string() + ": cannot read file (Is a directory)").c_str(),
                       ScenarioError);
  write_file(dir / "cut.json", doc.dump(2).substr(0, 40));
  CHECK_THROWS_AS(brokersim::read_json_file((dir / "cut.json").string()), ScenarioError);
  try {
    brokersim::read_json_file((dir / "cut.json").string());
  } catch (const ScenarioError& e) {
    CHECK(std::string(e.what()).starts_with((dir / "cut.json").string() + ":"));
    CHECK(std::string(e.what()).find(": invalid JSON: ") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("a wrong value at any path is a ScenarioError, never a crash") {
  const fs::path dir = temp_dir();
  write_file(dir / "jobs.csv", "publish_ms\n1\n");
  const json base = complete();
  REQUIRE_NOTHROW(brokersim::load_scenario(base, dir.string()));
  std::vector<std::string> paths;
  const std::function<void(const json&, const std::string&)> collect = [&](const json& v, const std::string& path) {
    if (!path.empty()) paths.push_back(path);
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) collect(it.value(), path.empty() ? it.key() : path + "." + it.key());
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) collect(v[i], path + "." + std::to_string(i));
    }
  };
  collect(base, "");
  REQUIRE(paths.size() > 100);
  const std::vector<json> weird = {nullptr, true, "x", "", -1, 0, 0.5, -1e300, 1e300, 4294967296.0,
                                   json::array(), json::object(), {1, 2}, {{"a", 1}}, {{"exp", {{"mean", -1}}}}};
  int rejected = 0, accepted = 0;
  for (const auto& path : paths) {
    for (const auto& value : weird) {
      json doc = base;
      brokersim::set_path(doc, path, value);
      INFO(path << " = " << value.dump());
      try {
        brokersim::load_scenario(doc, dir.string());
        ++accepted;
      } catch (const ScenarioError& e) {
        ++rejected;
        CHECK(std::string(e.what()).find(": ") != std::string::npos);
      } catch (const std::exception& e) {
        FAIL("not a ScenarioError: " << e.what());
      }
    }
  }
  CHECK(rejected > accepted);  // most of these values are wrong where they are put
  CHECK(accepted > 0);         // but not all: 0 is a fine start_ms
  fs::remove_all(dir);
}

TEST_CASE("a key docs/scenario.md gives another broker kind is an error naming that kind") {
  struct Foreign {
    std::string path, kind;
  };
  // docs/scenario.md's broker-specific keys, section by section.
  // (A queue key of quorum queues names the queue's type instead: test_queue_types.cpp.)
  const std::vector<Foreign> keys = {
      {"broker.dead_letter_confirm_timeout_ms", "rabbitmq-quorum"},
      {"broker.queues.work.lock_duration_ms", "azure-servicebus"},
      {"broker.queues.work.max_delivery_count", "azure-servicebus"},
      {"broker.queues.dlq.default_ttl_ms", "azure-servicebus"},
      {"broker.queues.work.dead_letter_on_expiration", "azure-servicebus"},
      {"broker.queues.work.requires_session", "azure-servicebus"},
      {"producers.0.scheduled_delay_ms", "azure-servicebus"},
      {"producers.0.session", "azure-servicebus"},
      {"consumers.0.receive_mode", "azure-servicebus"},
      {"broker.queues.work.visibility_timeout_ms", "amazon-sqs"},
      {"broker.queues.work.retention_ms", "amazon-sqs"},
      {"broker.queues.work.delay_ms", "amazon-sqs"},
      {"broker.queues.work.max_receive_count", "amazon-sqs"},
      {"consumers.0.batch_size", "amazon-sqs"},
  };
  for (const auto& key : keys) {
    CAPTURE(key.path);
    json doc = minimal();
    brokersim::set_path(doc, key.path, 1);
    CHECK(load_error(doc) == key.path + ": this key belongs to broker kind \"" + key.kind +
                                 "\"; broker kind \"rabbitmq-classic\" has no such key");
  }
  // Keys of no broker keep the "did you mean", whatever section they are in.
  json doc = minimal();
  brokersim::set_path(doc, "broker.queues.work.lock_duration", 1);
  CHECK(load_error(doc).starts_with("broker.queues.work.lock_duration: unknown key (allowed: message_ttl_ms,"));
  doc = minimal();
  brokersim::set_path(doc, "broker.delivery_latncy_ms", 1);
  CHECK(load_error(doc) == "broker.delivery_latncy_ms: unknown key (did you mean \"delivery_latency_ms\"?)");
}

TEST_CASE("the broker registry has every docs/scenario.md kind - all four are simulated") {
  using brokersim::loader::broker_kinds;
  std::vector<std::string> names;
  for (const auto* kind : broker_kinds()) {
    names.emplace_back(kind->name);
    CHECK((kind->load != nullptr));
  }
  CHECK(names == std::vector<std::string>{"rabbitmq-classic", "rabbitmq-quorum", "azure-servicebus", "amazon-sqs"});
  // The first is the default: a scenario without broker.kind is rabbitmq-classic.
  json doc = minimal();
  brokersim::set_path(doc, "broker.queues.work.delivery_limit", 1);
  const std::string without_kind = load_error(doc);
  brokersim::set_path(doc, "broker.kind", "rabbitmq-classic");
  CHECK(load_error(doc) == without_kind);
  // Any other name lists the four.
  brokersim::set_path(doc, "broker.kind", "amazon-sqs-fifo");
  CHECK(load_error(doc) == "broker.kind: expected one of \"rabbitmq-classic\", \"rabbitmq-quorum\", \"azure-servicebus\", \"amazon-sqs\" (the broker kinds this version simulates), "
                           "got \"amazon-sqs-fifo\"");
}

TEST_CASE("a duplicate key is an error naming its path - in files and in --set values") {
  const auto error = [](const std::string& text) {
    try {
      (void)brokersim::parse_json_text(text, "t.json");
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error(R"({"seed": 1, "stop": {}, "seed": 2})") == "seed: duplicate key");
  CHECK(error(R"({"broker": {"queues": {"work": {"message_ttl_ms": 1, "dead_letter_to": null, "message_ttl_ms": 2}}}})") ==
        "broker.queues.work.message_ttl_ms: duplicate key");
  CHECK(error(R"({"consumers": [{"prefetch": 1, "count": [1, {"a": 1}], "prefetch": 2}]})") ==
        "consumers.0.prefetch: duplicate key");
  CHECK(error(R"({"xs": [[], 7, [{"a": 1}, [{"b": 1, "b": 1}]]]})") == "xs.2.1.0.b: duplicate key");
  CHECK(error(R"([{"a": 1}, {"a": {"a": 2}}, {"a": 3}])") == "(no error)");  // the same name in different objects
  CHECK(error(R"({"queues": {"work": {}, "dlq": {}, "work": {}}})") == "queues.work: duplicate key");
  CHECK(error(R"({"a": 1, "a": 1)") != "a: duplicate key");  // not JSON: the syntax error comes first

  json doc = minimal();
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, R"(stop={"jobs":1,"jobs":2})"), "stop.jobs: duplicate key", ScenarioError);
  CHECK_THROWS_WITH_AS(brokersim::apply_set(doc, R"(consumers=[{"queue": "work"}, {"slots": 1, "slots": 2}])"),
                       "consumers.1.slots: duplicate key", ScenarioError);
  CHECK(doc == minimal());  // nothing was set
  brokersim::apply_set(doc, R"(name={"a":1,"a")");  // not JSON, so a string, as before
  CHECK(doc["name"] == R"({"a":1,"a")");

  const brokersim::test::ScratchDir dir("brokersim-duplicate-key");
  json file = minimal();
  file["seed"] = 1;
  std::string text = file.dump();
  text.insert(1, R"("seed": 2, )");
  const std::string path = dir.write("dup.json", text);
  const auto run = brokersim::test::run_cli({"run", path});
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(run.err.find("seed: duplicate key") != std::string::npos);
  const auto set = brokersim::test::run_cli({"run", dir.write("ok.json", file.dump()), "--set", R"(stop={"jobs":1,"jobs":2})"});
  CHECK(set.status == 2);
  CHECK(set.err.find("stop.jobs: duplicate key") != std::string::npos);
}
