// brokersim::analytic — closed-form and Markov-chain queueing models used to validate the
// simulator. Independent of the simulator; all times in seconds and all rates per second.
//
//   erlang.hpp         Erlang B, Erlang C (M/M/c), Erlang A (M/M/c+M) closed form and chain,
//                      generic birth-death solver
//   mmcd.hpp           M/M/c+D (deterministic deadline), exact, with queue length under
//                      at-deadline / head-only / purge-on-dispatch expiry; Boots-Tijms form
//   mm1k.hpp           M/M/1/K
//   prefetch_ctmc.hpp  exact CTMC for N consumers with prefetch p, exponential TTL in the broker
//                      queue and in local buffers (eager or lazy local expiry)
//
// Invalid parameters throw std::invalid_argument; an unstable Erlang C is flagged
// (ErlangC::stable == false, NaN fields) rather than thrown.
#pragma once

#include "models/analytic/erlang.hpp"
#include "models/analytic/mm1k.hpp"
#include "models/analytic/mmcd.hpp"
#include "models/analytic/prefetch_ctmc.hpp"
