// brokersim sweep / merge: the grid, CSV bytes, statistics, resume, shards (plan and sweeps across
// broker kinds: test_sweep_plan.cpp).
#include <algorithm>
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/sweep_test_util.hpp"
#include "tests/test_util.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/metrics.hpp"
#include "experiments/cli/replication/pool.hpp"
#include "experiments/cli/replication/statistics.hpp"

namespace fs = std::filesystem;

using namespace sweep_test;

TEST_CASE("sweep: --vary lists, ranges (integers and floats), JSON arrays and strings") {
  using brokersim::parse_vary;
  auto a = parse_vary("consumers.0.prefetch=1,2,4,8");
  CHECK(a.path == "consumers.0.prefetch");
  CHECK(a.labels == std::vector<std::string>{"1", "2", "4", "8"});
  CHECK(a.values[2] == 4);
  CHECK(a.values[2].is_number_integer());

  a = parse_vary("consumers.0.count=2:8:2");
  CHECK(a.labels == std::vector<std::string>{"2", "4", "6", "8"});
  CHECK(a.values[0].is_number_integer());

  a = parse_vary("producers.0.arrivals.poisson.rate_per_s=0.1:0.5:0.1");
  CHECK(a.labels == std::vector<std::string>{"0.1", "0.2", "0.3", "0.4", "0.5"});
  CHECK(a.values[2].get<double>() == 0.3);

  a = parse_vary("x=10:1:-4.5");
  CHECK(a.labels == std::vector<std::string>{"10", "5.5", "1"});

  a = parse_vary("broker.queues.work.overflow=drop-head,reject-publish");
  CHECK(a.values[1] == "reject-publish");
  CHECK(a.labels[1] == "reject-publish");

  a = parse_vary(R"(producers.0.service_ms=[{"exp": {"mean": 50}}, 70, "x"])");
  REQUIRE(a.values.size() == 3);
  CHECK(a.values[0]["exp"]["mean"] == 50);
  CHECK(a.labels == std::vector<std::string>{R"({"exp":{"mean":50}})", "70", "x"});

  CHECK_THROWS_WITH_AS(parse_vary("consumers.0.prefetch"), "--vary: expected PATH=LIST, got \"consumers.0.prefetch\"",
                       brokersim::ScenarioError);
  CHECK_THROWS_WITH_AS(parse_vary("p=1,,2"), "--vary p: expected a comma-separated LIST without empty items, got \"1,,2\"",
                       brokersim::ScenarioError);
  CHECK_THROWS_WITH_AS(parse_vary("p=5:1:1"),
                       "--vary p: expected a range start:stop:step whose step is non-zero and goes from start towards stop, got \"5:1:1\"",
                       brokersim::ScenarioError);
}

TEST_CASE("sweep: the grid is the cartesian product, first axis slowest - the file's sweep block is sorted by path") {
  using brokersim::grid_coords;
  std::vector<brokersim::SweepAxis> axes = {brokersim::parse_vary("a=1,2"), brokersim::parse_vary("b=1:3:1")};
  CHECK(brokersim::grid_size(axes) == 6);
  CHECK(grid_coords(axes, 0) == std::vector<std::size_t>{0, 0});
  CHECK(grid_coords(axes, 1) == std::vector<std::size_t>{0, 1});
  CHECK(grid_coords(axes, 3) == std::vector<std::size_t>{1, 0});
  CHECK(grid_coords(axes, 5) == std::vector<std::size_t>{1, 2});

  const auto block = nlohmann::json::parse(R"({"z.b": [1, 2], "a.c": ["x"], "m": [0.5, 1.5, 2]})");
  const auto from_file = brokersim::axes_from_block(block);
  REQUIRE(from_file.size() == 3);
  CHECK(from_file[0].path == "a.c");
  CHECK(from_file[1].path == "m");
  CHECK(from_file[1].labels == std::vector<std::string>{"0.5", "1.5", "2"});
  CHECK(from_file[2].path == "z.b");
}

TEST_CASE("sweep: CSV header, row order, metric columns - the file's sweep block and --vary replacing it") {
  SweepDir d;
  const auto r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2", "--vary", "consumers.0.count=1:2:1",
                            "--threads", "2"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("consumers.0.prefetch,consumers.0.count,replications,outcomes.generated_mean,outcomes.generated_ci95,"
                       "outcomes.rejected_at_publish_mean,",
                       0) == 0);
  for (const char* col : {"fraction.expired_in_queue_mean", "wait_ms.local.p95_mean", "throughput_per_s_ci95",
                          "queues.work.max_ready_mean", "queues.work.dead_lettered_by_reason.expired_mean"})
    CHECK_MESSAGE(lines[0].find(std::string(",") + col + ",") != std::string::npos, col);
  CHECK(lines[0].find("seed_") == std::string::npos);
  CHECK(lines[0].find(",replication_") == std::string::npos);
  CHECK(lines[0].find("stop_reason") == std::string::npos);
  CHECK(lines[1].rfind("1,1,1,400,,", 0) == 0);  // R = 1: empty ci95 cells
  CHECK(lines[2].rfind("1,2,1,", 0) == 0);
  CHECK(lines[3].rfind("2,1,1,", 0) == 0);
  CHECK(lines[4].rfind("2,2,1,", 0) == 0);
  CHECK(split_csv_line(lines[1]).size() == split_csv_line(lines[0]).size());

  // The same grid from the file's sweep block (paths sorted: consumers.0.count first).
  const std::string with_block = d.write("block.json", std::string(kScenario).substr(0, std::string(kScenario).size() - 1) +
                                                           R"(, "sweep": {"consumers.0.prefetch": [1, 2], "consumers.0.count": [1, 2]}})");
  const auto b = run_cli({"sweep", with_block});
  REQUIRE_MESSAGE(b.status == 0, b.err);
  const auto blines = lines_of(b.out);
  REQUIRE(blines.size() == 5);
  CHECK(blines[0].rfind("consumers.0.count,consumers.0.prefetch,replications,", 0) == 0);
  CHECK(blines[2].rfind("1,2,1,", 0) == 0);
  CHECK(split_csv_line(blines[2])[3] == split_csv_line(lines[3])[3]);

  // --vary replaces the block entirely.
  const auto v = run_cli({"sweep", with_block, "--vary", "consumers.0.slots=1,3"});
  REQUIRE_MESSAGE(v.status == 0, v.err);
  const auto vlines = lines_of(v.out);
  REQUIRE(vlines.size() == 3);
  CHECK(vlines[0].rfind("consumers.0.slots,replications,", 0) == 0);
}

TEST_CASE("sweep: byte-identical CSV for --threads 1 and 2") {
  SweepDir d;
  const std::vector<std::string> base = {"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2,4",
                                         "--vary", "consumers.0.count=1:3:1", "--replications", "3"};
  auto one = base, two = base;
  one.insert(one.end(), {"--threads", "1"});
  two.insert(two.end(), {"--threads", "2"});
  const auto a = run_cli(one), b = run_cli(two);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  CHECK(a.out == b.out);
  CHECK(lines_of(a.out).size() == 10);
}

TEST_CASE("sweep: common random numbers across points, independent streams across replications") {
  SweepDir d;
  const std::string timed = d.write("timed.json", R"({"name": "crn", "seed": 5, "stop": {"time_ms": 3000},
    "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 50}}, "deadline_ms": 300,
                   "service_ms": {"exp": {"mean": 40}}}],
    "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 1}]})");
  const auto space = brokersim::load_sweep_space(timed, {}, {"consumers.0.prefetch=1,8"}, std::nullopt);
  const auto scenarios = brokersim::validate_points(space, {0, 1});
  const auto names = brokersim::metric_names(scenarios[0]);
  const auto gen = static_cast<std::size_t>(std::find(names.begin(), names.end(), "outcomes.generated") - names.begin());
  const auto done = static_cast<std::size_t>(std::find(names.begin(), names.end(), "outcomes.completed_on_time") - names.begin());
  REQUIRE(gen < names.size());
  std::vector<brokersim::RunTask> tasks;
  for (std::uint64_t r = 0; r < 3; ++r) tasks.push_back({&scenarios[0], r});
  for (std::uint64_t r = 0; r < 3; ++r) tasks.push_back({&scenarios[1], r});
  const auto rows = brokersim::run_tasks(tasks, 2, names);
  for (std::size_t r = 0; r < 3; ++r) CHECK(rows[r][gen] == rows[3 + r][gen]);  // same arrivals per replication
  CHECK(rows[0][gen] != rows[1][gen]);                                          // other replications, other streams
  CHECK(rows[1][gen] != rows[2][gen]);
  CHECK(rows[0][done] != rows[3][done]);  // and the prefetch setting does change the outcome
}

TEST_CASE("sweep: ci95 is the Student t half-width over replications") {
  using brokersim::summarize;
  const std::vector<double> a{1}, b{2}, c{3}, e{4};
  const auto s = summarize({&a, &b, &c, &e});
  CHECK(s.mean[0] == 2.5);
  // sd = sqrt(5/3), t(0.975; 3) = 3.182446305284263
  CHECK(s.ci95[0] == doctest::Approx(3.182446305284263 * std::sqrt(5.0 / 3.0) / 2).epsilon(1e-12));
  CHECK(std::isnan(summarize({&a}).ci95[0]));
  CHECK(summarize({&b, &b}).ci95[0] == 0);

  // End to end: the CSV's ci95 from three `run --replication r` results by hand.
  SweepDir d;
  const std::string timed = d.write("timed.json", R"({"name": "ci", "seed": 3, "stop": {"time_ms": 2000},
    "broker": {"queues": {"work": {}}},
    "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 30}}, "service_ms": 10}],
    "consumers": [{"queue": "work"}]})");
  double g[3];
  for (int r = 0; r < 3; ++r) {
    const auto run = run_cli({"run", timed, "--json", "--replication", std::to_string(r)});
    REQUIRE(run.status == 0);
    g[r] = nlohmann::json::parse(run.out)["outcomes"]["generated"].get<double>();
  }
  const double mean = (g[0] + g[1] + g[2]) / 3;
  const double var = ((g[0] - mean) * (g[0] - mean) + (g[1] - mean) * (g[1] - mean) + (g[2] - mean) * (g[2] - mean)) / 2;
  const double ci = 4.302652729911275 * std::sqrt(var / 3);  // t(0.975; 2)
  const auto sw = run_cli({"sweep", timed, "--vary", "consumers.0.slots=1", "--replications", "3"});
  REQUIRE(sw.status == 0);
  const auto lines = lines_of(sw.out);
  CHECK(std::stod(split_csv_line(lines[1])[column(lines[0], "outcomes.generated_mean")]) == doctest::Approx(mean).epsilon(1e-12));
  CHECK(std::stod(split_csv_line(lines[1])[column(lines[0], "outcomes.generated_ci95")]) == doctest::Approx(ci).epsilon(1e-9));
  CHECK(split_csv_line(lines[1])[column(lines[0], "replications")] == "3");
}

TEST_CASE("sweep: --out appears complete with its metadata - shards merged give the same bytes as one run") {
  SweepDir d;
  const std::vector<std::string> base = {"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2,4", "--vary",
                                         "consumers.0.count=1,2", "--replications", "2"};
  auto full = base;
  full.insert(full.end(), {"--out", d.path("full.csv")});
  REQUIRE(run_cli(full).status == 0);
  CHECK(!fs::exists(d.path("full.csv.journal")));
  const auto meta = nlohmann::json::parse(read_file(d.path("full.csv.meta.json")));
  CHECK(meta["brokersim_version"] == BROKERSIM_VERSION);
  CHECK(meta["seed"] == 11);
  CHECK(meta["replications"] == 2);
  CHECK(meta["points"] == 6);
  CHECK(meta["grid"][1]["path"] == "consumers.0.count");
  CHECK(meta["shard"] == nlohmann::json::parse(R"({"index": 0, "count": 1})"));
  CHECK(meta["rows"] == nlohmann::json::parse("[0,1,2,3,4,5]"));
  CHECK(meta["scenario_hash"].get<std::string>().size() == 16);

  std::vector<std::string> merge = {"merge"};
  for (int k = 0; k < 4; ++k) {  // 4 shards of 6 points: sizes 2, 2, 1, 1
    auto shard = base;
    const std::string out = d.path("s" + std::to_string(k) + ".csv");
    shard.insert(shard.end(), {"--shard", std::to_string(k) + "/4", "--out", out});
    const auto r = run_cli(shard);
    REQUIRE_MESSAGE(r.status == 0, r.err);
    merge.push_back(out);
  }
  CHECK(nlohmann::json::parse(read_file(d.path("s1.csv.meta.json")))["rows"] == nlohmann::json::parse("[1,5]"));
  CHECK(lines_of(read_file(d.path("s1.csv"))).size() == 3);
  std::swap(merge[1], merge[3]);  // any order
  merge.insert(merge.end(), {"--out", d.path("merged.csv")});
  const auto m = run_cli(merge);
  REQUIRE_MESSAGE(m.status == 0, m.err);
  CHECK(read_file(d.path("merged.csv")) == read_file(d.path("full.csv")));
  CHECK(read_file(d.path("merged.csv.meta.json")) == read_file(d.path("full.csv.meta.json")));

  // Refusals: missing points, overlapping shards, a different sweep.
  auto r = run_cli({"merge", d.path("s0.csv"), d.path("s1.csv"), "--out", d.path("x.csv")});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: merge: 2 of 6 grid points are missing (2, 3): run their shards and merge again\n");
  r = run_cli({"merge", d.path("s0.csv"), d.path("s1.csv"), d.path("s2.csv"), d.path("s3.csv"), d.path("full.csv"),
                 "--out", d.path("x.csv")});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: merge: grid point 0 is in both " + d.path("s0.csv") + " and " + d.path("full.csv") +
                     " (overlapping shards)\n");
  auto other = base;
  other.insert(other.end(), {"--seed", "12", "--shard", "2/4", "--out", d.path("o2.csv")});
  REQUIRE(run_cli(other).status == 0);
  r = run_cli({"merge", d.path("s0.csv"), d.path("s1.csv"), d.path("o2.csv"), d.path("s3.csv"), "--out", d.path("x.csv")});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: merge: " + d.path("o2.csv") + " is from a different sweep than " + d.path("s0.csv") +
                     " (seed differs)\n");
  CHECK(!fs::exists(d.path("x.csv")));
}

TEST_CASE("sweep: the shard from SLURM_ARRAY_TASK_* or JOB_COMPLETION_INDEX with --shard-count") {
  SweepDir d;
  const std::vector<std::string> base = {"sweep", d.scenario, "--vary", "consumers.0.prefetch=1:5:1"};
  ::setenv("SLURM_ARRAY_TASK_ID", "8", 1);
  ::setenv("SLURM_ARRAY_TASK_MIN", "7", 1);
  ::setenv("SLURM_ARRAY_TASK_COUNT", "2", 1);
  auto a = base;
  a.insert(a.end(), {"--out", d.path("slurm.csv")});
  const auto r = run_cli(a);
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  ::unsetenv("SLURM_ARRAY_TASK_MIN");
  ::unsetenv("SLURM_ARRAY_TASK_COUNT");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  auto meta = nlohmann::json::parse(read_file(d.path("slurm.csv.meta.json")));
  CHECK(meta["shard"] == nlohmann::json::parse(R"({"index": 1, "count": 2})"));
  CHECK(meta["rows"] == nlohmann::json::parse("[1,3]"));

  ::setenv("JOB_COMPLETION_INDEX", "2", 1);
  auto b = base;
  b.insert(b.end(), {"--shard-count", "3", "--out", d.path("k8s.csv")});
  const auto k = run_cli(b);
  auto bad = base;
  bad.insert(bad.end(), {"--shard-count", "2"});
  const auto kb = run_cli(bad);
  ::unsetenv("JOB_COMPLETION_INDEX");
  REQUIRE_MESSAGE(k.status == 0, k.err);
  meta = nlohmann::json::parse(read_file(d.path("k8s.csv.meta.json")));
  CHECK(meta["rows"] == nlohmann::json::parse("[2]"));
  CHECK(kb.status == 2);
  CHECK(kb.err == "brokersim: error: JOB_COMPLETION_INDEX: expected an integer below --shard-count (2), got \"2\"\n");
}

TEST_CASE("sweep: bad --vary, --shard and other options are exit-2 errors with exact text") {
  SweepDir d;
  const auto err = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"sweep", d.scenario};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    return r.err;
  };
  CHECK(err({"--vary", "consumers.0.prefetch=1,-1"}) ==
        "brokersim: error: --vary consumers.0.prefetch=-1: consumers.0.prefetch: expected an integer >= 0, got -1\n");
  CHECK(err({"--vary", "consumers.0.prefetch=1:4:0"}) ==
        "brokersim: error: --vary consumers.0.prefetch: expected a range start:stop:step whose step is non-zero and goes "
        "from start towards stop, got \"1:4:0\"\n");
  CHECK(err({"--vary", "consumers.3.prefetch=1"}) ==
        "brokersim: error: --vary consumers.3.prefetch=1: consumers.3.prefetch: expected an index below 1 (consumers has "
        "1 element), got 3\n");
  CHECK(err({"--vary", "=1,2"}) == "brokersim: error: --vary: expected a key path before '=', got \"=1,2\"\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--vary", "consumers.0.count=2"}) ==
        "brokersim: error: --vary consumers.0.count: expected each path varied once, got it twice\n");
  CHECK(err({}) == "brokersim: error: sweep: expected --vary PATH=LIST or a \"sweep\" block in the scenario, got nothing\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--shard", "3/3"}) ==
        "brokersim: error: --shard: expected K/N with integers 0 <= K < N, got \"3/3\"\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--shard", "1"}) ==
        "brokersim: error: --shard: expected K/N with integers 0 <= K < N, got \"1\"\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--shard", "-1/2"}) ==
        "brokersim: error: --shard: expected K/N with integers 0 <= K < N, got \"-1/2\"\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--replications", "0"}) ==
        "brokersim: error: --replications: expected an integer >= 1, got \"0\"\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--threads", "two"}) ==
        "brokersim: error: --threads: expected an integer >= 1, got \"two\"\n");
  CHECK(err({"--vary", "consumers.0.count=1", "--resume"}) ==
        "brokersim: error: --resume: expected --out FILE (the journal is kept beside it), got no --out\n");
  // A combination that only fails together: warm-up beyond the stop time.
  CHECK(err({"--set", "stop={\"time_ms\": 1000}", "--vary", "warmup_ms=0,500", "--vary", "stop.time_ms=1000,400"}) ==
        "brokersim: error: grid point 3 (warmup_ms=500, stop.time_ms=400): warmup_ms: expected a number >= 0 and < "
        "stop.time_ms (400), got 500\n");
}

TEST_CASE("sweep: --resume after SIGKILL (and a torn journal line) gives the bytes of an uninterrupted run") {
  SweepDir d;
  const std::vector<std::string> args = {"sweep", d.scenario, "--set", "stop={\"jobs\": 20000}", "--vary",
                                         "consumers.0.prefetch=1:6:1", "--vary", "consumers.0.count=2:5:1",
                                         "--replications", "2"};
  auto ref = args;
  ref.insert(ref.end(), {"--out", d.path("ref.csv"), "--threads", "2"});
  REQUIRE(run_cli(ref).status == 0);

  const std::string out = d.path("killed.csv");
  const std::string journal = out + ".journal";
  auto child_args = args;
  child_args.insert(child_args.end(), {"--out", out, "--threads", "1"});
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::string binary = BROKERSIM_BINARY;
    argv.push_back(binary.data());
    for (auto& a : child_args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  // Kill it once a few points are in the journal.
  bool interrupted = false;
  for (int i = 0; i < 20000; ++i) {
    if (fs::exists(journal) && lines_of(read_file(journal)).size() >= 4) {
      ::kill(pid, SIGKILL);
      interrupted = true;
      break;
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) break;  // finished before we saw it: nothing to resume
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  WARN(interrupted);
  if (interrupted) {
    CHECK(!fs::exists(out));
    const auto journal_lines = lines_of(read_file(journal));
    CHECK(journal_lines.size() < 25);
    std::ofstream(journal, std::ios::app) << "P 23 0.5,1,2";  // a torn last line
  } else {
    MESSAGE("the sweep finished before it could be killed; resuming from nothing");
  }
  auto resume = child_args;
  resume.back() = "2";
  resume.push_back("--resume");
  const auto r = run_cli(resume);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(read_file(out) == read_file(d.path("ref.csv")));
  CHECK(read_file(out + ".meta.json") == read_file(d.path("ref.csv.meta.json")));
  CHECK(!fs::exists(journal));

  // A journal of another sweep is refused.
  std::ofstream(d.path("other.csv.journal")) << "brokersim-sweep-journal v1 0000000000000000\nP 0 1,2 x\n";
  auto other = args;
  other.insert(other.end(), {"--out", d.path("other.csv"), "--resume"});
  const auto o = run_cli(other);
  CHECK(o.status == 2);
  CHECK(o.err == "brokersim: error: " + d.path("other.csv.journal") +
                     ": the journal belongs to another sweep (scenario, grid, seed, replications or shard differ); delete "
                     "it or run without --resume\n");
}

// With --precision each journal line carries the replications its point used, so a resumed
// sweep writes the `replications` column of an uninterrupted one.
TEST_CASE("sweep: --resume with --precision gives the bytes of an uninterrupted run") {
  SweepDir d;
  const std::vector<std::string> args = {"sweep", d.scenario, "--set", "stop={\"jobs\": 5000}", "--vary",
                                         "consumers.0.prefetch=1:6:1", "--vary", "consumers.0.count=2:5:1",
                                         "--precision", "0.02", "--precision-metric", "goodput_per_s",
                                         "--max-replications", "12"};
  auto ref = args;
  ref.insert(ref.end(), {"--out", d.path("ref.csv"), "--threads", "2"});
  REQUIRE(run_cli(ref).status == 0);
  const auto ref_lines = lines_of(read_file(d.path("ref.csv")));
  std::set<std::string> used;
  for (std::size_t i = 1; i < ref_lines.size(); ++i) used.insert(split_csv_line(ref_lines[i])[2]);
  CHECK(used.size() > 1);  // points stopped after different numbers of replications

  const std::string out = d.path("killed.csv");
  const std::string journal = out + ".journal";
  auto child_args = args;
  child_args.insert(child_args.end(), {"--out", out, "--threads", "1"});
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::string binary = BROKERSIM_BINARY;
    argv.push_back(binary.data());
    for (auto& a : child_args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  bool interrupted = false;
  for (int i = 0; i < 20000; ++i) {
    if (fs::exists(journal) && lines_of(read_file(journal)).size() >= 3) {
      ::kill(pid, SIGKILL);
      interrupted = true;
      break;
    }
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  WARN(interrupted);
  auto resume = child_args;
  resume.back() = "2";
  resume.push_back("--resume");
  const auto r = run_cli(resume);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(read_file(out) == read_file(d.path("ref.csv")));
  CHECK(read_file(out + ".meta.json") == read_file(d.path("ref.csv.meta.json")));
}
