// A first-in, first-out buffer of small values in one growable ring: what std::deque offers
// for a queue, without its per-object block allocation (a deque allocates its first 512-byte
// block and a map even to hold one value) and with its length in the object itself, so that
// asking whether it is empty, or how long it is, reads one word (a deque computes its size from
// four pointers). Rare insertions in the middle (a requeued message going back to its place)
// shift the shorter side, as a deque's do. (A consumer's buffer, which rarely holds more than two
// and shares a cache line with the consumer's counts, is a sim::SmallFifo.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>


namespace sim {

template <class T>
class Fifo {
 public:
  Fifo() = default;
  Fifo(const Fifo&) = default;
  Fifo& operator=(const Fifo&) = default;
  // A moved-from buffer is empty and usable, as its ring is.
  Fifo(Fifo&& o) noexcept
      : ring_(std::move(o.ring_)), head_(std::exchange(o.head_, 0)), size_(std::exchange(o.size_, 0)) {}
  Fifo& operator=(Fifo&& o) noexcept {
    if (this != &o) {
      ring_ = std::move(o.ring_);
      head_ = std::exchange(o.head_, 0);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return ring_[head_]; }
  void push_back(const T& v) {
    if (size_ == ring_.size()) grow();
    ring_[(head_ + size_) & (ring_.size() - 1)] = v;
    ++size_;
  }
  void pop_front() {
    head_ = static_cast<std::uint32_t>((head_ + 1) & (ring_.size() - 1));
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }
  // The i-th value from the front.
  const T& operator[](std::size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  T& operator[](std::size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }

  // v becomes the i-th value from the front (0 <= i <= size()); the values from i on move back.
  void insert(std::size_t i, const T& v) {
    if (size_ == ring_.size()) grow();
    if (i < size_ / 2) {
      // Closer to the front: the first i values move one place towards the front.
      head_ = static_cast<std::uint32_t>((head_ + ring_.size() - 1) & (ring_.size() - 1));
      for (std::size_t k = 0; k < i; ++k) (*this)[k] = (*this)[k + 1];
    } else {
      for (std::size_t k = size_; k > i; --k) (*this)[k] = (*this)[k - 1];
    }
    (*this)[i] = v;
    ++size_;
  }
  // The position of the first value for which pred is false, pred being true up to some position
  // and false after it (as std::partition_point): a binary search of the ring's one or two
  // contiguous runs.
  template <class Pred>
  std::size_t partition_point(Pred pred) const {
    const T* base = ring_.data();  // (null for an empty vector: no run is then read)
    const std::size_t first_run = std::min<std::size_t>(size_, ring_.size() - head_);
    const T* a = base + head_;
    const T* p = std::partition_point(a, a + first_run, pred);
    if (p != a + first_run || first_run == size_) return static_cast<std::size_t>(p - a);
    return first_run + static_cast<std::size_t>(std::partition_point(base, base + (size_ - first_run), pred) - base);
  }
  // Removes the i-th value from the front; the values after it move up.
  void erase(std::size_t i) {
    for (std::size_t k = i; k + 1 < size_; ++k) (*this)[k] = (*this)[k + 1];
    --size_;
  }

 private:
  // Capacity stays a power of two (8 to begin with), so a position wraps with a mask.
  void grow() {
    std::vector<T> bigger(ring_.empty() ? 8 : 2 * ring_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    ring_ = std::move(bigger);
    head_ = 0;
  }

  // 32-bit positions keep the object at 32 bytes (half a cache line): fewer than 2^32 values are
  // ever held at once (a run stops at limits.max_in_system jobs, 20 million by default).
  std::vector<T> ring_;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace sim
