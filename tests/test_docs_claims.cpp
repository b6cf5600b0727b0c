// What the documents claim, against what the program does (test_docs.cpp checks the other way:
// that everything the program has is documented).
//
// Exit statuses: every claim "exit status N" / "exits with status N" / "(exit N)" /
// "exit-status-N", every item of an "Exit status: 0 ...; 2 ..." list and every row of a table with
// an "exit status" column, in README.md, docs/*.md, experiments/*/README.md (but
// experiments/real-broker/README.md, whose statuses are its Python harness's, tested by its own
// suite) and each command's --help, outside code blocks. Each claim's sentence (list item, table
// row) is matched to a situation below by its words; the situation runs the commands on small
// scenarios and every status must be the documented one. A claim no situation covers fails, so a
// new claim needs a check here.
//
// JSON keys the documents name: test_docs_keys.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/docs_test_util.hpp"
#include "tests/test_util.hpp"

namespace {

using brokersim::test::lines_of;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;
using brokersim::test::docs::cells;
using brokersim::test::docs::kSmall;
using brokersim::test::docs::squeeze;

const std::string kSource = BROKERSIM_SOURCE_DIR;

struct Claim {
  std::string doc, context;
  int status;
};

// Sentences of a paragraph: split after ". " (not "e.g. ") before a capital, a backtick or a dash
// (an option).
std::vector<std::string> sentences(const std::string& para) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < para.size(); ++i) {
    cur += para[i];
    const bool abbreviation = cur.size() >= 4 && (cur.ends_with("e.g.") || cur.ends_with("i.e."));
    if (para[i] == '.' && !abbreviation && i + 2 < para.size() && para[i + 1] == ' ' &&
        (std::isupper(static_cast<unsigned char>(para[i + 2])) || para[i + 2] == '`' || para[i + 2] == '-')) {
      out.push_back(cur);
      cur.clear();
      ++i;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// "Exit status: 0 success; 2 invalid input (...), or ...": items split at ; or , outside
// parentheses, an item being what starts with its number.
void list_claims(const std::string& doc, const std::string& rest, std::vector<Claim>& out) {
  std::vector<std::string> pieces{""};
  int depth = 0;
  for (char c : rest) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth == 0 && (c == ';' || c == ',')) pieces.emplace_back();
    else pieces.back() += c;
  }
  static const std::regex item(R"(^\s*\*{0,2}(\d) )");
  for (const auto& p : pieces) {
    std::smatch m;
    if (std::regex_search(p, m, item)) out.push_back({doc, squeeze(p), std::stoi(m[1])});
    else if (!out.empty() && out.back().doc == doc) out.back().context += p;
  }
}

void sentence_claims(const std::string& doc, const std::string& s, std::vector<Claim>& out) {
  static const std::regex list(R"([Ee]xit status(?: of [^:]*)?: )");
  static const std::regex one(R"(\b[Ee]xit(?:s with status |[- ]status[- ]|s? )(\d)\b)");
  std::smatch m;
  if (std::regex_search(s, m, list)) return list_claims(doc, m.suffix(), out);
  for (std::sregex_iterator it(s.begin(), s.end(), one), end; it != end; ++it)
    out.push_back({doc, s, std::stoi((*it)[1])});
}

std::vector<Claim> exit_claims(const std::string& doc, const std::string& text) {
  std::vector<Claim> out;
  std::string para;
  int status_column = -1;
  bool code = false;
  const auto flush = [&] {
    for (const auto& s : sentences(squeeze(para))) sentence_claims(doc, s, out);
    para.clear();
  };
  for (const std::string& line : lines_of(text)) {
    const std::string t = squeeze(line);
    if (t.rfind("```", 0) == 0) {
      flush();
      code = !code;
      continue;
    }
    if (code) continue;
    if (t.rfind("|", 0) == 0) {  // a table row is a claim of its own
      flush();
      const auto c = cells(t);
      if (status_column < 0) {
        for (std::size_t i = 0; i < c.size(); ++i)
          if (c[i] == "exit status") status_column = static_cast<int>(i);
        if (status_column < 0) status_column = -2;  // a table without the column
      } else if (status_column >= 0 && static_cast<std::size_t>(status_column) < c.size() &&
                 std::regex_match(c[static_cast<std::size_t>(status_column)], std::regex(R"(\d)"))) {
        out.push_back({doc, t, std::stoi(c[static_cast<std::size_t>(status_column)])});
      } else {
        sentence_claims(doc, t, out);
      }
      continue;
    }
    status_column = -1;
    if (t.empty() || t.rfind("- ", 0) == 0 || t.rfind("#", 0) == 0) flush();
    para += " " + t;
  }
  flush();
  return out;
}

struct Situation {
  std::string name;
  std::regex words;
  std::function<std::vector<int>(const ScratchDir&)> statuses;
};

int status(const std::vector<std::string>& args) { return run_cli(args).status; }

std::vector<Situation> situations() {
  const auto small = [](const ScratchDir& d) { return d.path("small.json"); };
  return {
      // An InvariantError cannot be provoked by input: the documents must agree on cli_main's 1.
      {"internal error", std::regex("internal error", std::regex::icase), [](const ScratchDir&) { return std::vector<int>{1}; }},
      {"plan --stage-dir: a stage's tasks are outstanding", std::regex("exits with status 7|`brokersim plan --stage-dir`"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"plan", small(d), "--vary", "consumers.0.count=3,4", "--target", "throughput_per_s>0",
                                         "--stage-dir", d.path("stages-outstanding"), "--tasks", "2"})};
       }},
      {"plan --run-task: a task already done", std::regex("already done"),
       [&](const ScratchDir& d) {
         const std::vector<std::string> plan{"plan", small(d), "--vary", "consumers.0.count=3,4", "--target",
                                             "throughput_per_s>0", "--stage-dir", d.path("stages-done"), "--tasks", "1"};
         REQUIRE(status(plan) == 7);
         REQUIRE(status({"plan", "--run-task", d.path("stages-done"), "--task", "0/1"}) == 0);
         return std::vector<int>{status({"plan", "--run-task", d.path("stages-done"), "--task", "0/1"})};
       }},
      {"fit --check: the model does not match", std::regex("not match", std::regex::icase),
       [](const ScratchDir& d) {
         const std::string scenario = kSource + "/experiments/fit/examples/known-gamma.json";
         REQUIRE(status({"run", scenario, "--set", "stop.time_ms=300000", "--trace", d.path("jobs.csv")}) == 0);
         // The scenario says 5 consumers where the log's system had 4.
         nlohmann::json five = nlohmann::json::parse(read_file(scenario));
         five["consumers"][0]["count"] = 5;
         return std::vector<int>{status({"fit", d.path("jobs.csv"), "--columns",
                                         "enqueued=created_ms,started=started_ms,finished=finished_ms,worker=consumer",
                                         "--check", d.write("five.json", five.dump()), "--replications", "5"})};
       }},
      {"fit: a bad log", std::regex("bad log|Every problem stops"),
       [](const ScratchDir& d) {
         return std::vector<int>{status({"fit", d.write("bad.csv", "enqueued_at,started_at,finished_at\n1,2,3\n2,5,3\n")})};
       }},
      {"plan: a NaN cost", std::regex(R"(NaN \(`?0/0)"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"plan", small(d), "--vary", "consumers.0.count=3,4", "--target",
                                         "throughput_per_s>0", "--cost", "slots_total*0/0"})};
       }},
      {"sweep --resume: another sweep's journal", std::regex("journal"),
       [&](const ScratchDir& d) {
         std::ofstream(d.path("other.csv.journal")) << "brokersim-sweep-journal v1 0000000000000000\nP 0 1,2 x\n";
         return std::vector<int>{status({"sweep", small(d), "--vary", "consumers.0.count=3,4", "--out",
                                         d.path("other.csv"), "--resume"})};
       }},
      {"merge: a shard that differs from its metadata", std::regex("merge"),
       [&](const ScratchDir& d) {
         REQUIRE(status({"sweep", small(d), "--vary", "consumers.0.count=3,4", "--out", d.path("m.csv")}) == 0);
         std::ofstream(d.path("m.csv"), std::ios::app) << "9,1,2\n";
         return std::vector<int>{status({"merge", d.path("m.csv"), "--out", d.path("merged.csv")})};
       }},
      {"--replications beyond its limit", std::regex("--replications"),
       [&](const ScratchDir& d) {
         return std::vector<int>{
             status({"sweep", small(d), "--vary", "consumers.0.count=3,4", "--replications", "2000000"}),
             status({"plan", small(d), "--vary", "consumers.0.count=3,4", "--target", "throughput_per_s>0",
                     "--replications", "2000000"})};
       }},
      {"unit-mistake warnings", std::regex("warned about"),
       [&](const ScratchDir& d) {
         const auto r = run_cli({"run", small(d), "--set", "producers.0.deadline_ms=10"});
         return std::vector<int>{r.err.find("brokersim: warning: ") == 0 ? r.status : -1};
       }},
      {"plan: no setting meets the targets", std::regex("no setting|meets every target|closest setting"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"plan", small(d), "--vary", "consumers.0.count=1,2,3", "--target",
                                         "fraction.completed_on_time>=0.99", "--replications", "1"})};
       }},
      {"analytic: no model fits", std::regex("no (exact |closed-form )?model|assumption"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"analytic", small(d), "--set", R"(consumers.0.clock_offset_ms={"normal": {"mean": 0, "sd": 50}})"})};
       }},
      {"analytic: a model fits", std::regex("a model fits"),
       [](const ScratchDir&) { return std::vector<int>{status({"analytic", kSource + "/experiments/scenarios/mm10-prefetch1.json"})}; }},
      {"runs that end normally", std::regex(R"(^\| `(time|jobs|drained)`)"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"run", small(d), "--set", R"(stop={"time_ms": 500})"}), status({"run", small(d)}),
                                 status({"run", small(d), "--set", R"(producers.0.arrivals={"at_ms": [0, 5]})", "--set",
                                         R"(stop={"time_ms": 60000})"})};
       }},
      {"runs stopped by a limit or that measured nothing",
       std::regex("stopped early|max_in_system|max_events|zero_time_loop|time stopped moving|measured nothing"),
       [&](const ScratchDir& d) {
         return std::vector<int>{
             status({"run", small(d), "--set", "limits.max_events=100"}),
             status({"run", small(d), "--set", "limits.max_in_system=2", "--set", "consumers.0.count=1"}),
             status({"run", small(d), "--set", "warmup_ms=10000"}),  // 300 jobs end at 3 s: nothing measured
             status({"sweep", small(d), "--vary", "consumers.0.count=3,4", "--set", "limits.max_events=100"}),
             status({"plan", small(d), "--vary", "consumers.0.count=3,4", "--target", "throughput_per_s>0", "--set",
                     "limits.max_events=100"}),
             // A zero-time loop takes 50 million events; it ends the run the way the limits do.
             brokersim::stopped_by_limit(brokersim::StopReason::ZeroTimeLoop) ? 3 : 0};
       }},
      {"success", std::regex("^0 success"), [&](const ScratchDir& d) { return std::vector<int>{status({"run", small(d)})}; }},
      {"import: a bad or unrecognised file", std::regex("bad entry|unrecognised file|brokersim import"),
       [](const ScratchDir& d) {
         return std::vector<int>{
             status({"import", d.write("bad-sqs.json", R"({"Attributes": {"VisibilityTimeout": "abc"}})")}),
             status({"import", d.write("unknown.json", R"({"hello": 1})")}),
             status({"import", d.write("template.yaml", "AWSTemplateFormatVersion: '2010-09-09'\n")})};
       }},
      {"import: a policy pattern RE2 cannot match", std::regex("naming the policy and its `pattern`"),
       [](const ScratchDir& d) {
         return std::vector<int>{status(
             {"import", d.write("backref.json", R"({"queues": [{"name": "a", "vhost": "/"}], "policies": [{"name": "p", "vhost": "/", )"
                                                R"("pattern": "(a)\1", "definition": {"message-ttl": 1}}]})")})};
       }},
      {"framework: a setting brokersim cannot honour", std::regex("cannot honour"),
       [&](const ScratchDir& d) {
         return std::vector<int>{
             status({"run", small(d), "--set", R"(consumers.0={"queue": "work", "framework": {"name": "spring-amqp", "acknowledgeMode": "MANUAL"}})"}),
             status({"run", small(d), "--set", R"(consumers.0={"queue": "work", "framework": {"name": "celery", "worker_concurrency": 2, "task_acks_late": true, "task_acks_on_failure_or_timeout": false}})"})};
       }},
      {"producer framework: an option given beside the key it sets, or out of range", std::regex("producers\\.0\\.deadline_ms: set by"),
       [&](const ScratchDir& d) {
         return std::vector<int>{
             status({"run", small(d), "--set", R"(producers.0.framework={"name": "celery", "expires": 5})"}),
             status({"run", small(d), "--set", "producers.0.deadline_ms=null", "--set",
                     R"(producers.0.framework={"name": "celery", "expires": 0})"})};
       }},
      {"framework aws-lambda: a group's own visibility_timeout_ms or on_failure", std::regex("expected none with framework"),
       [&](const ScratchDir& d) {
         const std::string lambda = d.write("lambda-keys.json", R"({"stop": {"time_ms": 1000},
  "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 30000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
  "consumers": [{"queue": "q", "framework": {"name": "aws-lambda"}}]})");
         return std::vector<int>{status({"run", lambda, "--set", "consumers.0.visibility_timeout_ms=100"}),
                                 status({"run", lambda, "--set", "consumers.0.on_failure=\"delete\""})};
       }},
      {"global QoS on a quorum queue", std::regex("quorum queues refuse a consumer on a channel with global QoS|`channel` on a quorum queue"),
       [&](const ScratchDir& d) {
         const std::string quorum = d.write("global-qos.json", R"({"stop": {"time_ms": 1000},
  "broker": {"kind": "rabbitmq-quorum", "queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
  "consumers": [{"queue": "work"}]})");
         return std::vector<int>{
             status({"run", quorum, "--set", "consumers.0.prefetch_scope=\"channel\""}),
             status({"run", quorum, "--set", R"(consumers.0={"queue": "work", "framework": {"name": "spring-amqp", "globalQos": true}})"}),
             status({"run", quorum, "--set",
                     R"(consumers.0={"queue": "work", "framework": {"name": "celery", "worker_concurrency": 2, "worker_detect_quorum_queues": false}})"})};
       }},
      {"framework aws-lambda: a Timeout longer than the queue's visibility timeout", std::regex("framework\\.Timeout"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"run", d.write("lambda-timeout.json", R"({"stop": {"time_ms": 1000},
  "broker": {"kind": "amazon-sqs", "queues": {"q": {"visibility_timeout_ms": 30000}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
  "consumers": [{"queue": "q", "framework": {"name": "aws-lambda", "Timeout": 31}}]})")})};
       }},
      {"plan --cost: a billing figure the group's plan does not bill", std::regex("billing.gb_seconds` on a Premium group"),
       [](const ScratchDir& d) {
         return std::vector<int>{status({"plan", d.write("premium.json", R"({"stop": {"time_ms": 1000},
  "broker": {"kind": "azure-servicebus", "queues": {"q": {}}},
  "producers": [{"queue": "q", "arrivals": {"at_ms": [0]}, "service_ms": 10}],
  "consumers": [{"queue": "q", "framework": {"name": "azure-functions", "hosting_plan": "premium"}}]})"),
                                         "--vary", "consumers.0.count=1,2", "--target", "throughput_per_s>0", "--cost",
                                         "billing.gb_seconds"})};
       }},
      {"invalid input", std::regex("invalid|validated|what was expected|refused", std::regex::icase),
       [&](const ScratchDir& d) {
         return std::vector<int>{
             status({"run", small(d), "--set", "consumers.0.prefetch=-1"}),
             status({"sweep", small(d), "--vary", "consumers.0.prefetch=-1,1"}),
             status({"plan", small(d), "--vary", "consumers.0.prefetch=-1,1", "--target", "throughput_per_s>0"}),
             status({"analytic", small(d), "--set", "consumers.0.prefetch=-1"}),
             status({"run", small(d), "--set", "consumers.0.prefech=1"})};
       }},
      {"an output that cannot be written", std::regex("cannot write|unwritable|missing folder|cannot be written"),
       [&](const ScratchDir& d) {
         return std::vector<int>{status({"run", small(d), "--trace", d.path("no/such/folder/jobs.csv")}),
                                 status({"sweep", small(d), "--vary", "consumers.0.count=3,4", "--out", d.path("no/such/r.csv")})};
       }},
  };
}

std::vector<std::pair<std::string, std::string>> claim_documents() {
  std::vector<std::pair<std::string, std::string>> docs;
  namespace fs = std::filesystem;
  std::vector<fs::path> files{fs::path(kSource) / "README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(kSource) / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(kSource) / "experiments"))
    if (fs::exists(e.path() / "README.md") && e.path().filename() != "real-broker") files.push_back(e.path() / "README.md");
  std::sort(files.begin(), files.end());
  for (const auto& f : files) docs.emplace_back(fs::relative(f, kSource).string(), read_file(f.string()));
  for (const char* command : {"run", "sweep", "merge", "plan", "metrics", "analytic", "fit", "import"})
    docs.emplace_back(std::string(command) + " --help", run_cli({command, "--help"}).out);
  return docs;
}

}  // namespace

TEST_CASE("docs: every exit status the documents name is the one the program returns") {
  ScratchDir dir("docs-claims");
  dir.write("small.json", kSmall);
  const auto table = situations();
  std::map<std::string, std::vector<int>> ran;  // situation name -> statuses, run once
  std::set<std::string> used;
  std::size_t claims = 0;
  for (const auto& [doc_, text_] : claim_documents()) {
    const auto& doc = doc_;  // not the binding: clang 14 cannot capture one in a check's lambda
    const auto& text = text_;
    for (const Claim& c : exit_claims(doc, text)) {
      ++claims;
      CAPTURE(doc);
      CAPTURE(c.context);
      const auto it = std::find_if(table.begin(), table.end(),
                                   [&](const Situation& s) { return std::regex_search(c.context, s.words); });
      if (it == table.end()) {
        FAIL_CHECK("a claim of exit status " << c.status << " that no check here covers: add a situation");
        continue;
      }
      used.insert(it->name);
      if (!ran.count(it->name)) ran[it->name] = it->statuses(dir);
      for (int got : ran[it->name]) CHECK_MESSAGE(got == c.status, it->name << ": the documents say " << c.status << ", the program returns " << got);
    }
  }
  CHECK(claims >= 30);
  for (const auto& s : table) CHECK_MESSAGE(used.count(s.name), "no document claims an exit status for: " << s.name);
}
