// Numbers inside configuration text ("00:05:00", "PT2M30.5S", "2:48:05.477581", SQS's "30"), read
// by one routine in one pass: no std::regex (its recursion grows with the text) and no std::stod or
// std::stoll (they throw "stod" for 400 digits or "PT.S", naming no key). Digit counts are bounded:
// a whole part of more than kMaxWholeDigits significant digits reads as too large, more than
// kMaxFractionDigits after the point is no number. Callers name the key, what they expected and what
// they got (decimal_at, too_large). Used by the framework translations (Translation::timespan_ms) and
// by `brokersim import` (experiments/cli/import/common.cpp, servicebus.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "experiments/cli/loader/checks.hpp"

namespace brokersim::loader {

// Every maximum these numbers meet is far below 1e18.
inline constexpr int kMaxWholeDigits = 18;
inline constexpr int kMaxFractionDigits = 18;

struct DecimalText {
  std::uint64_t whole = 0;   // exact (at most 18 significant digits)
  double fraction = 0;       // the digits after the point, 0 <= fraction < 1
  bool has_point = false;    // "5.0" as against "5"
  bool too_large = false;    // more than kMaxWholeDigits significant digits before the point
  double value() const {
    return too_large ? std::numeric_limits<double>::infinity() : static_cast<double>(whole) + fraction;
  }
};

// An unsigned decimal DIGITS[.DIGITS] at text[pos] (`comma_ok`: ',' is a decimal point too, as
// ISO 8601 allows); pos moves past it. nullopt, pos unchanged, when there is none: no digit first,
// a point with no digit after it, or more than kMaxFractionDigits digits after the point.
inline std::optional<DecimalText> read_decimal(std::string_view text, std::size_t& pos, bool comma_ok = false) {
  const auto digit = [&](std::size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
  std::size_t i = pos;
  if (!digit(i)) return std::nullopt;
  DecimalText d;
  int significant = 0;
  for (; digit(i); ++i) {
    if (significant == 0 && text[i] == '0') continue;  // leading zeros
    if (++significant > kMaxWholeDigits) d.too_large = true;
    else d.whole = d.whole * 10 + static_cast<std::uint64_t>(text[i] - '0');
  }
  if (i < text.size() && (text[i] == '.' || (comma_ok && text[i] == ','))) {
    std::size_t j = i + 1;
    if (!digit(j)) return std::nullopt;
    std::uint64_t digits = 0;
    double scale = 1;
    for (int n = 0; digit(j); ++j) {
      if (++n > kMaxFractionDigits) return std::nullopt;
      digits = digits * 10 + static_cast<std::uint64_t>(text[j] - '0');
      scale *= 10;
    }
    d.fraction = static_cast<double>(digits) / scale;
    d.has_point = true;
    i = j;
  }
  pos = i;
  return d;
}

// The decimal at text[pos] (read_decimal), or an error "PATH: expected EXPECTED, got GOT".
inline DecimalText decimal_at(std::string_view text, std::size_t& pos, bool comma_ok, const std::string& path,
                              const std::string& expected, const json& got) {
  const auto d = read_decimal(text, pos, comma_ok);
  if (!d) fail(path, expected, got);
  return *d;
}

// The whole of `text` as an integer ("-"? DIGITS), or nullopt. Beyond int64: too_large.
struct IntegerText {
  std::int64_t value = 0;
  bool too_large = false;
};
inline std::optional<IntegerText> read_integer(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  std::size_t pos = negative ? 1 : 0;
  const auto d = read_decimal(text, pos);
  if (!d || d->has_point || pos != text.size()) return std::nullopt;
  IntegerText out;
  // 18 significant digits fit an int64 either way.
  out.too_large = d->too_large;
  if (!out.too_large) out.value = negative ? -static_cast<std::int64_t>(d->whole) : static_cast<std::int64_t>(d->whole);
  return out;
}

// A value past its maximum: "PATH: expected MAXIMUM, got GOT (too large)", MAXIMUM saying what the
// most is ("a duration of at most ...").
[[noreturn]] inline void too_large(const std::string& path, const std::string& maximum, const json& got) {
  fail_message(path, "expected " + maximum + ", got " + describe(got) + " (too large)");
}

}  // namespace brokersim::loader
