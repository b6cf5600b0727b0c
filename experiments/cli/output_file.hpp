// Output files appear under their final name only when complete: written beside the target
// (same folder, so the rename is atomic), flushed to disk, and renamed into place on commit(); the
// folder is flushed after the rename, so a power cut leaves the old file or the new one, never an
// empty one. If the process is ended by a signal (SIGINT, SIGTERM, SIGPIPE, ...), the handler
// removes every file still being written, so an interrupted command leaves the target either complete from an
// earlier run, or absent.
//
// A target that is not a regular file (a FIFO, /dev/null, a terminal, /dev/stdout, a socket) is
// written in place, as a stream: renaming over it would replace the device or pipe with a regular
// file. "-" is the command's standard output. A FIFO that no process opens for reading within
// 5 s is refused (open_fifo_writer), so no command waits for ever on one.
#pragma once

#include <cstdio>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace brokersim {

// Install the handler that removes partial outputs on every signal that ends the process by
// default (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ), then dies of the signal, as the
// default action would. Called once by the CLI.
void install_interrupt_cleanup();

// Standard output as a checked stream: std::cout writes through a descriptor buffer that keeps the
// first write error, and a closed descriptor 0, 1 or 2 is held by /dev/null opened read-only (so
// no output file can take its number and receive what was meant for the terminal, and writing to
// it fails as writing to a closed stdout does). finish_standard_output() flushes and returns the
// error message ("" when every byte was written).
void guard_standard_streams();
std::string finish_standard_output();

// True when `path` is written in place rather than replaced: "-", an existing non-regular file
// (device, FIFO, socket, directory), or a /dev/fd/N-style name of an open descriptor.
bool is_stream_target(const std::string& path);

// A FIFO opened for writing, waiting up to kFifoReaderWaitMs for a process to open it for reading
// (a blocking open would wait for ever). The descriptor (blocking writes), or -1 with errno set:
// ENXIO when no reader came.
inline constexpr int kFifoReaderWaitMs = 5000;
int open_fifo_writer(const std::string& path);

// "-", /dev/stdout, /dev/fd/1 or /proc/self/fd/1.
bool is_standard_output(const std::string& path);

// A file a command reads or writes, and how its messages name it ("--trace", "the scenario file").
struct NamedPath {
  std::string role;
  std::string path;
};

// Refuse, before anything runs, an output that names an input or another output: writing it would
// destroy the input, or leave a mix of two outputs. Paths are compared as files (./a.csv, a.csv and
// a symlink to it are one file). Two outputs may share a character device (/dev/null). Throws a
// ScenarioError naming the output's option, the path and what else uses it.
void check_distinct_files(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// The buffer behind an output: write(2) on a descriptor, remembering the first errno so that the
// message can say why a write failed (No space left on device, ...).
class FdStreamBuf : public std::streambuf {
 public:
  FdStreamBuf();
  void attach(int fd) { fd_ = fd; }
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool drain();
  bool write_all(const char* p, std::size_t n);
  int fd_ = -1, error_ = 0;
  std::vector<char> buffer_;
};

class OutputFile {
 public:
  // `standard_output` is where "-" writes (the command's stdout); "-" is refused without one.
  explicit OutputFile(std::string path, std::ostream* standard_output = nullptr);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();
  std::ostream& stream() { return *out_; }
  // Throws std::runtime_error "PATH: cannot write (REASON)" when any write, the flush to disk or
  // the rename failed; the target is then untouched (a regular file) or partly written (a stream).
  void commit();

 private:
  enum class Mode { Replace, InPlace, StandardOutput };
  [[noreturn]] void fail(const std::string& what, int error);
  std::string path_, target_, temp_;
  Mode mode_ = Mode::Replace;
  int fd_ = -1;
  FdStreamBuf buf_;
  std::ostream file_{&buf_};
  std::ostream* out_ = &file_;
  int slot_ = -1;  // index in the signal handler's list of partial files
  unsigned final_mode_ = 0644;  // the partial file is 0600 until it is complete
  bool committed_ = false;
};

}  // namespace brokersim
