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
// JSON keys: every key named in the first column of the key tables of docs/outcomes.md "##
// `run --json`", experiments/sweeps/README.md "### `plan --json`" and "### `results.csv.meta.json`"
// must be one the program emits (in some run of a few that between them emit every conditional
// key); for plan and the metadata, every plain `word` in the meaning of a key whose value is an
// object (or a list of objects) must be one of its keys.
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

#include "tests/test_util.hpp"

namespace {

using brokersim::test::lines_of;
using brokersim::test::read_file;
using brokersim::test::run_cli;
using brokersim::test::ScratchDir;

const std::string kSource = BROKERSIM_SOURCE_DIR;

// Periodic arrivals every 10 ms, 35 ms service: 3 consumers are overloaded, 4 keep up.
constexpr const char* kSmall = R"({"name": "claims", "seed": 1, "stop": {"jobs": 300},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"periodic": {"every_ms": 10}}, "deadline_ms": 300, "service_ms": 35}],
  "consumers": [{"queue": "work", "count": 4, "prefetch": 1}]})";

std::string squeeze(const std::string& s) {
  std::istringstream in(s);
  std::string word, out;
  while (in >> word) out += (out.empty() ? "" : " ") + word;
  return out;
}

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

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      out.push_back(squeeze(cell));
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return out;
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

namespace {

// The first-column names of the key table under `heading` (up to the next heading of its level or
// higher), each with the backticked words of its meaning. A name starting with "." replaces the
// last step of the name before it in the cell (`fleet.groups.G.consumer_seconds`, `.slot_seconds`).
std::vector<std::pair<std::string, std::vector<std::string>>> key_table(const std::string& file, const std::string& heading) {
  const auto lines = lines_of(read_file(kSource + "/" + file));
  const auto start = std::find(lines.begin(), lines.end(), heading);
  REQUIRE_MESSAGE(start != lines.end(), file << " has no heading " << heading);
  const std::string level = heading.substr(0, heading.find(' ') + 1);
  static const std::regex code("`([^`]+)`");
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  bool key_table = false;  // in a table whose first column is headed "key"
  for (auto it = start + 1; it != lines.end(); ++it) {
    if (it->rfind("#", 0) == 0 && it->find(' ') <= level.size() - 1) break;
    if (it->rfind("|", 0) != 0) {
      key_table = false;
      continue;
    }
    const auto c = cells(*it);
    if (c.size() < 2 || c[0].rfind("---", 0) == 0) continue;
    if (c[0] == "key") key_table = true;
    if (c[0] == "key" || !key_table) continue;
    std::vector<std::string> meaning;
    for (std::sregex_iterator m(c[1].begin(), c[1].end(), code), end; m != end; ++m) meaning.push_back((*m)[1]);
    // The names are what comes before a parenthesis ("(*ext.*, only with `observe.window_ms`)").
    const std::string names = c[0].substr(0, c[0].find(" ("));
    std::string last;
    for (std::sregex_iterator m(names.begin(), names.end(), code), end; m != end; ++m) {
      std::string name = (*m)[1];
      if (name.rfind(".", 0) == 0 && !last.empty()) name = last.substr(0, last.rfind('.')) + name;
      out.emplace_back(name, meaning);
      last = name;
    }
  }
  REQUIRE_MESSAGE(out.size() >= 10, file << " " << heading << ": too few keys parsed");
  return out;
}

// Every node of a JSON value by its dotted path (lists are not entered; `tried[].x` is handled
// by the caller).
void paths_of(const nlohmann::json& v, const std::string& path, std::map<std::string, const nlohmann::json*>& out) {
  if (!path.empty()) out[path] = &v;
  if (!v.is_object()) return;
  for (auto it = v.begin(); it != v.end(); ++it) paths_of(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
}

// A documented name as a pattern: NAME a queue, STAGE a wait, OUTCOME an outcome, G a group, N a
// number (receives.by_size.N);
// "window_min...." the names under window_min.
std::regex name_pattern(std::string name) {
  bool prefix = false;
  while (name.size() > 1 && name.back() == '.') {
    name.pop_back();
    prefix = true;
  }
  std::string re;
  std::istringstream steps(name);
  std::string step;
  while (std::getline(steps, step, '.')) {
    if (!re.empty()) re += R"(\.)";
    if (step == "NAME" || step == "STAGE" || step == "OUTCOME" || step == "G" || step == "N") re += R"([^.]+)";
    else re += std::regex_replace(step, std::regex(R"([\[\]().*+?^$|])"), R"(\$&)");
  }
  return std::regex("^" + re + (prefix ? R"((\..+)?$)" : "$"));
}

// The keys of an object, or of the objects in a list.
std::set<std::string> keys_of(const nlohmann::json& v) {
  std::set<std::string> out;
  if (v.is_object())
    for (auto it = v.begin(); it != v.end(); ++it) out.insert(it.key());
  if (v.is_array())
    for (const auto& e : v)
      if (e.is_object())
        for (auto it = e.begin(); it != e.end(); ++it) out.insert(it.key());
  return out;
}

// Checks a key table against outputs: every name is emitted by one of them, and for an object
// (or list of objects) value every plain backticked word of its meaning is one of its keys.
void check_table(const std::vector<std::pair<std::string, std::vector<std::string>>>& table,
                 const std::vector<nlohmann::json>& outputs, bool check_meaning) {
  static const std::regex plain("^[a-z][a-z0-9_]*$");
  for (const auto& [name_, meaning_] : table) {
    const auto& name = name_;  // not the binding: clang 14 cannot capture one in a check's lambda
    const auto& meaning = meaning_;
    CAPTURE(name);
    // `tried[].x`: the key x of some element of tried.
    const auto list = name.find("[].");
    const std::regex pattern = name_pattern(list == std::string::npos ? name : name.substr(list + 3));
    std::vector<nlohmann::json> values;
    for (const auto& o : outputs) {
      std::vector<nlohmann::json> scopes{o};
      if (list != std::string::npos) {
        scopes.clear();
        if (o.contains(name.substr(0, list)))
          for (const auto& e : o[name.substr(0, list)]) scopes.push_back(e);
      }
      for (const auto& scope : scopes) {
        std::map<std::string, const nlohmann::json*> paths;
        paths_of(scope, "", paths);
        for (const auto& [p, value] : paths)
          if (std::regex_match(p, pattern)) values.push_back(*value);
      }
    }
    CHECK_MESSAGE(!values.empty(), "the documents name `" << name << "` but no output has it");
    if (!check_meaning) continue;
    std::set<std::string> sub;
    for (const auto& v : values)
      for (const auto& k : keys_of(v)) sub.insert(k);
    if (sub.empty()) continue;  // a plain value: its meaning names other things
    for (const auto& word : meaning)
      if (std::regex_match(word, plain))
        CHECK_MESSAGE(sub.count(word), "the documents say `" << name << "` has `" << word << "`, the program does not emit it");
  }
}

nlohmann::json json_of(const std::vector<std::string>& args, int expected = 0) {
  const auto r = run_cli(args);
  INFO(r.err);
  REQUIRE(r.status == expected);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("docs: every key docs/outcomes.md names for run --json is one the program emits") {
  const std::string baseline = kSource + "/experiments/scenarios/capacity-baseline.json";
  const std::vector<std::string> quick{"--json", "--set", "stop.time_ms=20000", "--set", "warmup_ms=1000"};
  std::vector<nlohmann::json> outputs;
  const auto run = [&](const std::string& scenario, std::vector<std::string> sets) {
    std::vector<std::string> args{"run", scenario};
    args.insert(args.end(), quick.begin(), quick.end());
    for (const auto& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    outputs.push_back(json_of(args));
  };
  // Windows, a group that leaves (fleet), an autoscaled one (offered_load mean_slots), warmup "auto".
  run(baseline, {"observe.window_ms=5000", "consumers.0.stop_ms=15000"});
  run(baseline, {R"(consumers.0.autoscale={"target_per_replica": 5, "max": 6})"});
  run(baseline, {R"(warmup_ms="auto")"});
  // Each broker kind's dead-letter reasons.
  ScratchDir dir("docs-claims");
  for (const char* kind : {"rabbitmq-quorum", "azure-servicebus", "amazon-sqs"}) {
    nlohmann::json doc = nlohmann::json::parse(kSmall);
    doc["broker"]["kind"] = kind;
    run(dir.write(std::string(kind) + ".json", doc.dump()), {});
  }
  check_table(key_table("docs/outcomes.md", "## `run --json`"), outputs, false);
}

TEST_CASE("docs: every key experiments/sweeps/README.md names for plan --json is one the program emits") {
  ScratchDir dir("docs-claims");
  const std::string small = dir.write("small.json", kSmall);
  nlohmann::json scaled = nlohmann::json::parse(kSmall);
  scaled["consumers"][0]["autoscale"] = {{"target_per_replica", 5}, {"min", 1}, {"max", 4}};
  const std::string autoscaled = dir.write("scaled.json", scaled.dump());
  const std::vector<nlohmann::json> outputs{
      // One replication: a caveat; an autoscaled fleet: slots_min / slots_max.
      json_of({"plan", autoscaled, "--vary", "consumers.0.autoscale.max=4,5", "--target", "throughput_per_s>0",
               "--replications", "1", "--json"}),
      // Nothing meets the target: closest and reason (exit 5).
      json_of({"plan", small, "--vary", "consumers.0.count=1,2", "--target", "fraction.completed_on_time>=0.99",
               "--replications", "1", "--json"}, 5),
      json_of({"plan", small, "--vary", "consumers.0.count=3,4", "--target", "fraction.completed_on_time>=0.99",
               "--precision", "0.5", "--max-replications", "4", "--json"})};
  check_table(key_table("experiments/sweeps/README.md", "### `plan --json`"), outputs, true);
}

TEST_CASE("docs: every key experiments/sweeps/README.md names for the sweep metadata is one sweep writes") {
  ScratchDir dir("docs-claims");
  const std::string small = dir.write("small.json", kSmall);
  REQUIRE(status({"sweep", small, "--vary", "consumers.0.count=3,4", "--set", "seed=2", "--out", dir.path("a.csv")}) == 0);
  REQUIRE(status({"sweep", small, "--vary", "consumers.0.count=3,4", "--precision", "0.5", "--max-replications", "4",
                  "--out", dir.path("b.csv")}) == 0);
  const std::vector<nlohmann::json> outputs{nlohmann::json::parse(read_file(dir.path("a.csv.meta.json"))),
                                            nlohmann::json::parse(read_file(dir.path("b.csv.meta.json")))};
  check_table(key_table("experiments/sweeps/README.md", "### `results.csv.meta.json`"), outputs, true);
}
