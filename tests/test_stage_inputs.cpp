// Runs made apart and put together read one workload: a staged plan's stages, a sweep's shards and
// a resumed sweep pin every file their scenarios read (days_csv, trace_csv) by its contents, and a
// file replaced in between is refused (exit 2) naming it. And a plan's stage folder is read only
// where its files are regular: a FIFO at a task result's name is refused at once, never waited on.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/cli/replication/journal.hpp"
#include "sim/rng.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;

// The standard FNV-1a 64 of a file's bytes, as the pins record it.
std::string pin_fnv(const std::string& text) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(sim::fnv1a(text)));
  return buf;
}

// Two whole days of `per_day` jobs each, an hour apart from 01:00.
std::string two_days(int per_day) {
  std::string trace = "publish_ms\n";
  for (int d = 0; d < 2; ++d)
    for (int j = 0; j < per_day; ++j) trace += std::to_string(d * 86'400'000LL + 3'600'000LL * (j + 1)) + "\n";
  return trace;
}

struct PinScratch : brokersim::test::ScratchDir {
  std::string days_csv, scenario;
  PinScratch()
      : ScratchDir("brokersim-pins"), days_csv(write("days.csv", two_days(3))),
        scenario(write("s.json", R"({"seed": 2, "stop": {"time_ms": 86400000}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"days_csv": "days.csv"}, "service_ms": 10}],
    "consumers": [{"queue": "q"}]})")) {}
};

std::vector<std::string> pin_plan_args(const PinScratch& d, const std::string& folder) {
  return {"plan", d.scenario, "--vary", "consumers.0.count=1,2", "--target", "wait_ms.queue.p99<=1000",
          "--replications", "2", "--stage-dir", folder, "--tasks", "1"};
}

// `sh -c COMMAND`'s exit status (128 + N when signal N ended it).
int pin_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  REQUIRE(status != -1);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

std::string shell_words(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& a : args) {
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + q + "'";
  }
  return line;
}

}  // namespace

TEST_CASE("plan stage folder pins the days_csv it reads - replaced between stages it is refused by coordinator and task") {
  PinScratch d;
  const std::string folder = d.path("stages");
  const auto coordinator = pin_plan_args(d, folder);
  auto r = run_cli(coordinator);
  REQUIRE_MESSAGE(r.status == 7, r.err);
  const auto plan_json = nlohmann::json::parse(read_file(folder + "/plan.json"));
  const std::string then = pin_fnv(two_days(3));
  CHECK(plan_json["inputs"] == nlohmann::json::parse(R"([{"file": ")" + d.days_csv + R"(", "key": "producers.0.arrivals.days_csv", "fnv1a64": ")" +
                                                     then + "\"}]"));
  REQUIRE(run_cli({"plan", "--run-task", folder, "--task", "0/1"}).status == 0);

  // Another month's days under the same name: the stages would be of two workloads.
  d.write("days.csv", two_days(4));
  const std::string now = pin_fnv(two_days(4));
  const std::string changed = "producers.0.arrivals.days_csv: the file \"" + d.days_csv + "\" changed (FNV-1a 64 of its contents " +
                              then + " then, " + now + " now) since the plan's folder was made: every stage of a plan runs on one "
                              "workload; put the file back as it was, or start the plan afresh (remove the folder, or give another "
                              "--stage-dir)";
  r = run_cli(coordinator);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "brokersim: error: --stage-dir: " + folder + ": " + changed + "\n");
  r = run_cli({"plan", "--run-task", folder, "--task", "0/1"});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: --run-task: " + folder + ": " + changed + "\n");

  // Put back, the plan goes on to the local plan's answer.
  d.write("days.csv", two_days(3));
  for (int round = 0; round < 20 && (r = run_cli(coordinator)).status == 7; ++round)
    REQUIRE(run_cli({"plan", "--run-task", folder, "--task", "0/1"}).status == 0);
  CHECK(r.status == 0);
  auto local = pin_plan_args(d, folder);
  local.resize(local.size() - 4);
  CHECK(r.out == run_cli(local).out);
}

TEST_CASE("sweep shards pin the trace_csv they read - merge refuses shards of two versions of it naming the file") {
  brokersim::test::ScratchDir d("brokersim-pin-shards");
  const std::string trace = d.write("jobs.csv", "publish_ms\n0\n100\n200\n");
  const std::string scenario = d.write("s.json", R"({"seed": 2, "stop": {"time_ms": 5000}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"trace_csv": "jobs.csv"}, "service_ms": 10}],
    "consumers": [{"queue": "q"}]})");
  const auto shard = [&](const std::string& k, const std::string& out) {
    return run_cli({"sweep", scenario, "--vary", "consumers.0.count=1,2", "--shard", k + "/2", "--out", d.path(out)}).status;
  };
  REQUIRE(shard("0", "a.csv") == 0);
  REQUIRE(shard("1", "b.csv") == 0);
  const std::string then = pin_fnv("publish_ms\n0\n100\n200\n");
  CHECK(nlohmann::json::parse(read_file(d.path("a.csv.meta.json")))["inputs"] ==
        nlohmann::json::parse(R"([{"file": ")" + trace + R"(", "key": "producers.0.arrivals.trace_csv", "fnv1a64": ")" + then + "\"}]"));
  auto r = run_cli({"merge", d.path("a.csv"), d.path("b.csv"), "--out", d.path("m.csv")});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(nlohmann::json::parse(read_file(d.path("m.csv.meta.json")))["inputs"] ==
        nlohmann::json::parse(read_file(d.path("a.csv.meta.json")))["inputs"]);

  // Shard 1 run again after the trace was replaced: one grid of two workloads.
  d.write("jobs.csv", "publish_ms\n0\n100\n200\n300\n");
  REQUIRE(shard("1", "b.csv") == 0);
  r = run_cli({"merge", d.path("a.csv"), d.path("b.csv"), "--out", d.path("m2.csv")});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: merge: " + d.path("b.csv") + " and " + d.path("a.csv") +
                     " read producers.0.arrivals.trace_csv, the file \"" + trace + "\", with other contents (FNV-1a 64 " +
                     pin_fnv("publish_ms\n0\n100\n200\n300\n") + " and " + then +
                     "): it was replaced between the shards' runs; run them again on one version of it\n");
  CHECK(!std::filesystem::exists(d.path("m2.csv")));
}

TEST_CASE("sweep resume journal pins the files the sweep reads - a replaced one is refused naming it") {
  brokersim::test::ScratchDir d("brokersim-pin-journal");
  const std::string path = d.path("r.csv.journal");
  const brokersim::PinnedInput then{"/data/days.csv", "producers.0.arrivals.days_csv", pin_fnv("a")};
  brokersim::PinnedInput now = then;
  {
    brokersim::Journal journal(path, "brokersim-sweep-journal v1 0123456789abcdef\n", {then});
    CHECK(journal.open(false, 2).empty());
    journal.append(3, "1,2");
  }
  {
    brokersim::Journal same(path, "brokersim-sweep-journal v1 0123456789abcdef\n", {now});
    const auto done = same.open(true, 2);
    CHECK(done == std::map<std::size_t, std::string>{{3, "1,2"}});
  }
  now.fnv1a64 = pin_fnv("b");
  brokersim::Journal replaced(path, "brokersim-sweep-journal v1 0123456789abcdef\n", {now});
  CHECK_THROWS_WITH(replaced.open(true, 2),
                    (path + ": producers.0.arrivals.days_csv: the file \"/data/days.csv\" changed (FNV-1a 64 of its contents " +
                     then.fnv1a64 + " then, " + now.fnv1a64 +
                     " now) since the journal was begun: the points done and the points to do would run on two workloads; put "
                     "the file back as it was, or delete the journal or run without --resume")
                        .c_str());
}

TEST_CASE("plan stage result that is a FIFO is refused at once by the coordinator and the task") {
  PinScratch d;
  const std::string folder = d.path("stages");
  const auto coordinator = pin_plan_args(d, folder);
  REQUIRE(run_cli(coordinator).status == 7);
  const std::string result = folder + "/stage-1.task-0-of-1.json";
  REQUIRE(::mkfifo(result.c_str(), 0600) == 0);
  const std::string refused = "brokersim: error: " + result + ": expected a regular file, got a FIFO (named pipe) (remove it and "
                              "run the task again: brokersim plan --run-task " + folder + " --task 0/1)\n";
  // The real binary under `timeout`: a FIFO waited on would end as 124, not hang the suite.
  const std::string bin = BROKERSIM_BINARY;
  CHECK(pin_shell("timeout 20 " + bin + " plan --run-task '" + folder + "' --task 0/1 2>'" + d.path("task.err") + "'") == 2);
  CHECK(read_file(d.path("task.err")) == refused);
  CHECK(pin_shell("timeout 20 " + bin + shell_words(coordinator) + " 2>'" +
                  d.path("coordinator.err") + "' >/dev/null") == 2);
  CHECK(read_file(d.path("coordinator.err")) == refused);
  // Removed, the task runs and writes its result.
  std::filesystem::remove(result);
  CHECK(run_cli({"plan", "--run-task", folder, "--task", "0/1"}).status == 0);
  struct stat st {};
  REQUIRE(::lstat(result.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("merge refuses a FIFO at a shard's metadata name at once") {
  brokersim::test::ScratchDir d("brokersim-pin-fifo-merge");
  d.write("x.csv", "replications,incomplete_runs\n");
  REQUIRE(::mkfifo(d.path("x.csv.meta.json").c_str(), 0600) == 0);
  const std::string bin = BROKERSIM_BINARY;
  CHECK(pin_shell("timeout 20 " + bin + shell_words({"merge", d.path("x.csv"), "--out", d.path("m.csv")}) + " 2>'" +
                  d.path("merge.err") + "'") == 2);
  CHECK(read_file(d.path("merge.err")) ==
        "brokersim: error: " + d.path("x.csv.meta.json") + ": expected a regular file, got a FIFO (named pipe)\n");
}
