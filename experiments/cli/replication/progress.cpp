#include "experiments/cli/replication/progress.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <unistd.h>

namespace brokersim {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Progress::Progress(std::ostream* err, std::size_t total, std::string what)
    : err_(err), total_(total), what_(std::move(what)), tty_(::isatty(STDERR_FILENO) == 1) {}

void Progress::update(std::size_t done) {
  if (!err_) return;
  const double t = now_s();
  if (!started_) {  // points finished before this session (resumed) do not count toward the rate
    started_ = true;
    base_ = done;
    start_ = t;
  }
  if (done == printed_ || (done < total_ && last_ >= 0 && t - last_ < (tty_ ? 0.5 : 5.0))) return;
  last_ = t;
  printed_ = done;
  const double elapsed = t - start_;
  const double rate = elapsed > 0 ? static_cast<double>(done - base_) / elapsed : 0;
  char buf[200];
  if (rate > 0 && done < total_) {
    const double left = static_cast<double>(total_ - done) / rate;
    std::snprintf(buf, sizeof buf, "%s: %zu/%zu points, %.2f points/s, %.0fm%02.0fs left", what_.c_str(), done,
                  total_, rate, std::floor(left / 60), std::fmod(std::floor(left), 60.0));
  } else {
    std::snprintf(buf, sizeof buf, "%s: %zu/%zu points, %.1f s", what_.c_str(), done, total_, elapsed);
  }
  *err_ << (tty_ ? "\r" : "") << buf << (tty_ ? "\x1b[K" : "\n") << std::flush;
}

void Progress::finish() {
  if (!err_) return;
  update(total_);
  if (tty_) *err_ << '\n' << std::flush;
  err_ = nullptr;
}

}  // namespace brokersim
