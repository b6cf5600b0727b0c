// plan on a cluster (--stage-dir, --run-task): the answer split into stage tasks is the local
// plan's, byte for byte, for any task count; a missing (killed) task is named and rerun; a result
// file that was edited, moved or belongs to another plan is refused (exit 2); a folder of another
// plan, or of other files, is never written over.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace {

using brokersim::test::run_cli;
using brokersim::test::read_file;

// As test_plan's planner scenario: 3 consumers are overloaded, 4 keep up.
constexpr const char* kStagePlanScenario = R"({"name": "stage-test", "seed": 1, "stop": {"jobs": 600},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300,
                 "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1, "slots": 1}]})";

// Noisy runs (Poisson arrivals, exponential service) whose days differ in volume: a target over
// runs with --precision looks at 59 runs and more, and --headroom scales the volume.
constexpr const char* kStageNoisyScenario = R"({"name": "stage-noisy", "seed": 5, "stop": {"jobs": 150},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 40}}, "deadline_ms": 400,
                 "service_ms": {"exp": {"mean": 80}},
                 "volume": {"per_run": {"lognormal": {"mean": 1, "cv": 0.1}}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1, "slots": 2}]})";

struct StageScratch : brokersim::test::ScratchDir {
  std::string scenario, noisy;
  StageScratch()
      : ScratchDir("brokersim-stages"), scenario(write("plan.json", kStagePlanScenario)),
        noisy(write("noisy.json", kStageNoisyScenario)) {}
  std::string folder(const std::string& name) const { return (dir / name).string(); }
};

std::vector<std::string> stage_plan_args(const StageScratch& d) {
  return {"plan", d.scenario, "--vary", "consumers.0.prefetch=2,1", "--vary", "consumers.0.count=1:12:1",
          "--target", "fraction.completed_on_time>=0.99", "--target", "wait_ms.local.p95<50", "--replications", "2"};
}

std::vector<std::string> with_args(std::vector<std::string> a, const std::vector<std::string>& more) {
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::string task_of(std::size_t k, std::size_t n) { return std::to_string(k) + "/" + std::to_string(n); }

// The coordinator run until it answers, every task of each stage it writes run in between (one
// thread each, as a job array's tasks would); `stages`: how many times it asked for tasks.
brokersim::test::CliResult run_staged_plan(const std::vector<std::string>& args, const std::string& folder,
                                           std::size_t n, int* stages = nullptr) {
  const std::vector<std::string> coordinator = with_args(args, {"--stage-dir", folder, "--tasks", std::to_string(n)});
  for (int round = 0;; ++round) {
    auto r = run_cli(coordinator);
    if (r.status != 7 || round > 500) {
      if (stages) *stages = round;
      return r;
    }
    for (std::size_t k = 0; k < n; ++k) {
      const auto t = run_cli({"plan", "--run-task", folder, "--task", task_of(k, n), "--threads", "1"});
      REQUIRE_MESSAGE(t.status == 0, t.err);
    }
  }
}

// The result files in the folder, by name.
std::vector<std::string> stage_result_files(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.path().filename().string().find(".task-") != std::string::npos) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("plan split into 1 2 and 3 stage tasks prints the local plan's bytes in text and json") {
  StageScratch d;
  const auto args = stage_plan_args(d);
  const auto text = run_cli(args);
  const auto json = run_cli(with_args(args, {"--json"}));
  REQUIRE_MESSAGE(text.status == 0, text.err);
  REQUIRE(json.status == 0);
  for (std::size_t n : {1, 2, 3}) {
    CAPTURE(n);
    const std::string folder = d.folder("stages-" + std::to_string(n));
    int stages = 0;
    const auto staged = run_staged_plan(args, folder, n, &stages);
    CHECK(staged.status == text.status);
    CHECK(staged.out == text.out);
    CHECK(stages == 6);  // one stage per setting the bisection ran ("ran 6")
    // The same folder answers --json at once (--json is how the answer is shown, not another plan).
    const auto staged_json = run_cli(with_args(args, {"--json", "--stage-dir", folder, "--tasks", std::to_string(n)}));
    CHECK(staged_json.status == 0);
    CHECK(staged_json.out == json.out);
  }
}

TEST_CASE("plan split into stage tasks with precision runs targets and headroom prints the local plan's bytes") {
  StageScratch d;
  const std::vector<std::string> args{"plan", d.noisy, "--vary", "consumers.0.count=3:5:1", "--target",
                                      "fraction.completed_on_time>=0.93 in 95% of runs", "--precision", "0.05",
                                      "--headroom", "--json"};
  const auto local = run_cli(with_args(args, {"--threads", "2"}));
  REQUIRE_MESSAGE(local.status == 0, local.err);
  int stages = 0;
  const auto staged = run_staged_plan(args, d.folder("stages"), 2, &stages);
  CHECK(staged.status == local.status);
  CHECK(staged.out == local.out);
  CHECK(stages > 2);
  CHECK(local.out.find("\"replications\": 118") != std::string::npos);  // a setting looked at after 59 and 118 runs
}

TEST_CASE("plan stage task that is missing or was killed is named and rerun") {
  StageScratch d;
  const auto args = stage_plan_args(d);
  const std::string folder = d.folder("stages");
  const auto coordinator = with_args(args, {"--stage-dir", folder, "--tasks", "3"});
  auto r = run_cli(coordinator);
  REQUIRE(r.status == 7);
  CHECK(r.out.empty());
  CHECK(r.err.find("stage 1 waits for 3 of its 3 task(s): 0, 1, 2") != std::string::npos);
  CHECK(r.err.find("--run-task " + folder + " --task K/3") != std::string::npos);
  // Tasks 0 and 2 ran; task 1 was killed before it wrote anything but its partial file.
  REQUIRE(run_cli({"plan", "--run-task", folder, "--task", "0/3"}).status == 0);
  REQUIRE(run_cli({"plan", "--run-task", folder, "--task", "2/3"}).status == 0);
  std::ofstream(std::filesystem::path(folder) / ".brokersim.99999.0.part") << "{\"format\": \"brok";
  r = run_cli(coordinator);
  CHECK(r.status == 7);
  CHECK(r.err.find("stage 1 waits for 1 of its 3 task(s): 1;") != std::string::npos);
  CHECK(r.err.find("stage 1 written") == std::string::npos);  // the stage is there, not written again
  // The array run again: tasks already done are skipped (their files untouched), the missing one runs.
  const std::string done = read_file(stage_result_files(folder).at(0));
  const auto again = run_cli({"plan", "--run-task", folder, "--task", "0/3"});
  CHECK(again.status == 0);
  CHECK(again.err.find("already done") != std::string::npos);
  CHECK(read_file(stage_result_files(folder).at(0)) == done);
  CHECK(r.err.find("(a Slurm array: --array=1)") != std::string::npos);
  // Just the missing task again, as a Slurm array of its own (--array=1): the index is the task.
  ::setenv("SLURM_ARRAY_TASK_ID", "3", 1);
  const auto beyond = run_cli({"plan", "--run-task", folder});
  ::setenv("SLURM_ARRAY_TASK_ID", "1", 1);
  const auto missing = run_cli({"plan", "--run-task", folder});
  ::unsetenv("SLURM_ARRAY_TASK_ID");
  CHECK(beyond.status == 2);
  CHECK(beyond.err.find("SLURM_ARRAY_TASK_ID: expected a task of stage 1's 3, from 0 to 2") != std::string::npos);
  REQUIRE_MESSAGE(missing.status == 0, missing.err);
  CHECK(missing.err.find("stage 1 task 1/3: 1 run(s)") != std::string::npos);
  r = run_cli(coordinator);
  CHECK(r.status == 7);
  CHECK(r.err.find("stage 2 written") != std::string::npos);
  const auto finished = run_staged_plan(args, folder, 3);
  CHECK(finished.status == 0);
  CHECK(finished.out == run_cli(args).out);
}

TEST_CASE("plan stage result file that was edited or moved or is another stage's is refused with exit status 2") {
  StageScratch d;
  const auto args = stage_plan_args(d);
  const std::string folder = d.folder("stages");
  const auto coordinator = with_args(args, {"--stage-dir", folder, "--tasks", "2"});
  REQUIRE(run_cli(coordinator).status == 7);
  for (const char* k : {"0/2", "1/2"}) REQUIRE(run_cli({"plan", "--run-task", folder, "--task", k}).status == 0);
  const std::vector<std::string> files = stage_result_files(folder);
  REQUIRE(files.size() == 2);
  const std::string original = read_file(files[0]);

  // One number changed (a digit of a double's bits): the checksum no longer matches.
  std::string edited = original;
  const auto at = edited.find("\"row\":\"");
  REQUIRE(at != std::string::npos);
  char& digit = edited[at + 8];
  digit = digit == '0' ? '1' : '0';
  std::ofstream(files[0], std::ios::binary | std::ios::trunc) << edited;
  auto r = run_cli(coordinator);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(files[0] + ": fnv1a64: expected the checksum of the file's contents") != std::string::npos);
  CHECK(r.err.find("the file was edited or damaged") != std::string::npos);
  CHECK(r.err.find("--run-task " + folder + " --task 0/2") != std::string::npos);
  // The task itself refuses to skip it or write over it.
  r = run_cli({"plan", "--run-task", folder, "--task", "0/2"});
  CHECK(r.status == 2);
  CHECK(read_file(files[0]) == edited);

  // Task 1's (valid) result under task 0's name: its task and runs are not task 0's.
  std::filesystem::copy_file(files[1], files[0], std::filesystem::copy_options::overwrite_existing);
  r = run_cli(coordinator);
  CHECK(r.status == 2);
  CHECK(r.err.find(files[0] + ": task: expected 0 (the task its name says), got 1") != std::string::npos);

  // Not JSON at all (cut short).
  std::ofstream(files[0], std::ios::binary | std::ios::trunc) << original.substr(0, original.size() / 2);
  r = run_cli(coordinator);
  CHECK(r.status == 2);
  CHECK(r.err.find(files[0] + ": expected a JSON document, got invalid JSON") != std::string::npos);

  // Removed, the task runs again and the plan goes on to the local plan's answer.
  std::filesystem::remove(files[0]);
  REQUIRE(run_cli({"plan", "--run-task", folder, "--task", "0/2"}).status == 0);
  CHECK(read_file(files[0]) == original);
  const auto finished = run_staged_plan(args, folder, 2);
  CHECK(finished.status == 0);
  CHECK(finished.out == run_cli(args).out);
}

TEST_CASE("plan stage folder of another plan or with other files is refused and left as it was") {
  StageScratch d;
  const auto args = stage_plan_args(d);
  const std::string folder = d.folder("stages");
  REQUIRE(run_cli(with_args(args, {"--stage-dir", folder, "--tasks", "2"})).status == 7);
  const std::string plan_json = read_file(folder + "/plan.json");

  // Another target: another plan.
  auto other = args;
  other[7] = "fraction.completed_on_time>=0.9";
  auto r = run_cli(with_args(other, {"--stage-dir", folder, "--tasks", "2"}));
  CHECK(r.status == 2);
  CHECK(r.err.find("--stage-dir: expected the stage folder of this plan") != std::string::npos);
  CHECK(r.err.find("the folder of another plan") != std::string::npos);
  CHECK(r.err.find("\"fraction.completed_on_time>=0.99\" there, \"fraction.completed_on_time>=0.9\" here") != std::string::npos);
  CHECK(read_file(folder + "/plan.json") == plan_json);

  // The scenario edited since: the coordinator and the tasks both refuse.
  d.write("plan.json", std::string(kStagePlanScenario).replace(std::string(kStagePlanScenario).find("\"seed\": 1"), 9, "\"seed\": 2"));
  r = run_cli(with_args(args, {"--stage-dir", folder, "--tasks", "2"}));
  CHECK(r.status == 2);
  CHECK(r.err.find("its scenario (after --set) is another") != std::string::npos);
  r = run_cli({"plan", "--run-task", folder, "--task", "0/2"});
  CHECK(r.status == 2);
  CHECK(r.err.find("scenario_hash") != std::string::npos);
  d.write("plan.json", kStagePlanScenario);

  // A folder of the user's own files, and a file in the folder's place.
  const std::string mine = d.folder("mine");
  std::filesystem::create_directories(mine);
  d.write("mine/notes.txt", "keep me");
  r = run_cli(with_args(args, {"--stage-dir", mine, "--tasks", "2"}));
  CHECK(r.status == 2);
  CHECK(r.err.find("a folder with other files in it and no plan.json") != std::string::npos);
  CHECK(std::distance(std::filesystem::directory_iterator(mine), std::filesystem::directory_iterator()) == 1);
  r = run_cli(with_args(args, {"--stage-dir", d.folder("mine/notes.txt"), "--tasks", "2"}));
  CHECK(r.status == 2);
  CHECK(read_file(d.folder("mine/notes.txt")) == "keep me");
  r = run_cli({"plan", "--run-task", mine, "--task", "0/2"});
  CHECK(r.status == 2);
  CHECK(r.err.find("which has no plan.json") != std::string::npos);
}

TEST_CASE("plan stage options are checked at the edge") {
  StageScratch d;
  const auto args = stage_plan_args(d);
  const std::string folder = d.folder("stages");
  auto r = run_cli(with_args(args, {"--tasks", "2"}));
  CHECK(r.status == 2);
  CHECK(r.err.find("--tasks: expected --stage-dir DIR beside it, got no --stage-dir") != std::string::npos);
  r = run_cli(with_args(args, {"--stage-dir", folder}));
  CHECK(r.status == 2);
  CHECK(r.err.find("--stage-dir: expected --tasks N beside it") != std::string::npos);
  r = run_cli(with_args(args, {"--stage-dir", folder, "--tasks", "0"}));
  CHECK(r.status == 2);
  CHECK(r.err.find("--tasks: expected an integer >= 1, got \"0\"") != std::string::npos);
  CHECK(!std::filesystem::exists(folder));  // nothing made before the options are valid
  r = run_cli(with_args(args, {"--task", "0/2"}));
  CHECK(r.status == 2);
  CHECK(r.err.find("--task: expected --run-task DIR beside it") != std::string::npos);
  REQUIRE(run_cli(with_args(args, {"--stage-dir", folder, "--tasks", "2"})).status == 7);
  r = run_cli({"plan", "--run-task", folder, "--target", "x<=1"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--run-task: expected only --task, --task-count and --threads beside it") != std::string::npos);
  r = run_cli({"plan", "--run-task", folder, "--task", "1/3"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--task: expected a task of stage 1's 2 (K/2, a job array of 2), got 1/3") != std::string::npos);
  r = run_cli({"plan", "--run-task", folder, "--task", "2/2"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--task: expected K/N with integers 0 <= K < N, got \"2/2\"") != std::string::npos);
  r = run_cli({"plan", "--run-task", folder, "--task-count", "2"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--task-count: expected JOB_COMPLETION_INDEX in the environment") != std::string::npos);
}
