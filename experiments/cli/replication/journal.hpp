// The resume journal of `sweep --out FILE`: the points a sweep has finished, kept beside FILE
// (FILE.journal) so that `--resume` runs only the others.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "experiments/cli/input_file.hpp"

namespace brokersim {

// 64-bit FNV-1a, printed as 16 hex digits: a journal line's checksum and the sweep's identity.
std::string hash_hex(const std::string& text);

// Append-only journal of finished points: a header line naming the sweep, a line "I {JSON}" per
// file the sweep's scenarios read (input_file.hpp), then one line per point "P INDEX CELLS
// CHECKSUM" written with a single write(2), so a SIGKILL leaves at most a torn last line, which the
// checksum rejects. A resume whose files' contents differ from the journal's is refused, naming
// the file: the points done and the points to do would be runs of two workloads.
class Journal {
 public:
  Journal(std::string path, std::string header, std::vector<PinnedInput> inputs = {})
      : path_(std::move(path)), header_(std::move(header)), inputs_(std::move(inputs)) {}
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Read finished points (when resuming), then rewrite the file with only its valid lines so that
  // appends never follow a torn line.
  std::map<std::size_t, std::string> open(bool resume, std::size_t cells_expected);

  void append(std::size_t index, const std::string& cells);

  void remove();

 private:
  // The journal's "I" lines from `start` on, checked against inputs_; returns where they end.
  std::size_t check_inputs(const std::string& text, std::size_t start) const;
  std::string path_, header_;
  std::vector<PinnedInput> inputs_;
  int fd_ = -1;
};

}  // namespace brokersim
