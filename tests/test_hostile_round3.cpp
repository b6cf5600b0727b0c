// Issue 38 (third hostile round), outside the import readers: a plan that would search for ever,
// outputs that block or are found unwritable after the work, a document that goes on after a NUL
// byte, an analytic model named for scenarios it does not describe, and cost errors that misname
// their cause. Each case failed (hung, crashed or misled) before.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "experiments/cli/plan/run_fraction.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

const std::string kRound3Scenarios = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/";

// Reads a FIFO to its end in a thread of its own (the reader a user would start beside brokersim).
struct Round3FifoReader {
  std::string text;
  std::thread thread;
  explicit Round3FifoReader(const std::string& path)
      : thread([this, path] {
          std::ifstream in(path, std::ios::binary);
          text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }) {}
  ~Round3FifoReader() {
    if (thread.joinable()) thread.join();
  }
};

}  // namespace

TEST_SUITE("hostile") {
  TEST_CASE("hostile plan: a percentage of runs no run count can show is refused before any run") {
    const auto r = run_cli({"plan", kRound3Scenarios + "mm10-prefetch1.json", "--vary", "consumers.0.count=8,10", "--target",
                            "fraction.expired_in_queue<=0.01 in 99.99999999999% of runs"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--target: expected a percentage of runs that at most 1000000 runs (brokersim's limit per setting) can "
                     "show at 95% confidence, got one that needs about 3e+13") != std::string::npos);
    CHECK(r.out.empty());
  }

  TEST_CASE("hostile plan: runs_needed is exact at the edge and closed-form far from it") {
    using brokersim::clopper_pearson_lower;
    using brokersim::runs_needed;
    for (const double p : {0.5, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.99999}) {
      const std::uint64_t n = runs_needed(p, 0.95);
      CHECK(clopper_pearson_lower(n, n, 0.95) >= p);
      CHECK(clopper_pearson_lower(n - 1, n - 1, 0.95) < p);
    }
    CHECK(runs_needed(0.95, 0.95) == 59);
    CHECK(runs_needed(0.999, 0.95) == 2995);
    CHECK(runs_needed(0.9999, 0.95) == 29956);
    // 1 - 1e-13: about 3e13 runs (ln 0.05 / 1e-13), answered without stepping through them.
    const std::uint64_t far = runs_needed(1 - 1e-13, 0.95);
    CHECK(far > 29'000'000'000'000ULL);
    CHECK(far < 31'000'000'000'000ULL);
    CHECK(runs_needed(std::nextafter(1.0, 0.0), 0.95) > 10'000'000'000'000'000ULL);  // about 2.7e16: answered at once
  }

  TEST_CASE("hostile outputs: a FIFO no process reads is refused after 5 s by import and run") {
    ScratchDir dir("brokersim-round3-fifo");
    const std::string fifo = dir.path("pipe");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const auto i = run_cli({"import", std::string(BROKERSIM_SOURCE_DIR) + "/experiments/import/examples/rabbitmq-definitions.json",
                            "--out", fifo});
    CHECK(i.status == 2);
    CHECK(i.err.find("expected a FIFO that a process is reading (brokersim waits 5 s for a reader), got one that no process "
                     "opened for reading") != std::string::npos);
    const auto r = run_cli({"run", kRound3Scenarios + "prefetch-boundary.json", "--trace", fifo});
    CHECK(r.status == 2);
    CHECK(r.err.find("expected a FIFO that a process is reading") != std::string::npos);
  }

  TEST_CASE("hostile outputs: a FIFO with a reader receives the whole output") {
    ScratchDir dir("brokersim-round3-fifo-read");
    const std::string fifo = dir.path("pipe");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string got;
    {
      Round3FifoReader reader(fifo);
      const auto r = run_cli({"import", std::string(BROKERSIM_SOURCE_DIR) + "/experiments/import/examples/rabbitmq-definitions.json",
                              "--out", fifo});
      CHECK_MESSAGE(r.status == 0, r.err);
      reader.thread.join();
      got = reader.text;
    }
    const auto doc = nlohmann::json::parse(got);
    CHECK(doc["broker"]["queues"].contains("orders"));
  }

  TEST_CASE("hostile outputs: two different names longer than NAME_MAX are not one file and fail before the run") {
    ScratchDir dir("brokersim-round3-long");
    const std::string a = dir.path(std::string(300, 'a')), b = dir.path(std::string(300, 'b'));
    const auto r = run_cli({"run", kRound3Scenarios + "prefetch-boundary.json", "--trace", a, "--timeseries", b, "--set",
                            "observe.every_ms=100"});
    CHECK(r.status != 0);
    CHECK(r.err.find("which is also") == std::string::npos);
    CHECK(r.err.find("cannot open for writing (File name too long)") != std::string::npos);
    CHECK(r.out.empty());  // refused before the run: no summary
    // The same long name twice is still one file.
    const auto same = run_cli({"run", kRound3Scenarios + "prefetch-boundary.json", "--trace", a, "--timeseries", a, "--set",
                               "observe.every_ms=100"});
    CHECK(same.status == 2);
    CHECK(same.err.find("which is also --trace") != std::string::npos);
  }

  TEST_CASE("hostile inputs: a valid document followed by a NUL byte is refused by every reader") {
    ScratchDir dir("brokersim-round3-nul");
    std::string text = read_file(kRound3Scenarios + "prefetch-boundary.json");
    const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
    text += std::string(1, '\0') + "garbage";
    const std::string file = dir.write("s.json", text);
    const std::string where = "s.json:" + std::to_string(lines + 1) + ":1: invalid JSON: a NUL byte";
    for (const std::string command : {"run", "metrics", "analytic", "import"}) {
      const auto r = run_cli({command, file});
      CHECK_MESSAGE(r.status == 2, command);
      CHECK_MESSAGE(r.err.find(where) != std::string::npos, command << ": " << r.err);
    }
  }

  TEST_CASE("hostile analytic: scenarios the exact models do not describe are refused with the assumption") {
    const std::string file = kRound3Scenarios + "mm10-prefetch1.json";
    REQUIRE(run_cli({"analytic", file}).status == 0);
    const std::vector<std::pair<std::string, std::string>> cases{
        {"consumers.0.ack=before-start", "consumers.0.ack is before-start"},
        {"consumers.0.ack=on-receipt", "consumers.0.ack is on-receipt"},
        {"consumers.0.stop_ms=100000", "consumers.0.stop_ms is set"},
        {"consumers.0.autoscale={\"target_per_replica\": 2}", "consumers.0.autoscale is set"}};
    for (const auto& c : cases) {  // not a structured binding: clang 14 cannot capture one in a check
      const std::string& set = c.first;
      const std::string& why = c.second;
      const auto r = run_cli({"analytic", file, "--set", set});
      CHECK_MESSAGE(r.status == 4, set);
      CHECK_MESSAGE(r.out.find(why) != std::string::npos, r.out);
      CHECK(r.out.find("(exact)") == std::string::npos);
    }
  }

  TEST_CASE("hostile import: queues of one name in every format are refused at the 65th") {
    using nlohmann::json;
    ScratchDir dir("brokersim-round3-queues");
    constexpr int n = 20'000;
    json az = json::array(), cf = {{"AWSTemplateFormatVersion", "2010-09-09"}, {"Resources", json::object()}},
         arm = {{"$schema", "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"},
                {"resources", json::array()}};
    for (int k = 0; k < n; ++k) {
      az.push_back({{"name", "same"}, {"lockDuration", "PT1M"}});
      cf["Resources"]["Q" + std::to_string(k)] = {{"Type", "AWS::SQS::Queue"}, {"Properties", {{"QueueName", "same"}}}};
      arm["resources"].push_back(
          {{"type", "Microsoft.ServiceBus/namespaces/queues"}, {"apiVersion", "2022-10-01-preview"}, {"name", "ns/same"}});
    }
    for (const auto& entry : std::vector<std::pair<std::string, json>>{{"az.json", az}, {"cf.json", cf}, {"arm.json", arm}}) {
      const std::string& name = entry.first;
      const json& doc = entry.second;
      const auto r = run_cli({"import", dir.write(name, doc.dump())});
      CHECK_MESSAGE(r.status == 2, name);
      CHECK_MESSAGE(r.err.find("queues: expected at most 64 queues (brokersim's limit), got \"a 65th, \\\"same\\\"\"") !=
                        std::string::npos,
                    name << ": " << r.err);
    }
  }

  TEST_CASE("hostile plan: --cost names its cause: a misspelt metric and an overflow") {
    const std::string file = kRound3Scenarios + "mm10-prefetch1.json";
    const auto typo = run_cli({"plan", file, "--vary", "consumers.0.count=8,10", "--target", "fraction.expired_in_queue<=0.5",
                               "--cost", "throughput_per_z"});
    CHECK(typo.status == 2);
    CHECK(typo.err.find("(did you mean \"throughput_per_s\"?)") != std::string::npos);
    const auto big = run_cli({"plan", file, "--vary", "consumers.0.count=8,10", "--target", "fraction.expired_in_queue<=0.5",
                              "--cost", "1e308*10"});
    CHECK(big.status == 2);
    CHECK(big.err.find("--cost: the cost is infinite (a division by zero, or a value past the largest number, 1.8e308) at "
                       "consumers.0.count=8") != std::string::npos);
  }
}
