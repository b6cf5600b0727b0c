// What the outputs say and where they go: exact files, nothing destroyed (issue 12). An output that
// names an input or another output is refused before anything runs; devices, FIFOs and stdout are
// streamed into, never replaced; write errors give their reason; runs that measured nothing say so.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace fs = std::filesystem;

namespace {

using brokersim::test::CliResult;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::split_csv_line;

constexpr const char* kScenario = R"({"name": "outputs", "seed": 5, "stop": {"time_ms": 2000},
  "broker": {"queues": {"work": {"message_ttl_ms": 600}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 10}}, "deadline_ms": 600,
                 "service_ms": {"exp": {"mean": 50}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1}],
  "observe": {"every_ms": 500}})";

struct Scratch : brokersim::test::ScratchDir {
  std::string scenario;
  Scratch() : ScratchDir("brokersim-outputs"), scenario(write("s.json", kScenario)) {}
};

using brokersim::test::lines_of;

bool is_fifo(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}

bool is_char_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// Reads a FIFO to its end on a thread while the command writes into it.
struct FifoReader {
  std::string path, text;
  std::thread thread;
  explicit FifoReader(std::string p) : path(std::move(p)) {
    REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
    thread = std::thread([this] {
      const int fd = ::open(path.c_str(), O_RDONLY);
      if (fd < 0) return;
      char buf[4096];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
      ::close(fd);
    });
  }
  // Joins the reader; if the command never opened the FIFO, a writer that opens and closes it lets
  // the reader's open() return, so a failing test cannot hang here.
  std::string finish() {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    thread.join();
    return text;
  }
};

std::vector<std::string> folder_listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("outputs: run refuses an output naming the scenario or a trace_csv it reads or another output - before running") {
  Scratch d;
  d.write("arrivals.csv", "publish_ms\n0\n10\n");
  const std::string traced = d.write("traced.json", R"({"stop": {"time_ms": 100}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"trace_csv": "arrivals.csv"}, "service_ms": 1}],
    "observe": {"every_ms": 10}})");
  d.write("days.csv", "publish_ms\n0\n86400000\n");
  const std::string daily = d.write("daily.json", R"({"stop": {"time_ms": 100}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"days_csv": "days.csv"}, "service_ms": 1}],
    "observe": {"every_ms": 10}})");
  d.write("old.csv", "keep me\n");
  fs::create_symlink(d.path("old.csv"), d.path("link.csv"));
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"run", d.scenario, "--trace", d.scenario},
       "--trace: expected a file that no other input or output of the command uses, got \"" + d.scenario +
           "\", which is also the scenario file"},
      {{"run", d.scenario, "--trace", d.path("old.csv"), "--timeseries", d.dir.string() + "/./old.csv"},
       "--timeseries: expected a file that no other input or output of the command uses, got \"" + d.dir.string() +
           "/./old.csv\", which is also --trace (\"" + d.path("old.csv") + "\")"},
      {{"run", d.scenario, "--trace", d.path("old.csv"), "--timeseries", d.path("link.csv")},
       "--timeseries: expected a file that no other input or output of the command uses, got \"" + d.path("link.csv") +
           "\", which is also --trace (\"" + d.path("old.csv") + "\")"},
      // Neither exists yet: compared by path, "x/../new.csv" is "new.csv".
      {{"run", d.scenario, "--trace", d.path("new.csv"), "--timeseries", d.path("sub/../new.csv")},
       "--timeseries: expected a file that no other input or output of the command uses, got \"" +
           d.path("sub/../new.csv") + "\", which is also --trace (\"" + d.path("new.csv") + "\")"},
      {{"run", traced, "--timeseries", d.path("arrivals.csv")},
       "--timeseries: expected a file that no other input or output of the command uses, got \"" +
           d.path("arrivals.csv") + "\", which is also producers.0.arrivals.trace_csv"},
      // Named by the key the scenario has.
      {{"run", daily, "--timeseries", d.path("days.csv")},
       "--timeseries: expected a file that no other input or output of the command uses, got \"" +
           d.path("days.csv") + "\", which is also producers.0.arrivals.days_csv"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "brokersim: error: " + c.error + "\n");
  }
  CHECK(read_file(d.scenario) == kScenario);
  CHECK(read_file(d.path("old.csv")) == "keep me\n");
  CHECK(read_file(d.path("arrivals.csv")) == "publish_ms\n0\n10\n");
  CHECK(read_file(d.path("days.csv")) == "publish_ms\n0\n86400000\n");
  CHECK(folder_listing(d.dir) ==
        std::vector<std::string>{"arrivals.csv", "daily.json", "days.csv", "link.csv", "old.csv", "s.json", "traced.json"});
}

TEST_CASE("outputs: sweep and merge refuse an --out that is an input or whose metadata is one") {
  Scratch d;
  const std::vector<std::string> sweep = {"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2"};
  auto over_scenario = sweep;
  over_scenario.insert(over_scenario.end(), {"--out", d.scenario});
  CliResult r = run_cli(over_scenario);
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: --out: expected a file that no other input or output of the command uses, got \"" +
                     d.scenario + "\", which is also the scenario file\n");
  CHECK(read_file(d.scenario) == kScenario);

  auto shard = sweep;
  shard.insert(shard.end(), {"--out", d.path("a.csv")});
  REQUIRE(run_cli(shard).status == 0);
  const std::string a = read_file(d.path("a.csv"));
  r = run_cli({"merge", d.path("a.csv"), "--out", d.dir.string() + "/./a.csv"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--out: expected a file that no other input or output of the command uses, got \"" +
                   d.dir.string() + "/./a.csv\", which is also a shard file") != std::string::npos);
  // --out b.csv writes b.csv.meta.json: that one is a shard's input here.
  fs::copy_file(d.path("a.csv"), d.path("b.csv.meta.json"));
  r = run_cli({"merge", d.path("b.csv.meta.json"), "--out", d.path("b.csv")});
  CHECK(r.status == 2);
  CHECK(r.err.find("--out's metadata: expected a file that no other input or output of the command uses") !=
        std::string::npos);
  CHECK(read_file(d.path("a.csv")) == a);
  CHECK(!fs::exists(d.path("b.csv")));
}

TEST_CASE("outputs: a FIFO is streamed into and stays a FIFO - sweep writes no metadata or journal beside it") {
  Scratch d;
  {
    FifoReader fifo(d.path("trace.fifo"));
    const CliResult r = run_cli({"run", d.scenario, "--json", "--trace", fifo.path});
    const std::string text = fifo.finish();
    REQUIRE_MESSAGE(r.status == 0, r.err);
    const auto j = nlohmann::json::parse(r.out);
    const auto lines = lines_of(text);
    REQUIRE(!lines.empty());
    CHECK(lines[0].rfind("job,producer,queue,", 0) == 0);
    CHECK(static_cast<long>(lines.size()) - 1 == j["outcomes"]["generated"].get<long>());
    CHECK(is_fifo(fifo.path));
  }
  {
    const std::vector<std::string> sweep = {"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2", "--threads", "1"};
    const CliResult ref = run_cli(sweep);
    REQUIRE(ref.status == 0);
    FifoReader fifo(d.path("rows.fifo"));
    auto to_fifo = sweep;
    to_fifo.insert(to_fifo.end(), {"--out", fifo.path});
    const CliResult r = run_cli(to_fifo);
    const std::string text = fifo.finish();
    REQUIRE_MESSAGE(r.status == 0, r.err);
    CHECK(text == ref.out);
    CHECK(is_fifo(fifo.path));
    CHECK(folder_listing(d.dir) == std::vector<std::string>{"rows.fifo", "s.json", "trace.fifo"});
  }
}

TEST_CASE("outputs: /dev/null stays a character device - sweep --resume into it is refused") {
  Scratch d;
  REQUIRE(is_char_device("/dev/null"));
  CliResult r = run_cli({"run", d.scenario, "--trace", "/dev/null", "--timeseries", "/dev/null"});
  CHECK(r.status == 0);
  CHECK(is_char_device("/dev/null"));
  r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2", "--out", "/dev/null"});
  CHECK(r.status == 0);
  CHECK(r.out.empty());
  CHECK(is_char_device("/dev/null"));
  CHECK(!fs::exists("/dev/null.meta.json"));
  CHECK(!fs::exists("/dev/null.journal"));
  r = run_cli({"merge", d.path("none.csv"), "--out", "/dev/null"});
  CHECK(r.status == 2);  // the shard is missing; /dev/null untouched
  CHECK(is_char_device("/dev/null"));
  r = run_cli({"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2", "--out", "/dev/null", "--resume"});
  CHECK(r.status == 2);
  CHECK(r.err ==
        "brokersim: error: --resume: expected --out naming a regular file (the journal is kept beside it), got "
        "\"/dev/null\", which is not a regular file\n");
}

TEST_CASE("outputs: - is standard output for run --trace and sweep --out and merge --out") {
  Scratch d;
  CliResult r = run_cli({"run", d.scenario, "--trace", "-"});
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("job,producer,queue,", 0) == 0);
  CHECK(r.out.find("Outcomes") != std::string::npos);  // the summary follows the trace
  r = run_cli({"run", d.scenario, "--json", "--trace", "-"});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: --trace: expected a file (stdout carries the --json object), got \"-\"\n");
  const CliResult dev_stdout = run_cli({"run", d.scenario, "--trace", "/dev/stdout"});
  REQUIRE(dev_stdout.status == 0);
  CHECK(dev_stdout.out == run_cli({"run", d.scenario, "--trace", "-"}).out);
  r = run_cli({"run", d.scenario, "--trace", "/dev/stdout", "--timeseries", "-"});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: --timeseries: expected a file that no other input or output of the command uses, "
                 "got \"-\", which is also --trace (\"/dev/stdout\")\n");

  const std::vector<std::string> sweep = {"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2"};
  const CliResult ref = run_cli(sweep);
  auto dash = sweep;
  dash.insert(dash.end(), {"--out", "-"});
  r = run_cli(dash);
  REQUIRE(r.status == 0);
  CHECK(r.out == ref.out);
  auto file = sweep;
  file.insert(file.end(), {"--out", d.path("a.csv")});
  REQUIRE(run_cli(file).status == 0);
  r = run_cli({"merge", d.path("a.csv"), "--out", "-"});
  REQUIRE(r.status == 0);
  CHECK(r.out == ref.out);
  CHECK(folder_listing(d.dir) == std::vector<std::string>{"a.csv", "a.csv.meta.json", "s.json"});
}

TEST_CASE("outputs: a write error names the path and the reason and exits with status 2") {
  Scratch d;
  d.write("plain", "x");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{"run", d.scenario, "--trace", "/dev/full"}, "/dev/full: cannot write (No space left on device)"},
      {{"sweep", d.scenario, "--vary", "consumers.0.prefetch=1", "--out", "/dev/full"},
       "/dev/full: cannot write (No space left on device)"},
      {{"run", d.scenario, "--trace", d.path("missing/jobs.csv")},
       d.path("missing/jobs.csv") + ": cannot open for writing (No such file or directory)"},
      {{"run", d.scenario, "--timeseries", d.path("plain/series.csv")},
       d.path("plain/series.csv") + ": cannot open for writing (Not a directory)"},
      {{"sweep", d.scenario, "--vary", "consumers.0.prefetch=1", "--out", d.path("missing/r.csv")},
       d.path("missing/r.csv") + ".journal: cannot open for writing (No such file or directory)"},
  };
  for (const auto& c : cases) {
    const CliResult r = run_cli(c.args);
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: " + c.error + "\n");
  }
  CHECK(folder_listing(d.dir) == std::vector<std::string>{"plain", "s.json"});
}

TEST_CASE("outputs: a regular output replaces the file a symlink names - keeps its permissions and leaves nothing partial") {
  Scratch d;
  d.write("real.csv", "old\n");
  fs::permissions(d.path("real.csv"), fs::perms(0640));
  fs::create_symlink("real.csv", d.path("link.csv"));
  const CliResult r = run_cli({"run", d.scenario, "--trace", d.path("link.csv")});
  REQUIRE(r.status == 0);
  CHECK(fs::is_symlink(d.path("link.csv")));
  CHECK(read_file(d.path("real.csv")).rfind("job,producer,", 0) == 0);
  CHECK((fs::status(d.path("real.csv")).permissions() & fs::perms::all) == fs::perms(0640));
  CHECK(folder_listing(d.dir) == std::vector<std::string>{"link.csv", "real.csv", "s.json"});
}

TEST_CASE("outputs: --timeseries without observe.every_ms names the key it needs - before running") {
  Scratch d;
  const std::string plain = d.write("plain.json", R"({"stop": {"time_ms": 10}, "broker": {"queues": {"q": {}}},
    "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}]})");
  const CliResult r = run_cli({"run", plain, "--trace", d.path("t.csv"), "--timeseries", d.path("x.csv")});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "brokersim: error: --timeseries needs observe.every_ms in the scenario (e.g. --set observe.every_ms=1000)\n");
  CHECK(!fs::exists(d.path("t.csv")));
  CHECK(!fs::exists(d.path("x.csv")));
}

TEST_CASE("outputs: a run that ends before warmup_ms or measures no job warns and exits with status 3") {
  const std::string baseline = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/capacity-baseline.json";
  CliResult r = run_cli({"run", baseline, "--set", "warmup_ms=1500000", "--set", "stop={\"jobs\":1000}"});
  CHECK(r.status == 3);
  CHECK(r.out.find("Outcomes") != std::string::npos);
  CHECK(r.err.rfind("brokersim: warning: the run ended at ", 0) == 0);
  CHECK(r.err.find(", before warmup_ms (1500000 ms): it measured nothing") != std::string::npos);

  // Past the warm-up, but no job created after it: the only arrival is at 0.
  Scratch d;
  const std::string one = d.write("one.json", R"({"stop": {"time_ms": 100}, "warmup_ms": 50,
    "broker": {"queues": {"q": {}}}, "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 1}],
    "consumers": [{"queue": "q"}]})");
  r = run_cli({"run", one, "--json"});
  CHECK(r.status == 3);
  CHECK(nlohmann::json::parse(r.out)["outcomes"]["generated"] == 0);
  CHECK(r.err ==
        "brokersim: warning: no job was created after warmup_ms (50 ms): the run measured nothing, every outcome is 0\n");
  r = run_cli({"run", one, "--set", "warmup_ms=0"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
}

TEST_CASE("sweep: incomplete_runs counts the replications stopped at a limit or measuring nothing - same bytes for any --threads") {
  Scratch d;
  const std::vector<std::string> base = {"sweep",   d.scenario, "--vary", "limits.max_in_system=2,1000", "--vary",
                                         "warmup_ms=0,1900",   "--set",  "producers.0.arrivals.poisson.rate_per_s=400",
                                         "--replications", "2"};
  auto one = base, two = base;
  one.insert(one.end(), {"--threads", "1"});
  two.insert(two.end(), {"--threads", "2"});
  const CliResult r1 = run_cli(one), r2 = run_cli(two);
  CHECK(r1.status == 3);
  CHECK(r1.out == r2.out);
  CHECK(r1.err.find("4 run(s) stopped early at a limit") != std::string::npos);
  const auto lines = lines_of(r1.out);
  REQUIRE(lines.size() == 5);
  const auto header = split_csv_line(lines[0]);
  CHECK(header.back() == "incomplete_runs");
  std::vector<std::string> counts;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto cells = split_csv_line(lines[i]);
    CHECK(cells.size() == header.size());
    counts.push_back(cells.back());
  }
  CHECK(counts == std::vector<std::string>{"2", "2", "0", "0"});

  // A warm-up past the end of every run: each replication measured nothing.
  const CliResult late = run_cli({"sweep", d.scenario, "--vary", "consumers.0.prefetch=1,2", "--set",
                                  "stop={\"jobs\": 20}", "--set", "warmup_ms=1000000", "--replications", "3"});
  CHECK(late.status == 3);
  CHECK(late.err == "brokersim: warning: 6 run(s) measured nothing: they ended before warmup_ms, or no job was "
                    "created after warmup_ms\n");
  const auto late_lines = lines_of(late.out);
  REQUIRE(late_lines.size() == 3);
  CHECK(split_csv_line(late_lines[1]).back() == "3");
  CHECK(split_csv_line(late_lines[2]).back() == "3");
}

TEST_CASE("sweep: results.csv.meta.json records --set and --vary in order with seed and replications") {
  Scratch d;
  const CliResult r = run_cli({"sweep", d.scenario, "--set", "consumers.0.slots=2", "--set", "consumers.0.slots=3",
                               "--vary", "consumers.0.prefetch=1:2:1", "--vary", "consumers.0.count=[1,2]", "--seed", "9",
                               "--replications", "2", "--out", d.path("r.csv")});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const auto meta = nlohmann::json::parse(read_file(d.path("r.csv.meta.json")));
  CHECK(meta["set"] == nlohmann::json::parse(R"(["consumers.0.slots=2", "consumers.0.slots=3"])"));
  CHECK(meta["vary"] == nlohmann::json::parse(R"(["consumers.0.prefetch=1:2:1", "consumers.0.count=[1,2]"])"));
  CHECK(meta["seed"] == 9);
  CHECK(meta["replications"] == 2);

  // The recorded options reproduce the file.
  std::vector<std::string> again = {"sweep", d.scenario};
  for (const auto& s : meta["set"]) again.insert(again.end(), {"--set", s.get<std::string>()});
  for (const auto& v : meta["vary"]) again.insert(again.end(), {"--vary", v.get<std::string>()});
  again.insert(again.end(), {"--seed", std::to_string(meta["seed"].get<int>()), "--replications",
                             std::to_string(meta["replications"].get<int>())});
  const CliResult rerun = run_cli(again);
  REQUIRE(rerun.status == 0);
  CHECK(rerun.out == read_file(d.path("r.csv")));
}

TEST_CASE("plan: runs that measured nothing are reported with exit status 3") {
  Scratch d;
  const CliResult r = run_cli({"plan", d.scenario, "--set", "stop={\"jobs\": 20}", "--set", "warmup_ms=1000000",
                               "--vary", "consumers.0.count=1:2:1", "--target", "fraction.expired_in_queue<=0.5",
                               "--replications", "2", "--threads", "1"});
  CHECK(r.status == 3);
  CHECK(r.err.find("run(s) measured nothing: they ended before warmup_ms, or no job was created after warmup_ms\n") !=
        std::string::npos);
  // Nothing measured is not "0% expired": no setting is accepted on it.
  CHECK(r.out.find("no setting in the grid meets the target") != std::string::npos);
}
