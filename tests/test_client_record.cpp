// ClientRecord's unsettled list (models/brokers/client_record.hpp): a settled delivery leaves in
// O(1), the last taking its place, whether its position is found by a search (a short list, in
// the record) or read from Job::unacked_pos (a long one). The list's order decides the order in
// which a closed channel's deliveries are requeued, so it must be exactly the swap-with-last
// order whichever way the position was found.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "models/brokers/client_record.hpp"
#include "sim/rng.hpp"

using namespace brokersim;

TEST_CASE("client record: settling in any order keeps the swap-with-last order across the searched size") {
  sim::Rng rng(45, 0, "client-record");
  JobPool jobs;
  std::vector<std::uint32_t> ids;
  for (int i = 0; i < 64; ++i) ids.push_back(jobs.allocate());
  ClientRecord client;
  std::vector<std::uint32_t> model;  // the same list, kept by a plain search and swap
  std::uint64_t long_settles = 0, short_settles = 0;
  for (int step = 0; step < 20'000; ++step) {
    // Sizes wander from empty to a dozen, across ClientRecord::kSearched both ways.
    const bool grow = model.empty() || (model.size() < 12 && rng.bernoulli(step / 500 % 2 == 0 ? 0.6 : 0.4));
    if (grow) {
      std::vector<std::uint32_t> free;
      for (std::uint32_t j : ids)
        if (jobs[j].unacked_pos == kNoIndex) free.push_back(j);
      const std::uint32_t j = free[rng.below(free.size())];
      client.hold(jobs, j);
      model.push_back(j);
    } else {
      const std::size_t at = rng.below(model.size());
      const std::uint32_t j = model[at];
      (model.size() > ClientRecord::kSearched ? long_settles : short_settles) += 1;
      client.unhold(jobs, j);
      model[at] = model.back();
      model.pop_back();
      CHECK(jobs[j].unacked_pos == kNoIndex);
    }
    REQUIRE(std::vector<std::uint32_t>(client.held.begin(), client.held.end()) == model);
    if (model.size() > ClientRecord::kSearched)
      for (std::uint32_t i = 0; i < model.size(); ++i) REQUIRE(jobs[model[i]].unacked_pos == i);
    for (std::uint32_t j : model) REQUIRE(jobs[j].unacked_pos != kNoIndex);
  }
  CHECK(long_settles > 1000);
  CHECK(short_settles > 1000);
}

TEST_CASE("client record: settling a delivery it does not hold is an invariant error, not a read past the list") {
  JobPool jobs;
  const std::uint32_t a = jobs.allocate(), b = jobs.allocate();
  jobs[a].unacked_pos = kNoIndex;
  jobs[b].unacked_pos = kNoIndex;
  ClientRecord client;
  client.hold(jobs, a);
  CHECK_THROWS_AS(client.unhold(jobs, b), InvariantError);
}

TEST_CASE("client record: the four-at-once compare and the one-by-one compare agree") {
  // x86-64 builds search with SSE2 and never compile the other path into unhold; it is held to
  // the same answers here: every pattern of matches among four entries, with values that differ
  // only in their high or low bits.
  sim::Rng rng(45, 1, "client-record-compare");
  std::uint32_t h[4];
  for (unsigned pattern = 0; pattern < 16; ++pattern) {
    for (int trial = 0; trial < 200; ++trial) {
      const std::uint32_t j = trial % 2 == 0 ? static_cast<std::uint32_t>(rng.next()) : 0xffffffffu - static_cast<std::uint32_t>(trial);
      for (unsigned i = 0; i < 4; ++i) {
        const std::uint32_t flip = rng.bernoulli(0.5) ? 1u : 0x80000000u;
        h[i] = (pattern >> i & 1u) ? j : j ^ flip;
      }
      CHECK(ClientRecord::equal_of_four(h, j) == pattern);
      CHECK(ClientRecord::equal_of_four_one_by_one(h, j) == pattern);
    }
  }
}
