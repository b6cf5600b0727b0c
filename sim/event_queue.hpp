// The fast pending-event set: sim::Event (sim/event.hpp) popped in (time, priority class,
// insertion sequence) order, held in a binary min-heap while few are pending and in radix buckets
// while many are, with tricks on top. Each pops exactly what the plain heap beside it
// (sim/reference_event_set.hpp) pops; tests/test_event_sets.cpp runs both through one suite.
//
// Events scheduled for the instant being processed (zero latencies make these common: a delivery
// received "now", an ack arriving "now") skip the heap: they wait in a small unsorted lane and
// the pop takes whichever of the lane's minimum and the heap's top comes first by the full
// (time, order) key, so the order is exactly the heap-only order, only cheaper. The instant is
// the kernel's clock (sim/simulator.hpp), given with each push: the set keeps no clock of its own.
//
// A pop leaves the heap's root vacant: the next push to the heap takes it (one sift-down instead
// of a sift-down of the last leaf and a sift-up of the new event), and the next look at the top
// fills it as a plain pop would. The pop order is unchanged: (time, order) is a strict total order.
//
// Heap storage aligned to a cache line, 1-based: two siblings share a line, so a sift-down reads
// one line per level, not two.
//
// Beyond 2,048 pending events the set moves them into radix buckets (RadixBuckets below), and back
// into the heap below 512. A heap's pop walks all its levels, 13 with the 8,000 executions pending
// in a fleet of 4,000 consumers of two slots; an event in the buckets moves a few times in its life
// whatever their number (callgrind, the capacity baseline at 4,000 consumers: 4,040 -> 3,697
// instructions per job with one-bit digits, -56 more with 4-bit ones; M/M/10, whose dozen events
// stay in the heap, unchanged).
//
// Cost: push and pop are O(log n) on the heap, O(lane size <= 8) on the lane. Measured on the
// 2-core development machine (bench/'s BM_Hold*, one exponential draw per hold, medians of 5,
// 2026-12-07): about 62 ns per hold operation at 1e3 pending events, about 91 ns at 1e5 in the
// radix buckets (std::multimap: 102 and 574 ns; on an earlier host 78 and 144 ns, against 92 and
// 951).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "sim/event.hpp"
#include "sim/time.hpp"

namespace sim {

// The binary heap of the set while it is small: 1-based in cache-line-aligned storage, its root
// left vacant by a pop for the next push.
class EventHeap {
 public:
  // Room for `capacity` events, fixed: a full heap is the set's signal to move to its buckets,
  // and costs no test beyond the one any growable array makes.
  explicit EventHeap(std::size_t capacity) : heap_(capacity + kRoot) {}

  // False, and nothing pushed, when the heap is full.
  bool push(const Event& e) {
    if (hole_) {
      // The hold pattern (pop the top, push its successor: an arrival scheduling the next one):
      // the new event takes the popped root's place and sinks, one walk instead of two.
      hole_ = false;
      sift_down_from_root(e);
      return true;
    }
    if (!heap_.push_back(e)) [[unlikely]] return false;
    sift_up(heap_.size() - 1);
    return true;
  }
  std::size_t size() const { return heap_.size() - 1 - hole_; }
  // The least event (nullptr: none). With the root vacant, the lesser of the root's children: the
  // lane can win without the root being refilled, so a chain of same-instant events (an
  // execution's end, its ack, the next delivery) popped between a heap pop and the next heap
  // push leaves the vacancy to that push (one walk, not two).
  const Event* least() const {
    const std::size_t n = heap_.size();
    if (!hole_) return n == kRoot ? nullptr : &heap_[kRoot];
    if (n <= kRoot + 2) return n == kRoot + 2 ? &heap_[2] : nullptr;
    return before(heap_[3], heap_[2]) ? &heap_[3] : &heap_[2];
  }
  const Event& top() {
    fill_hole();
    return heap_[kRoot];
  }
  // The least event (not empty). The root stays vacant until the next push (which takes it) or
  // the next look at the top (which fills it with the last event, as a plain pop would have).
  Event take() {
    fill_hole();
    hole_ = true;
    return heap_[kRoot];
  }
  // Empties the heap into `out`.
  void drain(std::vector<Event>& out) {
    fill_hole();
    out.insert(out.end(), heap_.begin() + kRoot, heap_.end());
    heap_.resize(kRoot);
  }
  void clear() {
    heap_.resize(kRoot);
    hole_ = false;
  }

 private:
  // Fixed-capacity storage aligned to a cache line.
  class Storage {
   public:
    explicit Storage(std::size_t capacity)
        : data_(static_cast<Event*>(::operator new(capacity * sizeof(Event), std::align_val_t{64}))),
          size_(kRoot),
          capacity_(capacity) {}
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    // Unsized: clang declares the sized aligned delete only with -fsized-deallocation.
    ~Storage() { ::operator delete(data_, std::align_val_t{64}); }
    bool push_back(const Event& e) {
      if (size_ == capacity_) return false;
      data_[size_++] = e;
      return true;
    }
    std::size_t size() const { return size_; }
    Event& operator[](std::size_t i) { return data_[i]; }
    const Event& operator[](std::size_t i) const { return data_[i]; }
    const Event& back() const { return data_[size_ - 1]; }
    void pop_back() { --size_; }
    const Event* begin() const { return data_; }
    const Event* end() const { return data_ + size_; }
    void resize(std::size_t n) { size_ = n; }

   private:
    Event* data_;
    std::size_t size_;
    std::size_t capacity_;
  };

  // The heap is 1-based (heap_[0] is never used): node i's children are 2i and 2i + 1, which
  // with the aligned storage share a cache line. heap_.size() - 1 slots, the root's included.
  static constexpr std::size_t kRoot = 1;

  void fill_hole() {
    if (!hole_) return;
    hole_ = false;
    Event last = heap_.back();
    heap_.pop_back();
    if (heap_.size() > kRoot) sift_down(last);
  }

  // The textbook sift-down, which stops as soon as e is in place: for a new event, which
  // (unlike the last leaf) may well belong near the top.
  void sift_down_from_root(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = kRoot;
    for (;;) {
      std::size_t child = 2 * i;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > kRoot) {
      std::size_t parent = i / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Floyd's variant: walk the hole to a leaf, then sift the moved element up. Fewer comparisons
  // than the textbook loop, because the last element usually belongs near the bottom.
  void sift_down(const Event& e) {
    const std::size_t n = heap_.size();
    std::size_t i = kRoot;
    for (;;) {
      std::size_t child = 2 * i;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
    sift_up(i);
  }

  Storage heap_;
  bool hole_ = false;  // heap_[kRoot] is vacant: popped, not yet refilled (heap_ still counts it)
};

// A radix bucket's chain of pooled chunks (EventChunks): its events in the order pushed, from the
// chunk whose events start at `first` to the tail chunk, filled up to `last`, whose events end at
// `end` (all null while empty). An append is a comparison and a store, and a chunk when full.
struct EventStore {
  Event* first = nullptr;
  Event* last = nullptr;
  Event* end = nullptr;
};

// The radix buckets' storage beyond the current bucket: chains of 512-byte chunks from one pool,
// taken and given back last-in first-out. A bucket that is spread gives each chunk back as soon as
// it has been read, and the events it spreads are written into the chunks given back last: lines
// just read, still in the cache. With a growable array per bucket, each bucket wrote into its own
// block, last used when that bucket was last filled (a fleet of 4,000 consumers keeps 8,000
// executions pending: those blocks are larger than the last-level cache, and each line written
// was a miss; docs/performance.md).
class EventChunks {
 public:
  static constexpr std::uint32_t kPerChunk = 15;
  struct alignas(64) Chunk {
    Chunk* next;  // first, on the line that takes the chunk's first event
    alignas(32) Event events[kPerChunk];
  };
  static_assert(sizeof(Chunk) == 512 && offsetof(Chunk, events) % 32 == 0, "a chunk is 8 lines, no event straddles two");

  EventChunks() = default;
  EventChunks(const EventChunks&) = delete;
  EventChunks& operator=(const EventChunks&) = delete;

  // Calls f on each event of chain c in the order pushed, giving each chunk back to the pool once
  // read (f may push into other chains: they take those chunks first); c is left empty.
  template <class F>
  [[gnu::always_inline]] void consume(EventStore& c, F&& f) {
    if (c.first == nullptr) return;
    for (Chunk* k = chunk_of(c.first);;) {
      Chunk* const next = k->next;
      const Event* const stop = next == nullptr ? c.last : k->events + kPerChunk;
      for (const Event* e = k->events; e != stop; ++e) f(*e);
      k->next = free_;
      free_ = k;
      if (next == nullptr) break;
      k = next;
    }
    c = EventStore{};
  }
  // Blocks of chunks taken from the heap so far (for tests: whether chains were used).
  std::size_t blocks() const { return blocks_.size(); }
  // Chain c (full: last == end) takes a chunk at its tail.
  [[gnu::noinline]] void extend(EventStore& c) {
    if (free_ == nullptr) refill();
    Chunk* const k = free_;
    free_ = k->next;
    k->next = nullptr;
    if (c.first == nullptr)
      c.first = k->events;
    else
      chunk_of(c.end - kPerChunk)->next = k;
    c.last = k->events;
    c.end = k->events + kPerChunk;
  }

 private:
  static Chunk* chunk_of(Event* events) {
    return reinterpret_cast<Chunk*>(reinterpret_cast<char*>(events) - offsetof(Chunk, events));
  }
  void refill() {
    constexpr std::size_t kBlock = 64;  // 32 KB
    blocks_.push_back(std::make_unique<Chunk[]>(kBlock));
    Chunk* const block = blocks_.back().get();
    for (std::size_t i = kBlock; i-- > 0;) {
      block[i].next = free_;
      free_ = &block[i];
    }
  }
  Chunk* free_ = nullptr;
  std::vector<std::unique_ptr<Chunk[]>> blocks_;
};

// The radix heap of the set while it is large (Ahuja, Mehlhorn, Orlin and Tarjan, J. ACM 1990),
// over windows of 2^15 ns (32.8 us) with 6-bit digits above them. Pending times never precede
// the window of the last one taken (`base_`), so each event waits in the bucket named by the
// highest digit in which its window differs from that one and by its own value of that digit, and
// moves only to lower buckets as the base advances. The buckets in index order hold ever later
// times, so the least event is in the first non-empty one; when that one is taken, the base
// becomes its least event's window, the events of that window go to bucket 0, the current one,
// sorted by (time, order), and the rest spread to lower buckets (they agree with the new base down
// to a lower digit). An event pushed into the current window later is sorted in among its events
// if few come after it, else it waits among the window's late arrivals (a heap). An execution due
// 100 ms ahead (2^26.6 ns) moves at most three times after its push: two levels down, then into
// the current bucket.
//
// Why windows, not single times: with a bucket per time down to the nanosecond, the last spread
// before an event was taken sent about one event to each of 64 buckets, 64 lines written and read
// again (a fleet of 4,000 consumers keeps 8,000 executions pending and takes one every 3 us). A
// window holds about ten of those events; sorting them costs fewer instructions than the last
// spread did (4,000 consumers: 3,424 -> 3,257 instructions per job; first-level misses 40.5 ->
// 33.4; docs/performance.md, with the windows of 2^12 to 2^18 ns measured).
class RadixBuckets {
 public:
  RadixBuckets() { mins_.fill(kNone); }
  RadixBuckets(const RadixBuckets&) = delete;
  RadixBuckets& operator=(const RadixBuckets&) = delete;

  std::size_t size() const { return size_; }
  std::size_t chunk_blocks() const { return chunks_.blocks(); }
  // A time before the base window is accepted (every event is placed again); the kernel never
  // schedules one (nothing before its clock), a set used on its own may.
  [[gnu::always_inline]] void push(const Event& e) {
    const std::uint64_t k = key(e.time);
    ++size_;
    if (window(k) <= base_) [[unlikely]] {
      push_in_or_before_base(e, k);
      return;
    }
    const std::size_t b = bucket_above(window(k), base_);
    append(b, e, k, stores_.data(), mins_.data());
  }
  // Whether the current bucket (the base window's events) has been taken whole.
  bool current_used_up() const { return head_ == plain_ && late_.empty(); }
  // The least time pending (not empty, current_used_up): each bucket keeps its least key, so no
  // bucket is searched.
  Time least_time() const { return time_of(mins_[first_marked()]); }
  // The current bucket's least event (not used up).
  const Event& current() const {
    if (head_ < plain_) [[likely]] return current_[head_];
    return late_first() ? late_.front() : current_[head_];
  }
  const Event& top() {
    if (current_used_up()) settle_least();
    return current();
  }
  Event take() {
    if (head_ == plain_) [[unlikely]] {
      if (!late_.empty()) [[unlikely]] return take_with_late();
      settle_least();
    }
    --size_;
    return current_[head_++];
  }
  // Makes the least non-empty bucket's least event's window the base, spreading that bucket's
  // events below it: the base window's into the current bucket (then sorted), the rest lower.
  [[gnu::noinline]] void settle_least() {
    current_.clear();
    head_ = 0;
    const std::size_t from = first_marked();
    base_ = window(mins_[from]);
    mins_[from] = kNone;
    unmark(from);
    spread(from);
    sort_current();
    plain_ = current_.size();
  }
  void drain(std::vector<Event>& out) {
    out.insert(out.end(), current_.begin() + head_, current_.end());
    current_.clear();
    out.insert(out.end(), late_.begin(), late_.end());
    late_.clear();
    plain_ = 0;
    for (std::size_t b = 1; b < kBuckets; ++b) chunks_.consume(stores_[b], [&](const Event& e) { out.push_back(e); });
    mins_.fill(kNone);
    marks_.fill(0);
    levels_ = 0;
    head_ = 0;
    size_ = 0;
  }
  // Places `in` (empty buckets), the base `from`'s window (at or before every event in `in`).
  void fill(const std::vector<Event>& in, Time from) {
    base_ = window(key(from));
    size_ = in.size();
    for (const Event& e : in) spread_one(e, base_, stores_.data(), mins_.data());
    sort_current();
    plain_ = current_.size();
  }
  void clear() {
    std::vector<Event> none;
    drain(none);
    base_ = 0;
  }

 private:
  // Keys order as times: the sign bit flipped, so negative times come first.
  static constexpr std::uint64_t kSign = std::uint64_t{1} << 63;
  static std::uint64_t key(Time t) { return static_cast<std::uint64_t>(t) ^ kSign; }
  static Time time_of(std::uint64_t k) { return static_cast<Time>(k ^ kSign); }
  static constexpr unsigned kWindowBits = 15;
  static std::uint64_t window(std::uint64_t k) { return k >> kWindowBits; }
  static constexpr unsigned kDigitBits = 6;
  static constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;  // buckets per level
  static constexpr std::size_t kLevels = (64 - kWindowBits + kDigitBits - 1) / kDigitBits;
  static_assert(kDigits == 64, "a level's marks are one word");
  // Bucket 0 holds the base window's events, from head_ on in (time, order) order, and its late
  // arrivals (late_); then level by level, digit by digit, bucket 1 + level * kDigits + digit
  // holds those whose window first differs from the base in that level's digit and has that value
  // there (the top level has the one bit left). Every bucket but the current one is a chain of
  // pooled chunks (EventChunks).
  static constexpr std::size_t kBuckets = 1 + kLevels * kDigits;
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  // The bucket of window w after the base (w > base): the highest digit in which they differ,
  // and w's value of it.
  // Found by a table of each bit's level (its digit's shift and its first bucket), not by dividing
  // the bit's index by six and multiplying back (4,000 consumers: 3,451 -> 3,413 instructions per
  // job).
  [[gnu::always_inline]] static std::size_t bucket_above(std::uint64_t w, std::uint64_t base) {
    const LevelOf& l = kLevelOf[63u - static_cast<unsigned>(__builtin_clzll(w ^ base))];
    return l.first + static_cast<std::size_t>((w >> l.shift) & (kDigits - 1));
  }
  struct LevelOf {
    std::uint16_t first;  // 1 + level * kDigits
    std::uint8_t shift;   // level * kDigitBits
  };
  static constexpr std::array<LevelOf, 64> kLevelOf = [] {
    std::array<LevelOf, 64> t{};
    for (unsigned bit = 0; bit < 64; ++bit) {
      const unsigned level = bit / kDigitBits;
      t[bit] = {static_cast<std::uint16_t>(1 + level * kDigits), static_cast<std::uint8_t>(level * kDigitBits)};
    }
    return t;
  }();

  // Which buckets (beyond the current) hold events: a bit per bucket, 64 to a level, and a bit
  // per level for the levels with any.
  void mark(std::size_t b) {
    const std::size_t i = b - 1;
    marks_[i / kDigits] |= std::uint64_t{1} << (i % kDigits);
    levels_ |= 1u << (i / kDigits);
  }
  void unmark(std::size_t b) {
    const std::size_t i = b - 1;
    marks_[i / kDigits] &= ~(std::uint64_t{1} << (i % kDigits));
    if (marks_[i / kDigits] == 0) levels_ &= ~(1u << (i / kDigits));
  }
  std::size_t first_marked() const {
    const std::size_t level = static_cast<std::size_t>(__builtin_ctz(levels_));
    return 1 + level * kDigits + static_cast<std::size_t>(__builtin_ctzll(marks_[level]));
  }

  // Moves bucket `from`'s events (none before the base window) into the buckets by the base, the
  // current one left unsorted. The stores and the base are held in locals: the event writes would
  // otherwise reload them for every event.
  [[gnu::always_inline]] void spread(std::size_t from) {
    const std::uint64_t base = base_;
    EventStore* const stores = stores_.data();
    std::uint64_t* const mins = mins_.data();
    chunks_.consume(stores[from], [&](const Event& e) { spread_one(e, base, stores, mins); });
  }
  [[gnu::always_inline]] void spread_one(const Event& e, std::uint64_t base, EventStore* stores, std::uint64_t* mins) {
    const std::uint64_t k = key(e.time);
    if (window(k) == base) {
      current_.push_back(e);
      return;
    }
    const std::size_t b = bucket_above(window(k), base);
    append(b, e, k, stores, mins);
  }
  // Bucket b (not the current one) takes e, whose key is k. A bucket is marked when its chain
  // takes its first chunk (an empty chain is full: last == end == nullptr), not at each event:
  // marked exactly while it holds events, since settle_least unmarks the bucket it empties and
  // drain all of them. The chunk's path out of line keeps the common one free of calls, so a
  // push (EventQueue::push_buckets) saves no registers (4,000 consumers: 3,196 -> 3,113
  // instructions per job).
  [[gnu::always_inline]] void append(std::size_t b, const Event& e, std::uint64_t k, EventStore* stores,
                                     std::uint64_t* mins) {
    mins[b] = std::min(mins[b], k);
    EventStore& s = stores[b];
    if (s.last == s.end) [[unlikely]] {
      append_to_new_chunk(b, e);
      return;
    }
    *s.last++ = e;
  }
  [[gnu::noinline]] void append_to_new_chunk(std::size_t b, const Event& e) {
    EventStore& s = stores_[b];
    if (s.first == nullptr) mark(b);
    chunks_.extend(s);
    *s.last++ = e;
  }
  void sort_current() {
    if (current_.size() - head_ > 1) std::sort(current_.begin() + head_, current_.end(), Before{});
  }

  // One event at or after the base window. One in it is sorted into the window's events when at
  // most kShifted of them come after it (the next arrival of a busy producer, say), else it joins
  // the late arrivals: a burst of thousands into one window, each sorted in, would be quadratic.
  void place(const Event& e, std::uint64_t k) {
    if (window(k) != base_) {
      spread_one(e, base_, stores_.data(), mins_.data());
      return;
    }
    std::vector<Event>& c = current_;
    const auto at = std::lower_bound(c.begin() + static_cast<std::ptrdiff_t>(head_), c.end(), e, Before{});
    if (c.end() - at <= kShifted) {
      c.insert(at, e);
    } else {
      late_.push_back(e);
      std::push_heap(late_.begin(), late_.end(), Later{});
    }
    plain_ = late_.empty() ? current_.size() : head_;
  }
  static constexpr std::ptrdiff_t kShifted = 16;
  // Whether the late arrivals' least comes before the sorted part's next (late_ not empty).
  bool late_first() const { return head_ == current_.size() || before(late_.front(), current_[head_]); }
  // take() with late arrivals to compare with.
  [[gnu::noinline]] Event take_with_late() {
    --size_;
    Event e;
    if (late_first()) {
      std::pop_heap(late_.begin(), late_.end(), Later{});
      e = late_.back();
      late_.pop_back();
    } else {
      e = current_[head_++];
    }
    plain_ = late_.empty() ? current_.size() : head_;
    return e;
  }
  // An event in the base window (from the kernel: one due within the last taken's window, such as a
  // busy producer's next arrival), or before it (every event is placed again from its window).
  [[gnu::noinline]] void push_in_or_before_base(const Event& e, std::uint64_t k) {
    if (window(k) < base_) rebase(k);
    place(e, k);
  }
  void rebase(std::uint64_t k) {
    std::vector<Event> all;
    all.reserve(size_);
    const std::size_t n = size_;
    drain(all);
    size_ = n;
    base_ = window(k);
    for (const Event& e : all) spread_one(e, base_, stores_.data(), mins_.data());
    sort_current();
    plain_ = current_.size();
  }

  std::vector<Event> current_;  // bucket 0: its sorted part
  // Bucket 0's late arrivals: pushed into the base window after it was sorted, with more than
  // kShifted of its events after them; a min-heap by (time, order). Empty but for bursts.
  std::vector<Event> late_;
  std::array<EventStore, kBuckets> stores_{};  // the others (stores_[0] unused)
  std::array<std::uint64_t, kBuckets> mins_;  // least key per bucket (kNone: empty)
  EventChunks chunks_;
  std::array<std::uint64_t, kLevels> marks_{};  // a bit per bucket, a word per level
  std::uint32_t levels_ = 0;
  std::uint64_t base_ = 0;  // the window of the least event when the current bucket was filled
  std::size_t head_ = 0;    // the next event of the current bucket
  // take() and current() read current_ from head_ up to here without a look at late_: its size
  // while late_ is empty, else head_.
  std::size_t plain_ = 0;
  std::size_t size_ = 0;
};

class EventQueue {
 public:
  // Above `to_radix` pending events the set moves from its binary heap to its radix buckets, and
  // back below `to_heap` (a gap between the two, so that a size near one bound does not move
  // the events to and fro). Either pops the same order; the heap costs less while small.
  explicit EventQueue(std::size_t to_radix = 2048, std::size_t to_heap = 512) : heap_(to_radix), to_heap_(to_heap) {}

  // `now`: the instant being processed (the kernel's clock); an event due then joins the lane.
  // The heap's path inline, the buckets' out of line: inlined whole, push and pop were no longer
  // inlined into the kernel's loop and the model's scheduling (+190 instructions per job at M/M/10).
  [[gnu::always_inline]] void push(const Event& e, Time now) {
    if (e.time == now && lane_size_ < kLane) {
      if (lane_size_ == 0 || before(e, lane_[lane_min_])) lane_min_ = lane_size_;
      lane_[lane_size_++] = e;
      return;
    }
    if (radix_) [[unlikely]] {
      push_buckets(e);
      return;
    }
    if (!heap_.push(e)) [[unlikely]] {
      to_buckets(now);
      push_buckets(e);
    }
  }

  bool empty() const { return size() == 0; }
  std::size_t size() const { return (radix_ ? buckets_.size() : heap_.size()) + lane_size_; }
  const Event& top() {
    if (!radix_) {
      if (lane_size_ != 0 && lane_first(heap_.least())) return lane_[lane_min_];
      return heap_.top();
    }
    if (lane_size_ != 0 && lane_before_buckets()) return lane_[lane_min_];
    return buckets_.top();
  }

  [[gnu::always_inline]] Event pop() {
    if (radix_) [[unlikely]] return pop_buckets();
    if (lane_size_ != 0 && lane_first(heap_.least())) return pop_lane();
    return heap_.take();
  }

  // Whether the events wait in the radix buckets, and how many blocks of chunks their later
  // levels have taken (for tests).
  bool in_buckets() const { return radix_; }
  std::size_t chunk_blocks() const { return buckets_.chunk_blocks(); }

  void clear() {
    heap_.clear();
    buckets_.clear();
    radix_ = false;
    lane_size_ = 0;
  }

 private:
  // Whether the lane's least event comes before `other` (nullptr: the lane's is the only one).
  bool lane_first(const Event* other) const { return other == nullptr || before(lane_[lane_min_], *other); }
  Event pop_lane() {
    // Mostly one: the hop just scheduled (a delivery received "now", an ack arriving "now").
    if (lane_size_ == 1) {
      lane_size_ = 0;
      return lane_[0];
    }
    Event e = lane_[lane_min_];
    lane_[lane_min_] = lane_[--lane_size_];
    lane_min_ = 0;
    for (std::size_t i = 1; i < lane_size_; ++i)
      if (before(lane_[i], lane_[lane_min_])) lane_min_ = i;
    return e;
  }
  // From the clock's instant (or the least event, if earlier): a later push before the buckets'
  // base window would make them place every event again.
  // Out of line: the model's scheduling inlines the heap's path only.
  [[gnu::noinline]] void push_buckets(const Event& e) { buckets_.push(e); }
  [[gnu::always_inline]] Event pop_buckets() {
    if (lane_size_ != 0 && lane_before_buckets()) return pop_lane();
    const Event e = buckets_.take();
    if (buckets_.size() < to_heap_) [[unlikely]] to_heap();
    return e;
  }
  // Whether the lane's least event comes before the buckets' (the lane not empty). The lane's
  // events are due at the clock's instant and the buckets' at or after it: the buckets move their
  // base only to the window of a least time at or before the lane's, never past it (a push before
  // the base window would make them place every event again).
  bool lane_before_buckets() {
    if (buckets_.size() == 0) return true;
    if (buckets_.current_used_up()) {
      if (lane_[lane_min_].time < buckets_.least_time()) return true;
      buckets_.settle_least();
    }
    return before(lane_[lane_min_], buckets_.current());
  }
  [[gnu::noinline]] void to_buckets(Time now) {
    std::vector<Event> all;
    const Time from = std::min(now, heap_.top().time);
    heap_.drain(all);
    buckets_.fill(all, from);
    radix_ = true;
  }
  [[gnu::noinline]] void to_heap() {
    std::vector<Event> all;
    buckets_.drain(all);
    buckets_.clear();
    for (const Event& e : all) heap_.push(e);
    radix_ = false;
  }

  static constexpr std::size_t kLane = 8;
  EventHeap heap_;
  RadixBuckets buckets_;
  bool radix_ = false;  // the events wait in buckets_, not heap_
  std::size_t to_heap_;
  Event lane_[kLane]{};
  std::size_t lane_size_ = 0;
  std::size_t lane_min_ = 0;
};

}  // namespace sim
