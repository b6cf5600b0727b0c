#include "experiments/output_file.hpp"

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>
#include <unistd.h>

namespace brokersim {

namespace {

// Paths of partial files, readable from a signal handler: fixed storage, no allocation there.
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
std::array<char[kPathMax], kSlots> g_paths{};
std::array<std::atomic<bool>, kSlots> g_used{};
std::mutex g_mutex;

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

}  // namespace

void install_interrupt_cleanup() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

OutputFile::OutputFile(std::string path)
    : path_(std::move(path)), temp_(path_ + ".part." + std::to_string(::getpid())) {
  slot_ = register_partial(temp_);
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    unregister_partial(slot_);
    throw std::runtime_error(path_ + ": cannot open for writing");
  }
}

OutputFile::~OutputFile() {
  if (!committed_) {
    out_.close();
    std::remove(temp_.c_str());
  }
  unregister_partial(slot_);
}

void OutputFile::commit() {
  out_.close();
  if (!out_ || std::rename(temp_.c_str(), path_.c_str()) != 0) {
    std::remove(temp_.c_str());
    throw std::runtime_error(path_ + ": cannot write");
  }
  committed_ = true;
  unregister_partial(slot_);
}

}  // namespace brokersim
