// Progress on stderr for commands that run many points (sweep, plan).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace brokersim {

// Points done / total, rate and time left, at most a few times a second (every 5 s when stderr
// is not a terminal).
class Progress {
 public:
  Progress(std::ostream* err, std::size_t total, std::string what);
  void update(std::size_t done);
  void finish();

 private:
  std::ostream* err_;
  std::size_t total_;
  std::string what_;
  double start_ = 0, last_ = -1;
  std::size_t base_ = 0, printed_ = static_cast<std::size_t>(-1);
  bool started_ = false, tty_;
};

}  // namespace brokersim
