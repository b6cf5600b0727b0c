// consumers[].ack before-start on amazon-sqs: the client deletes the message as a slot takes the
// job (Celery's default early ack on its SQS transport). Exact small runs for each way the
// delete can end: it frees the prefetch room, a crash after it loses the job, a visibility that
// lapsed before it still lets the latest receipt handle delete, a later receipt makes it delete
// nothing, an outage makes it fail.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/test_util.hpp"

using brokersim::Outcome;
using brokersim::test::run_scenario;

namespace {

// One consumer, one slot, 100 ms jobs; the delete (or any settlement) takes 10 ms to arrive.
constexpr const char* kJobs = R"({
  "stop": {"time_ms": 5000},
  "broker": {"kind": "amazon-sqs", "ack_latency_ms": 10, "queues": {"q": {"visibility_timeout_ms": 1000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0, 0]}, "service_ms": 100}],
  "consumers": [{"queue": "q", "prefetch": 1, "batch_size": 1}]
})";

}  // namespace

TEST_CASE("sqs before-start: the delete at the start frees the prefetch room, as the late delete does at the end") {
  auto late = run_scenario(kJobs);
  REQUIRE(late.trace.size() == 2);
  CHECK(late.trace[1].ms("received_ms") == 110);  // job 0's delete arrives at 100 + 10
  CHECK(late.trace[1].ms("ended_ms") == 210);
  auto early = run_scenario(kJobs, {"consumers.0.ack=before-start"});
  REQUIRE(early.trace.size() == 2);
  CHECK(early.trace[0].ms("ended_ms") == 100);
  CHECK(early.trace[1].ms("received_ms") == 10);  // job 0's delete, sent at 0, arrives at 10
  CHECK(early.trace[1].ms("started_ms") == 100);
  CHECK(early.trace[1].ms("ended_ms") == 200);
  CHECK(early.outcome(Outcome::CompletedOnTime) == 2);
  CHECK(early.result.duplicate_executions == 0);
}

TEST_CASE("sqs before-start: a crash after the delete loses the executing job, with late deletes it comes back") {
  const std::vector<std::string> one = {"producers.0.arrivals={\"at_ms\": [0]}",
                                        R"(faults=[{"at_ms": 50, "consumer": 0, "crash": true, "restart_after_ms": 100}])"};
  auto late = run_scenario(kJobs, one);
  REQUIRE(late.trace.size() == 1);
  // The message is in flight until its visibility lapses at 1000 ms; the restarted client runs it.
  CHECK(late.trace[0]["outcome"] == "completed_on_time");
  CHECK(late.trace[0].ms("started_ms") == 1000);
  CHECK(late.result.duplicate_executions == 1);

  auto with = [&](const std::vector<std::string>& extra) {  // later sets win
    std::vector<std::string> sets = one;
    sets.push_back("consumers.0.ack=before-start");
    sets.insert(sets.end(), extra.begin(), extra.end());
    return sets;
  };
  auto early = run_scenario(kJobs, with({}));
  REQUIRE(early.trace.size() == 1);
  CHECK(early.trace[0]["outcome"] == "lost");
  CHECK(early.outcome(Outcome::Lost) == 1);
  CHECK(early.result.duplicate_executions == 0);

  // The crash at 5 ms comes while the delete is on the wire: it arrives at 10 all the same.
  auto wire = run_scenario(kJobs, with({R"(faults=[{"at_ms": 5, "consumer": 0, "crash": true, "restart_after_ms": 100}])"}));
  REQUIRE(wire.trace.size() == 1);
  CHECK(wire.trace[0]["outcome"] == "lost");
  CHECK(wire.trace[0].ms("ended_ms") == 10);
}

TEST_CASE("sqs before-start: a visibility that lapsed before the delete arrived: the latest receipt handle still deletes") {
  // Visibility 50 ms, the delete arrives at 100: the message was visible again from 50, but nobody
  // received it (the only client's room is held), so the handle is the latest: it deletes, and the
  // client's run is the job's one execution.
  const std::vector<std::string> slow = {"producers.0.arrivals={\"at_ms\": [0]}", "producers.0.service_ms=150",
                                         "broker.ack_latency_ms=100", "consumers.0.ack=before-start",
                                         "consumers.0.visibility_timeout_ms=50"};
  auto alone = run_scenario(kJobs, slow);
  REQUIRE(alone.trace.size() == 1);
  CHECK(alone.trace[0]["outcome"] == "completed_on_time");
  CHECK(alone.trace[0].ms("ended_ms") == 150);
  CHECK(alone.trace[0].ms("executions") == 1);
  CHECK(alone.result.duplicate_executions == 0);

  // A second client (visibility 1000 ms) receives the visible message at 50: the first client's
  // delete at 100 deletes nothing, its run is a stale copy; the second's delete (50 + 100) deletes.
  auto two = run_scenario(kJobs, {"producers.0.arrivals={\"at_ms\": [0]}", "producers.0.service_ms=150",
                                  "broker.ack_latency_ms=100",
                                  R"(consumers=[{"queue": "q", "prefetch": 1, "ack": "before-start", "visibility_timeout_ms": 50},
                                                {"queue": "q", "prefetch": 1, "ack": "before-start", "start_ms": 1}])"});
  REQUIRE(two.trace.size() == 1);
  CHECK(two.trace[0]["outcome"] == "completed_on_time");
  CHECK(two.trace[0].ms("consumer") == 1);
  CHECK(two.trace[0].ms("started_ms") == 50);
  CHECK(two.trace[0].ms("ended_ms") == 200);
  CHECK(two.trace[0].ms("executions") == 2);
  CHECK(two.result.duplicate_executions == 1);
  CHECK(two.result.duplicates_by_cause[static_cast<std::size_t>(brokersim::DuplicateCause::Lapse)] == 1);
}

TEST_CASE("sqs before-start: a delete that fails in an outage is not sent again, the message comes back after its visibility") {
  // The broker is down from 5 to 30 ms: the delete (arriving at 10) fails, the job runs to 100
  // and the client sends nothing more; the visibility lapses at 1000 and the message runs again.
  auto run = run_scenario(kJobs, {"producers.0.arrivals={\"at_ms\": [0]}", "consumers.0.ack=before-start",
                                  R"(faults=[{"at_ms": 5, "broker_down_ms": 25}])"});
  REQUIRE(run.trace.size() == 1);
  CHECK(run.trace[0]["outcome"] == "completed_on_time");
  CHECK(run.trace[0].ms("started_ms") == 1000);
  CHECK(run.trace[0].ms("ended_ms") == 1100);
  CHECK(run.trace[0].ms("executions") == 2);
  CHECK(run.result.duplicate_executions == 1);
  CHECK(run.result.duplicates_by_cause[static_cast<std::size_t>(brokersim::DuplicateCause::Lapse)] == 1);
}
