// A growable array of trivially copyable values whose first N values live in the object itself.
// What a client holds unsettled is one or two deliveries for most clients (prefetch 1, one
// receive): a std::vector keeps even one value in a heap block of its own, which in a fleet of
// 10,000 clients is one more cache miss on every settlement. Same size as a std::vector (24
// bytes for N = 4 values of 4 bytes); past N values it moves to the heap, as a vector would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sim {

template <class T, std::uint32_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T> && N > 0);

 public:
  SmallVec() = default;
  SmallVec(const SmallVec& o) { assign(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) {
      size_ = 0;
      assign(o);
    }
    return *this;
  }
  SmallVec(SmallVec&& o) noexcept { take(o); }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  ~SmallVec() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return is_inline() ? inline_ : heap_; }
  const T* data() const { return is_inline() ? inline_ : heap_; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }

  void push_back(const T& v) {
    if (size_ == capacity_) grow();
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  static constexpr std::uint32_t kInline = N;  // values held in the object itself

 private:
  bool is_inline() const { return capacity_ == N; }

  void grow() {
    const std::uint32_t bigger_capacity = 2 * capacity_;
    T* bigger = new T[bigger_capacity]();
    std::copy(begin(), end(), bigger);
    release();
    heap_ = bigger;
    capacity_ = bigger_capacity;
  }
  void release() {
    if (!is_inline()) delete[] heap_;
    capacity_ = N;
  }
  void assign(const SmallVec& o) {
    while (capacity_ < o.size_) grow();
    std::copy(o.begin(), o.end(), data());
    size_ = o.size_;
  }
  void take(SmallVec& o) {
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (o.is_inline()) std::copy(o.begin(), o.end(), inline_);
    else heap_ = o.heap_;
    o.capacity_ = N;
    o.size_ = 0;
  }

  // Only one of the two is in use: the inline values while the capacity is N, the heap block
  // once it has grown (never back: a client that held many may again).
  // Every value of the storage is initialised, past the size too: a reader may look at all N at
  // once and mask off those past the size (ClientRecord::unhold).
  union {
    T inline_[N]{};
    T* heap_;
  };
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
};

}  // namespace sim
