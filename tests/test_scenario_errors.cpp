// Scenario loading: the exact text of the errors users see for bad input (a scenario read field by
// field: test_scenario_load.cpp), numbers and booleans, trace_csv, JSON text, files, any wrong value
// at any path, keys of another broker kind, the broker registry and duplicate keys.
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
       "autoscale, ack, framework, on_process_lost, eta, prefetch_scope)"},
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
       "producers.0.arrivals: expected exactly one of poisson, periodic, at_ms, trace_csv, days_csv, rate_schedule, got {}"},
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
       "faults.0: expected exactly one of stall_ms, crash, broker_down_ms, clock_step_ms, kill_process, got "
       "{\"at_ms\":0,\"consumer\":0}"},
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
    names.emplace_back(kind->name());
    CHECK((kind->load != nullptr));
    // Registered once: the loader's entry carries the model's descriptor, which builds the broker
    // and names the reasons its runs report.
    REQUIRE((kind->model != nullptr));
    CHECK((kind->model->make != nullptr));
    CHECK(!kind->model->death_reasons(brokersim::BrokerSpec{}).empty());
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
