// A first-in, first-out buffer of small values in one growable ring: what std::deque offers
// for a queue, without its per-object block allocation (a deque allocates its first 512-byte
// block and a map even to hold one value) and with its length in the object itself, so that
// asking whether it is empty, or how long it is, reads one word (a deque computes its size from
// four pointers). Rare insertions in the middle (a requeued message going back to its place)
// shift the shorter side, as a deque's do.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace sim {

template <class T>
class Fifo {
 public:
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
    const T* base = ring_.data();
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
  // Capacity stays a power of two, so a position wraps with a mask.
  void grow() {
    std::vector<T> bigger(ring_.empty() ? 8 : 2 * ring_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    ring_.swap(bigger);
    head_ = 0;
  }

  // 32-bit positions keep the object at 32 bytes (half a cache line): fewer than 2^32 values are
  // ever held at once (a run stops at limits.max_in_system jobs, 20 million by default).
  std::vector<T> ring_;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

// A consumer's buffer (models/consumer.hpp): the same ring, whose first N values live in the
// object itself, in the room its heap pointer takes. A buffer that rarely holds more than a
// couple of jobs (prefetch 4 on two slots holds at most two while both are busy) then costs no
// line of its own: in a fleet of thousands each receipt and each execution's end read it after
// it has left the cache (docs/performance.md, stop 53). Only what the buffer needs: a queue at
// both ends, no insertion in the middle.
template <class T, std::size_t N>
class SmallFifo {
  static_assert(std::is_trivially_copyable_v<T> && N > 0 && (N & (N - 1)) == 0 && N * sizeof(T) <= sizeof(T*),
                "the inline values share the heap pointer's room; the capacity stays a power of two");

 public:
  SmallFifo() = default;
  SmallFifo(const SmallFifo& o) { copy_from(o); }
  SmallFifo(SmallFifo&& o) noexcept : cap_(o.cap_), head_(o.head_), size_(o.size_) {
    std::memcpy(&storage_, &o.storage_, sizeof storage_);  // the values inline, or the heap block
    o.cap_ = N;
    o.head_ = o.size_ = 0;
  }
  SmallFifo& operator=(const SmallFifo& o) {
    if (this != &o) {
      release();
      copy_from(o);
    }
    return *this;
  }
  SmallFifo& operator=(SmallFifo&& o) noexcept {
    if (this != &o) {
      release();
      std::memcpy(&storage_, &o.storage_, sizeof storage_);
      cap_ = o.cap_;
      head_ = o.head_;
      size_ = o.size_;
      o.cap_ = N;
      o.head_ = o.size_ = 0;
    }
    return *this;
  }
  ~SmallFifo() { release(); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return data()[head_]; }
  void push_back(const T& v) {
    if (size_ == cap_) [[unlikely]] grow();
    data()[(head_ + size_) & (cap_ - 1)] = v;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }

 private:
  bool on_heap() const { return cap_ > N; }
  T* data() { return on_heap() ? storage_.heap : storage_.values; }
  const T* data() const { return on_heap() ? storage_.heap : storage_.values; }
  [[gnu::noinline]] void grow() {
    const std::uint32_t cap = 2 * cap_;
    T* bigger = new T[cap];
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = data()[(head_ + i) & (cap_ - 1)];
    release();
    storage_.heap = bigger;
    cap_ = cap;
    head_ = 0;
  }
  void release() {
    if (on_heap()) delete[] storage_.heap;
    cap_ = N;
  }
  void copy_from(const SmallFifo& o) {
    cap_ = N;
    head_ = 0;
    size_ = 0;
    for (std::uint32_t i = 0; i < o.size_; ++i) push_back(o.data()[(o.head_ + i) & (o.cap_ - 1)]);
  }

  union Storage {
    T values[N];
    T* heap;
  } storage_{};
  std::uint32_t cap_ = N;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace sim
