// Second hostile round (issue 22), outputs: partial files created exclusively with short names,
// dangling symlinks kept, every byte of standard output checked, and no partial file left behind
// by a signal (SIGPIPE included). Each case runs the real binary, since the stdout checks and the
// signal handlers live in main().
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

namespace fs = std::filesystem;

namespace {

using brokersim::test::read_file;

constexpr const char* kScenario = R"({"name": "hostile", "seed": 5, "stop": {"time_ms": 2000},
  "broker": {"queues": {"work": {"message_ttl_ms": 600}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 10}}, "deadline_ms": 600,
                 "service_ms": {"exp": {"mean": 50}}}],
  "consumers": [{"queue": "work", "count": 2, "prefetch": 1}],
  "observe": {"every_ms": 500}})";

struct Scratch : brokersim::test::ScratchDir {
  std::string scenario;
  Scratch() : ScratchDir("brokersim-hostile"), scenario(write("s.json", kScenario)) {}
};

// Runs `sh -c COMMAND` and returns its exit status (128 + N when a signal N ended it).
int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  REQUIRE(status != -1);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

const std::string kBin = BROKERSIM_BINARY;

bool leftover_partial(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".part") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("hostile outputs: a closed standard output is an error, exit status 2, not a silent success") {
  Scratch s;
  CHECK(shell(kBin + " run " + s.scenario + " --json >&- 2>" + s.path("err.txt")) == 2);
  CHECK(read_file(s.path("err.txt")) == "brokersim: error: standard output: cannot write (Bad file descriptor)\n");
  // The text table, metrics and help go through the same check.
  CHECK(shell(kBin + " run " + s.scenario + " >&- 2>/dev/null") == 2);
  CHECK(shell(kBin + " metrics " + s.scenario + " >&- 2>/dev/null") == 2);
  CHECK(shell(kBin + " --help >&- 2>/dev/null") == 2);
  // Nothing else took descriptor 1: an output file opened during the run got its own number and
  // holds exactly its trace.
  CHECK(shell(kBin + " run " + s.scenario + " --trace " + s.path("jobs.csv") + " >&- 2>/dev/null") == 2);
  CHECK(read_file(s.path("jobs.csv")).rfind("job,producer,", 0) == 0);
  CHECK(read_file(s.path("jobs.csv")).find("Outcomes") == std::string::npos);
}

TEST_CASE("hostile outputs: a full disk on standard output is an error naming the stream and the reason") {
  if (!fs::exists("/dev/full")) return;  // Linux has it; elsewhere nothing to test
  Scratch s;
  CHECK(shell(kBin + " run " + s.scenario + " --json >/dev/full 2>" + s.path("err.txt")) == 2);
  CHECK(read_file(s.path("err.txt")) == "brokersim: error: standard output: cannot write (No space left on device)\n");
  CHECK(shell(kBin + " sweep " + s.scenario + " --vary consumers.0.count=1,2 --replications 1 >/dev/full 2>/dev/null") == 2);
}

TEST_CASE("hostile outputs: links planted at every name a partial file could take are never followed") {
  Scratch s;
  const std::string victim = s.write("victim.txt", "precious\n");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // The partial file's name holds this pid (exec keeps it) and a counter from 0.
    for (int n = 0; n < 4; ++n) {
      const std::string name = s.path(".brokersim." + std::to_string(::getpid()) + "." + std::to_string(n) + ".part");
      if (::symlink(victim.c_str(), name.c_str()) != 0) ::_exit(126);
    }
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execl(kBin.c_str(), kBin.c_str(), "run", s.scenario.c_str(), "--trace", s.path("jobs.csv").c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(read_file(victim) == "precious\n");
  CHECK(read_file(s.path("jobs.csv")).rfind("job,producer,", 0) == 0);
  struct stat st {};
  REQUIRE(::lstat(s.path("jobs.csv").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 0777) == (0666 & ~[] { const mode_t m = ::umask(0); ::umask(m); return m; }()));
}

TEST_CASE("hostile outputs: a dangling symlink given as an output stays a link - its target is created") {
  Scratch s;
  REQUIRE(::symlink("made.csv", s.path("out.csv").c_str()) == 0);
  CHECK(shell(kBin + " run " + s.scenario + " --trace " + s.path("out.csv") + " >/dev/null") == 0);
  CHECK(fs::is_symlink(s.path("out.csv")));
  CHECK(fs::read_symlink(s.path("out.csv")) == "made.csv");
  CHECK(read_file(s.path("made.csv")).rfind("job,producer,", 0) == 0);
  CHECK_FALSE(leftover_partial(s.dir));
}

TEST_CASE("hostile outputs: a valid 255-byte file name is written (the partial file's name is short)") {
  Scratch s;
  const std::string name = std::string(251, 'a') + ".csv";
  REQUIRE(name.size() == 255);
  CHECK(shell(kBin + " run " + s.scenario + " --trace " + s.path(name) + " >/dev/null") == 0);
  CHECK(read_file(s.path(name)).rfind("job,producer,", 0) == 0);
}

TEST_CASE("hostile outputs: a reader closing a FIFO early ends the run by SIGPIPE with no partial file left") {
  Scratch s;
  const std::string fifo = s.path("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // The reader takes one byte and closes; the run writes a long trace into the FIFO and a time
  // series into a regular file, which must not be left half-written.
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    if (fd < 0) return;
    char c;
    (void)::read(fd, &c, 1);
    ::close(fd);
  });
  const int status = shell(kBin + " run " + s.scenario + " --set stop.time_ms=3600000 --trace " + fifo +
                           " --timeseries " + s.path("ts.csv") + " >/dev/null 2>/dev/null");
  reader.join();
  CHECK(status == 128 + SIGPIPE);
  CHECK_FALSE(fs::exists(s.path("ts.csv")));
  CHECK_FALSE(leftover_partial(s.dir));
}

// Inputs that passed validation and then overflowed int64 nanoseconds or made the run's work
// unbounded (issue 22, items 5 and 8): refused at the edge naming the key, or run to a clean end.
TEST_CASE("hostile inputs: rates too small for int64 time and ticks too short are refused naming the key") {
  Scratch s;
  auto error = [&](const std::string& set) {
    const auto r = brokersim::test::run_cli({"run", s.scenario, "--set", set});
    CHECK(r.status == 2);
    return r.err;
  };
  CHECK(error("producers.0.arrivals={\"poisson\": {\"rate_per_s\": 1e-10}}") ==
        "brokersim: error: producers.0.arrivals.poisson.rate_per_s: expected a rate >= 1e-09 per second "
        "(a mean gap of at most 1e+12 ms), got 1e-10\n");
  CHECK(error("producers.0.arrivals={\"rate_schedule\": [{\"from_ms\": 0, \"rate_per_s\": 1e-300}]}") ==
        "brokersim: error: producers.0.arrivals.rate_schedule.0.rate_per_s: expected 0 or a rate >= 1e-09 per second "
        "(a mean gap of at most 1e+12 ms), got 1e-300\n");
  const std::string period = "expected a period of at least 1 (ms: a periodic tick runs for the whole run, so a shorter one makes its work unbounded)";
  CHECK(error("observe.every_ms=0.000001") == "brokersim: error: observe.every_ms: " + period + ", got 1e-06\n");
  CHECK(error("consumers.0.autoscale={\"target_per_replica\": 1, \"sync_ms\": 0.001}") ==
        "brokersim: error: consumers.0.autoscale.sync_ms: " + period + ", got 0.001\n");
}

TEST_CASE("hostile inputs: durations drawn beyond int64 time are capped - no event in the past, runs end cleanly") {
  Scratch s;
  // The smallest accepted rate, and latency / service means at the largest accepted duration:
  // draws of 1e13 ms and more (past int64 ns) happen, and are taken as 1e12 ms.
  for (const std::string& set :
       {std::string("producers.0.arrivals={\"poisson\": {\"rate_per_s\": 1e-9}}"),
        std::string("broker.delivery_latency_ms={\"exp\": {\"mean\": 1e12}}"),
        std::string("producers.0.service_ms={\"lognormal\": {\"mean\": 1e12, \"cv\": 4}}"),
        std::string("producers.0.arrivals={\"periodic\": {\"every_ms\": 1e12}}")}) {
    CAPTURE(set);
    const auto r = brokersim::test::run_cli({"run", s.scenario, "--set", set, "--set", "stop={\"jobs\": 30}", "--json"});
    CHECK(r.err.find("internal error") == std::string::npos);
    CHECK((r.status == 0 || r.status == 3));
    CHECK(nlohmann::json::parse(r.out)["run"]["simulated_ms"].get<double>() <= 1e12 * 5);
  }
}
