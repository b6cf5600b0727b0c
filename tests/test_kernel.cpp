// Tests of the simulation kernel (sim/*.hpp): event order, random streams, distributions,
// streaming statistics.
//
// Statistical checks use fixed seeds, so they are deterministic; their tolerances are still
// derived from the sampling distribution of the estimator (k standard errors, the standard
// error computed from the *exact* variance of the distribution, not from the sample), so that a
// failure means a real bias and not a badly chosen constant. With k = 4.5 a correct sampler
// fails one check with probability about 7e-6.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "models/events.hpp"
#include "sim/distribution.hpp"
#include "sim/event_queue.hpp"
#include "sim/fifo.hpp"
#include "sim/small_vec.hpp"
#include "sim/rng.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"

namespace {

constexpr double kSE = 4.5;  // tolerance, in standard errors, of every statistical check

// ---------------------------------------------------------------------------------------------
// Reference implementations, written from the papers, independent of sim/.

// SplitMix64 (Steele, Lea & Flood; Vigna's splitmix64.c).
std::uint64_t ref_splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256++ 1.0 (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021;
// xoshiro256plusplus.c).
struct RefXoshiro256pp {
  std::uint64_t s[4];
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t result = rotl(s[0] + s[3], 23) + s[0];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
};

// The documented derivation of a stream's state from (seed, replication, entity), redone here
// so the reference generator can be started in exactly the state sim::Rng starts in.
RefXoshiro256pp ref_stream(std::uint64_t seed, std::uint64_t replication, const std::string& e) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : e) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  std::uint64_t sm = seed;
  const std::uint64_t a = ref_splitmix64(sm);
  sm = a ^ (replication * 0xd1b54a32d192ed03ULL);
  const std::uint64_t b = ref_splitmix64(sm);
  sm = b ^ h;
  RefXoshiro256pp r{};
  for (auto& w : r.s) w = ref_splitmix64(sm);
  return r;
}

double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }

struct Moments {
  double mean, var;
};

Moments sample_moments(const std::vector<double>& xs) {
  long double s = 0;
  for (double x : xs) s += x;
  const long double m = s / static_cast<long double>(xs.size());
  long double ss = 0;
  for (double x : xs) ss += (x - m) * (x - m);
  return {static_cast<double>(m), static_cast<double>(ss / static_cast<long double>(xs.size() - 1))};
}

std::vector<double> draw(const sim::Distribution& d, std::uint64_t seed, std::size_t n) {
  sim::Rng rng(seed, 0, "dist-test");
  std::vector<double> xs(n);
  for (auto& x : xs) x = d.sample(rng);
  return xs;
}

// Checks the sample mean against the exact mean (SE = sqrt(var/n)) and the sample variance
// against the exact variance (SE = sqrt((mu4 - var^2)/n), mu4 the exact 4th central moment).
void check_moments(const std::vector<double>& xs, double mean, double var, double mu4) {
  const double n = static_cast<double>(xs.size());
  const Moments m = sample_moments(xs);
  const double se_mean = std::sqrt(var / n);
  const double se_var = std::sqrt((mu4 - var * var) / n);
  INFO("mean exact " << mean << " sample " << m.mean << " se " << se_mean);
  CHECK(std::abs(m.mean - mean) <= kSE * se_mean);
  INFO("var exact " << var << " sample " << m.var << " se " << se_var);
  CHECK(std::abs(m.var - var) <= kSE * se_var);
}

// Sampling from `d.scaled(f)` with a given seed must give f times the samples of `d`. Equal up to
// rounding relative to the distribution's scale (~10), not to the sample: a normal sample near 0
// is a cancellation (mean + sd * z), so its relative rounding error is unbounded.
void check_scaled(const sim::Distribution& d, double f) {
  const sim::Distribution ds = d.scaled(f);
  CHECK(ds.kind() == d.kind());
  CHECK(ds.mean() == doctest::Approx(f * d.mean()).epsilon(1e-12));
  sim::Rng r1(77, 1, "scaled"), r2(77, 1, "scaled");
  for (int i = 0; i < 2000; ++i) {
    const double x = d.sample(r1), y = ds.sample(r2);
    REQUIRE(y == doctest::Approx(f * x).epsilon(1e-12).scale(10.0 * f));
  }
}

}  // namespace

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
TEST_SUITE("event_queue") {
  TEST_CASE("order is (time, priority class, insertion order) on hand-made ties") {
    sim::EventQueue q;
    // target = label; kind/tag/aux carry a payload that must survive the heap.
    q.push(10, 1, 100, 0, 1000, 10000);
    q.push(10, 0, 101, 1, 1001, 10001);
    q.push(5, 3, 102, 2, 1002, 10002);
    q.push(10, 0, 103, 3, 1003, 10003);
    q.push(10, 1, 104, 4, 1004, 10004);
    q.push(7, 255, 105, 5, 1005, 10005);
    q.push(10, 0, 106, 6, 1006, 10006);
    q.push(-3, 9, 107, 7, 1007, 10007);
    CHECK(q.size() == 8);
    CHECK(q.pushed() == 8);
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

  TEST_CASE("priority class beats insertion order, time beats priority class") {
    sim::EventQueue q;
    q.push(1, 200, 0, 0);  // earliest time wins whatever its class
    for (std::uint32_t i = 1; i <= 50; ++i) q.push(2, static_cast<std::uint8_t>(50 - i), 0, i);
    CHECK(q.pop().target == 0);
    for (std::uint32_t i = 50; i >= 1; --i) CHECK(q.pop().target == i);
  }

  TEST_CASE("clear() empties the queue and restarts the insertion sequence") {
    sim::EventQueue q;
    for (int i = 0; i < 10; ++i) q.push(i, 0, 0, static_cast<std::uint32_t>(i));
    q.clear();
    CHECK(q.empty());
    CHECK(q.pushed() == 0);
    q.push(3, 0, 0, 1);
    q.push(3, 0, 0, 2);
    CHECK(q.pop().target == 1);
    CHECK(q.pop().target == 2);
  }

  TEST_CASE("randomised stress against a std::set reference on (time, class, sequence)") {
    // ~200k mixed operations, times drawn from a narrow window (so equal times are the rule)
    // and 3 priority classes. Phases alternate between growing and draining the queue so it is
    // exercised from empty to a few thousand events. The popped sequences must be identical.
    sim::Rng rng(12345, 0, "eq-stress");
    sim::EventQueue q;
    std::set<std::tuple<sim::Time, int, std::uint32_t>> ref;
    std::uint32_t next_id = 0;
    sim::Time now = 0;
    std::size_t pops = 0, equal_time_pops = 0, max_size = 0;
    sim::Time last_popped = -1;
    const int kOps = 200'000;
    for (int op = 0; op < kOps; ++op) {
      const double p_push = ((op / 5000) % 2 == 0) ? 0.65 : 0.38;
      if (ref.empty() || rng.uniform() < p_push) {
        sim::Time t;
        if (rng.bernoulli(0.05)) {
          t = static_cast<sim::Time>(rng.below(100));  // occasionally in the past
        } else {
          t = now + static_cast<sim::Time>(rng.below(4));
        }
        const int prio = static_cast<int>(rng.below(3));
        const std::uint32_t id = next_id++;
        q.push(t, static_cast<std::uint8_t>(prio), 7, id, id ^ 0x5a5a5a5au, id * 3u);
        ref.emplace(t, prio, id);
      } else {
        const auto [t, prio, id] = *ref.begin();
        ref.erase(ref.begin());
        // A look at the top between pops (what a timed run does) must not change the order,
        // whether the heap's root is vacant or not.
        if (rng.bernoulli(0.3)) {
          REQUIRE(q.top().time == t);
          REQUIRE(q.top().target == id);
        }
        const sim::Event e = q.pop();
        REQUIRE(e.time == t);
        REQUIRE(static_cast<int>(e.priority()) == prio);
        REQUIRE(e.target == id);
        REQUIRE(e.tag == (id ^ 0x5a5a5a5au));
        REQUIRE(e.aux == id * 3u);
        equal_time_pops += (e.time == last_popped);
        last_popped = e.time;
        now = std::max(now, e.time);
        ++pops;
      }
      REQUIRE(q.size() == ref.size());
      max_size = std::max(max_size, q.size());
    }
    while (!ref.empty()) {
      const auto [t, prio, id] = *ref.begin();
      ref.erase(ref.begin());
      const sim::Event e = q.pop();
      REQUIRE(e.time == t);
      REQUIRE(static_cast<int>(e.priority()) == prio);
      REQUIRE(e.target == id);
      ++pops;
    }
    CHECK(q.empty());
    CHECK(pops == next_id);
    CHECK(q.pushed() == next_id);
    // The test is only meaningful if ties were frequent and the heap got deep.
    CHECK(equal_time_pops > pops / 2);
    CHECK(max_size > 1000);
  }

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

  TEST_CASE("lazy cancellation: stale generations are skipped, live timers fire exactly once") {
    // A model with K timers, each with a generation counter. (Re)scheduling or cancelling a
    // timer bumps its generation; an event whose tag differs from the current generation is
    // stale and ignored. Reference bookkeeping: the time each timer is due, or none.
    constexpr std::uint32_t K = 64;
    std::array<std::uint32_t, K> gen{};
    std::array<sim::Time, K> due;
    due.fill(-1);
    sim::Rng rng(99, 0, "lazy-cancel");
    sim::EventQueue q;
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
    sim::Time now = 0;
    while (!q.empty()) {
      const sim::Event e = q.pop();
      REQUIRE(e.time >= now);
      now = e.time;
      if (e.tag != gen[e.target]) {
        ++stale;
        continue;
      }
      // A live event must be the timer's current schedule, and fires once.
      REQUIRE(due[e.target] == e.time);
      due[e.target] = -1;
      ++fired;
      if (fired > 30000) continue;  // let the queue drain
      // React: reschedule or cancel a few random timers (possibly this one).
      for (int j = 0; j < 2; ++j) {
        const std::uint32_t k = static_cast<std::uint32_t>(rng.below(K));
        if (rng.bernoulli(0.3)) {
          cancel(k);
        } else {
          schedule(k, now + static_cast<sim::Time>(rng.below(50)));
        }
      }
    }
    for (std::uint32_t k = 0; k < K; ++k) CHECK(due[k] == -1);  // nothing live was lost
    CHECK(fired == live_expected - supersede - cancels);
    CHECK(fired + stale == q.pushed());
    CHECK(stale > 1000);  // cancellation really was exercised
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

TEST_SUITE("rng") {
  TEST_CASE("reference generator matches published vectors") {
    // SplitMix64 from seed 1234567 (the vector quoted with the reference splitmix64.c).
    std::uint64_t x = 1234567;
    CHECK(ref_splitmix64(x) == 6457827717110365317ULL);
    CHECK(ref_splitmix64(x) == 3203168211198807973ULL);
    CHECK(ref_splitmix64(x) == 9817491932198370423ULL);
    // sim's splitmix64 is the same function.
    std::uint64_t y = 1234567, z = 1234567;
    for (int i = 0; i < 100; ++i) REQUIRE(sim::splitmix64(y) == ref_splitmix64(z));
    // xoshiro256++ from state {0,0,0,1}: first outputs of the reference C code.
    RefXoshiro256pp r{{0, 0, 0, 1}};
    const std::uint64_t v[] = {0x0000000000800000ULL, 0x0000000000800011ULL,
                               0x0002200000800011ULL, 0x0002200044000020ULL,
                               0x00022000448008A1ULL, 0x01102100802208A0ULL,
                               0x0114002284200880ULL, 0x0402896644A64095ULL,
                               0x8A14A0A244ACC891ULL, 0x8C88BA4680B20495ULL};
    for (std::uint64_t e : v) CHECK(r.next() == e);
    // From {1,2,3,4} the first output is rotl(1 + 4, 23) + 1 by hand.
    RefXoshiro256pp r2{{1, 2, 3, 4}};
    CHECK(r2.next() == (5ULL << 23) + 1);
  }

  TEST_CASE("sim::Rng is xoshiro256++: 1000 outputs equal the reference from the same state") {
    for (const auto& [seed, rep, name] :
         std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string>>{
             {0, 0, ""}, {2024, 3, "consumer-1"}, {~0ULL, 17, "producer/äöü"}}) {
      sim::Rng a(seed, rep, name);
      RefXoshiro256pp b = ref_stream(seed, rep, name);
      for (int i = 0; i < 1000; ++i) REQUIRE(a.next() == b.next());
    }
    // The default constructor is stream (0, 0, "").
    sim::Rng d, e(0, 0, "");
    for (int i = 0; i < 100; ++i) REQUIRE(d.next() == e.next());
  }

  TEST_CASE("pinned first outputs of one stream") {
    // Computed once from this implementation; a change here changes every published result.
    sim::Rng r(2024, 3, "consumer-1");
    CHECK(r.next() == 0xa4835ed500262f1dULL);
    CHECK(r.next() == 0x147bdca18199c13cULL);
    CHECK(r.next() == 0xfb39f8ec6532c107ULL);
    CHECK(r.next() == 0x69f9c42dc1c91026ULL);
    CHECK(r.next() == 0xe75109c64645099dULL);
  }

  TEST_CASE("same key, same stream - different key, different stream") {
    auto first = [](std::uint64_t s, std::uint64_t rep, std::string_view e, int n) {
      sim::Rng r(s, rep, e);
      std::vector<std::uint64_t> v(static_cast<std::size_t>(n));
      for (auto& x : v) x = r.next();
      return v;
    };
    const auto base = first(7, 0, "broker", 1000);
    CHECK(base == first(7, 0, "broker", 1000));
    const std::vector<std::vector<std::uint64_t>> others{
        first(7, 0, "broker2", 1000), first(7, 0, "Broker", 1000), first(7, 0, "", 1000),
        first(7, 1, "broker", 1000), first(7, 2, "broker", 1000), first(8, 0, "broker", 1000),
        first(0, 0, "broker", 1000)};
    for (const auto& o : others) {
      // Not merely different: no output in common (a shifted copy would share 999).
      const std::set<std::uint64_t> sb(base.begin(), base.end());
      int common = 0;
      for (std::uint64_t x : o) common += sb.count(x) ? 1 : 0;
      CHECK(common == 0);
    }
    // Seed and replication are not interchangeable.
    CHECK(first(1, 2, "x", 10) != first(2, 1, "x", 10));
  }

  TEST_CASE("common random numbers: a stream does not depend on other streams") {
    std::vector<double> alone;
    {
      sim::Rng a(5, 2, "consumer-3");
      for (int i = 0; i < 500; ++i) alone.push_back(a.exponential(1.0));
    }
    std::vector<double> crowded;
    {
      sim::Rng before1(5, 2, "consumer-1");
      sim::Rng before2(5, 2, "consumer-2");
      for (int i = 0; i < 1000; ++i) before1.next();
      sim::Rng a(5, 2, "consumer-3");
      sim::Rng after(5, 2, "consumer-4");
      for (int i = 0; i < 500; ++i) {
        before2.standard_normal();
        after.uniform();
        crowded.push_back(a.exponential(1.0));
        before1.below(17);
      }
    }
    CHECK(alone == crowded);
  }

  TEST_CASE("uniform ranges and below(n)") {
    sim::Rng r(3, 0, "ranges");
    double lo = 1, hi = 0, lo_pos = 2;
    std::array<int, 7> cnt{};
    const int n = 70'000;
    for (int i = 0; i < n; ++i) {
      const double u = r.uniform(), up = r.uniform_pos();
      REQUIRE(u >= 0.0);
      REQUIRE(u < 1.0);
      REQUIRE(up > 0.0);
      REQUIRE(up <= 1.0);
      lo = std::min(lo, u);
      hi = std::max(hi, u);
      lo_pos = std::min(lo_pos, up);
      const std::uint64_t b = r.below(7);
      REQUIRE(b < 7);
      ++cnt[b];
    }
    CHECK(lo < 1e-3);
    CHECK(hi > 1 - 1e-3);
    // Each value of below(7) has probability 1/7: binomial CI.
    const double p = 1.0 / 7.0, se = std::sqrt(p * (1 - p) / n);
    for (int c : cnt) CHECK(std::abs(c / static_cast<double>(n) - p) <= kSE * se);
    CHECK(r.below(1) == 0);
  }
}

// =============================================================================================
TEST_SUITE("distribution") {
  constexpr std::size_t N = 200'000;

  TEST_CASE("constant") {
    const auto d = sim::Distribution::constant(3.25);
    sim::Rng r(1, 0, "c");
    for (int i = 0; i < 100; ++i) REQUIRE(d.sample(r) == 3.25);
    CHECK(d.mean() == 3.25);
    CHECK(d.is_constant());
    CHECK(!d.is_zero());
    CHECK(sim::Distribution::constant(0).is_zero());
    CHECK(sim::Distribution().is_zero());
    check_scaled(d, 1e6);
  }

  TEST_CASE("exponential: mean, variance, P(X > mean) = 1/e") {
    const double m = 2.5;
    const auto d = sim::Distribution::exp(m);
    CHECK(d.mean() == m);
    const auto xs = draw(d, 11, N);
    CHECK(*std::min_element(xs.begin(), xs.end()) >= 0.0);
    // Var = m^2; 4th central moment = 9 m^4.
    check_moments(xs, m, m * m, 9 * std::pow(m, 4));
    const double p = std::exp(-1.0);
    const double frac = std::count_if(xs.begin(), xs.end(), [&](double x) { return x > m; }) /
                        static_cast<double>(N);
    CHECK(std::abs(frac - p) <= kSE * std::sqrt(p * (1 - p) / N));  // binomial CI
    check_scaled(d, 1e6);
  }

  TEST_CASE("uniform") {
    const double a = 2, b = 7, w = b - a;
    const auto d = sim::Distribution::uniform(a, b);
    CHECK(d.mean() == 4.5);
    const auto xs = draw(d, 12, N);
    const auto [mn, mx] = std::minmax_element(xs.begin(), xs.end());
    CHECK(*mn >= a);
    CHECK(*mx < b);
    // The support is really [a, b): P(no sample within w * 1e-4 of an end) = e^-20.
    CHECK(*mn < a + w * 1e-4);
    CHECK(*mx > b - w * 1e-4);
    // Var = w^2/12; 4th central moment = w^4/80.
    check_moments(xs, (a + b) / 2, w * w / 12, std::pow(w, 4) / 80);
    check_scaled(d, 1e6);
  }

  TEST_CASE("normal, untruncated") {
    const double mu = 1.0, s = 2.0;
    const auto d = sim::Distribution::normal(mu, s, false);
    CHECK(d.mean() == mu);
    const auto xs = draw(d, 13, N);
    // Var = s^2; 4th central moment = 3 s^4.
    check_moments(xs, mu, s * s, 3 * std::pow(s, 4));
    // Untruncated really produces negatives: P(X < 0) = Phi(-mu/s).
    const double p = Phi(-mu / s);
    const double frac = std::count_if(xs.begin(), xs.end(), [](double x) { return x < 0; }) /
                        static_cast<double>(N);
    CHECK(std::abs(frac - p) <= kSE * std::sqrt(p * (1 - p) / N));
    check_scaled(d, 1e6);
  }

  TEST_CASE("normal truncated at zero: closed-form truncated-normal mean and variance") {
    for (const auto& ps : std::vector<std::pair<double, double>>{{1.0, 1.0}, {0.2, 1.5},
                                                                  {5.0, 1.0}}) {
      const double mu = ps.first, s = ps.second;  // (no structured bindings: CAPTURE is a lambda)
      CAPTURE(mu);
      CAPTURE(s);
      const auto d = sim::Distribution::normal(mu, s, true);
      const auto xs = draw(d, 14, N);
      CHECK(*std::min_element(xs.begin(), xs.end()) >= 0.0);
      // X ~ N(mu, s^2) conditioned on X >= 0. With alpha = -mu/s, lambda = phi(alpha) / (1 -
      // Phi(alpha)): E = mu + s lambda, Var = s^2 (1 + alpha lambda - lambda^2).
      const double alpha = -mu / s;
      const double lambda = phi(alpha) / (1 - Phi(alpha));
      const double mean = mu + s * lambda;
      const double var = s * s * (1 + alpha * lambda - lambda * lambda);
      // The 4th central moment has no short closed form: integrate the density numerically
      // (Simpson), which also cross-checks the closed-form mean and variance above.
      const double Z = 1 - Phi(alpha), hi = mu + 14 * s;
      const int m = 20000;
      const double h = hi / m;
      double I0 = 0, I1 = 0, I2 = 0, I4 = 0;
      for (int i = 0; i <= m; ++i) {
        const double x = i * h, wgt = (i == 0 || i == m) ? 1 : (i % 2 ? 4 : 2);
        const double f = wgt * phi((x - mu) / s) / (s * Z);
        I0 += f;
        I1 += f * x;
        I2 += f * (x - mean) * (x - mean);
        I4 += f * std::pow(x - mean, 4);
      }
      I0 *= h / 3;
      I1 *= h / 3;
      I2 *= h / 3;
      I4 *= h / 3;
      CHECK(I0 == doctest::Approx(1.0).epsilon(1e-9));
      CHECK(I1 == doctest::Approx(mean).epsilon(1e-9));
      CHECK(I2 == doctest::Approx(var).epsilon(1e-9));
      check_moments(xs, mean, var, I4);
      check_scaled(d, 1e6);
    }
  }

  TEST_CASE("lognormal by mean and cv") {
    for (const auto& ps : std::vector<std::pair<double, double>>{{3.0, 0.5}, {1.0, 1.0}}) {
      const double m = ps.first, cv = ps.second;
      CAPTURE(m);
      CAPTURE(cv);
      const auto d = sim::Distribution::lognormal(m, cv);
      CHECK(d.mean() == m);
      const auto xs = draw(d, 15, N);
      CHECK(*std::min_element(xs.begin(), xs.end()) > 0.0);
      // Var = (m cv)^2; 4th central moment = Var^2 * (e^{4s2} + 2e^{3s2} + 3e^{2s2} - 3),
      // s2 = ln(1 + cv^2).
      const double var = m * m * cv * cv, s2 = std::log1p(cv * cv);
      const double kurt = std::exp(4 * s2) + 2 * std::exp(3 * s2) + 3 * std::exp(2 * s2) - 3;
      check_moments(xs, m, var, var * var * kurt);
      // The median of a lognormal is m / sqrt(1 + cv^2): P(X < median) = 1/2.
      const double med = m / std::sqrt(1 + cv * cv);
      const double frac = std::count_if(xs.begin(), xs.end(), [&](double x) { return x < med; }) /
                          static_cast<double>(N);
      CHECK(std::abs(frac - 0.5) <= kSE * std::sqrt(0.25 / N));
      check_scaled(d, 1e6);
    }
  }

  TEST_CASE("empirical: uniform choice among the listed values") {
    const std::vector<double> vals{1, 2, 2, 7, 10, 0.5};
    const auto d = sim::Distribution::empirical(vals);
    double mean = 0;
    for (double v : vals) mean += v;
    mean /= vals.size();
    CHECK(d.mean() == doctest::Approx(mean).epsilon(1e-15));
    double var = 0, mu4 = 0;
    for (double v : vals) {
      var += (v - mean) * (v - mean) / vals.size();
      mu4 += std::pow(v - mean, 4) / vals.size();
    }
    const auto xs = draw(d, 16, N);
    check_moments(xs, mean, var, mu4);
    // Each distinct value with probability (multiplicity / size): binomial CI.
    for (double v : {0.5, 1.0, 2.0, 7.0, 10.0}) {
      const double p = std::count(vals.begin(), vals.end(), v) / static_cast<double>(vals.size());
      const double frac = std::count(xs.begin(), xs.end(), v) / static_cast<double>(N);
      CHECK(std::abs(frac - p) <= kSE * std::sqrt(p * (1 - p) / N));
    }
    CHECK(std::count_if(xs.begin(), xs.end(), [&](double x) {
            return std::find(vals.begin(), vals.end(), x) == vals.end();
          }) == 0);
    check_scaled(d, 1e6);
    check_scaled(d, 0.001);
  }
}

// =============================================================================================
TEST_SUITE("stats") {
  TEST_CASE("histogram: index / lower / upper are consistent on every bucket edge") {
    using H = sim::Histogram;
    CHECK(H::lower(0) == 0);
    CHECK(H::upper(H::kBuckets - 1) == ~std::uint64_t{0});  // the buckets cover all of uint64
    for (std::size_t i = 0; i < H::kBuckets; ++i) {
      const std::uint64_t lo = H::lower(i), up = H::upper(i);
      REQUIRE(lo <= up);
      REQUIRE(H::index(lo) == i);
      REQUIRE(H::index(up) == i);
      if (lo > 0) REQUIRE(H::index(lo - 1) == i - 1);
      if (i + 1 < H::kBuckets) {
        REQUIRE(H::lower(i + 1) == up + 1);  // contiguous: together with the above, v is in
        REQUIRE(H::index(up + 1) == i + 1);  // [lower(i), upper(i)] iff index(v) == i
      }
      // Values below 64 are exact; above, a bucket is at most 1/64 of its lower bound wide,
      // so its midpoint is within 1/128 of every value in it.
      if (i < H::kSub) {
        REQUIRE(lo == up);
      } else {
        REQUIRE(static_cast<double>(up - lo + 1) <= static_cast<double>(lo) / 64.0);
      }
    }
    // Random values across the whole range up to 2^62 (and beyond): v lies in its bucket.
    sim::Rng r(8, 0, "hist-index");
    for (int k = 0; k < 100'000; ++k) {
      const int bits = static_cast<int>(r.below(64));
      const std::uint64_t v = r.next() >> (63 - bits);
      const std::size_t i = H::index(v);
      REQUIRE(i < H::kBuckets);
      REQUIRE(H::lower(i) <= v);
      REQUIRE(v <= H::upper(i));
    }
    for (int e = 0; e <= 62; ++e) {
      const std::uint64_t p = std::uint64_t{1} << e;
      CHECK(H::lower(H::index(p)) == p);  // a power of two opens a bucket
    }
  }

  TEST_CASE("histogram: exact below 64") {
    sim::Histogram h;
    std::vector<std::int64_t> all;
    for (std::int64_t v = 0; v < 64; ++v)
      for (std::int64_t k = 0; k <= v % 5; ++k) {
        h.add(v);
        all.push_back(v);
      }
    const double n = static_cast<double>(all.size());
    for (std::size_t rank = 1; rank <= all.size(); ++rank) {
      // Mid-rank q, so that q * n rounds the same way whatever the floating-point error.
      const double q = (static_cast<double>(rank) - 0.5) / n;
      REQUIRE(h.quantile(q) == static_cast<double>(all[rank - 1]));
    }
    CHECK(h.quantile(0.0) == 0.0);
    CHECK(h.min() == 0);
    CHECK(h.max() == 63);
    CHECK(h.count() == all.size());
    h.add(-5);  // negative clamps to 0
    CHECK(h.min() == 0);
    CHECK(h.count() == all.size() + 1);
  }

  TEST_CASE("histogram: quantiles of a uniform grid 1..1e6 ns within 1%") {
    sim::Histogram h;
    const std::int64_t n = 1'000'000;
    for (std::int64_t v = 1; v <= n; ++v) h.add(v);
    CHECK(h.count() == static_cast<std::uint64_t>(n));
    CHECK(h.mean() == doctest::Approx(500000.5).epsilon(1e-12));
    CHECK(h.min() == 1);
    CHECK(h.max() == n);
    for (double q : {1e-6, 1e-5, 3e-5, 1e-4, 1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999,
                     0.9999, 1.0}) {
      CAPTURE(q);
      const double exact = std::max(1.0, std::ceil(q * n));  // nearest rank on 1..n
      CHECK(std::abs(h.quantile(q) - exact) <= 0.01 * exact);
    }
    CHECK(h.quantile(1.0) == static_cast<double>(n));  // clamped to the observed maximum
  }

  TEST_CASE("histogram: quantiles of exponential samples vs exact sorted-sample quantiles") {
    sim::Histogram h;
    sim::Rng r(21, 0, "hist-exp");
    const std::size_t n = 200'000;
    std::vector<std::int64_t> xs(n);
    for (auto& x : xs) {
      x = static_cast<std::int64_t>(r.exponential(5e6));  // mean 5 ms in ns
      h.add(x);
    }
    std::sort(xs.begin(), xs.end());
    for (double q : {1e-4, 0.001, 0.01, 0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999}) {
      CAPTURE(q);
      const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
      const double exact = static_cast<double>(xs[rank - 1]);
      CHECK(std::abs(h.quantile(q) - exact) <= 0.01 * std::max(exact, 1.0));
    }
    CHECK(h.max() == xs.back());
    CHECK(h.min() == xs.front());
    long double s = 0;
    for (auto x : xs) s += x;
    CHECK(h.mean() == doctest::Approx(static_cast<double>(s / n)).epsilon(1e-12));
  }

  TEST_CASE("Welford agrees with a two-pass computation") {
    // A large offset with small spread is where a naive sum-of-squares loses everything.
    sim::Rng r(4, 0, "welford");
    std::vector<double> xs(100'000);
    for (auto& x : xs) x = 1e9 + r.standard_normal() * 3.0;
    sim::Welford w;
    for (double x : xs) w.add(x);
    const Moments m = sample_moments(xs);
    CHECK(w.count() == xs.size());
    CHECK(w.mean() == doctest::Approx(m.mean).epsilon(1e-14));
    CHECK(w.variance() == doctest::Approx(m.var).epsilon(1e-7));
    CHECK(w.stddev() == doctest::Approx(std::sqrt(m.var)).epsilon(1e-7));
    CHECK(w.min() == *std::min_element(xs.begin(), xs.end()));
    CHECK(w.max() == *std::max_element(xs.begin(), xs.end()));

    sim::Welford small;
    CHECK(small.mean() == 0.0);
    CHECK(small.variance() == 0.0);
    CHECK(small.min() == 0.0);
    small.add(4);
    CHECK(small.mean() == 4);
    CHECK(small.variance() == 0.0);
    small.add(8);
    small.add(-3);
    CHECK(small.mean() == doctest::Approx(3.0));
    CHECK(small.variance() == doctest::Approx(((1 + 25 + 36) / 2.0)));
    CHECK(small.min() == -3);
    CHECK(small.max() == 8);
  }

  TEST_CASE("TimeWeighted on a hand-computed step function, with reset()") {
    sim::TimeWeighted tw(100);
    CHECK(tw.value() == 0);
    CHECK(tw.mean(100) == 0);  // empty span: the current value
    tw.set(100, 2);            // 2 on [100, 110)
    tw.set(110, 5);            // 5 on [110, 130)
    tw.add(130, -1);           // 4 on [130, 150)
    CHECK(tw.value() == 4);
    CHECK(tw.area(150) == 2 * 10 + 5 * 20 + 4 * 20);
    CHECK(tw.mean(150) == doctest::Approx(200.0 / 50));
    CHECK(tw.mean(140) == doctest::Approx((20 + 100 + 40) / 40.0));  // queried mid-step
    tw.add(150, 3);  // 7 on [150, 160)
    tw.set(160, 0);  // 0 on [160, 200)
    CHECK(tw.mean(200) == doctest::Approx((200 + 70) / 100.0));
    // Warm-up ends at 200: the integral restarts, the current value (0) is kept.
    tw.reset(200);
    CHECK(tw.value() == 0);
    CHECK(tw.area(200) == 0);
    CHECK(tw.mean(200) == 0);
    tw.set(210, 6);  // 0 on [200, 210), 6 on [210, 240)
    tw.set(240, 1);  // 1 on [240, 260)
    CHECK(tw.area(260) == 6 * 30 + 1 * 20);
    CHECK(tw.mean(260) == doctest::Approx(200.0 / 60));
    // Reset while the value is non-zero keeps integrating it from the reset point.
    tw.reset(300);
    CHECK(tw.mean(310) == doctest::Approx(1.0));
    CHECK(tw.area(310) == 10);
  }
}
