// brokersim fit --into: a log fitted into the user's own scenario (imported or written), replacing
// only what the log tells and keeping the broker, its queues and the framework settings; ambiguity
// refused with exit status 2, and the scenario file written over only when --out names it.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"

// A named namespace: the test files are compiled several to a unit.
namespace fit_into_test {

using namespace brokersim;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using ojson = nlohmann::ordered_json;

const std::string kIntoSource = BROKERSIM_SOURCE_DIR;
const std::string kArm = kIntoSource + "/experiments/scenarios/import-servicebus-arm-template.json";

// 200 messages over 100 s on two workers, one at a time each; every 50th message's first attempt
// fails (retried once, or, with `final_failures`, not retried: the message ends failed).
std::string into_log(bool final_failures, const std::string& queue_column = "") {
  std::string text = std::string("message_id,enqueued_at,started_at,finished_at,worker,status") +
                     (queue_column.empty() ? "" : ",queue") + "\n";
  const auto row = [&](int id, double e, double s, double f, int w, const char* status, const std::string& queue) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "m%d,%.3f,%.3f,%.3f,w%d,%s", id, e, s, f, w, status);
    text += buf + (queue.empty() ? std::string() : "," + queue) + "\n";
  };
  for (int i = 0; i < 200; ++i) {
    const double e = i * 0.5, s = e + 0.01, d = 0.05 + 0.01 * (i % 7);
    const std::string queue = queue_column.empty() ? "" : (i % 2 ? "reports" : queue_column);
    const bool fails = i % 50 == 7;
    row(i, e, s, s + d, i % 2, fails ? "error" : "success", queue);
    if (fails && !final_failures) row(i, e + 0.2, e + 0.21, e + 0.3, i % 2, "success", queue);
  }
  return text;
}

ojson into_read(const std::string& path) { return ojson::parse(read_file(path)); }

bool into_has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace fit_into_test

using namespace fit_into_test;

TEST_SUITE("fit") {
  TEST_CASE("fit --into an imported Service Bus scenario replaces the producer and the fleet, keeps the broker") {
    ScratchDir dir("fit-into-arm");
    const std::string log = dir.write("jobs.csv", into_log(false));
    const auto r = run_cli({"fit", log, "--columns", "worker=worker", "--into", kArm, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    const ojson before = into_read(kArm), after = into_read(dir.path("fitted.json"));
    // The broker, its three queues and the scenario's own keys are the file's, key for key.
    CHECK(after["broker"] == before["broker"]);
    CHECK(after["name"] == before["name"]);
    CHECK(after["seed"] == before["seed"]);
    // The producer: fitted arrivals (200 messages in 99.5 s, not 204 rows) and service law; the
    // rest of it (deadline_ms null) kept.
    const ojson& p = after["producers"][0];
    CHECK(after["producers"].size() == 1);
    CHECK(p["queue"] == "orders");
    CHECK(p["deadline_ms"].is_null());
    CHECK(p["arrivals"]["rate_schedule"][0]["rate_per_s"].get<double>() == doctest::Approx(200 / 99.5).epsilon(1e-5));
    CHECK(p["fitted"]["arrivals"] == 200);
    CHECK(p["fitted"]["service_times"] == 200);
    CHECK(p["service_ms"] != before["producers"][0]["service_ms"]);
    // The fleet the log names: two workers, one at a time; the prefetch is the scenario's.
    const ojson& g = after["consumers"][0];
    CHECK(g["count"] == 2);
    CHECK(g["slots"] == 1);
    CHECK(g["prefetch"] == before["consumers"][0]["prefetch"]);
    // Service Bus abandons a failed message (peek-lock): the chance is per attempt, 4 of 204.
    CHECK(g["failure_probability"].get<double>() == doctest::Approx(4.0 / 204).epsilon(1e-5));
    CHECK(after["stop"]["time_ms"].get<double>() == doctest::Approx(99500));
    // The scenario's notes first, then what fit did.
    for (std::size_t i = 0; i < before["notes"].size(); ++i) CHECK(after["notes"][i] == before["notes"][i]);
    CHECK(into_has(r.out, "  --into " + kArm + ":\n"
                          "    the log's jobs go to queue \"orders\", the queue its producers publish to (its other queues are kept "
                          "as they are; --into-queue names another)\n"
                          "    producers.0: arrivals and service_ms fitted from the log; its other keys kept\n"
                          "    consumers.0: count 2 -> 2 (the log's workers), slots 1 -> 1 (the most one worker ran at once)\n"));
    CHECK(into_has(r.out, "the chance that an attempt fails (the scenario's broker offers a failed message again)"));
    CHECK(into_has(r.out, "\nQueue \"orders\": 204 jobs\n"));
    CHECK(into_has(r.out, "Wrote " + dir.path("fitted.json") + " (--into " + kArm + " with the log's fit) (loads and runs: checked)"));
  }

  TEST_CASE("fit --into keeps a framework's slots and settings, and says when the framework refuses the failures") {
    ScratchDir dir("fit-into-framework");
    const std::string functions = kIntoSource + "/experiments/scenarios/functions-servicebus.json";
    const std::string log = dir.write("jobs.csv", into_log(false));
    const auto r = run_cli({"fit", log, "--columns", "worker=worker", "--into", functions, "--out", dir.path("fitted.json")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    const ojson before = into_read(functions), after = into_read(dir.path("fitted.json"));
    CHECK(after["consumers"][0]["framework"] == before["consumers"][0]["framework"]);
    CHECK(after["consumers"][0]["count"] == 2);
    CHECK_FALSE(after["consumers"][0].contains("slots"));
    CHECK(after["producers"][0]["deadline_ms"] == 900000);
    CHECK(before["warmup_ms"] == 300000);
    CHECK(after["warmup_ms"] == 0);  // as long as the log's 99.5 s: nothing would be measured
    CHECK(into_has(r.out, "    warmup_ms 300000 -> 0: as long as the fitted span, it would leave nothing measured\n"));
    CHECK(into_has(r.out, "    consumers.0: count 4 -> 2 (the log's workers), slots 16 kept (its framework's settings give them; "
                          "the log's workers ran up to 1 at once)\n"));
    // Spring's defaultRequeueRejected (true by default) cannot be honoured with failures: the
    // scenario is written without them, and the report says why.
    const std::string spring = kIntoSource + "/experiments/scenarios/spring-amqp-rabbitmq.json";
    const std::string failing = dir.write("failing.csv", into_log(true));
    const auto s = run_cli({"fit", failing, "--columns", "worker=worker", "--into", spring, "--out", dir.path("spring.json")});
    INFO(s.out << s.err);
    REQUIRE(s.status == 0);
    CHECK_FALSE(into_read(dir.path("spring.json"))["consumers"][0].contains("failure_probability"));
    CHECK(into_has(s.out, "  In the written scenario, no failure_probability: consumers.0.failure_probability is refused "
                          "(consumers.0.framework.defaultRequeueRejected: true (a failed message requeued and redelivered) cannot "
                          "be honoured with failure_probability > 0: give false"));
  }

  TEST_CASE("fit --into refuses a log it cannot place with exit status 2, and --into-queue places it") {
    ScratchDir dir("fit-into-ambiguous");
    const std::string two = kIntoSource + "/experiments/scenarios/celery-two-queues.json";
    const std::string log = dir.write("jobs.csv", into_log(false));
    const auto r = run_cli({"fit", log, "--into", two});
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: --into: " + two + ": expected one queue the log's jobs go to (name it with --into-queue "
                   "NAME), got its producers publish to 2 queues: \"emails\", \"reports\"\n");
    const auto named = run_cli({"fit", log, "--into", two, "--into-queue", "emails", "--out", dir.path("fitted.json")});
    INFO(named.out << named.err);
    REQUIRE(named.status == 0);
    const ojson before = into_read(two), after = into_read(dir.path("fitted.json"));
    CHECK(after["producers"][1] == before["producers"][1]);  // reports: untouched
    CHECK(after["producers"][0]["queue"] == "emails");
    // No worker column: the fleet is the scenario's; its group also reads "reports", which the log
    // does not cover, so no failure_probability either.
    CHECK(after["consumers"] == before["consumers"]);
    CHECK(into_has(named.out, "  In the written scenario, no failure_probability: consumers.0 also reads \"reports\", which the log "
                              "does not cover\n"));
    CHECK(run_cli({"fit", log, "--into", two, "--into-queue", "sms"}).err ==
          "brokersim: error: --into-queue: expected a queue of " + two + ": \"emails\", \"reports\", got \"sms\"\n");
    CHECK(run_cli({"fit", log, "--into-queue", "emails"}).err == "brokersim: error: --into-queue: expected --into beside it, got no --into\n");
    // Checked before the log is read: a missing log is not what is said first.
    CHECK(run_cli({"fit", dir.path("missing.csv"), "--into", two, "--into-queue", "sms"}).err ==
          "brokersim: error: --into-queue: expected a queue of " + two + ": \"emails\", \"reports\", got \"sms\"\n");
    // A log of two queues: each onto the queue of its name; with a worker column, the one group
    // reading both cannot take both fleets.
    const std::string queues = dir.write("queues.csv", into_log(false, "emails"));
    const auto by_name = run_cli({"fit", queues, "--columns", "queue=queue", "--into", two});
    INFO(by_name.out << by_name.err);
    CHECK(by_name.status == 0);
    CHECK(into_has(by_name.out, "the log's queue \"emails\" goes to the scenario's queue of its name"));
    CHECK(into_has(by_name.out, "  In the written scenario, no failure_probability: consumers.0 reads several of the log's queues, "
                                "whose failures it would share\n"));
    const auto shared = run_cli({"fit", queues, "--columns", "queue=queue,worker=worker", "--into", two});
    CHECK(shared.status == 2);
    CHECK(into_has(shared.err, "expected a consumer group per log queue (the log's workers of each queue are a fleet of their own), got "
                               "consumers.0 reads queues \"emails\", \"reports\"\n"));
    CHECK(run_cli({"fit", queues, "--columns", "queue=queue", "--into", kArm}).err ==
          "brokersim: error: --into: " + kArm + ": expected a queue named as the log's \"emails\" (the log has several queues: each maps "
          "onto the scenario's queue of its name), got the queues \"invoices\", \"orders\", \"orders-dlq\"\n");
    // Two producers on the queue, or (with workers) two groups: the log is all of them.
    ojson doubled = into_read(kArm);
    doubled["producers"].push_back(doubled["producers"][0]);
    const std::string d = dir.write("doubled.json", doubled.dump());
    CHECK(run_cli({"fit", log, "--into", d}).err ==
          "brokersim: error: --into: " + d + ": expected at most one producer publishing to queue \"orders\" (the log's arrivals are all "
          "of its messages: keep one producer there), got producers.0 and producers.1\n");
    ojson groups = into_read(kArm);
    groups["consumers"].push_back(groups["consumers"][0]);
    const std::string g = dir.write("groups.json", groups.dump());
    CHECK(run_cli({"fit", log, "--columns", "worker=worker", "--into", g}).err ==
          "brokersim: error: --into: " + g + ": expected one consumer group reading queue \"orders\" (the log's workers are one fleet: "
          "keep one group there), got consumers.0 and consumers.1\n");
    CHECK(run_cli({"fit", log, "--into", g}).status == 0);  // no workers: both groups kept
    // A scenario that does not load is named as --into's.
    const std::string broken = dir.write("broken.json", R"({"broker": {"queues": {}}})");
    const auto b = run_cli({"fit", log, "--into", broken});
    CHECK(b.status == 2);
    CHECK(into_has(b.err, "brokersim: error: --into: " + broken + ": "));
  }

  TEST_CASE("fit --into writes over the scenario only when --out names it") {
    ScratchDir dir("fit-into-files");
    const std::string log = dir.write("jobs.csv", into_log(false));
    const std::string mine = dir.write("mine.json", read_file(kArm));
    // Without --out nothing is written, the scenario least of all.
    REQUIRE(run_cli({"fit", log, "--into", mine}).status == 0);
    CHECK(read_file(mine) == read_file(kArm));
    // A side file of --out may not be it.
    const std::string side = dir.write("mine.plot.json", read_file(kArm));
    const auto r = run_cli({"fit", log, "--into", side, "--out", dir.path("mine.json")});
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: --out's plot data: expected a file that no other input or output of the command uses, got \"" +
                       side + "\", which is also --into's scenario\n");
    CHECK(read_file(side) == read_file(kArm));
    // Named as --out, it is replaced (atomically), by the scenario with the log's fit.
    const auto over = run_cli({"fit", log, "--into", mine, "--out", mine});
    INFO(over.out << over.err);
    REQUIRE(over.status == 0);
    const ojson after = into_read(mine);
    CHECK(after["producers"][0]["fitted"]["arrivals"] == 200);
    CHECK(after["broker"] == into_read(kArm)["broker"]);
  }
}
