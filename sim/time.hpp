// Simulated time: integer nanoseconds. Integer time makes event order exact and identical on
// every machine; scenario files speak milliseconds, so conversion happens only at the edges.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace sim {

using Time = std::int64_t;

inline constexpr Time kNever = std::numeric_limits<Time>::max();
inline constexpr Time kNsPerMs = 1'000'000;

// Largest duration a scenario may name, in ms (about 290 years). Keeps every sum of two times
// far from int64 overflow.
inline constexpr double kMaxMs = 9.0e12 / 1000.0;

inline Time from_ms(double ms) { return static_cast<Time>(std::llround(ms * 1e6)); }
inline constexpr double to_ms(Time t) { return static_cast<double>(t) / 1e6; }

// Saturating addition: an "infinite" expiry plus anything stays infinite.
inline constexpr Time add_sat(Time a, Time b) {
  if (a == kNever || b == kNever) return kNever;
  if (b > 0 && a > kNever - b) return kNever;
  return a + b;
}

}  // namespace sim
