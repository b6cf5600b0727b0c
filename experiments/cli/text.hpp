// Text every part of experiments/ writes the same way: numbers for people and for CSV, quoted
// names in error messages, and the distance behind a "did you mean".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace brokersim {

// One double through a printf format ("%.3f", "%8.2f%%"): the report's and the load table's cells.
std::string fmt(const char* format, double v);

// A number for a reader: `significant` digits (%g), NaN as "-".
std::string fmt(double v, int significant = 6);

// Shortest round-trip decimal form (std::to_chars), never in exponent notation; NaN prints as an
// empty string (an empty CSV cell).
std::string format_number(double v);

// A CSV cell, quoted (RFC 4180) when it contains a comma, quote or line break.
std::string csv_cell(const std::string& s);

// `s` as a JSON string ("a \"b\""), invalid UTF-8 replaced: how error messages show what was given.
std::string quote(const std::string& s);

// The pieces of `s` between separators (an empty string gives one empty piece).
std::vector<std::string> split(const std::string& s, char sep);

// A count for a reader, its digits grouped in threes ("20,464"; "-1,234").
std::string grouped(std::uint64_t n);
std::string grouped(std::int64_t n);
inline std::string grouped(int n) { return grouped(std::int64_t{n}); }
inline std::string grouped(unsigned n) { return grouped(std::uint64_t{n}); }

// Levenshtein distance (insert, delete, substitute), for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace brokersim
