// Property test: random valid scenarios (seeded, so the suite is deterministic), each checked
// against the invariants every run must keep, whatever the scenario.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "experiments/cli/import/common.hpp"
#include "experiments/cli/plan/expression.hpp"
#include "experiments/cli/replication/shards.hpp"
#include "sim/rng.hpp"
#include "tests/test_util.hpp"

using brokersim::test::run_scenario;
using nlohmann::json;

namespace {

// A random scenario from the whole space the simulator accepts: several queues with TTLs,
// dead-letter links (cycles included), length limits and queue expiry; producers with every
// arrival kind; consumer groups with skewed clocks, admission rules, timeouts and failures;
// and every kind of fault.
// Built by appending: g++ 12 warns (-Wrestrict, a known false positive) on "q" + std::to_string(i).
std::string queue_name(int i) {
  std::string name = "q";
  name += std::to_string(i);
  return name;
}

json random_scenario(sim::Rng& rng) {
  auto pick = [&](std::uint64_t n) { return static_cast<int>(rng.below(n)); };
  auto duration = [&](double scale) -> json {
    switch (pick(5)) {
      case 0: return std::round(rng.uniform() * scale);
      case 1: return {{"exp", {{"mean", 1 + rng.uniform() * scale}}}};
      case 2: return {{"uniform", {{"min", 0}, {"max", rng.uniform() * scale}}}};
      case 3: return {{"lognormal", {{"mean", 1 + rng.uniform() * scale}, {"cv", rng.uniform() * 2}}}};
      default: return {{"empirical", {0, scale / 3, scale}}};
    }
  };
  json s;
  s["seed"] = rng.below(1000);
  s["stop"] = pick(3) == 0 ? json{{"jobs", 1 + pick(300)}, {"time_ms", 20000}} : json{{"time_ms", 1000 + pick(10000)}};
  const int nq = 1 + pick(3);
  json queues = json::object();
  for (int q = 0; q < nq; ++q) {
    json spec = json::object();
    if (pick(2)) spec["message_ttl_ms"] = pick(3) == 0 ? 0 : 50 + pick(2000);
    if (pick(2)) spec["dead_letter_to"] = queue_name(pick(nq));
    if (pick(4) == 0) spec["max_length"] = pick(20);
    if (pick(4) == 0) spec["overflow"] = json::array({"drop-head", "reject-publish", "reject-publish-dlx"})[pick(3)];
    if (pick(6) == 0) spec["expires_ms"] = 200 + pick(3000);
    if (pick(8) == 0) spec["max_length_bytes"] = pick(5000);
    queues[queue_name(q)] = spec;
  }
  s["broker"] = {{"delivery_latency_ms", duration(20)}, {"ack_latency_ms", duration(20)}, {"queues", queues},
                 {"version", json::array({"3.13", "4.0", "4.2", "4.3"})[pick(4)]}};
  if (pick(3) == 0) s["broker"]["consumer_timeout_ms"] = 100 + pick(3000);
  if (pick(4) == 0) s["broker"]["expiry_slack_ms"] = duration(5);

  s["producers"] = json::array();
  for (int p = 0, n = 1 + pick(2); p < n; ++p) {
    json prod = {{"queue", queue_name(pick(nq))}, {"service_ms", duration(200)}};
    switch (pick(4)) {
      case 0: prod["arrivals"] = {{"poisson", {{"rate_per_s", 1 + rng.uniform() * 60}}}}; break;
      case 1: prod["arrivals"] = {{"periodic", {{"every_ms", 5 + pick(100)}}}}; break;
      case 2: prod["arrivals"] = {{"at_ms", {0, 0, pick(100), pick(1000), pick(1000)}}}; break;
      default:
        prod["arrivals"] = {{"rate_schedule", {{{"from_ms", 0}, {"rate_per_s", 20}}, {{"from_ms", 500}, {"rate_per_s", 0}},
                                               {{"from_ms", 900}, {"rate_per_s", 80}}}}};
    }
    if (pick(3)) prod["deadline_ms"] = duration(800);
    if (pick(3) == 0) prod["expiration_ms"] = pick(2) ? json("remaining-budget") : json(pick(1000));
    if (pick(4) == 0) prod["publish_delay_ms"] = duration(50);
    if (pick(4) == 0) prod["clock_offset_ms"] = {{"normal", {{"mean", 0}, {"sd", 30}}}};
    if (pick(4) == 0) prod["message_bytes"] = duration(2000);
    if (pick(2)) prod["persistent"] = true;
    s["producers"].push_back(prod);
  }
  s["consumers"] = json::array();
  int consumers = 0;
  for (int g = 0, n = pick(3); g < n; ++g) {
    json c = {{"queue", queue_name(pick(nq))}, {"count", 1 + pick(3)}, {"prefetch", pick(5)},
              {"slots", 1 + pick(3)}};
    consumers += c["count"].get<int>();
    if (pick(3) == 0) c["start_ms"] = pick(500);
    if (pick(3) == 0) c["clock_offset_ms"] = {{"normal", {{"mean", 0}, {"sd", 50}}}};
    if (pick(2)) c["uncertainty_ms"] = pick(100);
    c["admission"] = json::array({"none", "check-before-start", "check-at-receive-and-start"})[pick(3)];
    if (pick(3) == 0) c["min_window_ms"] = pick(100);
    c["on_expired"] = json::array({"ack", "reject", "requeue"})[pick(3)];
    if (pick(3) == 0) c["exec_timeout"] = pick(2) ? json("remaining-budget") : json(50 + pick(300));
    if (pick(4) == 0) c["failure_probability"] = rng.uniform();
    if (pick(4) == 0) c["priority"] = pick(3);
    s["consumers"].push_back(c);
  }
  s["faults"] = json::array();
  for (int f = 0, n = pick(3); f < n; ++f) {
    const int kind = consumers > 0 ? pick(4) : 2;
    json fault = {{"at_ms", pick(2000)}};
    if (kind == 0) fault.update({{"consumer", pick(consumers)}, {"stall_ms", 1 + pick(500)}});
    if (kind == 1) {
      fault.update({{"consumer", pick(consumers)}, {"crash", true}});
      if (pick(2)) fault["restart_after_ms"] = 1 + pick(500);
    }
    if (kind == 2) fault["broker_down_ms"] = 1 + pick(1000);
    if (kind == 3) fault.update({{"consumer", pick(consumers)}, {"clock_step_ms", pick(400) - 200}});
    s["faults"].push_back(fault);
  }
  s["observe"] = {{"every_ms", 50 + pick(200)}};
  return s;
}

}  // namespace

void check_invariants(const json& doc);

TEST_CASE("random valid scenarios keep every invariant") {
  sim::Rng rng(20261202, 0, "property-test");
#ifdef BROKERSIM_SANITIZE
  const int kScenarios = 120;
#else
  const int kScenarios = 400;
#endif
  for (int i = 0; i < kScenarios; ++i) check_invariants(random_scenario(rng));
}

// The same scenarios on quorum queues, with their own keys drawn at random (reject-publish-dlx,
// which they refuse, becomes reject-publish).
TEST_CASE("random valid quorum-queue scenarios keep every invariant") {
  sim::Rng rng(20261203, 0, "property-test-quorum");
  for (int i = 0; i < 150; ++i) {
    json doc = random_scenario(rng);
    doc["broker"]["kind"] = "rabbitmq-quorum";
    for (auto& [name, q] : doc["broker"]["queues"].items()) {
      if (q.value("overflow", "") == "reject-publish-dlx") q["overflow"] = "reject-publish";
      if (rng.below(2)) q["delivery_limit"] = static_cast<int>(rng.below(4)) - 1;
      if (rng.below(2)) q["dead_letter_strategy"] = rng.below(2) ? "at-least-once" : "at-most-once";
    }
    check_invariants(doc);
  }
}

// The same scenarios with consumer groups reading several queues (consumers[].queue a list), per
// subscription or per channel, on classic and on quorum queues: crashes, stalls, broker restarts,
// consumer timeouts and leaving groups meet channels with several subscriptions.
TEST_CASE("random valid scenarios with groups reading several queues keep every invariant") {
  sim::Rng rng(20261206, 0, "property-test-several-queues");
#ifdef BROKERSIM_SANITIZE
  const int kScenarios = 120;
#else
  const int kScenarios = 400;
#endif
  int several = 0;
  for (int i = 0; i < kScenarios; ++i) {
    json doc = random_scenario(rng);
    const auto nq = static_cast<int>(doc["broker"]["queues"].size());
    const bool quorum = rng.below(3) == 0;
    if (quorum) {
      doc["broker"]["kind"] = "rabbitmq-quorum";
      for (auto& [name, q] : doc["broker"]["queues"].items())
        if (q.value("overflow", "") == "reject-publish-dlx") q["overflow"] = "reject-publish";
    }
    for (auto& c : doc["consumers"]) {
      if (nq < 2 || rng.below(3) == 0) continue;
      // The group's own queue first, then the others in a random order, at least one of them.
      json list = json::array({c["queue"]});
      for (int q = 0; q < nq; ++q)
        if (queue_name(q) != c["queue"].get<std::string>() && (list.size() == 1 || rng.below(2))) list.push_back(queue_name(q));
      c["queue"] = list;
      if (!quorum && rng.below(2)) c["prefetch_scope"] = "channel";
      if (rng.below(4) == 0) c["stop_ms"] = c.value("start_ms", 0) + static_cast<int>(rng.below(3000));
      ++several;
    }
    check_invariants(doc);
  }
  // Groups made to read several queues: a third of the scenarios have none to change (one queue,
  // no consumers); the rest most of the time.
  CHECK(several > kScenarios / 3);
}

void check_invariants(const json& doc) {
  {
    CAPTURE(doc.dump());
    if (std::getenv("BROKERSIM_PROPERTY_DUMP")) std::ofstream(std::getenv("BROKERSIM_PROPERTY_DUMP")) << doc.dump(1);
    brokersim::test::Run run;
    // simulate() itself checks that outcomes add up and that no event is scheduled in the past.
    REQUIRE_NOTHROW(run = run_scenario(doc.dump()));
    const auto& r = run.result;

    // simulate() checks that the outcomes add up; here the trace, written job by job as each
    // leaves, must tell the same story as the totals: one row per job, and per outcome the
    // counted rows (warmup = 0) are the reported count.
    CHECK(r.outcomes[0] == 0);  // Outcome::None is never an outcome
    CHECK(run.trace.size() >= r.generated);  // the trace also lists warm-up jobs (none here)
    std::map<std::string, std::uint64_t> traced;
    for (const auto& row : run.trace)
      if (row["warmup"] == "0") ++traced[row["outcome"]];
    for (std::size_t o = 1; o < brokersim::kOutcomeCount; ++o) {
      const std::string name(brokersim::outcome_name(static_cast<brokersim::Outcome>(o)));
      CHECK_MESSAGE(traced[name] == r.outcomes[o], name);
    }

    // Each job: one row, one outcome; its lifecycle times never go backwards, redelivered or
    // not: delivered_ms to finished_ms are its last delivery's (tests/test_accounting.cpp checks
    // its stages too).
    for (std::size_t j = 0; j < run.trace.size(); ++j) {
      const auto& row = run.trace[j];
      CHECK(std::stoul(row["job"]) == j);
      double last = row.ms("created_ms");
      for (const char* k : {"published_ms", "delivered_ms", "received_ms", "started_ms", "finished_ms", "ended_ms"}) {
        if (row.empty(k)) continue;
        CHECK_MESSAGE(row.ms(k) >= last, "job " << j << ": " << k << " before an earlier stage");
        last = row.ms(k);
      }
      CHECK(row["outcome"] != "none");
      if (row["outcome"] == "in_system") CHECK(row.empty("ended_ms"));
    }
    // Time series: time moves forward, counts are never negative (they would wrap to huge values).
    double prev = -1;
    for (const auto& sample : run.series) {
      CHECK(sample.at("time_ms") > prev);
      prev = sample.at("time_ms");
      for (const auto& [name, value] : sample) {
        CHECK(value >= 0);
        CHECK(value < 1e9);
      }
    }
    for (const auto& q : r.queues) {
      CHECK(q.mean_ready >= 0);
      CHECK(q.mean_unacked >= 0);
      CHECK(q.ready_at_end < 1'000'000);
    }
    CHECK(r.slot_utilization >= 0);
    CHECK(r.slot_utilization <= 1.0 + 1e-9);
    CHECK(r.idle_slots_with_backlog >= 0);
    CHECK(r.idle_slots_with_backlog <= 1.0 + 1e-9);
  }
}

// Every input the property test or the fuzzer ever broke the simulator with is kept in
// tests/fuzz/regressions (first byte: the fuzz target's reader, modulo 8; 0 = scenario JSON, 4 = a
// plan target, 5 = a plan cost, 6 = a shard's metadata, 7 = a file for `import`). Each must now load and run (or parse and evaluate), or be refused
// with a ScenarioError.
TEST_CASE("fuzz and property-test findings stay fixed") {
  const std::filesystem::path dir = std::filesystem::path(BROKERSIM_SOURCE_DIR) / "tests/fuzz/regressions";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(!bytes.empty());
    CAPTURE(entry.path().string());
    if (bytes[0] % 8 == 4 || bytes[0] % 8 == 5) {  // plan's --target / --cost, evaluated with every name 1
      const auto one = [](const std::string&) { return 1.0; };
      try {
        if (bytes[0] % 8 == 4) {
          const brokersim::Target t = brokersim::parse_target(bytes.substr(1));
          (void)(t.lhs->eval(one) + t.rhs->eval(one));
        } else {
          (void)brokersim::parse_cost(bytes.substr(1))->eval(one);
        }
      } catch (const brokersim::ScenarioError&) {
        // refused with a clear message: fine
      }
      ++checked;
      continue;
    }
    if (bytes[0] % 8 == 6) {  // merge's shard metadata
      try {
        (void)brokersim::read_shard_meta("fuzz.csv.meta.json", bytes.substr(1));
      } catch (const brokersim::ScenarioError&) {
        // refused with a clear message: fine
      }
      ++checked;
      continue;
    }
    if (bytes[0] % 8 == 7) {  // import: the file read, and the scenario written must load
      try {
        const auto imported = brokersim::import::import_document(brokersim::parse_json_text(bytes.substr(1), "fuzz.json"), "fuzz.json");
        const auto scenario = brokersim::import::scenario_of(imported, "fuzz.json");
        CHECK_NOTHROW((void)brokersim::load_scenario(nlohmann::json::parse(scenario.dump()), "/nonexistent"));
      } catch (const brokersim::ScenarioError&) {
        // refused with a clear message: fine
      }
      ++checked;
      continue;
    }
    if (bytes[0] % 8 != 0) continue;
    try {
      const auto run = run_scenario(bytes.substr(1));
      std::uint64_t sum = 0;
      for (auto n : run.result.outcomes) sum += n;
      CHECK(sum == run.result.generated);
    } catch (const brokersim::ScenarioError&) {
      // refused with a clear message: fine
    }
    ++checked;
  }
  CHECK(checked >= 3);
}
