// Output files appear under their final name only when complete: written beside the target
// (same folder, so the rename is atomic) and renamed into place on commit().
#pragma once

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace brokersim {

class OutputFile {
 public:
  explicit OutputFile(std::string path)
      : path_(std::move(path)), temp_(path_ + ".part." + std::to_string(::getpid())) {
    out_.open(temp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw std::runtime_error(path_ + ": cannot open for writing");
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (!committed_) {
      out_.close();
      std::remove(temp_.c_str());
    }
  }
  std::ostream& stream() { return out_; }
  void commit() {
    out_.close();
    if (!out_ || std::rename(temp_.c_str(), path_.c_str()) != 0) {
      std::remove(temp_.c_str());
      throw std::runtime_error(path_ + ": cannot write");
    }
    committed_ = true;
  }

 private:
  std::string path_, temp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace brokersim
