// brokersim sweep and merge, and the shared grid / pool / statistics layer (experiments/sweep.hpp).
#include "experiments/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <unistd.h>

#include <boost/program_options.hpp>

#include "experiments/commands.hpp"
#include "experiments/cli_options.hpp"
#include "experiments/output_file.hpp"
#include "experiments/precision.hpp"
#include "experiments/replication/statistics.hpp"
#include "experiments/report.hpp"
#include "experiments/scenario_load.hpp"
#include "experiments/text.hpp"
#include "models/simulation.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

constexpr std::size_t kMaxGridPoints = 10'000'000;
constexpr std::size_t kMaxAxisValues = 1'000'000;

bool parse_double(const std::string& text, double& v) {
  if (text.empty()) return false;
  const char* first = text.data();
  if (*first == '+') ++first;
  const auto r = std::from_chars(first, text.data() + text.size(), v);
  return r.ec == std::errc() && r.ptr == text.data() + text.size() && std::isfinite(v);
}

bool is_integer_token(const std::string& t) {
  std::size_t i = (!t.empty() && (t[0] == '-' || t[0] == '+')) ? 1 : 0;
  if (i == t.size()) return false;
  for (; i < t.size(); ++i)
    if (t[i] < '0' || t[i] > '9') return false;
  return t.size() <= 18;
}

std::size_t decimals_of(const std::string& t) {
  const auto dot = t.find('.');
  return dot == std::string::npos ? 0 : t.size() - dot - 1;
}

// A value's CSV label when it came from JSON (file sweep block, JSON-array LIST).
std::string json_label(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return format_number(v.get<double>());
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Flatten numeric leaves of result_json (top-level seed and replication excluded).
void flatten(const ojson& j, const std::string& prefix, bool top, std::vector<std::string>* names,
             std::vector<double>* values) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (top && (it.key() == "seed" || it.key() == "replication")) continue;
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    const auto& v = it.value();
    if (v.is_object()) {
      flatten(v, name, false, names, values);
    } else if (v.is_number()) {
      if (names) names->push_back(name);
      if (values) values->push_back(v.get<double>());
    }
  }
}

bool limited(const RunResult& r) {
  return stopped_by_limit(r.stop_reason);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Grid

SweepAxis parse_vary(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos) throw ScenarioError("--vary", "PATH=LIST", quote(spec));
  SweepAxis axis;
  axis.path = spec.substr(0, eq);
  const std::string list = spec.substr(eq + 1);
  if (axis.path.empty()) throw ScenarioError("--vary", "a key path before '='", quote(spec));
  const std::string where = "--vary " + axis.path;
  if (list.empty()) throw ScenarioError(where, "a LIST (1,2,4 or start:stop:step) after '='", "nothing");

  if (list.front() == '[') {
    json arr;
    try {
      arr = parse_json_text(list, where);
    } catch (const ScenarioError&) {
      throw ScenarioError(where, "a JSON array of values (LIST starts with '[')", quote(list));
    }
    if (!arr.is_array() || arr.empty()) throw ScenarioError(where, "a non-empty JSON array of values", quote(list));
    for (const auto& v : arr) {
      axis.values.push_back(v);
      axis.labels.push_back(json_label(v));
    }
    return axis;
  }

  const auto parts = split(list, ':');
  double a = 0, b = 0, step = 0;
  if (parts.size() == 3 && parse_double(parts[0], a) && parse_double(parts[1], b) && parse_double(parts[2], step)) {
    if (step == 0 || (b - a) / step < 0) {
      throw ScenarioError(where, "a range start:stop:step whose step is non-zero and goes from start towards stop",
                          quote(list));
    }
    const double span = (b - a) / step;
    if (!(span < static_cast<double>(kMaxAxisValues)))
      throw ScenarioError(where, "a range of at most " + std::to_string(kMaxAxisValues) + " values", quote(list));
    const auto n = static_cast<std::size_t>(std::floor(span + 1e-9)) + 1;
    const bool integers = is_integer_token(parts[0]) && is_integer_token(parts[1]) && is_integer_token(parts[2]);
    const bool exponent = list.find_first_of("eE") != std::string::npos;
    const std::size_t decimals =
        std::max({decimals_of(parts[0]), decimals_of(parts[1]), decimals_of(parts[2])});
    for (std::size_t i = 0; i < n; ++i) {
      if (integers) {
        const long long v = std::stoll(parts[0]) + static_cast<long long>(i) * std::stoll(parts[2]);
        axis.values.emplace_back(v);
        axis.labels.push_back(std::to_string(v));
      } else {
        double v = a + static_cast<double>(i) * step;
        if (!exponent) {
          // Round to the precision the user wrote (0.1:0.5:0.1 gives 0.3, not 0.30000000000000004).
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<std::size_t>(decimals, 17)), v);
          v = std::strtod(buf, nullptr);
        }
        if (v == 0) v = 0;  // no "-0"
        axis.values.emplace_back(v);
        axis.labels.push_back(format_number(v));
      }
    }
    return axis;
  }

  // "8:64", "1;2;4" or "1-8" read as strings would fail later as "expected an integer, got "8:64"",
  // which hides what went wrong: the LIST syntax. A number followed by a separator is that.
  const auto misread_list = [](const std::string& item) {
    return item.find_first_of("0123456789.+-") == 0 &&
           (item.find_first_of(":; \t") != std::string::npos || item.find('-', 1) != std::string::npos ||
            item.find("..") != std::string::npos);
  };
  for (const auto& item : split(list, ',')) {
    if (item.empty()) throw ScenarioError(where, "a comma-separated LIST without empty items", quote(list));
    json v;
    try {
      v = parse_json_text(item, where);
    } catch (const ScenarioError&) {
      if (misread_list(item))
        throw ScenarioError(where, "a list 1,2,4 or a range start:stop:step such as 8:64:8", quote(list));
      v = item;  // a bare word (drop-head) is a string, as in --set
    }
    axis.values.push_back(v);
    axis.labels.push_back(item);
  }
  return axis;
}

std::vector<SweepAxis> axes_from_block(const json& block) {
  if (!block.is_object() || block.empty())
    throw ScenarioError("sweep", "an object mapping key paths to arrays of values", json_label(block));
  std::vector<SweepAxis> axes;
  for (auto it = block.begin(); it != block.end(); ++it) {
    if (!it.value().is_array() || it.value().empty())
      throw ScenarioError("sweep." + it.key(), "a non-empty array of values", json_label(it.value()));
    SweepAxis axis;
    axis.path = it.key();
    for (const auto& v : it.value()) {
      axis.values.push_back(v);
      axis.labels.push_back(json_label(v));
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::size_t grid_size(const std::vector<SweepAxis>& axes) {
  std::size_t n = 1;
  for (const auto& a : axes) {
    if (a.values.empty()) return 0;
    if (n > kMaxGridPoints / a.values.size())
      throw ScenarioError("--vary", "a grid of at most " + std::to_string(kMaxGridPoints) + " points", "more");
    n *= a.values.size();
  }
  return n;
}

std::vector<std::size_t> grid_coords(const std::vector<SweepAxis>& axes, std::size_t point) {
  std::vector<std::size_t> c(axes.size());
  for (std::size_t i = axes.size(); i-- > 0;) {
    c[i] = point % axes[i].values.size();
    point /= axes[i].values.size();
  }
  return c;
}

json SweepSpace::point_doc(std::size_t point) const {
  json doc = base;
  const auto c = grid_coords(axes, point);
  for (std::size_t i = 0; i < axes.size(); ++i) set_path(doc, axes[i].path, axes[i].values[c[i]]);
  return doc;
}

std::uint64_t SweepSpace::effective_seed() const {
  if (seed) return *seed;
  return load_scenario(point_doc(0), base_dir).seed;
}

Scenario SweepSpace::point_scenario(std::size_t point) const {
  Scenario s;
  try {
    s = load_scenario(point_doc(point), base_dir);
  } catch (const ScenarioError& e) {
    throw ScenarioError("grid point " + std::to_string(point) + " (" + point_label(point) + "): " + e.what());
  }
  if (seed) s.seed = *seed;
  return s;
}

std::string SweepSpace::point_label(std::size_t point) const {
  const auto c = grid_coords(axes, point);
  std::string out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (i) out += ", ";
    out += axes[i].path + "=" + axes[i].labels[c[i]];
  }
  return out;
}

SweepSpace load_sweep_space(const std::string& path, const std::vector<std::string>& sets,
                            const std::vector<std::string>& varies, std::optional<std::uint64_t> seed) {
  SweepSpace space;
  space.base = read_json_file(path);
  space.base_dir = std::filesystem::path(path).parent_path().string();
  space.seed = seed;
  json block;
  if (space.base.is_object() && space.base.contains("sweep")) {
    block = space.base["sweep"];
    space.base.erase("sweep");
  }
  for (const auto& s : sets) apply_set(space.base, s);
  if (!varies.empty()) {
    for (const auto& v : varies) space.axes.push_back(parse_vary(v));
  } else if (!block.is_null()) {
    space.axes = axes_from_block(block);
  } else {
    throw ScenarioError("sweep", "--vary PATH=LIST or a \"sweep\" block in the scenario", "nothing");
  }
  std::set<std::string> seen;
  for (const auto& a : space.axes)
    if (!seen.insert(a.path).second) throw ScenarioError("--vary " + a.path, "each path varied once", "it twice");
  grid_size(space.axes);  // checks the size
  return space;
}

std::vector<Scenario> validate_points(const SweepSpace& space, const std::vector<std::size_t>& keep) {
  // Each value alone first, so that the error names the value that is wrong.
  for (const auto& axis : space.axes) {
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      try {
        json doc = space.base;
        set_path(doc, axis.path, axis.values[i]);
        load_scenario(doc, space.base_dir);
      } catch (const ScenarioError& e) {
        throw ScenarioError("--vary " + axis.path + "=" + axis.labels[i] + ": " + e.what());
      }
    }
  }
  std::vector<Scenario> kept;
  kept.reserve(keep.size());
  std::size_t k = 0;
  const std::size_t n = space.size();
  for (std::size_t p = 0; p < n; ++p) {
    const bool wanted = k < keep.size() && keep[k] == p;
    if (space.axes.size() > 1 || wanted) {
      Scenario s = space.point_scenario(p);
      if (wanted) {
        kept.push_back(std::move(s));
        ++k;
      }
    }
  }
  return kept;
}

std::string hash_hex(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// ---------------------------------------------------------------------------------------------
// Metrics, pool, statistics

std::vector<std::string> metric_names(const Scenario& scenario) {
  RunResult r;
  for (const auto& q : scenario.broker.queues) {
    QueueResult qr;
    qr.name = q.name;
    r.queues.push_back(qr);
  }
  std::vector<std::string> names;
  flatten(result_json(scenario, r), "", true, &names, nullptr);
  return names;
}

std::vector<std::string> metric_names(const SweepSpace& space) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (std::size_t p = 0; p < space.size(); ++p) {
    for (auto& name : metric_names(space.point_scenario(p)))
      if (seen.insert(name).second) names.push_back(std::move(name));
  }
  return names;
}

std::vector<std::vector<double>> run_tasks(const std::vector<RunTask>& tasks, unsigned threads,
                                           const std::vector<std::string>& names,
                                           const TaskDone& on_done,
                                           TaskRunStats* stats) {
  std::vector<std::vector<double>> rows(tasks.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::exception_ptr failure;
  std::size_t limited_runs = 0, empty_runs = 0;
  if (stats) stats->incomplete.assign(tasks.size(), std::string());
  std::unordered_map<std::string, std::size_t> column_of;  // for points with fewer metrics than the grid
  for (std::size_t k = 0; k < names.size(); ++k) column_of.emplace(names[k], k);

  const auto work = [&] {
    std::vector<std::string> got;
    for (;;) {
      if (stop.load()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= tasks.size()) return;
      try {
        Scenario s = *tasks[i].scenario;
        s.replication = tasks[i].replication;
        const RunResult r = simulate_with_warmup(s);
        got.clear();
        std::vector<double> values;
        values.reserve(names.size());
        flatten(result_json(s, r), "", true, &got, &values);
        if (got != names) {
          // A point with fewer metrics than the grid (another broker kind's reasons): its
          // missing ones are NaN, written as empty cells.
          std::vector<double> full(names.size(), std::numeric_limits<double>::quiet_NaN());
          for (std::size_t g = 0; g < got.size(); ++g) {
            const auto k = column_of.find(got[g]);
            if (k == column_of.end()) throw InvariantError("sweep: a run reported a metric the grid does not have: " + got[g]);
            full[k->second] = values[g];
          }
          values = std::move(full);
        }
        rows[i] = std::move(values);
        const std::string why = incomplete_run(s, r);
        std::lock_guard<std::mutex> lock(mu);
        if (limited(r))
          ++limited_runs;
        else if (!why.empty())
          ++empty_runs;
        if (stats) stats->incomplete[i] = why;
        if (on_done) on_done(i, rows);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failure) failure = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  const unsigned n = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, threads), tasks.size()));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(n);
    for (unsigned t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
  if (stats) {
    stats->limited += limited_runs;
    stats->measured_nothing += empty_runs;
  }
  return rows;
}

int warn_incomplete_runs(std::ostream& err, const TaskRunStats& stats) {
  if (stats.limited)
    err << "brokersim: warning: " << stats.limited << " run(s) stopped early at a limit: see limits in the README\n";
  if (stats.measured_nothing)
    err << "brokersim: warning: " << stats.measured_nothing
        << " run(s) measured nothing: they ended before warmup_ms, or no job was created after warmup_ms\n";
  return stats.limited || stats.measured_nothing ? 3 : 0;
}

unsigned thread_count(const std::optional<std::string>& option) {
  if (option) return static_cast<unsigned>(std::min<std::uint64_t>(parse_count("--threads", *option, 1), 4096));
  return std::max(1u, std::thread::hardware_concurrency());
}

Progress::Progress(std::ostream* err, std::size_t total, std::string what)
    : err_(err), total_(total), what_(std::move(what)), tty_(::isatty(STDERR_FILENO) == 1) {}

void Progress::update(std::size_t done) {
  if (!err_) return;
  const double t = now_s();
  if (!started_) {  // points finished before this session (resumed) do not count toward the rate
    started_ = true;
    base_ = done;
    start_ = t;
  }
  if (done == printed_ || (done < total_ && last_ >= 0 && t - last_ < (tty_ ? 0.5 : 5.0))) return;
  last_ = t;
  printed_ = done;
  const double elapsed = t - start_;
  const double rate = elapsed > 0 ? static_cast<double>(done - base_) / elapsed : 0;
  char buf[200];
  if (rate > 0 && done < total_) {
    const double left = static_cast<double>(total_ - done) / rate;
    std::snprintf(buf, sizeof buf, "%s: %zu/%zu points, %.2f points/s, %.0fm%02.0fs left", what_.c_str(), done,
                  total_, rate, std::floor(left / 60), std::fmod(std::floor(left), 60.0));
  } else {
    std::snprintf(buf, sizeof buf, "%s: %zu/%zu points, %.1f s", what_.c_str(), done, total_, elapsed);
  }
  *err_ << (tty_ ? "\r" : "") << buf << (tty_ ? "\x1b[K" : "\n") << std::flush;
}

void Progress::finish() {
  if (!err_) return;
  update(total_);
  if (tty_) *err_ << '\n' << std::flush;
  err_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// sweep

namespace {

struct Shard {
  std::uint64_t index = 0, count = 1;
};

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const std::string what = "K/N with integers 0 <= K < N";
  if (slash == std::string::npos) throw ScenarioError("--shard", what, quote(text));
  Shard s;
  try {
    s.index = parse_count("--shard", text.substr(0, slash), 0);
    s.count = parse_count("--shard", text.substr(slash + 1), 1);
  } catch (const ScenarioError&) {
    throw ScenarioError("--shard", what, quote(text));
  }
  if (s.index >= s.count) throw ScenarioError("--shard", what, quote(text));
  return s;
}

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

Shard select_shard(const po::variables_map& vm) {
  if (vm.count("shard")) return parse_shard(vm["shard"].as<std::string>());
  if (vm.count("shard-count")) {
    const auto index = env("JOB_COMPLETION_INDEX");
    if (!index)
      throw ScenarioError("--shard-count", "JOB_COMPLETION_INDEX in the environment (a Kubernetes Indexed Job)", "nothing");
    Shard s;
    s.count = parse_count("--shard-count", vm["shard-count"].as<std::string>(), 1);
    s.index = parse_count("JOB_COMPLETION_INDEX", *index, 0);
    if (s.index >= s.count)
      throw ScenarioError("JOB_COMPLETION_INDEX", "an integer below --shard-count (" + std::to_string(s.count) + ")", quote(*index));
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
                              std::to_string(min + s.count) + "); use --shard K/N for arrays with a step",
                          quote(*id));
    s.index = task - min;
    return s;
  }
  return {};
}


std::optional<std::uint64_t> seed_option(const po::variables_map& vm) {
  if (!vm.count("seed")) return std::nullopt;
  return parse_count("--seed", vm["seed"].as<std::string>(), 0);
}

// The metadata that identifies a sweep (everything but the shard and its rows): with the scenario
// file, enough to run it again to the same bytes. `sets` and `varies` are the options as given,
// in order (later --set overrides earlier ones; the first --vary varies slowest); `varies` is
// empty when the grid came from the scenario's sweep block.
ojson sweep_identity(const SweepSpace& space, std::uint64_t replications, const std::vector<std::string>& sets,
                     const std::vector<std::string>& varies) {
  ojson m;
  m["brokersim_version"] = BROKERSIM_VERSION;
  m["scenario"] = space.base.is_object() && space.base.contains("name") ? space.base["name"] : json("");
  m["scenario_hash"] = hash_hex(space.base.dump());
  m["seed"] = space.effective_seed();
  m["replications"] = replications;
  m["set"] = sets;
  m["vary"] = varies;
  auto& grid = m["grid"];
  grid = ojson::array();
  for (const auto& a : space.axes) {
    ojson axis;
    axis["path"] = a.path;
    axis["values"] = ojson::array();
    for (const auto& v : a.values) axis["values"].push_back(ojson::parse(v.dump()));
    axis["labels"] = a.labels;
    grid.push_back(axis);
  }
  m["points"] = space.size();
  return m;
}

std::string csv_header(const std::vector<SweepAxis>& axes, const std::vector<std::string>& names) {
  std::string h;
  for (const auto& a : axes) {
    h += csv_cell(a.path);
    h += ',';
  }
  h += "replications";
  for (const auto& n : names) {
    h += ',';
    h += csv_cell(n + "_mean");
    h += ',';
    h += csv_cell(n + "_ci95");
  }
  h += ",incomplete_runs\n";
  return h;
}

std::string write_meta_text(ojson meta, const Shard& shard, const std::vector<std::size_t>& rows) {
  meta["shard"] = {{"index", shard.index}, {"count", shard.count}};
  meta["rows"] = rows;
  return meta.dump(2) + "\n";
}

// Append-only journal of finished points: a header line naming the sweep, then one line per point
// "P INDEX CELLS CHECKSUM" written with a single write(2), so a SIGKILL leaves at most a torn last
// line, which the checksum rejects.
class Journal {
 public:
  Journal(std::string path, std::string header) : path_(std::move(path)), header_(std::move(header)) {}
  ~Journal() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Read finished points (when resuming), then rewrite the file with only its valid lines so that
  // appends never follow a torn line.
  std::map<std::size_t, std::string> open(bool resume, std::size_t cells_expected) {
    std::map<std::size_t, std::string> done;
    std::string kept = header_;
    if (resume) {
      std::ifstream in(path_, std::ios::binary);
      if (in) {
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string text = ss.str();
        const auto nl = text.find('\n');
        if (nl != std::string::npos) {
          if (text.substr(0, nl + 1) != header_)
            throw ScenarioError(path_ + ": the journal belongs to another sweep (scenario, grid, seed, replications or "
                                "shard differ); delete it or run without --resume");
          std::size_t start = nl + 1;
          while (start < text.size()) {
            const auto end = text.find('\n', start);
            if (end == std::string::npos) break;  // torn last line
            const std::string line = text.substr(start, end - start);
            start = end + 1;
            const auto sp = line.rfind(' ');
            if (sp == std::string::npos || hash_hex(line.substr(0, sp)) != line.substr(sp + 1)) continue;
            const auto fields = split(line.substr(0, sp), ' ');
            if (fields.size() != 3 || fields[0] != "P") continue;
            std::size_t idx = 0;
            const auto r = std::from_chars(fields[1].data(), fields[1].data() + fields[1].size(), idx);
            if (r.ec != std::errc() || r.ptr != fields[1].data() + fields[1].size()) continue;
            if (static_cast<std::size_t>(std::count(fields[2].begin(), fields[2].end(), ',')) + 1 != cells_expected)
              continue;
            if (done.emplace(idx, fields[2]).second) kept += line + "\n";
          }
        }
      }
    }
    {
      OutputFile rewritten(path_);
      rewritten.stream() << kept;
      rewritten.commit();
    }
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error(path_ + ": cannot open the sweep journal (" + std::strerror(errno) + ")");
    return done;
  }

  void append(std::size_t index, const std::string& cells) {
    std::string line = "P ";
    line += std::to_string(index);
    line += ' ';
    line += cells;
    const std::string check = hash_hex(line);
    line += ' ';
    line += check;
    line += '\n';
    const char* p = line.data();
    std::size_t left = line.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(path_ + ": cannot append to the sweep journal (" + std::strerror(errno) + ")");
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  void remove() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::remove(path_.c_str());
  }

 private:
  std::string path_, header_;
  int fd_ = -1;
};

constexpr const char* kSweepHelp =
    "usage:\n"
    "  brokersim sweep SCENARIO.json [--vary PATH=LIST ...] [--set PATH=VALUE ...] [--seed N]\n"
    "                [--replications R] [--threads T] [--out results.csv] [--shard K/N | --shard-count N]\n"
    "                [--resume] [--progress] [--precision REL] [--precision-abs A]\n"
    "                [--precision-metric NAME ...] [--max-replications N]\n"
    "\n"
    "Runs every point of the grid (the cartesian product of the --vary lists, the first varying\n"
    "slowest; without --vary, the scenario's \"sweep\" block, paths in sorted order) and prints one\n"
    "CSV row per point: the varied values, replications, then NAME_mean and NAME_ci95 for every\n"
    "numeric metric of `run --json`. LIST: 1,2,4,8 | start:stop:step (inclusive) | [JSON values].\n"
    "With --precision REL each point runs replications in rounds (3, 4, 6, 9, ...; the first at least\n"
    "--replications) until the 95% half-width of every --precision-metric is within REL of its mean or\n"
    "within --precision-abs, or --max-replications is reached; `replications` is then the count used.\n";

}  // namespace

int cmd_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts("options");
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (JSON)")
      ("vary", po::value<std::vector<std::string>>()->composing(), "PATH=LIST: a grid axis (repeatable)")
      ("set", po::value<std::vector<std::string>>()->composing(), "PATH=VALUE: override a scenario key first (repeatable)")
      ("seed", po::value<std::string>(), "override the scenario's seed")
      ("replications", po::value<std::string>(), "runs per point, replication r = 0..R-1 (default 1)")
      ("threads", po::value<std::string>(), "worker threads (default: all cores)")
      ("out", po::value<std::string>(), "write the CSV here (and OUT.meta.json beside it when OUT is a regular file; - is stdout) instead of stdout")
      ("shard", po::value<std::string>(), "K/N: run only the points with index % N == K")
      ("shard-count", po::value<std::string>(), "N: shard count when the shard index comes from JOB_COMPLETION_INDEX")
      ("resume", "continue an interrupted sweep from OUT.journal")
      ("progress", "report progress on stderr even when it is not a terminal");
  add_precision_options(opts, true);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const auto vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    out << kSweepHelp << '\n' << opts << '\n';
    return 0;
  }
  if (!vm.count("scenario")) throw ScenarioError("sweep: expected a scenario file, got nothing");
  const std::uint64_t replications =
      vm.count("replications") ? parse_count("--replications", vm["replications"].as<std::string>(), 1) : 1;
  const std::optional<PrecisionRule> precision = read_precision_options(vm, replications);
  const unsigned threads =
      thread_count(vm.count("threads") ? std::optional<std::string>(vm["threads"].as<std::string>()) : std::nullopt);
  const bool resume = vm.count("resume") > 0;
  const std::optional<std::string> out_path =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;
  if (resume && !out_path) throw ScenarioError("--resume", "--out FILE (the journal is kept beside it)", "no --out");
  // A FIFO, a device or stdout is streamed into: there is no folder beside it for the metadata
  // and the journal (they would land in /dev), so neither is written, and --resume cannot be.
  const bool out_is_file = out_path && !is_stream_target(*out_path);
  if (resume && !out_is_file)
    throw ScenarioError("--resume", "--out naming a regular file (the journal is kept beside it)",
                        "\"" + *out_path + "\", which is not a regular file");
  const Shard shard = select_shard(vm);

  const std::vector<std::string> sets = option_list(vm, "set"), varies = option_list(vm, "vary");
  const SweepSpace space = load_sweep_space(vm["scenario"].as<std::string>(), sets, varies, seed_option(vm));
  const std::size_t total = space.size();
  std::vector<std::size_t> mine;
  for (std::size_t p = shard.index; p < total; p += shard.count) mine.push_back(p);

  const std::vector<Scenario> scenarios = validate_points(space, mine);
  const std::vector<std::string> names = metric_names(space);  // the whole grid's: shards agree
  for (const auto& s : scenarios)
    if (s.broker.queues.size() != scenarios[0].broker.queues.size() ||
        !std::equal(s.broker.queues.begin(), s.broker.queues.end(), scenarios[0].broker.queues.begin(),
                    [](const QueueSpec& a, const QueueSpec& b) { return a.name == b.name; }))
      throw ScenarioError("--vary: expected every grid point to have the same queues (the CSV columns), got different ones");
  const std::vector<std::size_t> precision_columns =
      precision ? precision_metric_columns(*precision, names) : std::vector<std::size_t>{};

  if (out_path) {
    std::vector<NamedPath> inputs{{"the scenario file", vm["scenario"].as<std::string>()}};
    for (const auto& s : scenarios)
      for (std::size_t i = 0; i < s.producers.size(); ++i)
        if (s.producers[i].arrivals.kind == ArrivalSpec::Kind::Trace)
          inputs.push_back({"producers." + std::to_string(i) + ".arrivals.trace_csv", s.producers[i].arrivals.trace_path});
    std::vector<NamedPath> outputs{{"--out", *out_path}};
    if (out_is_file) {
      outputs.push_back({"--out's metadata", *out_path + ".meta.json"});
      outputs.push_back({"--out's resume journal", *out_path + ".journal"});
    }
    check_distinct_files(outputs, inputs);
  }

  ojson identity = sweep_identity(space, replications, sets, varies);
  if (precision) {
    // Part of what identifies the sweep (a resume or a merge must use the same rule); absent
    // without --precision, so fixed-R metadata is as it was.
    std::vector<std::string> checked;
    for (std::size_t c : precision_columns) checked.push_back(names[c]);
    identity["precision"] = {{"rel", precision->rel}, {"abs", precision->abs},
                             {"first_round", precision->first}, {"max_replications", precision->max_replications},
                             {"metrics", checked}};
  }
  // grid index -> row cells after `replications`: NAME_mean,NAME_ci95 per metric, incomplete_runs
  std::map<std::size_t, std::string> cells;
  std::optional<Journal> journal;
  if (out_is_file) {
    std::string names_joined;
    for (const auto& n : names) names_joined += n + ",";
    names_joined += "incomplete_runs";
    // With --precision a point's row starts with the replications it used (a cell more).
    if (precision) names_joined = "replications," + names_joined;
    const std::string header = "brokersim-sweep-journal v1 " +
                               hash_hex(identity.dump() + "|" + std::to_string(shard.index) + "/" +
                                        std::to_string(shard.count) + "|" + names_joined) +
                               "\n";
    journal.emplace(*out_path + ".journal", header);
    cells = journal->open(resume, 2 * names.size() + 1 + (precision ? 1 : 0));
  }

  // Tasks: the points still to run, each with its replications, in grid order.
  std::vector<std::size_t> todo;  // positions in `mine`
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (!cells.count(mine[i])) todo.push_back(i);
  const bool show = vm.count("progress") || (&err == &std::cerr && ::isatty(STDERR_FILENO) == 1);
  Progress progress(show ? &err : nullptr, mine.size(), "sweep");
  std::size_t points_done = mine.size() - todo.size();
  progress.update(points_done);
  TaskRunStats stats;
  // One row's cells after `replications`: NAME_mean,NAME_ci95 per metric, then incomplete_runs.
  const auto row_cells = [&](const std::vector<const std::vector<double>*>& reps, std::size_t incomplete) {
    const Summary s = summarize(reps);
    std::string c;
    for (std::size_t j = 0; j < names.size(); ++j) {
      if (j) c += ',';
      c += format_number(s.mean[j]) + "," + format_number(s.ci95[j]);
    }
    c += ',';
    c += std::to_string(incomplete);
    return c;
  };
  if (precision) {
    std::vector<const Scenario*> points;
    for (std::size_t k : todo) points.push_back(&scenarios[k]);
    run_sequential(
        points, *precision, threads, names,
        [&](std::size_t, const std::vector<std::vector<double>>& rows) {
          std::vector<const std::vector<double>*> reps;
          for (const auto& r : rows) reps.push_back(&r);
          const Summary s = summarize(reps);
          // A metric this point does not have (another broker kind's reason: every replication
          // NaN) has nothing to make precise.
          return std::all_of(precision_columns.begin(), precision_columns.end(), [&](std::size_t c) {
            return std::isnan(s.mean[c]) || is_precise(*precision, s.mean[c], s.ci95[c]);
          });
        },
        [&](std::size_t k, const std::vector<std::vector<double>>& rows, std::size_t incomplete) {
          std::vector<const std::vector<double>*> reps;
          for (const auto& r : rows) reps.push_back(&r);
          // The replications used lead the cells, so that the journal keeps them too.
          std::string c = std::to_string(rows.size()) + "," + row_cells(reps, incomplete);
          const std::size_t point = mine[todo[k]];
          if (journal) journal->append(point, c);
          cells[point] = std::move(c);
          progress.update(++points_done);
        },
        &stats);
  } else {
    std::vector<RunTask> tasks;
    tasks.reserve(todo.size() * replications);
    for (std::size_t i : todo)
      for (std::uint64_t r = 0; r < replications; ++r) tasks.push_back({&scenarios[i], r});
    std::vector<std::size_t> remaining(todo.size(), replications);
    run_tasks(
        tasks, threads, names,
        [&](std::size_t t, const std::vector<std::vector<double>>& rows) {
          const std::size_t k = t / replications;  // index into todo
          if (--remaining[k] > 0) return;
          std::vector<const std::vector<double>*> reps;
          for (std::uint64_t r = 0; r < replications; ++r) reps.push_back(&rows[k * replications + r]);
          std::size_t incomplete = 0;
          for (std::uint64_t r = 0; r < replications; ++r) incomplete += !stats.incomplete[k * replications + r].empty();
          std::string c = row_cells(reps, incomplete);
          const std::size_t point = mine[todo[k]];
          if (journal) journal->append(point, c);
          cells[point] = std::move(c);
          progress.update(++points_done);
        },
        &stats);
  }
  progress.finish();

  std::string csv = csv_header(space.axes, names);
  for (std::size_t p : mine) {
    const auto coords = grid_coords(space.axes, p);
    for (std::size_t a = 0; a < space.axes.size(); ++a) csv += csv_cell(space.axes[a].labels[coords[a]]) + ",";
    csv += (precision ? std::string() : std::to_string(replications) + ",") + cells.at(p) + "\n";
  }

  if (out_is_file) {
    OutputFile meta(*out_path + ".meta.json");
    meta.stream() << write_meta_text(identity, shard, mine);
    OutputFile file(*out_path);
    file.stream() << csv;
    meta.commit();
    file.commit();
    journal->remove();
  } else if (out_path) {
    OutputFile file(*out_path, &out);
    file.stream() << csv;
    file.commit();
  } else {
    out << csv;
  }
  return warn_incomplete_runs(err, stats);
}

// ---------------------------------------------------------------------------------------------
// merge

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot read file (" + std::strerror(errno) + ")");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int cmd_merge(const std::vector<std::string>& args, std::ostream& out, std::ostream&) {
  po::options_description opts(
      "usage:\n"
      "  brokersim merge SHARD1.csv SHARD2.csv ... --out results.csv\n"
      "\n"
      "options");
  opts.add_options()
      ("help,h", "show this help")
      ("shards", po::value<std::vector<std::string>>()->composing(), "shard CSV files (each with FILE.meta.json)")
      ("out", po::value<std::string>(), "the merged CSV (and OUT.meta.json)");
  po::positional_options_description pos;
  pos.add("shards", -1);
  const auto vm = parse_command_line(args, opts, pos);
  if (vm.count("help")) {
    out << opts << '\n';
    return 0;
  }
  const auto files = option_list(vm, "shards");
  if (files.empty()) throw ScenarioError("merge: expected shard CSV files, got nothing");
  if (!vm.count("out")) throw ScenarioError("merge: expected --out FILE, got nothing");
  const std::string out_path = vm["out"].as<std::string>();
  const bool out_is_file = !is_stream_target(out_path);
  {
    std::vector<NamedPath> inputs;
    for (const auto& f : files) {
      inputs.push_back({"a shard file", f});
      inputs.push_back({"a shard's metadata", f + ".meta.json"});
    }
    std::vector<NamedPath> outputs{{"--out", out_path}};
    if (out_is_file) outputs.push_back({"--out's metadata", out_path + ".meta.json"});
    check_distinct_files(outputs, inputs);
  }

  ojson identity;
  std::string header;
  std::map<std::size_t, std::pair<std::string, std::size_t>> lines;  // grid index -> (row, file number)
  std::string points_key;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string& file = files[f];
    const std::string meta_path = file + ".meta.json";
    ojson meta;
    try {
      meta = ojson::parse(read_text(meta_path));
    } catch (const ojson::exception& e) {
      throw ScenarioError(meta_path + ": invalid sweep metadata (" + e.what() + ")");
    }
    if (!meta.is_object() || !meta.contains("rows") || !meta["rows"].is_array() || !meta.contains("points") ||
        !meta.contains("shard"))
      throw ScenarioError(meta_path + ": not the metadata of a brokersim sweep (no points, shard or rows)");
    ojson id = meta;
    id.erase("shard");
    id.erase("rows");
    if (f == 0) {
      identity = id;
    } else if (id != identity) {
      std::string key = "?";
      for (auto it = identity.begin(); it != identity.end(); ++it)
        if (!id.contains(it.key()) || id[it.key()] != it.value()) {
          key = it.key();
          break;
        }
      throw ScenarioError("merge: " + file + " is from a different sweep than " + files[0] + " (" + key + " differs)");
    }
    const std::string text = read_text(file);
    if (!text.empty() && text.back() != '\n') throw ScenarioError("merge: " + file + ": incomplete last line");
    auto rows = split(text, '\n');
    rows.pop_back();  // after the final newline
    if (rows.empty()) throw ScenarioError("merge: " + file + ": no CSV header");
    if (f == 0)
      header = rows[0];
    else if (rows[0] != header)
      throw ScenarioError("merge: " + file + " has other columns than " + files[0]);
    const auto& indices = meta["rows"];
    if (indices.size() != rows.size() - 1)
      throw ScenarioError("merge: " + file + " has " + std::to_string(rows.size() - 1) + " rows, its metadata lists " +
                          std::to_string(indices.size()));
    const std::size_t points = meta["points"].get<std::size_t>();
    for (std::size_t i = 0; i < indices.size(); ++i) {
      const std::size_t p = indices[i].get<std::size_t>();
      if (p >= points) throw ScenarioError(meta_path + ": grid index " + std::to_string(p) + " out of range");
      const auto [it, fresh] = lines.emplace(p, std::make_pair(rows[i + 1], f));
      if (!fresh)
        throw ScenarioError("merge: grid point " + std::to_string(p) + " is in both " + files[it->second.second] +
                            " and " + file + " (overlapping shards)");
    }
  }
  const std::size_t points = identity["points"].get<std::size_t>();
  if (lines.size() != points) {
    std::string missing;
    std::size_t n = 0;
    for (std::size_t p = 0; p < points; ++p)
      if (!lines.count(p)) {
        if (n < 10) missing += (n ? ", " : "") + std::to_string(p);
        ++n;
      }
    if (n > 10) missing += ", ...";
    throw ScenarioError("merge: " + std::to_string(n) + " of " + std::to_string(points) +
                        " grid points are missing (" + missing + "): run their shards and merge again");
  }
  std::string csv = header + "\n";
  std::vector<std::size_t> all;
  for (const auto& [p, row] : lines) {
    csv += row.first + "\n";
    all.push_back(p);
  }
  if (!out_is_file) {  // streamed like sweep --out: no metadata beside a device or pipe
    OutputFile file(out_path, &out);
    file.stream() << csv;
    file.commit();
    return 0;
  }
  OutputFile meta(out_path + ".meta.json");
  meta.stream() << write_meta_text(identity, Shard{}, all);
  OutputFile file(out_path);
  file.stream() << csv;
  meta.commit();
  file.commit();
  return 0;
}

}  // namespace brokersim
