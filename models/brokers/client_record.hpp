// What a broker knows of one client, whichever broker it is: whether the client is subscribed,
// whether it waits in its queue's dispatch ring for a message, and the deliveries it holds
// unsettled. RabbitMQ's channel, Service Bus's receiver and SQS's client are this record plus
// their own few fields; the rules that differ (how much a client may hold, what happens to what
// it held when it goes) stay with each broker.
//
// The ring and the `in_ring` flag must agree: a client is in the ring at most once, and a broker
// never searches the ring to find out. Every change of either goes through the operations here.
#pragma once

#include <algorithm>
#include <cstdint>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <vector>

#include "models/brokers/dispatcher.hpp"
#include "models/consumer.hpp"
#include "models/job.hpp"
#include "models/results.hpp"
#include "sim/small_vec.hpp"

namespace brokersim {

struct ClientRecord {
  bool open = false;               // subscribed on a live connection
  bool cancelled = false;          // asked for nothing new (basic.cancel, a processor stopping)
  bool in_ring = false;            // waiting in its queue's dispatch ring
  bool reconnect_when_up = false;  // asked to connect while the broker was down
  // The deliveries it holds unsettled, in no particular order: whichever one is settled leaves
  // in O(1) (the last takes its place; see unhold for how its position is found).
  // Up to four in the record itself: most clients hold one or a few, and a separate block per
  // client was one more cache miss per settlement in a large fleet.
  using Held = sim::SmallVec<std::uint32_t, 4>;
  Held held;

  // Subscribed and not cancelled: whether it may be sent more is each broker's credit rule.
  bool listening() const { return open && !cancelled; }

  // It subscribes (again): a cancel before it is undone.
  void subscribe() {
    open = true;
    cancelled = false;
  }
  // It wants nothing new: out of the ring until it subscribes again; what it holds stays its own.
  void cancel(Dispatcher& ring, int ci) {
    cancelled = true;
    leave(ring, ci);
  }
  // Its connection is gone: out of the ring. What it held is for the broker to take back.
  void close(Dispatcher& ring, int ci) {
    open = false;
    leave(ring, ci);
  }

  // Into the ring, at the tail of its priority level (the caller knows it is not in it).
  void join(Dispatcher& ring, int ci, int priority) {
    ring.add(ci, priority);
    in_ring = true;
  }
  // Back into the ring if it is out of it and may take more (`may_take` is asked only then).
  template <class MayTake>
  void rejoin(Dispatcher& ring, int ci, int priority, MayTake&& may_take) {
    if (!in_ring && may_take()) join(ring, ci, priority);
  }
  void leave(Dispatcher& ring, int ci) {
    if (in_ring) ring.erase(ci);
    in_ring = false;
  }

  // A job's unacked_pos says whether it is held (kNoIndex: not). Its position in `held` is found
  // by a search while the list fits the record (it is on the line the settlement reads anyway),
  // and read from unacked_pos beyond that: the search leaves the job that takes the settled one's
  // place untouched, a cache miss fewer per settlement in a large fleet (docs/performance.md).
  // While the list is longer than kSearched, every held job's unacked_pos is its position.
  static constexpr std::uint32_t kSearched = Held::kInline;
  void hold(JobPool& jobs, std::uint32_t j) {
    jobs[j].unacked_pos = static_cast<std::uint32_t>(held.size());
    held.push_back(j);
    if (held.size() == kSearched + 1) [[unlikely]]  // positions are read from here on: make them true
      for (std::uint32_t i = 0; i < kSearched; ++i) jobs[held[i]].unacked_pos = i;
  }
  // Bit i set where h[i] == j, i < 4: four compares at once where SSE2 is there (every x86-64),
  // else one by one. Both are compiled everywhere, so a test holds one to the other.
  static unsigned equal_of_four(const std::uint32_t* h, std::uint32_t j) {
#ifdef __SSE2__
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));
    return static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, _mm_set1_epi32(static_cast<int>(j))))));
#else
    return equal_of_four_one_by_one(h, j);
#endif
  }
  static unsigned equal_of_four_one_by_one(const std::uint32_t* h, std::uint32_t j) {
    return static_cast<unsigned>(h[0] == j) | static_cast<unsigned>(h[1] == j) << 1 |
           static_cast<unsigned>(h[2] == j) << 2 | static_cast<unsigned>(h[3] == j) << 3;
  }
  void unhold(JobPool& jobs, std::uint32_t j) {
    const std::uint32_t n = static_cast<std::uint32_t>(held.size());
    std::uint32_t* const h = held.data();
    std::uint32_t pos = 0;
    if (n <= kSearched) {
      // All four compared at once, without a branch on where j is (a search loop's exit mispredicted,
      // 4 consumers 0.76 -> 0.79 s per 2,000,000 jobs); the list's storage always has room for
      // four, initialised, and the values past n are masked off.
      static_assert(kSearched == 4);
      const unsigned at = equal_of_four(h, j) & ((1u << n) - 1);
      if (at == 0) [[unlikely]] throw InvariantError("a client settled a delivery it did not hold");
      pos = static_cast<std::uint32_t>(__builtin_ctz(at));
    } else {
      pos = jobs[j].unacked_pos;
    }
    const std::uint32_t last = h[n - 1];
    h[pos] = last;
    if (n > kSearched) jobs[last].unacked_pos = pos;
    held.pop_back();
    jobs[j].unacked_pos = kNoIndex;
  }
};

// A channel (AMQP 0-9-1) or a link (AMQP 1.0) hands the client its deliveries in the order it sent
// them: their frames share one connection's byte stream. Each delivery draws its own latency, so
// one drawn shorter than the delivery sent before it would overtake that one; it arrives right
// behind it instead, at the same instant (receipts of one instant are handled in the order they
// were scheduled, which is the order sent). The draws are the same either way.
struct SendOrder {
  Time latest = 0;  // the latest arrival of anything the channel has sent

  // When a delivery that would reach the client at `on_its_own` does reach it.
  Time arrival(Time on_its_own) {
    latest = std::max(latest, on_its_own);
    return latest;
  }
};

// The ring's next client: it leaves the ring for its turn (the broker puts it back at the tail if
// it may still take more).
template <class Record>
int take_turn(Dispatcher& ring, std::vector<Record>& clients) {
  const int ci = ring.take();
  static_cast<ClientRecord&>(clients[static_cast<std::size_t>(ci)]).in_ring = false;
  return ci;
}

// A client asks to connect: refused while the broker is down; the broker then connects it itself
// once it is up (reconnect_waiting).
inline bool connect_unless_down(ClientRecord& client, bool down) {
  if (down) client.reconnect_when_up = true;
  return !down;
}

// The broker is up again: every client refused meanwhile connects, in consumer order.
template <class Record>
void reconnect_waiting(std::vector<Record>& clients, std::vector<Consumer>& consumers, World& w) {
  for (auto& c : consumers) {
    ClientRecord& client = clients[static_cast<std::size_t>(c.index())];
    if (!client.reconnect_when_up) continue;
    client.reconnect_when_up = false;
    c.connect(w);
  }
}

}  // namespace brokersim
