// A first-in, first-out ring of small values in 16 bytes, its first N values in the object itself:
// a consumer's buffer, which rarely holds more than two jobs (prefetch 4 on two slots buffers at
// most two while both are busy). sim::Fifo keeps 32 bytes and a heap block; a Fifo over a
// SmallVec of two kept 24 (a size and a capacity in the SmallVec, a head and a size in the Fifo).
// Here the ring's capacity is a power of two kept as its logarithm in the head's top bits, so that
// the buffer, the busy count, the clock and the time integrals share one cache line
// (models/consumer.hpp): in a fleet of thousands that line has left the cache by each receipt and
// each execution's end (docs/performance.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace sim {

template <class T, std::uint32_t N>
class SmallFifo {
  static_assert(std::is_trivially_copyable_v<T> && N > 0 && (N & (N - 1)) == 0,
                "the inline ring holds a power of two of trivially copyable values");

 public:
  // At most 2^27 values at once (134 million): the head keeps 27 bits.
  static constexpr std::uint32_t kMaxLog2 = 27;

  SmallFifo() = default;
  SmallFifo(const SmallFifo& o) { assign(o); }
  SmallFifo& operator=(const SmallFifo& o) {
    if (this != &o) {
      clear();
      assign(o);
    }
    return *this;
  }
  // A moved-from ring is empty and usable.
  SmallFifo(SmallFifo&& o) noexcept { take(o); }
  SmallFifo& operator=(SmallFifo&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallFifo() { release(); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return data()[head_]; }
  // The i-th value from the front.
  const T& operator[](std::size_t i) const { return data()[(head_ + i) & mask()]; }

  void push_back(const T& v) {
    if (size_ == capacity()) grow();
    data()[(head_ + size_) & mask()] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask();
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  bool is_inline() const { return log2_ == 0; }
  std::uint32_t capacity() const { return is_inline() ? N : std::uint32_t{1} << log2_; }
  std::uint32_t mask() const { return capacity() - 1; }
  T* data() { return is_inline() ? inline_ : heap_; }
  const T* data() const { return is_inline() ? inline_ : heap_; }

  void grow() {
    std::uint32_t log2 = is_inline() ? 0 : log2_;
    if (is_inline())
      while ((std::uint32_t{1} << log2) < N) ++log2;
    if (log2 + 1 > kMaxLog2) throw std::length_error("sim::SmallFifo: more than 2^27 values at once");
    T* bigger = new T[std::size_t{1} << (log2 + 1)]();
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    release();
    heap_ = bigger;
    log2_ = log2 + 1;
    head_ = 0;
  }
  void release() {
    if (!is_inline()) delete[] heap_;
    log2_ = 0;
  }
  void assign(const SmallFifo& o) {
    while (capacity() < o.size_) grow();
    for (std::uint32_t i = 0; i < o.size_; ++i) data()[i] = o[i];
    head_ = 0;
    size_ = o.size_;
  }
  void take(SmallFifo& o) {
    size_ = o.size_;
    head_ = o.head_;
    log2_ = o.log2_;
    if (o.is_inline()) std::copy(o.inline_, o.inline_ + N, inline_);
    else heap_ = o.heap_;
    o.log2_ = 0;
    o.head_ = 0;
    o.size_ = 0;
  }

  // The inline values while log2_ is 0, else the heap block of 2^log2_ (never back: a consumer
  // that buffered many may again).
  union {
    T inline_[N]{};
    T* heap_;
  };
  std::uint32_t size_ = 0;
  std::uint32_t head_ : kMaxLog2 = 0;
  std::uint32_t log2_ : 32 - kMaxLog2 = 0;
};

}  // namespace sim
