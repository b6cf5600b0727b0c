// brokersim merge: the shards of one sweep (each CSV with its FILE.meta.json) put back into the
// CSV the whole sweep would have written.
#include <map>
#include <optional>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli/options.hpp"
#include "experiments/cli/commands/commands.hpp"
#include "experiments/cli/input_file.hpp"
#include "experiments/cli/output_file.hpp"
#include "experiments/cli/replication/journal.hpp"
#include "experiments/cli/replication/shards.hpp"
#include "experiments/cli/text.hpp"
#include "models/scenario.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;

// A shard's CSV and metadata are a sweep's results: read only when regular files, so that a FIFO
// under a shard's name is refused at once instead of blocking the merge.
std::string read_text(const std::string& path) { return read_regular_file(path, ""); }

// The cells of one CSV line as sweep writes them (csv_cell: a cell with a comma, quote or line
// break is quoted, quotes doubled); nullopt when a quote is not closed or text follows one.
std::optional<std::vector<std::string>> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  std::size_t i = 0;
  while (i <= line.size()) {
    std::string& cell = cells.back();
    if (i < line.size() && line[i] == '"') {
      for (++i;; ++i) {
        if (i >= line.size()) return std::nullopt;
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            ++i;
          } else {
            ++i;
            break;
          }
        } else {
          cell += line[i];
        }
      }
      if (i < line.size() && line[i] != ',') return std::nullopt;
    } else {
      while (i < line.size() && line[i] != ',') cell += line[i++];
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    cells.emplace_back();
  }
  return cells;
}

// After the grid paths: replications, then per metric NAME_mean, NAME_ci95 (and, when the
// metadata says spread, NAME_p05, NAME_p95), then the steady-state quantiles'
// wait_ms.STAGE.pNN_pooled_mean, _ci95 (never a spread), then incomplete_runs: a header that does
// not match its metadata (a --spread CSV beside plain metadata, or the reverse) is refused naming
// the column.
void check_metric_columns(const std::vector<std::string>& header, std::size_t axes, bool spread, const std::string& at) {
  const auto fail = [&](std::size_t c, const std::string& expected) {
    throw ScenarioError(at + "column " + std::to_string(c + 1) + " is " + quote(header[c]) + ", expected " + expected +
                        (spread ? " (the metadata has spread)" : " (the metadata has no spread)"));
  };
  const auto ends_with = [](const std::string& s, const std::string& suffix) {
    return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (header[axes] != "replications") fail(axes, "replications");
  if (header.back() != "incomplete_runs") fail(header.size() - 1, "incomplete_runs");
  for (std::size_t c = axes + 1; c + 1 < header.size();) {
    if (!ends_with(header[c], "_mean")) fail(c, "a NAME_mean column");
    const std::string base = header[c].substr(0, header[c].size() - 5);
    const std::vector<std::string> suffixes = spread && !ends_with(base, "_pooled")
                                                  ? std::vector<std::string>{"_mean", "_ci95", "_p05", "_p95"}
                                                  : std::vector<std::string>{"_mean", "_ci95"};
    for (std::size_t k = 1; k < suffixes.size(); ++k)
      if (c + k + 1 >= header.size() || header[c + k] != base + suffixes[k]) fail(std::min(c + k, header.size() - 2), quote(base + suffixes[k]));
    c += suffixes.size();
  }
}

// The files the shards read, each (file, key) once, sorted: a file two shards read with other
// contents (replaced between their runs) is refused, naming the file and both shards, since the
// merged grid would be runs of two workloads.
class ShardInputs {
 public:
  void add(const std::vector<PinnedInput>& inputs, const std::string& shard) {
    for (const PinnedInput& p : inputs) {
      const auto [it, fresh] = first_.emplace(p.file, std::make_pair(p.fnv1a64, shard));
      if (!fresh && it->second.first != p.fnv1a64)
        throw ScenarioError("merge: " + shard + " and " + it->second.second + " read " + p.key + ", the file " + quote(p.file) +
                            ", with other contents (FNV-1a 64 " + p.fnv1a64 + " and " + it->second.first +
                            "): it was replaced between the shards' runs; run them again on one version of it");
      all_.push_back(p);
    }
  }
  std::vector<PinnedInput> all() const {
    std::vector<PinnedInput> out = all_;
    sort_inputs(out);
    return out;
  }

 private:
  std::map<std::string, std::pair<std::string, std::string>> first_;  // file -> (hash, the shard that read it first)
  std::vector<PinnedInput> all_;
};

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
  std::size_t points = 0;
  ShardInputs inputs;
  for (std::size_t f = 0; f < files.size(); ++f) {
    const std::string& file = files[f];
    const std::string meta_path = file + ".meta.json";
    const ShardMeta meta = read_shard_meta(meta_path, read_text(meta_path));
    if (f == 0) {
      identity = meta.identity;
      points = meta.points;
    } else if (meta.identity != identity) {
      std::string key = "?";
      for (auto it = identity.begin(); it != identity.end(); ++it)
        if (!meta.identity.contains(it.key()) || meta.identity[it.key()] != it.value()) {
          key = it.key();
          break;
        }
      throw ScenarioError("merge: " + file + " is from a different sweep than " + files[0] + " (" + key + " differs)");
    }
    inputs.add(meta.inputs, file);
    // Every line is checked against the metadata: a shard whose rows were cut, swapped, edited or
    // written by another sweep is refused, naming the line.
    const auto at = [&](std::size_t line) { return "merge: " + file + ":" + std::to_string(line) + ": "; };
    const std::string text = read_text(file);
    if (!text.empty() && text.back() != '\n') throw ScenarioError("merge: " + file + ": incomplete last line");
    auto rows = split(text, '\n');
    rows.pop_back();  // after the final newline
    if (rows.empty()) throw ScenarioError("merge: " + file + ": no CSV header");
    if (f == 0)
      header = rows[0];
    else if (rows[0] != header)
      throw ScenarioError("merge: " + file + " has other columns than " + files[0]);
    const auto header_cells = csv_cells(rows[0]);
    if (!header_cells) throw ScenarioError(at(1) + "the header has an unclosed quote");
    const std::size_t axes = meta.paths.size();
    if (header_cells->size() < axes + 2)
      throw ScenarioError(at(1) + "the header has " + std::to_string(header_cells->size()) + " columns, fewer than the " +
                          std::to_string(axes) + " grid paths, replications and incomplete_runs");
    for (std::size_t a = 0; a < axes; ++a)
      if ((*header_cells)[a] != meta.paths[a])
        throw ScenarioError(at(1) + "column " + std::to_string(a + 1) + " is " + quote((*header_cells)[a]) +
                            ", the metadata's grid path is " + quote(meta.paths[a]));
    check_metric_columns(*header_cells, axes, meta.spread, at(1));
    if (meta.csv_rows != rows.size() - 1)
      throw ScenarioError("merge: " + file + " has " + std::to_string(rows.size() - 1) + " rows, its metadata lists " +
                          std::to_string(meta.csv_rows));
    for (std::size_t i = 0; i < meta.rows.size(); ++i) {
      const std::size_t p = meta.rows[i];
      const auto cells = csv_cells(rows[i + 1]);
      if (!cells) throw ScenarioError(at(i + 2) + "a quote is not closed");
      if (cells->size() != header_cells->size())
        throw ScenarioError(at(i + 2) + "the row has " + std::to_string(cells->size()) + " cells, the header " +
                            std::to_string(header_cells->size()) + " (a cut or edited row)");
      std::size_t rest = p;
      for (std::size_t a = axes; a-- > 0;) {
        const std::string& want = meta.labels[a][rest % meta.labels[a].size()];
        rest /= meta.labels[a].size();
        if ((*cells)[a] != want)
          throw ScenarioError(at(i + 2) + meta.paths[a] + " is " + quote((*cells)[a]) + ", grid point " + std::to_string(p) +
                              " (row " + std::to_string(i + 1) + " of the metadata) has " + quote(want) +
                              " (rows swapped or edited)");
      }
      const auto [it, fresh] = lines.emplace(p, std::make_pair(rows[i + 1], f));
      if (!fresh)
        throw ScenarioError("merge: grid point " + std::to_string(p) + " is in both " + files[it->second.second] +
                            " and " + file + " (overlapping shards)");
    }
    if (hash_hex(text) != meta.csv_fnv1a64)
      throw ScenarioError("merge: " + file + ": its bytes do not match the checksum in " + meta_path +
                          " (csv_fnv1a64): the CSV was edited, or the metadata is another sweep's");
  }
  if (lines.size() != points) {
    // At most lines.size() + 10 steps, whatever `points` says.
    std::string missing;
    std::size_t n = 0;
    for (std::size_t p = 0; p < points && n < 10; ++p)
      if (!lines.count(p)) missing += (n++ ? ", " : "") + std::to_string(p);
    n = points - lines.size();
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
  if (const auto read = inputs.all(); !read.empty()) identity["inputs"] = inputs_json(read);
  meta.stream() << write_meta_text(identity, Shard{}, all, csv);
  OutputFile file(out_path);
  file.stream() << csv;
  meta.commit();
  file.commit();
  return 0;
}

}  // namespace brokersim
