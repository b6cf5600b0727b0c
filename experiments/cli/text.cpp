#include "experiments/cli/text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace brokersim {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string fmt(double v, int significant) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "";
  if (v == 0) return "0";
  // The shortest decimal that reads back as exactly v, never in exponent notation (a CSV a
  // planner opens in a spreadsheet; 1e-05 reads as text in some). A double in fixed notation
  // has at most 309 integer digits and 1074 fractional ones.
  char buf[1100];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string quote(const std::string& s) {
  using json = nlohmann::json;
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const auto at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return parts;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitute});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string grouped(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string grouped(std::int64_t n) {
  // The magnitude through unsigned arithmetic: -INT64_MIN does not fit an int64.
  if (n >= 0) return grouped(static_cast<std::uint64_t>(n));
  // Built by appends: g++ 12 warned (-Wstringop-overflow, a known false positive) on "-" + string.
  std::string out(1, '-');
  out += grouped(std::uint64_t{0} - static_cast<std::uint64_t>(n));
  return out;
}

}  // namespace brokersim
