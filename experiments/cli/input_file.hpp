// Files a command reads back or reads beside the scenario's JSON. A file brokersim wrote for
// itself (a plan's stage folder) is read only when it is a regular file. The files a scenario
// reads (producers.N.arrivals.trace_csv, days_csv) are pinned by their contents wherever runs
// made apart are put together (a staged plan's stages, a sweep's shards, a resumed sweep): the
// scenario's hash covers their names, not what is in them, and a file replaced between two parts
// would make one answer of two workloads.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace brokersim {

// The file's bytes. Anything but a regular file (a FIFO, which blocks a reader until something
// writes it; a device, a socket, a folder) is a ScenarioError "PATH: expected a regular file, got
// a FIFO (named pipe)" followed by `hint`, at once: checked before it is opened, and again on the
// descriptor, opened non-blocking, so that a FIFO put there in between blocks nothing either.
std::string read_regular_file(const std::string& path, const std::string& hint);

// A file a scenario reads, and its contents' FNV-1a 64 as the loader read it.
struct PinnedInput {
  std::string file;     // absolute, normalised
  std::string key;      // the scenario key naming it (producers.N.arrivals.days_csv)
  std::string fnv1a64;  // 16 lower-case hex digits
  friend bool operator==(const PinnedInput&, const PinnedInput&) = default;
};

// The files of every scenario, each (file, key) once, sorted by file then key. A file read with
// two contents (replaced while the scenarios were loaded) is a ScenarioError naming it.
std::vector<PinnedInput> pinned_inputs(const std::vector<Scenario>& scenarios);

// Sorted by file then key, each (file, key) once: the one order metadata writes them in.
void sort_inputs(std::vector<PinnedInput>& inputs);

// As metadata writes them: [{"file": ..., "key": ..., "fnv1a64": ...}, ...].
nlohmann::ordered_json inputs_json(const std::vector<PinnedInput>& inputs);
// Read back and checked; a ScenarioError "WHERE: inputs.K.file: expected a string, got ..." on
// anything else.
std::vector<PinnedInput> read_inputs_json(const nlohmann::ordered_json& v, const std::string& where);

// "" when `now` reads the files `then` pinned, with the same contents; else the first difference,
// naming the key and the file: "producers.0.arrivals.days_csv: the file \"/d/days.csv\" changed
// (FNV-1a 64 of its contents 0123... then, 4567... now)", or a file only one of them reads.
std::string input_change(const std::vector<PinnedInput>& then, const std::vector<PinnedInput>& now);

}  // namespace brokersim
