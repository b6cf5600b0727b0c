// brokersim merge: the shards of one sweep (each CSV with its FILE.meta.json) put back into the
// CSV the whole sweep would have written.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "experiments/cli_options.hpp"
#include "experiments/commands/commands.hpp"
#include "experiments/output_file.hpp"
#include "experiments/replication/shards.hpp"
#include "experiments/text.hpp"
#include "models/scenario.hpp"

namespace po = boost::program_options;

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;

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
