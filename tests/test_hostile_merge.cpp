// Second hostile round (issue 22), sweep --out and merge: metadata that says which CSV it belongs
// to (a checksum and a row count), every shard row checked against it, every metadata number and
// type checked with the file and key named, and outputs checked before the sweep runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "experiments/cli/replication/journal.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;

namespace {

using brokersim::test::read_file;
using brokersim::test::run_cli;
using ojson = nlohmann::ordered_json;

constexpr const char* kScenario = R"({"name": "hostile-merge", "seed": 3, "stop": {"jobs": 60},
  "broker": {"queues": {"work": {}}},
  "producers": [{"queue": "work", "arrivals": {"poisson": {"rate_per_s": 40}}, "service_ms": {"exp": {"mean": 30}}}],
  "consumers": [{"queue": "work", "count": 1, "prefetch": 1}]})";

struct MergeDir : brokersim::test::ScratchDir {
  std::string scenario;
  MergeDir() : ScratchDir("brokersim-hostile-merge"), scenario(write("s.json", kScenario)) {}

  // A 2 x 2 grid: shard 0/2 holds points 0 (prefetch 1, count 1) and 2 (prefetch 2, count 1),
  // shard 1/2 points 1 and 3.
  brokersim::test::CliResult sweep(const std::string& out, const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"sweep", scenario, "--vary", "consumers.0.prefetch=1,2", "--vary",
                                     "consumers.0.count=1,2", "--threads", "1", "--out", out};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  }
  brokersim::test::CliResult merge() const {
    return run_cli({"merge", path("s0.csv"), path("s1.csv"), "--out", path("m.csv")});
  }
  void make_shards() const {
    REQUIRE(sweep(path("s0.csv"), {"--shard", "0/2"}).status == 0);
    REQUIRE(sweep(path("s1.csv"), {"--shard", "1/2"}).status == 0);
  }
};

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::vector<std::string> lines_with_newlines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl + 1 - start));
  return out;
}

}  // namespace

TEST_CASE("hostile merge: sweep metadata records the CSV's row count and checksum - another sweep's rows are refused") {
  MergeDir d;
  const std::string out = d.path("x.csv");
  REQUIRE(d.sweep(out).status == 0);
  const std::string old_rows = read_file(out);
  const auto meta = ojson::parse(read_file(out + ".meta.json"));
  CHECK(meta["csv_rows"] == 4);
  CHECK(meta["csv_fnv1a64"] == brokersim::hash_hex(old_rows));
  // The keys after the shard and its rows, the rest as before.
  std::vector<std::string> keys;
  for (auto it = meta.begin(); it != meta.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"brokersim_version", "scenario", "scenario_hash", "seed", "replications", "set",
                                         "vary", "grid", "points", "shard", "rows", "csv_rows", "csv_fnv1a64"});

  // A second sweep whose metadata was committed but whose CSV was not (disk full): the new
  // metadata beside the old rows. merge refuses the pair.
  REQUIRE(d.sweep(out, {"--seed", "4"}).status == 0);
  REQUIRE(read_file(out) != old_rows);
  write_text(out, old_rows);
  const auto r = run_cli({"merge", out, "--out", d.path("m.csv")});
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: merge: " + out + ": its bytes do not match the checksum in " + out +
                     ".meta.json (csv_fnv1a64): the CSV was edited, or the metadata is another sweep's\n");
  CHECK(!fs::exists(d.path("m.csv")));
}

TEST_CASE("hostile merge: every shard row is checked against its metadata - file, line and reason") {
  MergeDir d;
  d.make_shards();
  REQUIRE(d.merge().status == 0);
  const std::string s0 = d.path("s0.csv"), s1 = d.path("s1.csv");
  const std::string good0 = read_file(s0), good1 = read_file(s1);
  const auto rows0 = lines_with_newlines(good0), rows1 = lines_with_newlines(good1);
  REQUIRE(rows0.size() == 3);
  const auto expect_refused = [&](const std::string& text, const std::string& message) {
    write_text(s0, text);
    fs::remove(d.path("m.csv"));
    const auto r = d.merge();
    CHECK(r.status == 2);
    CHECK(r.err == "brokersim: error: " + message + "\n");
    CHECK(!fs::exists(d.path("m.csv")));
    write_text(s0, good0);
  };
  // The last row cut in half, its newline kept.
  const std::string half = rows0[2].substr(0, rows0[2].size() / 2) + "\n";
  const std::size_t columns = static_cast<std::size_t>(std::count(rows0[0].begin(), rows0[0].end(), ',')) + 1;
  const std::size_t half_cells = static_cast<std::size_t>(std::count(half.begin(), half.end(), ',')) + 1;
  expect_refused(rows0[0] + rows0[1] + half, "merge: " + s0 + ":3: the row has " + std::to_string(half_cells) +
                                                 " cells, the header " + std::to_string(columns) + " (a cut or edited row)");
  // Rows swapped.
  expect_refused(rows0[0] + rows0[2] + rows0[1],
                 "merge: " + s0 + ":2: consumers.0.prefetch is \"2\", grid point 0 (row 1 of the metadata) has \"1\" "
                 "(rows swapped or edited)");
  // A label edited.
  std::string edited = rows0[2];
  edited.replace(edited.find(','), 2, ",2");  // consumers.0.count 1 -> 2
  expect_refused(rows0[0] + rows0[1] + edited,
                 "merge: " + s0 + ":3: consumers.0.count is \"2\", grid point 2 (row 2 of the metadata) has \"1\" "
                 "(rows swapped or edited)");
  // A number edited: the cells still line up; the checksum does not.
  std::string number = rows0[1];
  const std::size_t digit = number.find_first_of("3456789", number.find(",1,") + 3);
  REQUIRE(digit != std::string::npos);
  number[digit] = number[digit] == '9' ? '8' : '9';
  expect_refused(rows0[0] + number + rows0[2],
                 "merge: " + s0 + ": its bytes do not match the checksum in " + s0 +
                     ".meta.json (csv_fnv1a64): the CSV was edited, or the metadata is another sweep's");
  // A row missing; a row too many.
  expect_refused(rows0[0] + rows0[1], "merge: " + s0 + " has 1 rows, its metadata lists 2");
  expect_refused(good0 + rows1[1], "merge: " + s0 + " has 3 rows, its metadata lists 2");
  // A header whose grid column is renamed (every shard renamed alike).
  std::string header = rows0[0];
  header.replace(0, std::string("consumers.0.prefetch").size(), "prefetch");
  write_text(s1, header + rows1[1] + rows1[2]);
  expect_refused(header + rows0[1] + rows0[2],
                 "merge: " + s0 + ":1: column 1 is \"prefetch\", the metadata's grid path is \"consumers.0.prefetch\"");
  write_text(s1, good1);
  REQUIRE(d.merge().status == 0);
}

TEST_CASE("hostile merge: metadata numbers and types are checked, naming the file and the key (no endless loop)") {
  MergeDir d;
  d.make_shards();
  const std::string meta_path = d.path("s0.csv") + ".meta.json";
  const std::string good = read_file(meta_path);
  const auto refused = [&](const std::function<void(ojson&)>& edit) {
    ojson meta = ojson::parse(good);
    edit(meta);
    write_text(meta_path, meta.dump(2) + "\n");
    const auto r = d.merge();
    write_text(meta_path, good);
    CHECK(r.status == 2);
    CHECK(!fs::exists(d.path("m.csv")));
    return r.err;
  };
  const std::string prefix = "brokersim: error: " + meta_path + ": ";
  // Item 7: points far too large, negative, or not the grid's.
  CHECK(refused([](ojson& m) { m["points"] = 1e15; }) ==
        prefix + "points: expected an integer from 1 to 10000000, got 1e+15\n");
  CHECK(refused([](ojson& m) { m["points"] = -1; }) == prefix + "points: expected an integer from 1 to 10000000, got -1\n");
  CHECK(refused([](ojson& m) { m["points"] = 1000000000000000ULL; }) ==
        prefix + "points: expected an integer from 1 to 10000000, got 1000000000000000\n");
  CHECK(refused([](ojson& m) { m["points"] = 6; }) ==
        prefix + "points: expected the product of the grid's value counts (4), got 6\n");
  CHECK(refused([](ojson& m) { m["shard"]["count"] = 0; }) == prefix + "shard.count: expected an integer from 1 to 4, got 0\n");
  CHECK(refused([](ojson& m) { m["shard"]["index"] = 2; }) == prefix + "shard.index: expected an integer from 0 to 1, got 2\n");
  CHECK(refused([](ojson& m) { m["rows"][1] = -1; }) == prefix + "rows.1: expected 2 (the shard's points in order), got -1\n");
  CHECK(refused([](ojson& m) { m["rows"].push_back(4); }) ==
        prefix + "rows: expected an array of the 2 grid points of shard 0/2, got \"3 entries\"\n");
  CHECK(refused([](ojson& m) { m["csv_rows"] = 3; }) == prefix + "csv_rows: expected an integer from 2 to 2, got 3\n");
  CHECK(refused([](ojson& m) { m["replications"] = 0.5; }) ==
        prefix + "replications: expected an integer from 1 to 9223372036854775807, got 0.5\n");
  // Item 16: wrong types name the file and the key, not the JSON library.
  CHECK(refused([](ojson& m) { m["points"] = "4"; }) == prefix + "points: expected an integer from 1 to 10000000, got \"4\"\n");
  CHECK(refused([](ojson& m) { m["rows"] = "0,2"; }) ==
        prefix + "rows: expected an array of the 2 grid points of shard 0/2, got \"0,2\"\n");
  CHECK(refused([](ojson& m) { m["shard"] = ojson::array(); }) == prefix + "shard: expected an object with index and count, got []\n");
  CHECK(refused([](ojson& m) { m["grid"][0]["labels"][1] = 2; }) == prefix + "grid.0.labels.1: expected a string, got 2\n");
  CHECK(refused([](ojson& m) { m["grid"] = 5; }) == prefix + "grid: expected an array of axes, got 5\n");
  CHECK(refused([](ojson& m) { m["seed"] = "3"; }) ==
        prefix + "seed: expected an integer from 0 to 18446744073709551615, got \"3\"\n");
  CHECK(refused([](ojson& m) { m.erase("csv_fnv1a64"); }) == prefix + "csv_fnv1a64: expected a string, got nothing\n");
  CHECK(refused([](ojson& m) { m["csv_fnv1a64"] = "xyz"; }) ==
        prefix + "csv_fnv1a64: expected 16 lower-case hex digits, got \"xyz\"\n");
  CHECK(refused([](ojson& m) { m = ojson::array(); }) ==
        prefix + "the document: expected an object (the metadata of a brokersim sweep), got []\n");
  // Not JSON at all: the file named.
  write_text(meta_path, "{\"points\": ");
  const auto r = d.merge();
  write_text(meta_path, good);
  CHECK(r.status == 2);
  CHECK(r.err.rfind(prefix + "invalid sweep metadata (", 0) == 0);
  REQUIRE(d.merge().status == 0);
}

TEST_CASE("hostile merge: sweep --out is checked before any point runs - a folder, a folder in the metadata's place, a FIFO nobody reads") {
  MergeDir d;
  // A sweep that would run for minutes: each refusal must come before the first point.
  const std::string endless = d.write("long.json", std::string(kScenario).replace(std::string(kScenario).find("60}"), 3,
                                                                                     "100000000}"));
  const auto sweep = [&](const std::string& out) {
    return run_cli({"sweep", endless, "--vary", "consumers.0.prefetch=1,2", "--threads", "1", "--out", out});
  };
  fs::create_directory(d.path("folder"));
  auto r = sweep(d.path("folder"));
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: " + d.path("folder") + ": cannot open for writing (Is a directory)\n");
  // The metadata's name taken by a folder: refused before the run, no journal left behind.
  fs::create_directory(d.path("x.csv.meta.json"));
  r = sweep(d.path("x.csv"));
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: " + d.path("x.csv.meta.json") + ": cannot open for writing (Is a directory)\n");
  // A FIFO without a reader is refused after 5 s, not waited on for ever.
  REQUIRE(::mkfifo(d.path("fifo").c_str(), 0600) == 0);
  r = sweep(d.path("fifo"));
  CHECK(r.status == 2);
  CHECK(r.err == "brokersim: error: --out: expected a FIFO that a process is reading (sweep waits 5 s for a reader), got \"" +
                     d.path("fifo") + "\", which no process opened for reading\n");
  // Nothing left behind by the checks.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(d.dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"fifo", "folder", "long.json", "s.json", "x.csv.meta.json"});
}
