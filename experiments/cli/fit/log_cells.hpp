// The cells of a job log as both the reader and the formats read them: blanks trimmed, a cell shown
// in an error message (cut at 60 bytes), fixed-width digits, and the shape of an ISO-8601 date.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "experiments/cli/loader/checks.hpp"

namespace brokersim::fit::cells {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

inline std::string shown(std::string_view cell) {
  if (cell.size() > 60) return loader::quoted(std::string(cell.substr(0, 60)) + "...");
  return loader::quoted(std::string(cell));
}

inline bool digits(std::string_view s, std::size_t at, std::size_t n, int& value) {
  if (at + n > s.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    value = value * 10 + (s[i] - '0');
  }
  return true;
}

inline bool looks_iso(std::string_view s) {
  int v = 0;
  return s.size() >= 10 && digits(s, 0, 4, v) && s[4] == '-' && digits(s, 5, 2, v) && s[7] == '-';
}

}  // namespace brokersim::fit::cells
