#include "experiments/cli/replication/journal.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "experiments/cli/output_file.hpp"
#include "experiments/cli/text.hpp"
#include "models/scenario.hpp"

namespace brokersim {

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

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t Journal::check_inputs(const std::string& text, std::size_t start) const {
  std::vector<PinnedInput> then;
  while (text.compare(start, 2, "I ") == 0) {
    const auto end = text.find('\n', start);
    if (end == std::string::npos) break;
    nlohmann::ordered_json entry;
    try {
      entry = nlohmann::ordered_json::parse(text.substr(start + 2, end - start - 2));
    } catch (const nlohmann::ordered_json::exception&) {
      throw ScenarioError(path_ + ": a damaged input line (\"I ...\"); delete the journal or run without --resume");
    }
    const auto one = read_inputs_json(nlohmann::ordered_json::array({entry}), path_);
    then.push_back(one[0]);
    start = end + 1;
  }
  if (const std::string change = input_change(then, inputs_); !change.empty())
    throw ScenarioError(path_ + ": " + change + " since the journal was begun: the points done and the points to do would "
                        "run on two workloads; put the file back as it was, or delete the journal or run without --resume");
  return start;
}

std::map<std::size_t, std::string> Journal::open(bool resume, std::size_t cells_expected) {
  std::map<std::size_t, std::string> done;
  std::string kept = header_;
  for (const PinnedInput& p : inputs_) kept += "I " + inputs_json({p})[0].dump() + "\n";
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
        std::size_t start = check_inputs(text, nl + 1);
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

void Journal::append(std::size_t index, const std::string& cells) {
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

void Journal::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::remove(path_.c_str());
}

}  // namespace brokersim
