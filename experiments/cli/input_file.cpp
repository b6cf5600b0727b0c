// Input files read only when regular, and pinned by their contents (experiments/cli/input_file.hpp).
#include "experiments/cli/input_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <map>
#include <tuple>
#include <sys/stat.h>
#include <unistd.h>

#include "experiments/cli/text.hpp"

namespace brokersim {

namespace {

using ojson = nlohmann::ordered_json;

std::string kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a file that is not a regular one";
}

[[noreturn]] void not_regular(const std::string& path, mode_t mode, const std::string& hint) {
  throw ScenarioError(path + ": expected a regular file, got " + kind_of(mode) + hint);
}

[[noreturn]] void cannot_read(const std::string& path, int error, const std::string& hint) {
  throw ScenarioError(path + ": cannot read file (" + std::strerror(error) + ")" + hint);
}

std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string shown_input(const PinnedInput& p) { return p.key + ": the file " + quote(p.file); }

}  // namespace

std::string read_regular_file(const std::string& path, const std::string& hint) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) cannot_read(path, errno, hint);
  if (!S_ISREG(st.st_mode)) not_regular(path, st.st_mode, hint);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) cannot_read(path, errno, hint);
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    not_regular(path, st.st_mode, hint);
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      cannot_read(path, error, hint);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

std::vector<PinnedInput> pinned_inputs(const std::vector<Scenario>& scenarios) {
  std::vector<PinnedInput> out;
  std::map<std::string, std::string> hash_of;  // file -> its contents' hash
  for (const Scenario& s : scenarios)
    for (std::size_t i = 0; i < s.producers.size(); ++i) {
      const ArrivalSpec& a = s.producers[i].arrivals;
      if (a.kind != ArrivalSpec::Kind::Trace) continue;
      PinnedInput p{std::filesystem::absolute(a.trace_path).lexically_normal().string(),
                    "producers." + std::to_string(i) + ".arrivals." + (a.days() ? "days_csv" : "trace_csv"),
                    hex16(a.trace_fnv1a64)};
      const auto [it, fresh] = hash_of.emplace(p.file, p.fnv1a64);
      if (!fresh && it->second != p.fnv1a64)
        throw ScenarioError(shown_input(p) + " changed while the grid's scenarios were read (FNV-1a 64 of its contents " +
                            it->second + ", then " + p.fnv1a64 + "): run again once it is written");
      out.push_back(std::move(p));
    }
  sort_inputs(out);
  return out;
}

void sort_inputs(std::vector<PinnedInput>& inputs) {
  const auto order = [](const PinnedInput& a, const PinnedInput& b) { return std::tie(a.file, a.key) < std::tie(b.file, b.key); };
  std::sort(inputs.begin(), inputs.end(), order);
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
}

ojson inputs_json(const std::vector<PinnedInput>& inputs) {
  ojson a = ojson::array();
  for (const PinnedInput& p : inputs) a.push_back({{"file", p.file}, {"key", p.key}, {"fnv1a64", p.fnv1a64}});
  return a;
}

std::vector<PinnedInput> read_inputs_json(const ojson& v, const std::string& where) {
  const auto bad = [&](const std::string& key, const std::string& expected, const ojson& got) {
    std::string shown = got.dump(-1, ' ', false, ojson::error_handler_t::replace);
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    throw ScenarioError(where + ": " + key, expected, shown);
  };
  if (!v.is_array()) bad("inputs", "a list of {file, key, fnv1a64}", v);
  std::vector<PinnedInput> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = "inputs." + std::to_string(i);
    const ojson& e = v[i];
    if (!e.is_object() || e.size() != 3) bad(at, "an object {file, key, fnv1a64}", e);
    PinnedInput p;
    for (auto [key, field] : {std::pair{"file", &p.file}, std::pair{"key", &p.key}, std::pair{"fnv1a64", &p.fnv1a64}}) {
      const auto it = e.find(key);
      if (it == e.end() || !it->is_string() || it->get_ref<const std::string&>().empty())
        bad(at + "." + key, "a non-empty string", it == e.end() ? ojson() : *it);
      *field = it->get<std::string>();
    }
    if (p.fnv1a64.size() != 16 || p.fnv1a64.find_first_not_of("0123456789abcdef") != std::string::npos)
      bad(at + ".fnv1a64", "16 lower-case hex digits", e["fnv1a64"]);
    out.push_back(std::move(p));
  }
  return out;
}

std::string input_change(const std::vector<PinnedInput>& then, const std::vector<PinnedInput>& now) {
  for (const PinnedInput& n : now) {
    const auto same_file = [&](const PinnedInput& t) { return t.file == n.file; };
    const auto t = std::find_if(then.begin(), then.end(), same_file);
    if (t == then.end()) return n.key + " reads the file " + quote(n.file) + ", which it did not read then";
    if (t->fnv1a64 != n.fnv1a64)
      return shown_input(n) + " changed (FNV-1a 64 of its contents " + t->fnv1a64 + " then, " + n.fnv1a64 + " now)";
  }
  for (const PinnedInput& t : then)
    if (std::none_of(now.begin(), now.end(), [&](const PinnedInput& n) { return n.file == t.file && n.key == t.key; }))
      return t.key + " read the file " + quote(t.file) + " then, and does not now";
  return "";
}

}  // namespace brokersim
