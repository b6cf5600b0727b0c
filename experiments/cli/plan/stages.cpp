// plan's stages as task files (experiments/cli/plan/stages.hpp).
#include "experiments/cli/plan/stages.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/output_file.hpp"
#include "experiments/cli/plan/headroom.hpp"
#include "experiments/cli/replication/journal.hpp"
#include "experiments/cli/text.hpp"
#include "models/results.hpp"
#include "models/scenario.hpp"

namespace fs = std::filesystem;

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;
using RunKey = std::array<std::uint64_t, 3>;  // grid point, headroom look, replication

constexpr const char* kPlanFormat = "brokersim plan stages 1";
constexpr const char* kStageFormat = "brokersim plan stage 1";
constexpr const char* kResultFormat = "brokersim plan task result 1";

std::string plan_file(const std::string& dir) { return (fs::path(dir) / "plan.json").string(); }
std::string stage_file(const std::string& dir, std::uint64_t s) {
  return (fs::path(dir) / ("stage-" + std::to_string(s) + ".json")).string();
}
std::string result_file(const std::string& dir, std::uint64_t s, std::uint64_t k, std::uint64_t n) {
  return (fs::path(dir) / ("stage-" + std::to_string(s) + ".task-" + std::to_string(k) + "-of-" + std::to_string(n) +
                           ".json")).string();
}

// A double as the 16 hex digits of its bits: every value (NaN's sign, -0) comes back as it was.
std::string bits_hex(double v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
  return buf;
}

bool is_hex16(const std::string& s) {
  return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// What a message shows of a wrong value: its JSON, cut short.
std::string shown(const ojson& v) {
  std::string s = v.dump(-1, ' ', false, ojson::error_handler_t::replace);
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

const ojson kNothing;

// Reads one of the folder's files and checks it key by key; every complaint names the file and
// the key, ScenarioError (exit 2). `hint` follows each message (what to do about it).
struct FileReader {
  std::string name, hint;
  [[noreturn]] void bad(const std::string& key, const std::string& expected, const ojson& got) const {
    throw ScenarioError(name + ": " + key + ": expected " + expected + ", got " +
                        (&got == &kNothing ? std::string("nothing") : shown(got)) + hint);
  }
  static const ojson& field(const ojson& doc, const std::string& key) {
    const auto it = doc.find(key);
    return it == doc.end() ? kNothing : *it;
  }
  std::uint64_t integer(const ojson& doc, const std::string& key, std::uint64_t min, std::uint64_t max) const {
    const ojson& v = field(doc, key);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < min || v.get<std::uint64_t>() > max)
      bad(key, "an integer from " + std::to_string(min) + " to " + std::to_string(max), v);
    return v.get<std::uint64_t>();
  }
  std::string text(const ojson& doc, const std::string& key) const {
    const ojson& v = field(doc, key);
    if (!v.is_string()) bad(key, "a string", v);
    return v.get<std::string>();
  }
  void equal(const ojson& doc, const std::string& key, const std::string& want, const std::string& what) const {
    const std::string got = text(doc, key);
    if (got != want) bad(key, "\"" + want + "\" (" + what + ")", field(doc, key));
  }
  void equal(const ojson& doc, const std::string& key, std::uint64_t want, const std::string& what) const {
    const ojson& v = field(doc, key);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() != want) bad(key, std::to_string(want) + " (" + what + ")", v);
  }
  // The document, its checksum verified: fnv1a64 is FNV-1a 64 of the document without it, as written.
  ojson parse(const std::string& text) const {
    ojson doc;
    try {
      doc = ojson::parse(text);
    } catch (const ojson::parse_error& e) {
      throw ScenarioError(name + ": expected a JSON document, got invalid JSON (" + std::string(e.what()) + ")" + hint);
    }
    if (!doc.is_object()) throw ScenarioError(name + ": expected a JSON object, got " + shown(doc) + hint);
    const std::string sum = text_of(doc, "fnv1a64");
    doc.erase("fnv1a64");
    if (hash_hex(doc.dump()) != sum)
      throw ScenarioError(name + ": fnv1a64: expected the checksum of the file's contents, " + hash_hex(doc.dump()) +
                          ", got \"" + sum + "\" (the file was edited or damaged)" + hint);
    return doc;
  }

 private:
  std::string text_of(const ojson& doc, const std::string& key) const {
    const std::string s = text(doc, key);
    if (!is_hex16(s)) bad(key, "16 lower-case hex digits", field(doc, key));
    return s;
  }
};

// The document with its checksum, written whole and renamed into place.
void write_doc(const std::string& path, ojson doc) {
  doc.erase("fnv1a64");
  doc["fnv1a64"] = hash_hex(doc.dump());
  // One key a line, each value compact: readable, and short for a stage of 472 runs.
  OutputFile file(path);
  std::ostream& out = file.stream();
  out << "{\n";
  bool first = true;
  for (const auto& [key, value] : doc.items()) {
    out << (first ? "" : ",\n") << ' ' << ojson(key).dump() << ": ";
    if (value.is_array() && !value.empty() && value[0].is_structured()) {
      out << "[\n";  // a list of runs or results: one a line
      for (std::size_t i = 0; i < value.size(); ++i) out << "  " << value[i].dump() << (i + 1 < value.size() ? ",\n" : "\n");
      out << " ]";
    } else {
      out << value.dump();
    }
    first = false;
  }
  out << "\n}\n";
  file.commit();
}

ojson identity_doc(const StageIdentity& id) {
  ojson doc;
  doc["format"] = kPlanFormat;
  doc["brokersim_version"] = id.version;
  doc["scenario_hash"] = id.scenario_hash;
  doc["args"] = id.args;
  if (!id.inputs.empty()) doc["inputs"] = inputs_json(id.inputs);
  return doc;
}

// "stage-S.json" -> S; 0 for any other name.
std::uint64_t stage_number(const std::string& file) {
  static const std::regex name(R"(stage-([1-9][0-9]{0,8})\.json)");
  std::smatch m;
  if (!std::regex_match(file, m, name)) return 0;
  return std::stoull(m[1]);
}

std::uint64_t latest_stage(const std::string& dir) {
  std::uint64_t latest = 0;
  for (const auto& e : fs::directory_iterator(dir)) latest = std::max(latest, stage_number(e.path().filename().string()));
  return latest;
}

// The runs of task k of n: the stage's runs i with i % n == k.
std::vector<RunKey> task_runs(const std::vector<RunKey>& runs, std::uint64_t k, std::uint64_t n) {
  std::vector<RunKey> out;
  for (std::size_t i = k; i < runs.size(); i += n) out.push_back(runs[i]);
  return out;
}

ojson runs_json(const std::vector<RunKey>& runs) {
  ojson a = ojson::array();
  for (const RunKey& r : runs) a.push_back({r[0], r[1], r[2]});
  return a;
}

std::vector<RunKey> runs_of(const FileReader& rd, const ojson& doc, std::uint64_t max_runs) {
  const ojson& v = FileReader::field(doc, "runs");
  if (!v.is_array() || v.size() > max_runs) rd.bad("runs", "a list of at most " + std::to_string(max_runs) + " runs", v);
  std::vector<RunKey> runs;
  for (const ojson& r : v) {
    if (!r.is_array() || r.size() != 3 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned() || !r[2].is_number_unsigned())
      rd.bad("runs", "runs [grid point, headroom look, replication] of three integers >= 0", r);
    runs.push_back({r[0].get<std::uint64_t>(), r[1].get<std::uint64_t>(), r[2].get<std::uint64_t>()});
  }
  return runs;
}

struct Stage {
  std::uint64_t tasks = 1;
  std::vector<RunKey> runs;
  std::string setting;
};

Stage read_stage(const std::string& dir, std::uint64_t s, const StageIdentity& id) {
  const std::string path = stage_file(dir, s);
  const FileReader rd{path, " (the stage files are written by `brokersim plan ... --stage-dir`; remove the folder to start the plan afresh)"};
  const ojson doc = rd.parse(read_regular_file(path, rd.hint));
  rd.equal(doc, "format", kStageFormat, "a plan stage of this brokersim");
  rd.equal(doc, "plan_id", id.plan_id, "the plan of " + plan_file(dir));
  rd.equal(doc, "stage", s, "the stage its name says");
  Stage st;
  st.tasks = rd.integer(doc, "tasks", 1, kMaxStageTasks);
  st.setting = rd.text(doc, "setting");
  st.runs = runs_of(rd, doc, kMaxReplications);
  return st;
}

// A limit's stop reason: what run_tasks counts as `limited` (the other incomplete runs measured nothing).
bool is_limit(const std::string& why) {
  for (StopReason r : kStopReasons)
    if (stopped_by_limit(r) && why == stop_reason_name(r)) return true;
  return false;
}

bool is_incomplete_reason(const std::string& why) {
  if (why.empty() || why == "before_warmup" || why == "no_job_measured") return true;
  return is_limit(why);
}

struct RunResult1 {
  std::vector<double> row;
  std::string incomplete;
};

// A task's result file, checked against everything it must be: this plan's, this stage's and
// task's, the stage's runs for the task, one row of `columns` numbers each.
std::vector<RunResult1> read_result(const std::string& path, const StageIdentity& id, std::uint64_t s, std::uint64_t k,
                                    std::uint64_t n, const std::vector<RunKey>& runs, std::size_t columns,
                                    const std::string& dir) {
  const FileReader rd{path, " (remove it and run the task again: brokersim plan --run-task " + dir + " --task " +
                                std::to_string(k) + "/" + std::to_string(n) + ")"};
  const ojson doc = rd.parse(read_regular_file(path, rd.hint));
  rd.equal(doc, "format", kResultFormat, "a plan task's result of this brokersim");
  rd.equal(doc, "plan_id", id.plan_id, "the plan of " + plan_file(dir));
  rd.equal(doc, "scenario_hash", id.scenario_hash, "the plan's scenario");
  rd.equal(doc, "stage", s, "the stage its name says");
  rd.equal(doc, "task", k, "the task its name says");
  rd.equal(doc, "tasks", n, "the stage's task count");
  rd.equal(doc, "columns", columns, "the plan's metric columns");
  if (runs_of(rd, doc, kMaxReplications) != runs)
    rd.bad("runs", "the runs stage " + std::to_string(s) + " gives task " + std::to_string(k) + " of " + std::to_string(n) +
                       " (" + shown(runs_json(runs)) + ")",
           FileReader::field(doc, "runs"));
  const ojson& res = FileReader::field(doc, "results");
  if (!res.is_array() || res.size() != runs.size())
    rd.bad("results", "a list of " + std::to_string(runs.size()) + " results, one per run", res);
  std::vector<RunResult1> out;
  for (std::size_t i = 0; i < res.size(); ++i) {
    const std::string key = "results." + std::to_string(i);
    const ojson& r = res[i];
    if (!r.is_object()) rd.bad(key, "an object {incomplete, row}", r);
    RunResult1 one;
    const ojson& why = FileReader::field(r, "incomplete");
    if (!why.is_string() || !is_incomplete_reason(why.get<std::string>()))
      rd.bad(key + ".incomplete", "\"\", \"before_warmup\", \"no_job_measured\" or a limit's stop reason", why);
    one.incomplete = why.get<std::string>();
    const ojson& row = FileReader::field(r, "row");
    if (!row.is_string()) rd.bad(key + ".row", "a string of " + std::to_string(columns) + " numbers", row);
    std::istringstream words(row.get<std::string>());
    for (std::string w; words >> w;) {
      std::uint64_t bits = 0;
      if (!is_hex16(w) || std::from_chars(w.data(), w.data() + w.size(), bits, 16).ec != std::errc())
        rd.bad(key + ".row", "numbers as 16 lower-case hex digits (a double's bits)", ojson(w));
      one.row.push_back(std::bit_cast<double>(bits));
    }
    if (one.row.size() != columns)
      rd.bad(key + ".row", std::to_string(columns) + " numbers", ojson(std::to_string(one.row.size()) + " numbers"));
    out.push_back(std::move(one));
  }
  return out;
}

std::string setting_label(const PlanGrid& grid, std::uint64_t point, std::uint64_t step) {
  std::string s = grid.space.point_label(point);
  if (s.empty()) s = "the scenario's setting";
  if (step > 0) s += " at volume x" + fmt("%.2f", Headroom::multiplier_at(step));
  return s;
}

}  // namespace

StageIdentity make_stage_identity(const std::string& scenario_hash, const std::vector<std::string>& args,
                                  std::vector<PinnedInput> inputs) {
  StageIdentity id{BROKERSIM_VERSION, scenario_hash, args, std::move(inputs), ""};
  id.plan_id = hash_hex(identity_doc(id).dump());
  return id;
}

void check_stage_inputs(const StageIdentity& id, const std::vector<PinnedInput>& now, const std::string& option,
                        const std::string& dir) {
  const std::string change = input_change(id.inputs, now);
  if (change.empty()) return;
  throw ScenarioError(option + ": " + dir + ": " + change + " since the plan's folder was made: every stage of a plan runs on one "
                      "workload; put the file back as it was, or start the plan afresh (remove the folder, or give another "
                      "--stage-dir)");
}

StageIdentity read_stage_identity(const std::string& dir, const std::string& option) {
  const std::string path = plan_file(dir);
  if (!fs::is_directory(dir)) throw ScenarioError(option, "a plan's stage folder (made by plan --stage-dir)", quote(dir));
  if (!fs::exists(path))
    throw ScenarioError(option, "a plan's stage folder with its plan.json (run `brokersim plan SCENARIO.json ... --stage-dir " + dir +
                                    " --tasks N` first)", quote(dir) + ", which has no plan.json");
  const FileReader rd{path, " (plan.json is written by `brokersim plan ... --stage-dir`; remove the folder to start the plan afresh)"};
  const ojson doc = rd.parse(read_regular_file(path, rd.hint));
  rd.equal(doc, "format", kPlanFormat, "a plan's stage folder of this brokersim");
  StageIdentity id;
  id.version = rd.text(doc, "brokersim_version");
  id.scenario_hash = rd.text(doc, "scenario_hash");
  const ojson& args = FileReader::field(doc, "args");
  if (!args.is_array() || args.empty() || !std::all_of(args.begin(), args.end(), [](const ojson& a) { return a.is_string(); }))
    rd.bad("args", "the plan's arguments, a list of strings", args);
  for (const ojson& a : args) id.args.push_back(a.get<std::string>());
  if (doc.contains("inputs")) id.inputs = read_inputs_json(doc["inputs"], path);
  if (id.version != BROKERSIM_VERSION)
    rd.bad("brokersim_version", "\"" + std::string(BROKERSIM_VERSION) + "\" (this brokersim's: a plan's runs are read by the version that wrote them)",
           FileReader::field(doc, "brokersim_version"));
  id.plan_id = hash_hex(identity_doc(id).dump());
  rd.equal(doc, "plan_id", id.plan_id, "the hash of the version, scenario hash and arguments above");
  return id;
}

void open_stage_dir(const std::string& dir, const StageIdentity& id, const std::string& option) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw ScenarioError(option, "a folder (made if missing)", quote(dir) + ", which is not a folder");
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw ScenarioError(option + ": " + dir + ": cannot create the folder (" + ec.message() + ")");
  }
  if (fs::exists(plan_file(dir))) {
    const StageIdentity there = read_stage_identity(dir, option);
    if (there.plan_id == id.plan_id) return;
    // Only the files' contents differ: say which file, not "another plan".
    if (there.version == id.version && there.scenario_hash == id.scenario_hash && there.args == id.args)
      check_stage_inputs(there, id.inputs, option, dir);
    std::string what;
    if (there.scenario_hash != id.scenario_hash) what = "its scenario (after --set) is another";
    if (const std::string change = input_change(there.inputs, id.inputs); !change.empty())
      what += std::string(what.empty() ? "" : "; ") + change;
    if (there.args != id.args) {
      std::size_t i = 0;
      while (i < there.args.size() && i < id.args.size() && there.args[i] == id.args[i]) ++i;
      what += std::string(what.empty() ? "" : "; ") + "its arguments differ from argument " + std::to_string(i + 1) + " (" +
              (i < there.args.size() ? quote(there.args[i]) : std::string("none")) + " there, " +
              (i < id.args.size() ? quote(id.args[i]) : std::string("none")) + " here)";
    }
    throw ScenarioError(option, "the stage folder of this plan (plan_id " + id.plan_id + "), or a new one",
                        quote(dir) + ", the folder of another plan (plan_id " + there.plan_id + ": " + what +
                            "); give another --stage-dir, or remove that folder to start afresh");
  }
  if (fs::directory_iterator(dir) != fs::directory_iterator())
    throw ScenarioError(option, "a new or empty folder, or the stage folder of this plan", quote(dir) +
                                    ", a folder with other files in it and no plan.json (nothing in it is written over)");
  ojson doc = identity_doc(id);
  doc["plan_id"] = id.plan_id;
  write_doc(plan_file(dir), doc);
}

std::vector<std::vector<double>> StagedExecutor::run(std::size_t point, std::size_t step, const std::vector<RunTask>& tasks,
                                                     const std::vector<std::string>& names, TaskRunStats* stats) {
  if (stats) stats->incomplete.assign(tasks.size(), std::string());
  if (tasks.empty()) return {};
  const std::uint64_t s = ++stage_;
  std::vector<RunKey> runs;
  for (const RunTask& t : tasks) runs.push_back({point, step, t.replication});
  const std::string path = stage_file(dir_, s);
  Stage st;
  bool written = false;
  if (fs::exists(path)) {
    st = read_stage(dir_, s, id_);
    if (st.runs != runs)
      throw ScenarioError(path + ": runs: expected the runs this plan asks for at stage " + std::to_string(s) + " (" +
                          shown(runs_json(runs)) + "), got " + shown(runs_json(st.runs)) +
                          " (the folder does not follow this plan: remove it to start afresh)");
  } else {
    st.tasks = new_stage_tasks_;
    st.runs = runs;
    st.setting = setting_label(grid_, point, step);
    ojson doc;
    doc["format"] = kStageFormat;
    doc["plan_id"] = id_.plan_id;
    doc["stage"] = s;
    doc["tasks"] = st.tasks;
    doc["setting"] = st.setting;
    doc["runs"] = runs_json(runs);
    write_doc(path, doc);
    written = true;
  }
  std::vector<std::vector<RunResult1>> results(st.tasks);
  StageOutstanding wait{dir_, path, s, st.tasks, runs.size(), {}, written, st.setting};
  for (std::uint64_t k = 0; k < st.tasks; ++k) {
    const std::string file = result_file(dir_, s, k, st.tasks);
    if (!fs::exists(file)) {
      wait.missing.push_back(k);
      continue;
    }
    results[k] = read_result(file, id_, s, k, st.tasks, task_runs(runs, k, st.tasks), names.size(), dir_);
  }
  if (!wait.missing.empty()) throw wait;
  // As run_tasks: the rows in task order, each run's incomplete reason, the counts.
  std::vector<std::vector<double>> rows(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    RunResult1& r = results[i % st.tasks][i / st.tasks];
    rows[i] = std::move(r.row);
    if (!stats) continue;
    stats->incomplete[i] = r.incomplete;
    if (is_limit(r.incomplete))
      ++stats->limited;
    else if (!r.incomplete.empty())
      ++stats->measured_nothing;
  }
  return rows;
}

int run_stage_task(const std::string& dir, const StageIdentity& id, const PlanGrid& grid, const Shard& task,
                   unsigned threads, std::ostream& err) {
  const std::uint64_t s = latest_stage(dir);
  if (s == 0)
    throw ScenarioError("--run-task", "a stage folder with a stage written (run `brokersim plan SCENARIO.json ... --stage-dir " + dir +
                                          " --tasks N` first)", quote(dir) + ", which has none");
  const Stage st = read_stage(dir, s, id);
  Shard t = task;
  if (t.count == 0) {  // a Slurm array's index: the count is the stage's
    if (t.index >= st.tasks)
      throw ScenarioError("SLURM_ARRAY_TASK_ID", "a task of stage " + std::to_string(s) + "'s " + std::to_string(st.tasks) +
                                                     ", from 0 to " + std::to_string(st.tasks - 1) +
                                                     " (the array's indices are the task numbers: --array=0-" +
                                                     std::to_string(st.tasks - 1) + ")",
                          std::to_string(t.index));
    t.count = st.tasks;
  }
  if (t.count != st.tasks)
    throw ScenarioError("--task", "a task of stage " + std::to_string(s) + "'s " + std::to_string(st.tasks) + " (K/" +
                                      std::to_string(st.tasks) + ", a job array of " + std::to_string(st.tasks) + ")",
                        std::to_string(t.index) + "/" + std::to_string(t.count));
  const std::vector<RunKey> runs = task_runs(st.runs, t.index, t.count);
  const std::string file = result_file(dir, s, t.index, t.count);
  const std::string label = "stage " + std::to_string(s) + " task " + std::to_string(t.index) + "/" + std::to_string(t.count);
  if (fs::exists(file)) {
    read_result(file, id, s, t.index, t.count, runs, grid.names.size(), dir);  // refused when invalid
    err << "brokersim: plan: " << label << ": already done (" << file << ")\n";
    return 0;
  }
  // Each run's scenario: the grid point's, its volume scaled for a headroom look.
  std::map<std::pair<std::uint64_t, std::uint64_t>, Scenario> scaled;
  std::vector<RunTask> tasks;
  const std::string where = stage_file(dir, s) + ": runs";
  for (const RunKey& r : runs) {
    if (r[0] >= grid.size())
      throw ScenarioError(where, "grid points below " + std::to_string(grid.size()), std::to_string(r[0]));
    if (r[1] > Headroom::kLastStep)
      throw ScenarioError(where, "headroom looks from 0 to " + std::to_string(Headroom::kLastStep), std::to_string(r[1]));
    if (r[2] >= kMaxReplications)
      throw ScenarioError(where, "replications below " + std::to_string(kMaxReplications), std::to_string(r[2]));
    const Scenario* sc = &grid.scenarios[r[0]];
    if (r[1] > 0) {
      auto [it, fresh] = scaled.try_emplace({r[0], r[1]}, grid.scenarios[r[0]]);
      if (fresh) scale_volume(it->second, grid.scenarios[r[0]], r[1]);
      sc = &it->second;
    }
    tasks.push_back({sc, r[2]});
  }
  TaskRunStats stats;
  const auto rows = run_tasks(tasks, threads, grid.names, {}, &stats);
  ojson doc;
  doc["format"] = kResultFormat;
  doc["plan_id"] = id.plan_id;
  doc["scenario_hash"] = id.scenario_hash;
  doc["stage"] = s;
  doc["task"] = t.index;
  doc["tasks"] = t.count;
  doc["columns"] = grid.names.size();
  doc["runs"] = runs_json(runs);
  ojson results = ojson::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string row;
    for (double v : rows[i]) {
      if (!row.empty()) row += ' ';
      row += bits_hex(v);
    }
    ojson one;
    one["incomplete"] = stats.incomplete[i];
    one["row"] = row;
    results.push_back(one);
  }
  doc["results"] = results;
  write_doc(file, doc);
  err << "brokersim: plan: " << label << ": " << runs.size() << " run(s) of " << st.setting << " written to " << file << '\n';
  return 0;
}

}  // namespace brokersim
