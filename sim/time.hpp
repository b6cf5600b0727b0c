// Simulated time: integer nanoseconds. Integer time makes event order exact and identical on
// every machine; scenario files speak milliseconds, so conversion happens only at the edges.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace sim {

using Time = std::int64_t;

inline constexpr Time kNever = std::numeric_limits<Time>::max();
inline constexpr Time kNsPerMs = 1'000'000;

// Largest duration or time a scenario may name, in ms (about 31.7 years, 1e18 ns). int64
// nanoseconds reach 9.2e18, so sums of a few such times cannot overflow.
inline constexpr double kMaxMs = 1.0e12;

inline constexpr double kNsPerMsF = 1e6;  // for arithmetic in double: ns -> ms
inline constexpr double kNsPerSF = 1e9;   // ns -> s

inline Time from_ms(double ms) { return static_cast<Time>(std::llround(ms * kNsPerMsF)); }

// The longest time and the longest single draw of a duration, in ns: kMaxMs. Simulated time
// never passes it (an arrival beyond it never comes), and a draw beyond it (an exponential tail
// of a huge mean, a rate of 1e-300) is taken as it, so that a few such durations added to a time
// still fit int64 (9.2e18 ns) and no event lands "in the past" by overflow.
inline constexpr double kMaxDrawNs = kMaxMs * kNsPerMsF;
inline constexpr Time kHorizon = static_cast<Time>(kMaxDrawNs);

// Nearest integer nanosecond, half away from zero, as llround, without libm's call: this runs
// several times per simulated job. Exact for |x| < 2^52; |x| is capped at kMaxDrawNs (inf too).
inline Time round_ns(double x) {
  if (x >= 0) return static_cast<Time>(std::min(x, kMaxDrawNs) + 0.5);
  return -static_cast<Time>(0.5 - std::max(x, -kMaxDrawNs));
}
inline constexpr double to_ms(Time t) { return static_cast<double>(t) / kNsPerMsF; }
// A duration or time-weighted area held in ns (a double), in ms or s.
inline constexpr double ns_to_ms(double ns) { return ns / kNsPerMsF; }
inline constexpr double ns_to_s(double ns) { return ns / kNsPerSF; }

// Exact decimal milliseconds of a time, for CSV outputs: "3599910.000123", "5", "-0.5". No
// exponent and no rounding: printed as a double with 6 significant digits, a time after 1,000 s
// would be off by up to 10 ms.
inline std::string format_ms(Time t) {
  const bool negative = t < 0;
  const std::uint64_t v = negative ? 0 - static_cast<std::uint64_t>(t) : static_cast<std::uint64_t>(t);
  // Appended, not "-" + string: g++ 12 warns falsely (-Wstringop-overflow) on that when inlined.
  std::string out = negative ? "-" : "";
  out += std::to_string(v / kNsPerMs);
  std::uint64_t frac = v % kNsPerMs;
  if (frac == 0) return out;
  char digits[7] = "000000";
  for (int i = 5; i >= 0; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
  int len = 6;
  while (digits[len - 1] == '0') --len;
  return out + "." + std::string(digits, static_cast<std::size_t>(len));
}

// Saturating addition: an "infinite" expiry plus anything stays infinite.
inline constexpr Time add_sat(Time a, Time b) {
  if (a == kNever || b == kNever) return kNever;
  if (b > 0 && a > kNever - b) return kNever;
  return a + b;
}

}  // namespace sim
