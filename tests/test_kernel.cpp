// Tests of the simulation kernel (sim/): the clock and its loop, the ring and the small vector.
// The event sets have their own suite (tests/test_event_sets.cpp); random streams, distributions
// and streaming statistics theirs (tests/test_kernel_random.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "models/events.hpp"
#include "sim/fifo.hpp"
#include "sim/rng.hpp"
#include "sim/simulator.hpp"
#include "sim/small_fifo.hpp"
#include "sim/small_vec.hpp"
#include "sim/time.hpp"

namespace test_kernel {

// A model for sim::Simulator's loop: records the targets it handles, stops after a given one,
// and (echo) schedules another event at the same instant for every one it handles.
struct Recorder {
  explicit Recorder(sim::Simulator& k) : kernel(k) {}
  sim::Simulator& kernel;
  std::vector<std::uint32_t> seen;
  std::uint32_t stop_after = ~0u;
  bool echo = false;
  void handle(const sim::Event& e) {
    seen.push_back(e.target);
    if (echo) kernel.schedule(kernel.now, 0, 1, e.target);
  }
  bool stop() const { return !seen.empty() && seen.back() == stop_after; }
  void progress() {}
};

}  // namespace test_kernel

// =============================================================================================
TEST_SUITE("time") {
  TEST_CASE("conversions and saturating addition") {
    CHECK(sim::from_ms(1.5) == 1'500'000);
    CHECK(sim::from_ms(0.0000004) == 0);
    CHECK(sim::from_ms(0.0000006) == 1);
    CHECK(sim::to_ms(2'500'000) == 2.5);
    CHECK(sim::add_sat(sim::kNever, 5) == sim::kNever);
    CHECK(sim::add_sat(5, sim::kNever) == sim::kNever);
    CHECK(sim::add_sat(sim::kNever, -5) == sim::kNever);
    CHECK(sim::add_sat(sim::kNever - 3, 5) == sim::kNever);
    CHECK(sim::add_sat(sim::kNever - 5, 4) == sim::kNever - 1);
    CHECK(sim::add_sat(10, -4) == 6);
    // The largest scenario duration, doubled, is still far from overflow.
    const sim::Time big = sim::from_ms(sim::kMaxMs);
    CHECK(big > 0);
    CHECK(big < sim::kNever / 2);
  }
}

// =============================================================================================
TEST_SUITE("simulator") {
  TEST_CASE("priority classes order the model's kinds as the kinds' own order did before they were split") {
    // Until the classes were named apart from the kinds (issue 40) a kind's enum value was its
    // class: the classes must keep that order, one class per kind, so that every run pops its
    // simultaneous events in the same order as before.
    using brokersim::Ev;
    for (std::uint32_t k = 1; k <= static_cast<std::uint32_t>(Ev::Observe); ++k) {
      CAPTURE(k);
      CHECK(brokersim::priority_of(static_cast<Ev>(k - 1)) < brokersim::priority_of(static_cast<Ev>(k)));
    }
  }

  TEST_CASE("the loop runs events in order up to until and stops on the model's word") {
    sim::Simulator s;
    test_kernel::Recorder m{s};
    s.schedule(30, 0, 1, 3);
    s.schedule(10, 1, 1, 1);
    s.schedule(10, 0, 1, 0);
    s.schedule(20, 0, 1, 2);
    CHECK(s.run(m, 20, {}) == sim::Stop::Until);
    CHECK(m.seen == std::vector<std::uint32_t>{0, 1, 2});
    CHECK(s.now == 20);
    CHECK(s.popped() == 3);
    s.advance_to(25);
    CHECK(s.now == 25);
    m.stop_after = 4;
    s.schedule(25, 0, 1, 4);  // at the current instant
    s.schedule(40, 0, 1, 5);
    CHECK(s.run(m, sim::kNever, {}) == sim::Stop::Model);
    CHECK(m.seen == std::vector<std::uint32_t>{0, 1, 2, 4});
    CHECK(s.run(m, sim::kNever, {}) == sim::Stop::Drained);
    CHECK(m.seen == std::vector<std::uint32_t>{0, 1, 2, 4, 3, 5});
    CHECK(s.now == 40);
    CHECK(s.scheduled() == 6);
    CHECK(s.popped() == 6);
  }

  TEST_CASE("the loop's event limits: max_events first and then events at one instant") {
    {
      sim::Simulator s;
      test_kernel::Recorder m{s};
      for (std::uint32_t i = 0; i < 10; ++i) s.schedule(i, 0, 1, i);
      CHECK(s.run(m, sim::kNever, {5, 100}) == sim::Stop::MaxEvents);
      CHECK(s.popped() == 6);  // the sixth is popped, found over the limit and not handled
      CHECK(m.seen.size() == 5);
    }
    {
      // A model that schedules another event at the same instant for ever: time stopped moving.
      sim::Simulator s;
      test_kernel::Recorder m{s};
      m.echo = true;
      s.schedule(0, 0, 1, 0);
      s.schedule(7, 0, 1, 1);
      CHECK(s.run(m, sim::kNever, {1000, 50}) == sim::Stop::ZeroTimeLoop);
      CHECK(s.popped() == 52);  // the instant's first event, then 50 more, then one too many
      CHECK(s.now == 0);
    }
  }
}

// =============================================================================================
TEST_SUITE("fifo") {
  TEST_CASE("sim::Fifo agrees with std::deque under random pushes, pops, inserts and erases") {
    // Inserts near the front shift the front part and near the back the back part, across the
    // ring's wrap and its growth: every path is compared with the reference after every step.
    sim::Fifo<int> f;
    std::deque<int> ref;
    sim::Rng rng(7, 0, "fifo");
    int next = 0, inserts_front = 0, inserts_back = 0, wraps = 0;
    for (int step = 0; step < 20000; ++step) {
      const auto op = rng.below(10);
      if (op < 4 || ref.empty()) {
        f.push_back(next);
        ref.push_back(next++);
      } else if (op < 7) {
        f.pop_front();
        ref.pop_front();
      } else if (op < 9) {
        const std::size_t i = rng.below(ref.size() + 1);
        (i < ref.size() / 2 ? inserts_front : inserts_back)++;
        f.insert(i, next);
        ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(i), next++);
      } else {
        const std::size_t i = rng.below(ref.size());
        f.erase(i);
        ref.erase(ref.begin() + static_cast<std::ptrdiff_t>(i));
      }
      REQUIRE(f.size() == ref.size());
      REQUIRE(f.empty() == ref.empty());
      if (!ref.empty()) REQUIRE(f.front() == ref.front());
      if (step % 97 == 0)
        for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(f[i] == ref[i]);
      if (!ref.empty() && &f[ref.size() - 1] < &f.front()) ++wraps;
    }
    CHECK(inserts_front > 1000);
    CHECK(inserts_back > 1000);
    CHECK(wraps > 100);  // the ring wrapped around while holding values
    f.clear();
    CHECK(f.empty());
  }

  TEST_CASE("sim::SmallFifo agrees with std::deque, inline and on the heap, copied and moved, in 16 bytes") {
    // A consumer's buffer (models/consumer.hpp): mostly within its two inline values, with bursts
    // that grow the heap ring several times and wrap it; every step is compared, and copies and
    // moves are taken at every length and compared whole.
    using Ring = sim::SmallFifo<std::uint32_t, 2>;
    Ring f;
    std::deque<std::uint32_t> ref;
    sim::Rng rng(7, 0, "small-fifo-16");
    std::uint32_t next = 0;
    int spilled = 0;
    std::size_t longest = 0;
    const auto same = [](const Ring& ring, const std::deque<std::uint32_t>& want) {
      if (ring.size() != want.size()) return false;
      for (std::size_t i = 0; i < want.size(); ++i)
        if (ring[i] != want[i]) return false;
      return true;
    };
    for (int step = 0; step < 40000; ++step) {
      const auto op = rng.below(100);
      const bool burst = (step / 700) % 5 == 4;
      if (ref.empty() || op < (burst ? 75u : 45u)) {
        f.push_back(next);
        ref.push_back(next++);
      } else if (op < 99) {
        f.pop_front();
        ref.pop_front();
      } else {
        f.clear();
        ref.clear();
      }
      REQUIRE(f.size() == ref.size());
      REQUIRE(f.empty() == ref.empty());
      if (!ref.empty()) REQUIRE(f.front() == ref.front());
      spilled += ref.size() > 2;
      longest = std::max(longest, ref.size());
      if (step % 53 == 0) {
        REQUIRE(same(f, ref));
        Ring copy(f);
        REQUIRE(same(copy, ref));
        Ring moved(std::move(copy));
        REQUIRE(copy.empty());  // NOLINT: moved-from is left empty and usable
        copy.push_back(5);
        REQUIRE(copy.front() == 5);
        Ring assigned;
        for (std::uint32_t k = 0; k < 9; ++k) assigned.push_back(k);  // on the heap before
        assigned = moved;
        REQUIRE(same(assigned, ref));
        f = std::move(moved);
        REQUIRE(same(f, ref));
      }
    }
    CHECK(spilled > 1000);  // the heap path was taken, not only the inline one
    CHECK(longest >= 64);   // grown several times
    CHECK(sizeof(f) == 16);
  }

  TEST_CASE("sim::SmallFifo's head wraps in every ring size it grows through") {
    // Fill to each capacity, then pop and push one by one many times around the ring: the values
    // come out in order, and a push at a full ring grows it without losing the wrapped order.
    sim::SmallFifo<std::uint32_t, 2> f;
    std::uint32_t in = 0, out = 0;
    for (std::uint32_t capacity = 2; capacity <= 1024; capacity *= 2) {
      while (f.size() < capacity) f.push_back(in++);
      for (std::uint32_t k = 0; k < 3 * capacity + 1; ++k) {
        REQUIRE(f.front() == out++);
        f.pop_front();
        f.push_back(in++);
        REQUIRE(f[f.size() - 1] == in - 1);
      }
    }
    while (!f.empty()) {
      REQUIRE(f.front() == out++);
      f.pop_front();
    }
    CHECK(out == in);
  }

  TEST_CASE("sim::Fifo::partition_point agrees with std::partition_point on sorted rings, wrapped or not") {
    // Sorted values from a varying head position: the ring's values lie in one run or two, and
    // every cut (before all, between any two, after all) is found.
    int wrapped = 0;
    for (int head = 0; head < 16; ++head) {
      for (int n = 0; n <= 16; ++n) {
        sim::Fifo<int> f;
        for (int i = 0; i < head; ++i) f.push_back(-1);  // moves the head on, then leaves
        for (int i = 0; i < head; ++i) f.pop_front();
        std::deque<int> ref;
        for (int i = 0; i < n; ++i) {
          f.push_back(10 * i);
          ref.push_back(10 * i);
        }
        if (n > 0 && &f[static_cast<std::size_t>(n - 1)] < &f.front()) ++wrapped;
        for (int cut = -5; cut <= 10 * n + 5; cut += 5) {
          const auto pred = [&](int x) { return x <= cut; };
          const auto expected = static_cast<std::size_t>(std::partition_point(ref.begin(), ref.end(), pred) - ref.begin());
          REQUIRE(f.partition_point(pred) == expected);
        }
      }
    }
    CHECK(wrapped > 20);  // the two-run case was exercised
  }
}

TEST_SUITE("small_vec") {
  TEST_CASE("sim::SmallVec agrees with std::vector inline and on the heap, through copies and moves") {
    // Swap-with-last removal (how a client's held deliveries leave) and growth past the inline
    // four, then back under them: the values stay where a vector would keep them.
    sim::SmallVec<std::uint32_t, 4> v;
    std::vector<std::uint32_t> ref;
    sim::Rng rng(11, 0, "small_vec");
    std::uint32_t next = 0;
    std::size_t largest = 0, inline_steps = 0;
    for (int step = 0; step < 20000; ++step) {
      if (step % 1000 == 0) {  // a fresh one (move-assigned) starts inline again
        v = sim::SmallVec<std::uint32_t, 4>{};
        ref.clear();
      }
      // Sizes wander between 0 and a few dozen: both the inline and the heap storage are used.
      const bool grow = ref.empty() || rng.below(100) < (ref.size() < 20 ? 55u : 40u);
      if (grow) {
        v.push_back(next);
        ref.push_back(next++);
      } else {
        const std::size_t i = rng.below(ref.size());
        v[i] = v.back();
        v.pop_back();
        ref[i] = ref.back();
        ref.pop_back();
      }
      largest = std::max(largest, ref.size());
      inline_steps += ref.size() <= 4;
      REQUIRE(v.size() == ref.size());
      REQUIRE(v.empty() == ref.empty());
      REQUIRE(std::equal(v.begin(), v.end(), ref.begin(), ref.end()));
      if (step % 101 == 0) {
        sim::SmallVec<std::uint32_t, 4> copy = v;  // copy, then move it on
        sim::SmallVec<std::uint32_t, 4> moved = std::move(copy);
        REQUIRE(std::equal(moved.begin(), moved.end(), ref.begin(), ref.end()));
        CHECK(copy.empty());
        moved.push_back(7);  // the copy is its own: the original does not change
        REQUIRE(std::equal(v.begin(), v.end(), ref.begin(), ref.end()));
        copy = v;
        REQUIRE(std::equal(copy.begin(), copy.end(), ref.begin(), ref.end()));
      }
    }
    CHECK(largest > 8);         // the heap storage was used
    CHECK(inline_steps > 500);  // and the inline one (each fresh start)
    v.clear();
    CHECK(v.empty());
  }
}
