// One suite for every pending-event set (as ns-3 runs each of its schedulers through one test
// suite): the fast set (sim/event_queue.hpp: a same-instant lane, a vacant root, Floyd's
// sift-down, aligned storage) and the plain binary heap beside it (sim/reference_event_set.hpp).
// Each case is a template over the set; the last one runs both at once, pop for pop, and
// against a sorted model, through random pushes, pops, looks at the top and cancellations.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/reference_event_set.hpp"
#include "sim/rng.hpp"

namespace test_event_sets {

// Drives a set as the kernel does (sim::Simulator::schedule): numbers the pushes in insertion
// order and gives, as `now`, the time of the last event popped.
template <class Set>
struct Driver {
  Set set;
  std::uint64_t seq = 0;
  sim::Time now = 0;

  void push(sim::Time t, std::uint8_t priority, std::uint32_t kind, std::uint32_t target,
            std::uint32_t tag = 0, std::uint32_t aux = 0) {
    set.push(sim::Event{t, (std::uint64_t{priority} << sim::Event::kSeqBits) | seq++, kind, target, tag, aux}, now);
  }
  sim::Event pop() {
    const sim::Event e = set.pop();
    now = e.time;
    return e;
  }
  const sim::Event& top() { return set.top(); }
  bool empty() const { return set.empty(); }
  std::size_t size() const { return set.size(); }
};

using Key = std::tuple<sim::Time, int, std::uint32_t>;  // (time, priority class, id = insertion)

// The fast set with small bounds between its heap and its radix buckets: every case moves it
// from one to the other and back many times.
struct SwitchingEventQueue : sim::EventQueue {
  SwitchingEventQueue() : sim::EventQueue(64, 16) {}
};

// Holds a fleet-like population in `Fast` and in the plain heap side by side: `initial` pushes,
// then `ops` times a pop from each (compared) and refill(op, size) pushes; then both drained,
// compared. due(now) gives a push's (time, priority class). Returns the chunk blocks `Fast`'s
// buckets took (whether their chains were used).
template <class Fast, class Due, class Refill>
std::size_t hold_against_plain(int initial, int ops, Due&& due, Refill&& refill) {
  Driver<Fast> fast;
  Driver<sim::ReferenceEventSet> plain;
  std::uint32_t next_id = 0;
  auto push = [&] {
    const auto [t, prio] = due(fast.now);
    fast.push(t, prio, 0, next_id);
    plain.push(t, prio, 0, next_id);
    ++next_id;
  };
  for (int i = 0; i < initial; ++i) push();
  std::uint64_t compared = 0;
  for (int op = 0; op < ops; ++op) {
    const sim::Event a = fast.pop();
    const sim::Event b = plain.pop();
    REQUIRE(a.time == b.time);
    REQUIRE(a.order == b.order);
    REQUIRE(a.target == b.target);
    ++compared;
    for (int k = refill(op, fast.size()); k > 0; --k) push();
    REQUIRE(fast.size() == plain.size());
  }
  while (!plain.empty()) {
    REQUIRE(fast.pop().order == plain.pop().order);
    ++compared;
  }
  CHECK(fast.empty());
  CHECK(compared == next_id);
  return fast.set.chunk_blocks();
}

}  // namespace test_event_sets

#define BROKERSIM_EVENT_SETS sim::EventQueue, test_event_sets::SwitchingEventQueue, sim::ReferenceEventSet

// =============================================================================================
TEST_SUITE("event_sets") {
  TEST_CASE_TEMPLATE("order is (time then priority class then insertion) on hand-made ties", Set,
                     BROKERSIM_EVENT_SETS) {
    test_event_sets::Driver<Set> q;
    // target = label; kind/tag/aux carry a payload that must survive the set.
    q.push(10, 1, 100, 0, 1000, 10000);
    q.push(10, 0, 101, 1, 1001, 10001);
    q.push(5, 3, 102, 2, 1002, 10002);
    q.push(10, 0, 103, 3, 1003, 10003);
    q.push(10, 1, 104, 4, 1004, 10004);
    q.push(7, 255, 105, 5, 1005, 10005);
    q.push(10, 0, 106, 6, 1006, 10006);
    q.push(-3, 9, 107, 7, 1007, 10007);
    CHECK(q.size() == 8);
    const std::vector<std::uint32_t> expect{7, 2, 5, 1, 3, 6, 0, 4};
    const std::vector<std::uint8_t> expect_prio{9, 3, 255, 0, 0, 0, 1, 1};
    for (std::size_t k = 0; k < expect.size(); ++k) {
      REQUIRE(!q.empty());
      const sim::Event top = q.top();
      const sim::Event e = q.pop();
      CHECK(top.target == e.target);
      CHECK(e.target == expect[k]);
      CHECK(e.priority() == expect_prio[k]);
      CHECK(e.kind == 100 + e.target);
      CHECK(e.tag == 1000 + e.target);
      CHECK(e.aux == 10000 + e.target);
    }
    CHECK(q.empty());
    CHECK(q.size() == 0);
  }

  TEST_CASE_TEMPLATE("priority class beats insertion order and time beats priority class", Set,
                     BROKERSIM_EVENT_SETS) {
    test_event_sets::Driver<Set> q;
    q.push(1, 200, 0, 0);  // earliest time wins whatever its class
    for (std::uint32_t i = 1; i <= 50; ++i) q.push(2, static_cast<std::uint8_t>(50 - i), 0, i);
    CHECK(q.pop().target == 0);
    for (std::uint32_t i = 50; i >= 1; --i) CHECK(q.pop().target == i);
  }

  TEST_CASE_TEMPLATE("events at the current instant keep the full order among later ones", Set,
                     BROKERSIM_EVENT_SETS) {
    // What the fast set's lane must get right: pushes at `now` (several classes, more than the
    // lane holds) interleaved with pushes later and a look at the top.
    test_event_sets::Driver<Set> q;
    q.push(5, 0, 0, 0);
    q.push(9, 0, 0, 1);
    CHECK(q.pop().target == 0);  // now = 5
    for (std::uint32_t i = 2; i < 14; ++i) q.push(5, static_cast<std::uint8_t>(i % 3), 0, i);
    q.push(6, 0, 0, 14);
    const std::vector<std::uint32_t> expect{3, 6, 9, 12, 4, 7, 10, 13, 2, 5, 8, 11, 14, 1};
    for (std::uint32_t id : expect) {
      CHECK(q.top().target == id);
      CHECK(q.pop().target == id);
    }
    CHECK(q.empty());
  }

  TEST_CASE_TEMPLATE("clear() empties the set", Set, BROKERSIM_EVENT_SETS) {
    test_event_sets::Driver<Set> q;
    for (int i = 0; i < 10; ++i) q.push(i, 0, 0, static_cast<std::uint32_t>(i));
    q.pop();
    q.set.clear();
    CHECK(q.empty());
    CHECK(q.size() == 0);
    q.push(3, 0, 0, 1);
    q.push(3, 0, 0, 2);
    CHECK(q.pop().target == 1);
    CHECK(q.pop().target == 2);
    CHECK(q.empty());
  }

  TEST_CASE_TEMPLATE("randomised stress against a sorted model on (time and class and sequence)", Set,
                     BROKERSIM_EVENT_SETS) {
    // ~200k mixed operations, times drawn from a narrow window (so equal times are the rule)
    // and 3 priority classes. Phases alternate between growing and draining the set so it is
    // exercised from empty to a few thousand events. The popped sequences must be identical.
    sim::Rng rng(12345, 0, "eq-stress");
    test_event_sets::Driver<Set> q;
    std::set<test_event_sets::Key> model;
    std::uint32_t next_id = 0;
    std::size_t pops = 0, equal_time_pops = 0, max_size = 0;
    sim::Time last_popped = -1;
    const int kOps = 200'000;
    for (int op = 0; op < kOps; ++op) {
      const double p_push = ((op / 5000) % 2 == 0) ? 0.65 : 0.38;
      if (model.empty() || rng.uniform() < p_push) {
        sim::Time t;
        if (rng.bernoulli(0.05)) {
          t = static_cast<sim::Time>(rng.below(100));  // occasionally in the past
        } else {
          t = q.now + static_cast<sim::Time>(rng.below(4));
        }
        const int prio = static_cast<int>(rng.below(3));
        const std::uint32_t id = next_id++;
        q.push(t, static_cast<std::uint8_t>(prio), 7, id, id ^ 0x5a5a5a5au, id * 3u);
        model.emplace(t, prio, id);
      } else {
        const test_event_sets::Key want = *model.begin();
        model.erase(model.begin());
        // A look at the top between pops (what a timed run does) must not change the order,
        // whether the fast set's root is vacant or not.
        if (rng.bernoulli(0.3)) {
          REQUIRE(q.top().time == std::get<0>(want));
          REQUIRE(q.top().target == std::get<2>(want));
        }
        const sim::Event e = q.pop();
        REQUIRE(e.time == std::get<0>(want));
        REQUIRE(static_cast<int>(e.priority()) == std::get<1>(want));
        REQUIRE(e.target == std::get<2>(want));
        REQUIRE(e.tag == (std::get<2>(want) ^ 0x5a5a5a5au));
        REQUIRE(e.aux == std::get<2>(want) * 3u);
        equal_time_pops += (e.time == last_popped);
        last_popped = e.time;
        ++pops;
      }
      REQUIRE(q.size() == model.size());
      max_size = std::max(max_size, q.size());
    }
    while (!model.empty()) {
      const test_event_sets::Key want = *model.begin();
      model.erase(model.begin());
      const sim::Event e = q.pop();
      REQUIRE(e.time == std::get<0>(want));
      REQUIRE(static_cast<int>(e.priority()) == std::get<1>(want));
      REQUIRE(e.target == std::get<2>(want));
      ++pops;
    }
    CHECK(q.empty());
    CHECK(pops == next_id);
    // The test is only meaningful if ties were frequent and the set got deep.
    CHECK(equal_time_pops > pops / 2);
    CHECK(max_size > 1000);
  }

  TEST_CASE_TEMPLATE("a crowd of events at one instant pops in insertion order without quadratic cost", Set,
                     BROKERSIM_EVENT_SETS) {
    // A fleet attaching at once: 200,000 events at one time, in two priority classes. The radix
    // buckets keep the ties of their current time in one sorted run: appending in insertion order
    // must not shift the run (200,000 shifting inserts would take minutes).
    test_event_sets::Driver<Set> q;
    for (std::uint32_t i = 0; i < 200'000; ++i) q.push(1000, static_cast<std::uint8_t>(i % 3 == 0 ? 2 : 1), 0, i);
    q.push(999, 5, 0, 200'000);
    REQUIRE(q.pop().target == 200'000);
    std::uint32_t expect = 1;  // class 1 first (every i not divisible by 3), then class 2
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint32_t i = 0; i < 200'000; ++i) {
        if ((i % 3 == 0) != (pass == 1)) continue;
        const sim::Event e = q.pop();
        REQUIRE(e.target == i);
        REQUIRE(e.priority() == expect);
      }
      expect = 2;
    }
    CHECK(q.empty());
  }

  TEST_CASE_TEMPLATE("times of both signs and far apart pop in order", Set, BROKERSIM_EVENT_SETS) {
    // Negative and positive times differ in the top bit of the buckets' keys (their highest
    // level), and times near both ends of the range in every bit below.
    sim::Rng rng(45, 0, "event-sets-signs");
    test_event_sets::Driver<Set> q;
    q.now = -(sim::Time{1} << 62);
    std::set<test_event_sets::Key> model;
    for (std::uint32_t i = 0; i < 3000; ++i) {
      const sim::Time t = rng.bernoulli(0.1) ? static_cast<sim::Time>(rng.below(std::uint64_t{1} << 61)) * 3 - (sim::Time{1} << 62)
                                             : static_cast<sim::Time>(rng.below(2000)) - 1000;
      q.push(t, 0, 0, i);
      model.emplace(t, 0, i);
    }
    while (!model.empty()) {
      const test_event_sets::Key want = *model.begin();
      model.erase(model.begin());
      const sim::Event e = q.pop();
      REQUIRE(e.time == std::get<0>(want));
      REQUIRE(e.target == std::get<2>(want));
    }
    CHECK(q.empty());
  }

  TEST_CASE_TEMPLATE("lazy cancellation: stale generations are skipped and live timers fire once", Set,
                     BROKERSIM_EVENT_SETS) {
    // A model with K timers, each with a generation counter. (Re)scheduling or cancelling a
    // timer bumps its generation; an event whose tag differs from the current generation is
    // stale and ignored. Reference bookkeeping: the time each timer is due, or none.
    constexpr std::uint32_t K = 64;
    std::array<std::uint32_t, K> gen{};
    std::array<sim::Time, K> due;
    due.fill(-1);
    sim::Rng rng(99, 0, "lazy-cancel");
    test_event_sets::Driver<Set> q;
    std::uint64_t live_expected = 0, fired = 0, stale = 0, supersede = 0, cancels = 0;
    auto schedule = [&](std::uint32_t k, sim::Time t) {
      if (due[k] >= 0) ++supersede;
      ++gen[k];
      due[k] = t;
      q.push(t, 0, 1, k, gen[k]);
      ++live_expected;
    };
    auto cancel = [&](std::uint32_t k) {
      ++gen[k];
      if (due[k] >= 0) ++cancels;
      due[k] = -1;
    };
    for (std::uint32_t k = 0; k < K; ++k) schedule(k, static_cast<sim::Time>(rng.below(1000)));
    while (!q.empty()) {
      const sim::Time before = q.now;
      const sim::Event e = q.pop();
      REQUIRE(e.time >= before);
      if (e.tag != gen[e.target]) {
        ++stale;
        continue;
      }
      // A live event must be the timer's current schedule, and fires once.
      REQUIRE(due[e.target] == e.time);
      due[e.target] = -1;
      ++fired;
      if (fired > 30000) continue;  // let the set drain
      // React: reschedule or cancel a few random timers (possibly this one).
      for (int j = 0; j < 2; ++j) {
        const std::uint32_t k = static_cast<std::uint32_t>(rng.below(K));
        if (rng.bernoulli(0.3)) {
          cancel(k);
        } else {
          schedule(k, q.now + static_cast<sim::Time>(rng.below(50)));
        }
      }
    }
    for (std::uint32_t k = 0; k < K; ++k) CHECK(due[k] == -1);  // nothing live was lost
    CHECK(fired == live_expected - supersede - cancels);
    CHECK(fired + stale == q.seq);
    CHECK(stale > 1000);  // cancellation really was exercised
  }

  TEST_CASE_TEMPLATE("the fast set and the plain heap pop the same events pop for pop", Fast, sim::EventQueue,
                     test_event_sets::SwitchingEventQueue) {
    // Both sets driven by one random simulation-like process (pushes at now and later, a few in
    // the past, looks at the top, timers cancelled and rescheduled): every pop of the fast set
    // equals the plain heap's, and both equal the sorted model's, live or stale alike.
    sim::Rng rng(2024, 0, "event-sets-pop-for-pop");
    test_event_sets::Driver<Fast> fast;
    test_event_sets::Driver<sim::ReferenceEventSet> plain;
    std::set<test_event_sets::Key> model;
    constexpr std::uint32_t K = 256;
    std::array<std::uint32_t, K> gen{};
    std::uint32_t next_id = 0;
    std::uint64_t compared = 0, stale = 0;
    std::vector<std::uint32_t> timer_of;  // id -> timer
    bool in_buckets = false;
    int moves = 0;  // between the heap and the buckets
    auto push = [&](sim::Time t, std::uint8_t prio, std::uint32_t timer) {
      const std::uint32_t id = next_id++;
      timer_of.push_back(timer);
      fast.push(t, prio, timer, id, gen[timer]);
      plain.push(t, prio, timer, id, gen[timer]);
      model.emplace(t, prio, id);
    };
    for (int op = 0; op < 300'000; ++op) {
      const double u = rng.uniform();
      const double p_push = ((op / 7000) % 2 == 0) ? 0.6 : 0.35;
      if (model.empty() || u < p_push) {
        const std::uint32_t timer = static_cast<std::uint32_t>(rng.below(K));
        const sim::Time t = rng.bernoulli(0.02) ? static_cast<sim::Time>(rng.below(50))
                            : rng.bernoulli(0.5) ? fast.now
                                                 : fast.now + static_cast<sim::Time>(rng.below(20));
        if (rng.bernoulli(0.2)) ++gen[timer];  // cancel what is pending for it, then reschedule
        push(t, static_cast<std::uint8_t>(rng.below(4)), timer);
      } else {
        if (rng.bernoulli(0.25)) {
          REQUIRE(fast.top().target == plain.top().target);
          REQUIRE(fast.top().time == plain.top().time);
        }
        const test_event_sets::Key want = *model.begin();
        model.erase(model.begin());
        const sim::Event a = fast.pop();
        const sim::Event b = plain.pop();
        REQUIRE(a.time == b.time);
        REQUIRE(a.order == b.order);
        REQUIRE(a.kind == b.kind);
        REQUIRE(a.target == b.target);
        REQUIRE(a.tag == b.tag);
        REQUIRE(a.aux == b.aux);
        REQUIRE(a.target == std::get<2>(want));
        REQUIRE(a.time == std::get<0>(want));
        stale += a.tag != gen[timer_of[a.target]];
        ++compared;
      }
      REQUIRE(fast.size() == plain.size());
      REQUIRE(fast.size() == model.size());
      moves += fast.set.in_buckets() != in_buckets;
      in_buckets = fast.set.in_buckets();
    }
    while (!model.empty()) {
      model.erase(model.begin());
      REQUIRE(fast.pop().target == plain.pop().target);
      ++compared;
    }
    CHECK(fast.empty());
    CHECK(plain.empty());
    CHECK(compared == next_id);
    CHECK(stale > 1000);
    // The small bounds move the events between heap and buckets at every swing of the size.
    if (std::is_same_v<Fast, test_event_sets::SwitchingEventQueue>) CHECK(moves > 10);
  }

  TEST_CASE_TEMPLATE("events from nanoseconds to seconds ahead pop as the plain heap pops them", Fast, sim::EventQueue,
                     test_event_sets::SwitchingEventQueue) {
    // A fleet's shape: thousands pending, due from a few nanoseconds to seconds ahead (log-uniform),
    // some at the current instant, in hold steps (pop one, push none, one or two). The buckets'
    // later levels keep their events in chains of pooled chunks, taken and given back as buckets
    // fill and spread; every pop must still be the plain heap's.
    sim::Rng rng(54, 0, "event-sets-chains");
    const auto due = [&](sim::Time now) {
      const double u = rng.uniform();
      const sim::Time t = u < 0.1 ? now : now + static_cast<sim::Time>(std::exp(u * std::log(3e9)));
      return std::pair{t, static_cast<std::uint8_t>(rng.below(2))};
    };
    // Drift the size between about 2,000 and 10,000 pending (both sides of the heap's bound).
    const auto refill = [&](int op, std::size_t size) {
      const int wanted = (op / 20'000) % 2 == 0 ? 2 : 0;
      return size < 2000 ? 2 : size > 10'000 ? 0 : static_cast<int>(rng.below(2)) + (wanted == 2);
    };
    CHECK(test_event_sets::hold_against_plain<Fast>(6000, 200'000, due, refill) > 0);  // the chains were used
  }

  TEST_CASE_TEMPLATE("events within the buckets' current window, and before it, pop as the plain heap pops them", Fast,
                     sim::EventQueue, test_event_sets::SwitchingEventQueue) {
    // The radix buckets keep the events of one 2^15 ns window sorted and take them in turn; an
    // event pushed into that window goes in its place among them, and one pushed before it (the
    // kernel never does, a set used on its own may) makes them place every event again. Thousands
    // pending, due up to 300 us ahead: most pushes land in the current window or the next few.
    sim::Rng rng(55, 0, "event-sets-window");
    std::uint64_t earlier = 0;
    const auto due = [&](sim::Time now) {
      const double u = rng.uniform();
      sim::Time t = now + static_cast<sim::Time>(rng.below(300'000));
      if (u < 0.2) {
        t = now;
      } else if (u < 0.5) {
        t = now + static_cast<sim::Time>(rng.below(40'000));
      } else if (u < 0.502) {
        t = now - static_cast<sim::Time>(rng.below(100'000));
        ++earlier;
      }
      return std::pair{t, static_cast<std::uint8_t>(rng.below(3))};
    };
    const auto refill = [&](int, std::size_t size) {
      return size < 2500 ? 2 : size > 3500 ? 0 : static_cast<int>(rng.below(3));
    };
    CHECK(test_event_sets::hold_against_plain<Fast>(3000, 100'000, due, refill) > 0);  // the buckets were used
    CHECK(earlier > 100);
  }

  TEST_CASE_TEMPLATE("a burst into the buckets' current window pops in order, each push at a heap's cost", Fast,
                     sim::EventQueue, test_event_sets::SwitchingEventQueue) {
    // 3,000 events in the buckets, then, while their first window is being taken, 60,000 pushed
    // into that window latest first: each comes before every event already in it. Sorting each
    // into the window's array would shift all the others (quadratic: about 2^35 bytes moved);
    // they wait among the window's late arrivals, a heap, and every pop is still the plain heap's.
    sim::Rng rng(55, 1, "event-sets-burst");
    int pushed = 0;
    const auto due = [&](sim::Time now) {
      const int i = pushed++;
      const sim::Time t = i < 3000 ? 1'000 + static_cast<sim::Time>(rng.below(3'000'000)) : now + 30'000 - (i - 3000) / 2;
      return std::pair{t, std::uint8_t{0}};
    };
    // One pop makes the first window the current one; after it, the burst.
    const auto refill = [](int op, std::size_t) { return op == 0 ? 60'000 : 0; };
    CHECK(test_event_sets::hold_against_plain<Fast>(3000, 1, due, refill) > 0);  // the buckets were used
    CHECK(pushed == 63'000);
  }
}
