// The command line as users and scripts see it: exact error texts, exit statuses, output files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <csignal>
#include <sys/wait.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace fs = std::filesystem;

namespace {

// A scratch folder with a valid scenario in it, removed at the end of the test.
struct Scratch : brokersim::test::ScratchDir {
  Scratch() : ScratchDir("brokersim-cli") {
    write("ok.json", R"({"name": "cli", "stop": {"time_ms": 2000},
      "broker": {"queues": {"work": {"message_ttl_ms": 600}}},
      "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 10}}, "deadline_ms": 600,
                     "service_ms": {"exp": {"mean": 50}}}],
      "consumers": [{"queue": "work", "count": 2, "prefetch": 1}],
      "observe": {"every_ms": 500}})");
  }
};

using brokersim::test::CliResult;
using brokersim::test::read_file;
using brokersim::test::run_cli;

}  // namespace

TEST_CASE("bad input: exact error text and exit status 2, nothing on stdout") {
  Scratch s;
  const std::string ok = s.path("ok.json");
  s.write("trunc.json", R"({"stop": {"time_ms": 10)");
  s.write("bad_trace.csv", "publish_ms,deadline_ms\n0,100\nabc,5\n");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"run", s.path("missing.json")},
       s.path("missing.json") + ": cannot read file (No such file or directory)"},
      {{"run", ok, "--set", "consumers.0.prefetch=-1"}, "consumers.0.prefetch: expected an integer >= 0, got -1"},
      {{"run", ok, "--set", "consumers.0.prefech=2"}, "consumers.0.prefech: unknown key (did you mean \"prefetch\"?)"},
      {{"run", ok, "--set", "consumers.0.queue=wrk"},
       "consumers.0.queue: expected the name of a queue in broker.queues (work), got \"wrk\""},
      {{"run", ok, "--set", "consumers.0prefetch"}, "--set: expected PATH=VALUE, got \"consumers.0prefetch\""},
      {{"run", ok, "--set", "consumers.5.prefetch=1"},
       "consumers.5.prefetch: expected an index below 1 (consumers has 1 element), got 5"},
      {{"run", ok, "--seed", "abc"}, "--seed: expected an integer >= 0, got \"abc\""},
      {{"run"}, "run: expected a scenario file, got nothing"},
      {{"run", ok, "--bogus"}, "unrecognised option '--bogus'"},
      {{"run", s.write("no_observe.json", R"({"stop": {"time_ms": 10}, "broker": {"queues": {"q": {}}},
          "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}]})"), "--timeseries", s.path("x.csv")},
       "--timeseries needs observe.every_ms in the scenario (e.g. --set observe.every_ms=1000)"},
      {{"run", ok, "--set", "broker.kind=amazon-sqs-fifo"},
       "broker.kind: expected one of \"rabbitmq-classic\", \"rabbitmq-quorum\", \"azure-servicebus\", \"amazon-sqs\" (the broker kinds this version simulates), got \"amazon-sqs-fifo\""},
      {{"run", ok, "--set", "stop=null"}, "stop: expected an object with time_ms and/or jobs, got null"},
      {{"run", ok, "--set", R"(faults=[{"at_ms": 0, "consumer": 7, "stall_ms": 10}])"},
       "faults.0.consumer: expected an integer >= 0 and < 2 (consumers are numbered across all groups from 0), got 7"},
      {{"run", ok, "--set", R"(producers.0.service_ms={"exp": {"mean": -1}})"},
       "producers.0.service_ms.exp.mean: expected a number > 0, got -1"},
      {{"run", ok, "--set", R"(producers.0.arrivals={"trace_csv": "bad_trace.csv"})"},
       "producers.0.arrivals.trace_csv: " + s.path("bad_trace.csv") +
           " line 3: expected publish_ms to be a number >= 0, got \"abc\""},
      {{"run", ok, "--set", "producers.0.arrivals.poisson.rate_per_s=NaN"},
       "producers.0.arrivals.poisson.rate_per_s: expected a number > 0, got \"NaN\""},
      {{"run", s.path("trunc.json")},
       s.path("trunc.json") + ":1:24: invalid JSON: syntax error while parsing object - unexpected end of input; expected '}'"},
      {{"run", ok, "--set", "consumers.0.count=2.5"}, "consumers.0.count: expected an integer >= 1, got 2.5"},
      {{"run", ok, "--set", "broker.queues.work.overflow=drop-tail"},
       "broker.queues.work.overflow: expected one of \"drop-head\", \"reject-publish\", \"reject-publish-dlx\", got \"drop-tail\""},
      {{"run", ok, "--set", "producers=[]"}, "producers: expected a non-empty array of producers, got []"},
      {{"run", ok, "--set", "warmup_ms=5000"}, "warmup_ms: expected a number >= 0 and < stop.time_ms (2000), got 5000"},
      {{"run", ok, "--set", "consumers.0.failure_probability=1.5"},
       "consumers.0.failure_probability: expected a number between 0 and 1, got 1.5"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.error);
    const CliResult r = run_cli(c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "brokersim: error: " + c.error + "\n");
  }
  // A failed run leaves no output file behind, complete or partial.
  const CliResult r = run_cli({"run", ok, "--set", "consumers.0.prefetch=-1", "--trace", s.path("t.csv")});
  CHECK(r.status == 2);
  CHECK(!fs::exists(s.path("t.csv")));
}

TEST_CASE("unknown command and help") {
  const CliResult unknown = run_cli({"runn"});
  CHECK(unknown.status == 2);
  CHECK(unknown.err.rfind("brokersim: unknown command \"runn\"\n", 0) == 0);
  const CliResult help = run_cli({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("brokersim run SCENARIO.json") != std::string::npos);
  const CliResult version = run_cli({"--version"});
  CHECK(version.out == std::string("brokersim ") + BROKERSIM_VERSION + "\n");
}

TEST_CASE("run --json prints the docs/scenario.md object - outputs are complete files") {
  Scratch s;
  const CliResult r = run_cli({"run", s.path("ok.json"), "--json", "--trace", s.path("jobs.csv"), "--timeseries",
                     s.path("series.csv")});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"rejected_at_publish", "expired_in_queue", "expired_in_transit", "expired_before_start",
                          "completed_on_time", "completed_late", "timed_out", "failed", "lost", "dead_lettered",
                          "in_system", "generated"})
    CHECK(j["outcomes"].contains(key));
  for (const char* w : {"queue", "local", "service", "sojourn"})
    for (const char* f : {"mean", "p50", "p95", "p99", "max"}) CHECK(j["wait_ms"][w].contains(f));
  for (const char* key : {"throughput_per_s", "goodput_per_s", "slot_utilization", "idle_slots_with_backlog",
                          "admitted_but_expired", "rejected_but_valid"})
    CHECK(j.contains(key));
  for (const char* key : {"published", "delivered", "dead_lettered_by_reason", "max_ready", "mean_ready", "mean_unacked"})
    CHECK(j["queues"]["work"].contains(key));

  const std::string trace = read_file(s.path("jobs.csv"));
  CHECK(trace.rfind("job,producer,queue,consumer,created_ms,expires_at_ms,published_ms,delivered_ms,received_ms,"
                    "started_ms,finished_ms,ended_ms,outcome,redeliveries,dead_letterings,warmup,executions,first_started_ms,"
                    "stage_publish_ms,stage_queue_ms,stage_held_ms,stage_transit_ms,stage_local_ms,stage_service_ms\n",
                    0) == 0);
  const auto rows = std::count(trace.begin(), trace.end(), '\n') - 1;
  CHECK(rows == j["outcomes"]["generated"].get<long>());
  const std::string series = read_file(s.path("series.csv"));
  CHECK(series.rfind("time_ms,work.ready,work.unacked,consumer.0.local,consumer.0.executing,consumer.1.local,"
                     "consumer.1.executing,outcomes.rejected_at_publish,outcomes.expired_in_queue,"
                     "outcomes.expired_in_transit,outcomes.expired_before_start,outcomes.completed_on_time,"
                     "outcomes.completed_late,outcomes.timed_out,outcomes.failed,outcomes.lost,outcomes.dead_lettered,"
                     "group.0.replicas\n", 0) == 0);
  CHECK(std::count(series.begin(), series.end(), '\n') == 6);  // header + 0, 500, ..., 2000
  for (const auto& entry : fs::directory_iterator(s.dir))
    CHECK(entry.path().string().find(".part") == std::string::npos);

  // --seed and --set change the run; the same arguments give the same bytes.
  const CliResult again = run_cli({"run", s.path("ok.json"), "--json"});
  CHECK(again.out == r.out);
  const CliResult other = run_cli({"run", s.path("ok.json"), "--json", "--seed", "99"});
  CHECK(other.out != r.out);
  CHECK(nlohmann::json::parse(other.out)["seed"] == 99);
}

TEST_CASE("the brokersim binary exits with status 2 on bad input and 0 on success") {
  Scratch s;
  const std::string bin = BROKERSIM_BINARY;
  const int bad = std::system((bin + " run " + s.path("ok.json") + " --set consumers.0.slots=0 2>" +
                               s.path("err.txt") + " >" + s.path("out.txt")).c_str());
  REQUIRE(WIFEXITED(bad));
  CHECK(WEXITSTATUS(bad) == 2);
  CHECK(read_file(s.path("err.txt")) == "brokersim: error: consumers.0.slots: expected an integer >= 1, got 0\n");
  const int good = std::system((bin + " run " + s.path("ok.json") + " >" + s.path("out.txt")).c_str());
  REQUIRE(WIFEXITED(good));
  CHECK(WEXITSTATUS(good) == 0);
  CHECK(read_file(s.path("out.txt")).find("Outcomes") != std::string::npos);
}

TEST_CASE("a run stopped by a limit says so and exits with status 3") {
  Scratch s;
  const CliResult r = run_cli({"run", s.path("ok.json"), "--set", "limits={\"max_in_system\": 5}", "--set",
                     "producers.0.arrivals.poisson.rate_per_s=1000"});
  CHECK(r.status == 3);
  CHECK(r.out.find("stopped: max_in_system") != std::string::npos);
  CHECK(r.err.find("run stopped early (max_in_system)") != std::string::npos);
}

TEST_CASE("an interrupted run leaves no output file behind, complete or partial") {
  Scratch s;
  // Long enough to be interrupted for sure: 100 million jobs with a trace.
  const std::string trace = s.path("jobs.csv");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(BROKERSIM_BINARY, BROKERSIM_BINARY, "run", s.path("ok.json").c_str(), "--set",
            "stop={\"jobs\": 100000000}", "--trace", trace.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait until the partial trace exists, i.e. the run is under way (bounded: 20 s).
  bool started = false;
  for (int i = 0; i < 2000 && !started; ++i) {
    for (const auto& e : fs::directory_iterator(s.dir))
      if (e.path().filename().string().rfind(".brokersim." + std::to_string(pid) + ".", 0) == 0) started = true;
    if (!started) ::usleep(10'000);
  }
  CHECK(started);
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  for (const auto& e : fs::directory_iterator(s.dir)) {
    CHECK(e.path().filename().string().find("jobs.csv") == std::string::npos);
    CHECK(e.path().filename().string().find(".part") == std::string::npos);
  }
}
