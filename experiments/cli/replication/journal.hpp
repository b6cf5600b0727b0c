// The resume journal of `sweep --out FILE`: the points a sweep has finished, kept beside FILE
// (FILE.journal) so that `--resume` runs only the others.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>

namespace brokersim {

// 64-bit FNV-1a, printed as 16 hex digits: a journal line's checksum and the sweep's identity.
std::string hash_hex(const std::string& text);

// Append-only journal of finished points: a header line naming the sweep, then one line per point
// "P INDEX CELLS CHECKSUM" written with a single write(2), so a SIGKILL leaves at most a torn last
// line, which the checksum rejects.
class Journal {
 public:
  Journal(std::string path, std::string header) : path_(std::move(path)), header_(std::move(header)) {}
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Read finished points (when resuming), then rewrite the file with only its valid lines so that
  // appends never follow a torn line.
  std::map<std::size_t, std::string> open(bool resume, std::size_t cells_expected);

  void append(std::size_t index, const std::string& cells);

  void remove();

 private:
  std::string path_, header_;
  int fd_ = -1;
};

}  // namespace brokersim
