// Scenario loading: a complete scenario read field by field, the defaults, and --set paths (the
// exact text of the errors users see for bad input: test_scenario_errors.cpp).
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

#include "experiments/cli/loader/broker_kinds.hpp"
#include "experiments/cli/loader/scenario_load.hpp"
#include "tests/scenario_load_test_util.hpp"
#include "tests/test_util.hpp"

using brokersim::ScenarioError;
using nlohmann::json;
namespace fs = std::filesystem;

using namespace scenario_load_test;

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
