#include "experiments/cli/output_file.hpp"

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

#include "models/scenario.hpp"

namespace fs = std::filesystem;

namespace brokersim {

namespace {

// Paths of partial files, readable from a signal handler: fixed storage, no allocation there.
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
std::array<char[kPathMax], kSlots> g_paths{};
std::array<std::atomic<bool>, kSlots> g_used{};
std::mutex g_mutex;

// Every signal whose default action ends the process: a partial file must not outlive it
// (SIGPIPE: a reader closed the FIFO or pipe an output streams into).
constexpr int kFatalSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ};

void on_signal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i].load()) ::unlink(g_paths[i]);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

int register_partial(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (int i = 0; i < kSlots; ++i) {
    if (!g_used[i].load()) {
      std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
      g_used[i].store(true);
      return i;
    }
  }
  return -1;
}

void unregister_partial(int slot) {
  if (slot >= 0) g_used[slot].store(false);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Names of already-open descriptors: renaming "beside" them would write into /dev or /proc, and
// they stand for whatever the shell connected, which may be a regular file opened for appending.
bool names_descriptor(const std::string& path) {
  return path == "/dev/stdout" || path == "/dev/stderr" || starts_with(path, "/dev/fd/") ||
         starts_with(path, "/proc/self/fd/");
}

// The descriptor a /dev/fd/N-style name stands for, or -1.
int descriptor_of(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!starts_with(path, prefix)) continue;
    const std::string n = path.substr(std::strlen(prefix));
    if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::stoi(n);
  }
  return -1;
}

// The file an output or input names, for comparisons: "-" is standard output; an existing file is
// compared by identity (device and inode), a missing one by its path with symlinks and ".."
// resolved as far as they exist.
bool same_file(const std::string& a, const std::string& b) {
  if (is_standard_output(a) || is_standard_output(b)) return is_standard_output(a) && is_standard_output(b);
  std::error_code ec_a, ec_b;
  const bool has_a = fs::exists(a, ec_a), has_b = fs::exists(b, ec_b);
  if (has_a != has_b) return false;
  std::error_code ec;
  if (has_a) return fs::equivalent(a, b, ec);
  // Each path resolved on its own: a name the system refuses (longer than NAME_MAX) resolves to
  // nothing, and two such names must not compare equal as two empty paths.
  const auto resolved = [](const std::string& path) {
    std::error_code e;
    const fs::path absolute = fs::absolute(path, e);
    if (e) return fs::path(path).lexically_normal();
    const fs::path canonical = fs::weakly_canonical(absolute, e);
    return (e ? absolute : canonical).lexically_normal();
  };
  return resolved(a) == resolved(b);
}

bool is_character_device(const std::string& path) {
  struct stat st {};
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

std::string reason(int error) { return error ? std::strerror(error) : "write failed"; }

// The file a path finally names, following symlinks even when the last one dangles: writing
// through a link replaces its target and keeps the link (ln -s missing.csv out.csv; then
// --trace out.csv creates missing.csv). Gives up after 40 links, as the kernel does (ELOOP).
std::string final_target(const std::string& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) break;
    std::error_code ec;
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) break;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(p, ec), ec);
  return ec ? p.string() : canonical.string();
}

// The mode a new file gets from open(..., 0666): the umask read once (umask() both reads and
// sets it, so it is read before any thread runs: the first output is opened by the main thread).
mode_t new_file_mode() {
  static const mode_t mode = [] {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return static_cast<mode_t>(0666 & ~mask);
  }();
  return mode;
}

// Partial files are named by this process and a counter, short whatever the target's name (a
// valid 255-byte name stays valid), hidden, and created exclusively: never an existing file or a
// link planted at the name.
std::atomic<unsigned> g_partial_counter{0};

}  // namespace

void install_interrupt_cleanup() {
  for (int sig : kFatalSignals) std::signal(sig, on_signal);
}

namespace {
FdStreamBuf* g_stdout_buf = nullptr;
}  // namespace

void guard_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = ::open("/dev/null", O_RDONLY);
    if (held >= 0 && held != fd) {
      ::dup2(held, fd);
      ::close(held);
    }
  }
  // Never destroyed: std::cout still points at it when the library flushes the standard streams
  // after main returns (ios_base::Init's destructor), which a function-local static would not
  // outlive (AddressSanitizer: a flush through a destroyed buffer at exit).
  static FdStreamBuf* const buf = new FdStreamBuf;
  buf->attach(1);
  g_stdout_buf = buf;
  std::cout.rdbuf(buf);
}

std::string finish_standard_output() {
  if (!g_stdout_buf) return "";
  std::cout.flush();
  if (!g_stdout_buf->error() && std::cout) return "";
  return std::string("standard output: cannot write (") + reason(g_stdout_buf->error()) + ")";
}

bool is_standard_output(const std::string& path) { return path == "-" || descriptor_of(path) == 1; }

bool is_stream_target(const std::string& path) {
  if (path == "-" || names_descriptor(path)) return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
}

void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& o = outputs[i];
    const auto refuse = [&](const NamedPath& other) {
      throw ScenarioError(o.role, "a file that no other input or output of the command uses",
                          "\"" + o.path + "\", which is also " + other.role +
                              (other.path == o.path ? std::string() : " (\"" + other.path + "\")"));
    };
    for (const NamedPath& in : inputs)
      if (same_file(o.path, in.path)) refuse(in);
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(o.path, outputs[j].path) && !is_character_device(o.path)) refuse(outputs[j]);
  }
}

// ---------------------------------------------------------------------------------------------

FdStreamBuf::FdStreamBuf() : buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }

bool FdStreamBuf::write_all(const char* p, std::size_t n) {
  if (error_) return false;
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error_ = w < 0 ? errno : EIO;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool FdStreamBuf::drain() {
  const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return n == 0 || write_all(buffer_.data(), n);
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

std::streamsize FdStreamBuf::xsputn(const char* s, std::streamsize n) {
  const auto room = epptr() - pptr();
  if (n <= room) {
    std::memcpy(pptr(), s, static_cast<std::size_t>(n));
    pbump(static_cast<int>(n));
    return n;
  }
  if (!drain()) return 0;
  if (n >= static_cast<std::streamsize>(buffer_.size())) return write_all(s, static_cast<std::size_t>(n)) ? n : 0;
  std::memcpy(pptr(), s, static_cast<std::size_t>(n));
  pbump(static_cast<int>(n));
  return n;
}

int FdStreamBuf::sync() { return drain() ? 0 : -1; }

// ---------------------------------------------------------------------------------------------

int open_fifo_writer(const std::string& path) {
  // O_NONBLOCK: an open for writing fails at once with ENXIO while no reader has the FIFO open,
  // where a blocking open would wait for ever. A reader started beside brokersim (either order)
  // gets kFifoReaderWaitMs to open its end.
  for (int waited_ms = 0;; waited_ms += 10) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      // Writes block again as on any pipe: a slow reader slows brokersim down, it loses nothing.
      if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
        const int e = errno;
        ::close(fd);
        errno = e;
        return -1;
      }
      return fd;
    }
    if (errno != ENXIO || waited_ms >= kFifoReaderWaitMs) return -1;
    ::usleep(10'000);
  }
}

OutputFile::OutputFile(std::string path, std::ostream* standard_output) : path_(std::move(path)) {
  if (path_.empty()) throw ScenarioError("output file", "a path", "\"\"");
  // The command's stdout, not a second descriptor on it: a reopened /dev/stdout that is a regular
  // file would have its own offset, and the summary printed after the CSV would overwrite it.
  if (is_standard_output(path_) && standard_output) {
    mode_ = Mode::StandardOutput;
    out_ = standard_output;
    return;
  }
  if (path_ == "-") throw ScenarioError(path_, "a file name (this output cannot go to standard output)", "\"-\"");
  if (is_stream_target(path_)) {
    mode_ = Mode::InPlace;
    // A descriptor is duplicated (sharing its offset with whoever else writes to it); a device or
    // FIFO is opened.
    const int inherited = descriptor_of(path_);
    struct stat st {};
    if (inherited < 0 && ::stat(path_.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
      fd_ = open_fifo_writer(path_);
      if (fd_ < 0 && errno == ENXIO)
        throw ScenarioError(path_, "a FIFO that a process is reading (brokersim waits " + std::to_string(kFifoReaderWaitMs / 1000) +
                                       " s for a reader)",
                            "one that no process opened for reading");
    } else {
      fd_ = inherited >= 0 ? ::fcntl(inherited, F_DUPFD_CLOEXEC, 0) : ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    }
    if (fd_ < 0) fail("cannot open for writing", errno);
    buf_.attach(fd_);
    return;
  }
  // A symlink is followed, a dangling one too: its target is replaced, the link stays.
  struct stat old {};
  target_ = final_target(path_);
  const bool existed = ::stat(target_.c_str(), &old) == 0;
  final_mode_ = existed ? (old.st_mode & 07777) : new_file_mode();  // a replaced file keeps its permissions
  const fs::path folder = fs::path(target_).parent_path();
  // The partial file has a short name of its own, so a final name the folder cannot hold would be
  // found only at the rename, after all the work: checked now.
  const long name_max = ::pathconf(folder.empty() ? "." : folder.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && fs::path(target_).filename().string().size() > static_cast<std::size_t>(name_max))
    fail("cannot open for writing", ENAMETOOLONG);
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_ = (folder / (".brokersim." + std::to_string(::getpid()) + "." + std::to_string(g_partial_counter++) + ".part")).string();
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int e = errno;
    temp_.clear();  // not ours: never unlinked
    fail("cannot open for writing", e);
  }
  slot_ = register_partial(temp_);
  buf_.attach(fd_);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (mode_ == Mode::Replace && !committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  unregister_partial(slot_);
}

void OutputFile::fail(const std::string& what, int error) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (mode_ == Mode::Replace && !temp_.empty()) ::unlink(temp_.c_str());
  throw std::runtime_error(path_ + ": " + what + " (" + reason(error) + ")");
}

void OutputFile::commit() {
  if (mode_ == Mode::StandardOutput) {
    errno = 0;
    out_->flush();
    if (!*out_) fail("cannot write to standard output", errno);
    committed_ = true;
    return;
  }
  out_->flush();
  if (!*out_ || buf_.error()) fail("cannot write", buf_.error());
  if (mode_ == Mode::Replace && ::fchmod(fd_, final_mode_) != 0) fail("cannot write (setting its mode)", errno);
  if (mode_ == Mode::Replace && ::fsync(fd_) != 0) fail("cannot write (flushing to disk)", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && mode_ == Mode::Replace) fail("cannot write", errno);
  if (mode_ == Mode::Replace) {
    if (std::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot write (renaming into place)", errno);
    // The rename is durable only once the folder is flushed too. Best effort: some file systems
    // refuse fsync on a folder, and the new file is complete in either case.
    const fs::path folder = fs::path(target_).parent_path();
    const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      (void)::fsync(dir);
      ::close(dir);
    }
  }
  committed_ = true;
  unregister_partial(slot_);
  slot_ = -1;
}

}  // namespace brokersim
