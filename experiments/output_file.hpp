// Output files appear under their final name only when complete: written beside the target
// (same folder, so the rename is atomic) and renamed into place on commit(). If the process is
// interrupted (SIGINT, SIGTERM), the signal handler removes every file still being written, so
// an interrupted command leaves the target either complete from an earlier run, or absent.
#pragma once

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace brokersim {

// Install the SIGINT/SIGTERM handler that removes partial outputs (then dies of the signal, as
// the default action would). Called once by the CLI.
void install_interrupt_cleanup();

class OutputFile {
 public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();
  std::ostream& stream() { return out_; }
  void commit();

 private:
  std::string path_, temp_;
  std::ofstream out_;
  int slot_ = -1;  // index in the signal handler's list of partial files
  bool committed_ = false;
};

}  // namespace brokersim
