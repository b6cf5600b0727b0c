// Issue 43, item 8: every setting a framework page (docs/framework-NAME.md) names in its "Not
// modelled" section is accepted by that framework's entry, mapped or shown as not modelled, never an
// "unknown key": a real configuration (a celeryconfig with task_soft_time_limit) pastes in.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "experiments/cli/loader/frameworks.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;

// The backticked names in the page's "## Not modelled" section.
std::vector<std::string> not_modelled_names(const std::string& page) {
  const std::string text = read_file(std::string(BROKERSIM_SOURCE_DIR) + "/docs/" + page);
  const auto start = text.find("## Not modelled");
  REQUIRE(start != std::string::npos);
  const auto end = text.find("\n## ", start + 1);
  const std::string section = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::vector<std::string> out;
  static const std::regex name("`([A-Za-z_][A-Za-z0-9_.]*)`");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), name); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

bool accepted(const brokersim::loader::Framework& f, const std::string& token) {
  const auto matches = [&](std::string_view s) {
    return s == token || (s.size() > token.size() && s.substr(s.size() - token.size()) == token &&
                          s[s.size() - token.size() - 1] == '.');
  };
  for (std::string_view s : f.settings)
    if (matches(s)) return true;
  for (std::string_view s : f.producer.settings)
    if (matches(s)) return true;
  for (const auto& [s, why] : f.not_modelled)
    if (matches(s)) return true;
  return false;
}

}  // namespace

TEST_CASE("framework pages: every setting a page names as not modelled is accepted by its framework") {
  using namespace brokersim::loader;
  // What the pages name that is not a setting of the framework: brokersim's own keys and metrics,
  // class and exception names, queue names, and settings of other versions the page says are refused.
  const std::set<std::string> not_settings{
      "count", "slots", "prefetch", "ack", "autoscale", "failed", "failure_probability", "exec_timeout", "ready",
      "duplicate_executions", "visibility_timeout_ms", "broker.consumer_timeout_ms", "run", "error", "_error", "masstransit",
      "autoretry_for",                                                  // a task decorator's argument, not configuration
      "ConditionalRejectingErrorHandler", "RejectAndDontRequeueRecoverer", "DirectMessageListenerContainer",
      "MessageDeserializedException", "PrefetchCountCalculation",        // a function: cannot be written in JSON
      "sessionHandlerOptions.maxConcurrentSessions",                     // extension 2.x-4.x: refused, as the page says
      "kill_process", "eta", "hold", "publish_delay_ms", "rejected_at_publish", "SoftTimeLimitExceeded"};
  const std::vector<std::pair<const Framework*, std::string>> pages{
      {&celery(), "framework-celery.md"},           {&masstransit(), "framework-masstransit.md"},
      {&nservicebus(), "framework-nservicebus.md"}, {&spring_amqp(), "framework-spring-amqp.md"},
      {&azure_functions(), "framework-azure-functions.md"}, {&aws_lambda(), "framework-aws-lambda.md"}};
  std::size_t checked = 0;
  // Not a structured binding: clang 14 cannot capture one in a check's lambda (the checked build).
  for (const auto& entry : pages) {
    const Framework* framework = entry.first;
    const std::string& page = entry.second;
    CAPTURE(page);
    for (const auto& token : not_modelled_names(page)) {
      if (not_settings.count(token)) continue;
      CAPTURE(token);
      CHECK(accepted(*framework, token));
      ++checked;
    }
  }
  CHECK(checked >= 25);
}

TEST_CASE("framework pages: a celeryconfig with worker_eta_task_limit runs and shows it as not modelled") {
  const std::string file = std::string(BROKERSIM_SOURCE_DIR) + "/experiments/scenarios/celery-early-acks.json";
  const auto r = run_cli({"run", file, "--set", "stop.time_ms=1000", "--set", "warmup_ms=0", "--set",
                          "consumers.0.framework.task_soft_time_limit=25", "--set",
                          "consumers.0.framework.worker_eta_task_limit=100"});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(r.out.find("task_soft_time_limit, task_catches_soft_time_limit = 25, false (default)") != std::string::npos);
  CHECK(r.out.find("-> exec_timeout = 25000: SoftTimeLimitExceeded, uncaught, fails the task at the soft limit") != std::string::npos);
  CHECK(r.out.find("worker_eta_task_limit = 100") != std::string::npos);
  CHECK(r.out.find("(no key): not modelled: a cap on the ETA tasks a worker holds") != std::string::npos);
  // A misspelling is still an unknown key with a suggestion.
  const auto typo = run_cli({"run", file, "--set", "consumers.0.framework.task_soft_time_limt=25"});
  CHECK(typo.status == 2);
  CHECK(typo.err.find("unknown key (did you mean \"task_soft_time_limit\"?)") != std::string::npos);
}
