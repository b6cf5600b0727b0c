#include "experiments/cli/replication/shards.hpp"

#include <cstdlib>
#include <limits>
#include <optional>

#include "experiments/cli/options.hpp"
#include "experiments/cli/replication/grid.hpp"
#include "experiments/cli/replication/journal.hpp"
#include "experiments/cli/text.hpp"
#include "models/scenario.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

Shard parse_shard(const std::string& option, const std::string& text) {
  const auto slash = text.find('/');
  const std::string what = "K/N with integers 0 <= K < N";
  if (slash == std::string::npos) throw ScenarioError(option, what, quote(text));
  Shard s;
  try {
    s.index = parse_count(option, text.substr(0, slash), 0);
    s.count = parse_count(option, text.substr(slash + 1), 1);
  } catch (const ScenarioError&) {
    throw ScenarioError(option, what, quote(text));
  }
  if (s.index >= s.count) throw ScenarioError(option, what, quote(text));
  return s;
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

}  // namespace

Shard select_shard(const po::variables_map& vm, const std::string& name, const std::string& count_name) {
  const std::string option = "--" + name, count_option = "--" + count_name;
  if (vm.count(name) && vm.count(count_name))
    throw ScenarioError(option, "either " + option + " K/N or " + count_option + " N (with JOB_COMPLETION_INDEX), not both",
                        option + " " + vm[name].as<std::string>() + " and " + count_option + " " + vm[count_name].as<std::string>());
  if (vm.count(name)) return parse_shard(option, vm[name].as<std::string>());
  if (vm.count(count_name)) {
    const auto index = env("JOB_COMPLETION_INDEX");
    if (!index)
      throw ScenarioError(count_option, "JOB_COMPLETION_INDEX in the environment (a Kubernetes Indexed Job)", "nothing");
    Shard s;
    s.count = parse_count(count_option, vm[count_name].as<std::string>(), 1);
    s.index = parse_count("JOB_COMPLETION_INDEX", *index, 0);
    if (s.index >= s.count)
      throw ScenarioError("JOB_COMPLETION_INDEX", "an integer below " + count_option + " (" + std::to_string(s.count) + ")", quote(*index));
    return s;
  }
  if (const auto id = env("SLURM_ARRAY_TASK_ID")) {
    const auto count = env("SLURM_ARRAY_TASK_COUNT");
    if (!count) throw ScenarioError("SLURM_ARRAY_TASK_COUNT", "the array size beside SLURM_ARRAY_TASK_ID", "nothing");
    Shard s;
    s.count = parse_count("SLURM_ARRAY_TASK_COUNT", *count, 1);
    const std::uint64_t task = parse_count("SLURM_ARRAY_TASK_ID", *id, 0);
    std::uint64_t min = 0;
    if (const auto m = env("SLURM_ARRAY_TASK_MIN")) min = parse_count("SLURM_ARRAY_TASK_MIN", *m, 0);
    if (task < min || task - min >= s.count)
      throw ScenarioError("SLURM_ARRAY_TASK_ID",
                          "an integer from SLURM_ARRAY_TASK_MIN (" + std::to_string(min) + ") below MIN + SLURM_ARRAY_TASK_COUNT (" +
                              std::to_string(min + s.count) + "); use " + option + " K/N for arrays with a step",
                          quote(*id));
    s.index = task - min;
    return s;
  }
  return {};
}

std::string write_meta_text(nlohmann::ordered_json meta, const Shard& shard, const std::vector<std::size_t>& rows,
                            const std::string& csv) {
  meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
  meta["rows"] = rows;
  meta["csv_rows"] = rows.size();
  meta["csv_fnv1a64"] = hash_hex(csv);
  return meta.dump(2) + "\n";
}

namespace {

using ojson = nlohmann::ordered_json;

// What a message shows of a wrong value: its JSON, cut short.
std::string shown(const ojson& v) {
  std::string s = v.dump(-1, ' ', false, ojson::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

const ojson kMissing;  // what field() gives for an absent key: "got nothing"

struct MetaReader {
  const std::string& name;
  [[noreturn]] void bad(const std::string& key, const std::string& expected, const ojson& got) const {
    throw ScenarioError(name + ": " + key, expected, &got == &kMissing ? "nothing" : shown(got));
  }
  static const ojson& field(const ojson& obj, const std::string& key) {
    const auto it = obj.find(key);
    return it == obj.end() ? kMissing : *it;
  }
  std::uint64_t integer(const ojson& v, const std::string& key, std::uint64_t min, std::uint64_t max) const {
    const std::string what = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (!v.is_number_unsigned()) bad(key, what, v);
    const std::uint64_t x = v.get<std::uint64_t>();
    if (x < min || x > max) bad(key, what, v);
    return x;
  }
  std::string text(const ojson& v, const std::string& key) const {
    if (!v.is_string()) bad(key, "a string", v);
    return v.get<std::string>();
  }
  std::vector<std::string> texts(const ojson& v, const std::string& key) const {
    if (!v.is_array()) bad(key, "an array of strings", v);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(text(v[i], key + "." + std::to_string(i)));
    return out;
  }
};

}  // namespace

ShardMeta read_shard_meta(const std::string& name, const std::string& text) {
  ojson doc;
  // nlohmann stops at a NUL byte: whatever follows one would pass unread.
  if (text.find('\0') != std::string::npos)
    throw ScenarioError(name + ": invalid sweep metadata (a NUL byte at offset " + std::to_string(text.find('\0')) + ")");
  try {
    doc = ojson::parse(text);
  } catch (const ojson::exception& e) {
    throw ScenarioError(name + ": invalid sweep metadata (" + e.what() + ")");
  }
  const MetaReader r{name};
  if (!doc.is_object()) r.bad("the document", "an object (the metadata of a brokersim sweep)", doc);
  const auto get = [&](const ojson& obj, const std::string& key) -> const ojson& { return MetaReader::field(obj, key); };
  for (const char* key : {"points", "shard", "rows"})
    if (!doc.contains(key))
      throw ScenarioError(name + ": not the metadata of a brokersim sweep (no points, shard or rows)");
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  ShardMeta m;
  r.text(get(doc, "brokersim_version"), "brokersim_version");
  r.text(get(doc, "scenario"), "scenario");
  r.text(get(doc, "scenario_hash"), "scenario_hash");
  r.integer(get(doc, "seed"), "seed", 0, std::numeric_limits<std::uint64_t>::max());
  r.integer(get(doc, "replications"), "replications", 1, kMax);
  r.texts(get(doc, "set"), "set");
  r.texts(get(doc, "vary"), "vary");
  const ojson& grid = get(doc, "grid");
  if (!grid.is_array()) r.bad("grid", "an array of axes", grid);
  std::size_t product = 1;
  for (std::size_t a = 0; a < grid.size(); ++a) {
    const std::string key = "grid." + std::to_string(a);
    const ojson& axis = grid[a];
    if (!axis.is_object()) r.bad(key, "an object with path, values and labels", axis);
    m.paths.push_back(r.text(get(axis, "path"), key + ".path"));
    m.labels.push_back(r.texts(get(axis, "labels"), key + ".labels"));
    const ojson& values = get(axis, "values");
    if (!values.is_array() || values.size() != m.labels.back().size() || values.empty())
      r.bad(key + ".values", "an array of as many values as labels (" + std::to_string(m.labels.back().size()) + "), at least one",
            values);
    if (product > kMaxGridPoints / values.size())
      r.bad(key + ".values", "a grid of at most " + std::to_string(kMaxGridPoints) + " points", values.size());
    product *= values.size();
  }
  m.points = r.integer(get(doc, "points"), "points", 1, kMaxGridPoints);
  if (m.points != product)
    r.bad("points", "the product of the grid's value counts (" + std::to_string(product) + ")", get(doc, "points"));
  if (doc.contains("precision")) {
    const ojson& p = doc["precision"];
    if (!p.is_object()) r.bad("precision", "an object", p);
    for (const char* key : {"rel", "abs"}) {
      const ojson& v = get(p, key);
      if (!v.is_number() || !(v.get<double>() >= 0)) r.bad(std::string("precision.") + key, "a number >= 0", v);
    }
    r.integer(get(p, "first_stage"), "precision.first_stage", 1, kMax);
    r.integer(get(p, "max_replications"), "precision.max_replications", 1, kMax);
    r.texts(get(p, "metrics"), "precision.metrics");
  }
  if (doc.contains("spread")) {
    // sweep --spread: the quantiles of its NAME_p05 / NAME_p95 columns and how they are taken.
    const ojson& sp = doc["spread"];
    if (!sp.is_object()) r.bad("spread", "an object with quantiles and interpolation", sp);
    const ojson& q = get(sp, "quantiles");
    if (q != ojson::array({0.05, 0.95})) r.bad("spread.quantiles", "[0.05, 0.95]", q);
    if (r.text(get(sp, "interpolation"), "spread.interpolation") != "linear (type 7)")
      r.bad("spread.interpolation", "\"linear (type 7)\"", get(sp, "interpolation"));
    m.spread = true;
  }
  if (doc.contains("window_columns"))  // sweep --window-columns: the windows given columns
    r.integer(doc["window_columns"], "window_columns", 1, kMaxWindowColumns);
  const ojson& shard = get(doc, "shard");
  if (!shard.is_object()) r.bad("shard", "an object with index and count", shard);
  m.shard.count = r.integer(get(shard, "count"), "shard.count", 1, m.points);
  m.shard.index = r.integer(get(shard, "index"), "shard.index", 0, m.shard.count - 1);
  const ojson& rows = get(doc, "rows");
  // Shard K of N holds the points K, K+N, K+2N, ... below `points`, in that order.
  const std::size_t expected = (m.points - m.shard.index + m.shard.count - 1) / m.shard.count;
  if (!rows.is_array() || rows.size() != expected)
    r.bad("rows", "an array of the " + std::to_string(expected) + " grid points of shard " + std::to_string(m.shard.index) +
                      "/" + std::to_string(m.shard.count),
          rows.is_array() ? ojson(std::to_string(rows.size()) + " entries") : rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t want = m.shard.index + i * m.shard.count;
    const std::string key = "rows." + std::to_string(i);
    if (!rows[i].is_number_unsigned() || rows[i].get<std::uint64_t>() != want)
      r.bad(key, std::to_string(want) + " (the shard's points in order)", rows[i]);
    m.rows.push_back(want);
  }
  m.csv_rows = r.integer(get(doc, "csv_rows"), "csv_rows", m.rows.size(), m.rows.size());
  m.csv_fnv1a64 = r.text(get(doc, "csv_fnv1a64"), "csv_fnv1a64");
  if (m.csv_fnv1a64.size() != 16 || m.csv_fnv1a64.find_first_not_of("0123456789abcdef") != std::string::npos)
    r.bad("csv_fnv1a64", "16 lower-case hex digits", get(doc, "csv_fnv1a64"));
  if (doc.contains("inputs")) m.inputs = read_inputs_json(doc["inputs"], name);
  m.identity = doc;
  for (const char* key : {"shard", "rows", "csv_rows", "csv_fnv1a64", "inputs"}) m.identity.erase(key);
  return m;
}

}  // namespace brokersim
