// The formats of a job log's cells and of fit's options: ISO-8601 and decimal times, --columns,
// --skew-tolerance, --time-unit, and the outcome names.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <string_view>
#include <system_error>

#include "experiments/cli/fit/log_cells.hpp"
#include "experiments/cli/fit/log_reader.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "models/scenario.hpp"

namespace brokersim::fit {

using cells::digits;
using cells::looks_iso;
using cells::trim;

namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

bool parse_iso8601(std::string_view s, std::int64_t& ns, bool& naive, bool* out_of_range) {
  if (out_of_range) *out_of_range = false;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!looks_iso(s) || !digits(s, 0, 4, year) || !digits(s, 5, 2, month) || !digits(s, 8, 2, day)) return false;
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (day > kDays[month - 1] + (month == 2 && leap ? 1 : 0)) return false;
  std::size_t i = 10;
  std::int64_t frac_ns = 0;
  if (i < s.size()) {
    if (s[i] != 'T' && s[i] != 't' && s[i] != ' ') return false;
    if (!digits(s, i + 1, 2, hour) || s.size() < i + 6 || s[i + 3] != ':' || !digits(s, i + 4, 2, minute)) return false;
    i += 6;
    if (i < s.size() && s[i] == ':') {
      if (!digits(s, i + 1, 2, second)) return false;
      i += 3;
      if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
        ++i;
        const std::size_t start = i;
        std::int64_t scale = 100'000'000;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
          frac_ns += (s[i] - '0') * scale;  // digits beyond the nanosecond are dropped
          scale /= 10;
          ++i;
        }
        if (i == start) return false;
      }
    }
    if (hour > 23 || minute > 59 || second > 60) return false;  // 60: a leap second, read as :59 + 1 s
  }
  std::int64_t offset_s = 0;
  naive = true;
  if (i < s.size()) {
    if (s[i] == 'Z' || s[i] == 'z') {
      naive = false;
      ++i;
    } else if (s[i] == '+' || s[i] == '-') {
      const int sign = s[i] == '-' ? -1 : 1;
      int oh = 0, om = 0;
      if (!digits(s, i + 1, 2, oh)) return false;
      i += 3;
      if (i < s.size() && s[i] == ':') ++i;
      if (i < s.size()) {
        if (!digits(s, i, 2, om)) return false;
        i += 2;
      }
      if (oh > 23 || om > 59) return false;
      offset_s = sign * (oh * 3600 + om * 60);
      naive = false;
    }
  }
  if (i != s.size()) return false;
  const std::int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  const std::int64_t secs = days * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  // int64 nanoseconds reach the year 2262; earlier than 1678 neither.
  if (secs > 9'000'000'000LL || secs < -9'000'000'000LL) {
    if (out_of_range) *out_of_range = true;
    return false;
  }
  ns = secs * 1'000'000'000LL + frac_ns;
  return true;
}

bool parse_decimal_time(std::string_view s, std::int64_t unit_ns, std::int64_t& ns, bool* out_of_range) {
  bool too_far = false;
  if (!out_of_range) out_of_range = &too_far;
  *out_of_range = false;
  if (s.empty()) return false;
  if (s.find_first_of("eE") != std::string_view::npos) {  // exponent notation: via double
    double x = 0;
    // from_chars takes no leading '+'; a number's sign is checked, never skipped twice.
    const std::string_view digits_part = s.front() == '+' ? s.substr(1) : s;
    if (digits_part.empty() || (digits_part.front() == '-' && s.front() == '+')) return false;
    const auto r = std::from_chars(digits_part.data(), digits_part.data() + digits_part.size(), x);
    if (r.ptr != digits_part.data() + digits_part.size()) return false;
    if (r.ec == std::errc::result_out_of_range) {
      // 1e400 is a number too large for any clock; 1e-400 one that rounds to 0 ns.
      const std::size_t e = digits_part.find_first_of("eE");
      if (e + 1 < digits_part.size() && digits_part[e + 1] == '-') {
        ns = 0;
        return true;
      }
      *out_of_range = true;
      return false;
    }
    if (r.ec != std::errc() || !std::isfinite(x)) return false;
    const double v = x * static_cast<double>(unit_ns);
    if (std::fabs(v) > 9.0e18) {
      *out_of_range = true;
      return false;
    }
    ns = std::llround(v);
    return true;
  }
  std::size_t i = 0;
  const bool negative = s[0] == '-';
  if (s[0] == '-' || s[0] == '+') ++i;
  std::int64_t whole = 0;
  const std::size_t int_start = i;
  bool overflow = false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (whole > 922'337'203'685'477'580LL / 10) overflow = true;  // still read to the end: a number?
    if (!overflow) whole = whole * 10 + (s[i] - '0');
    ++i;
  }
  const bool had_int = i > int_start;
  std::int64_t frac = 0;
  bool had_frac = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    std::int64_t scale = unit_ns / 10;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      frac += (s[i] - '0') * scale;  // digits beyond the nanosecond are dropped
      scale /= 10;
      had_frac = true;
      ++i;
    }
  }
  if (i != s.size() || (!had_int && !had_frac)) return false;
  if (overflow || whole > 9'000'000'000'000'000'000LL / unit_ns) {
    *out_of_range = true;
    return false;
  }
  ns = whole * unit_ns + frac;
  if (negative) ns = -ns;
  return true;
}

ColumnNames parse_column_names(const std::string& text) {
  ColumnNames names;
  std::map<std::string, std::string*> fields{{"enqueued", &names.enqueued}, {"started", &names.started},
                                             {"finished", &names.finished}, {"queue", &names.queue},
                                             {"worker", &names.worker}, {"state", &names.state},
                                             {"succeeded", &names.succeeded}, {"failed", &names.failed},
                                             {"id", &names.id}};
  std::map<std::string, bool> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = std::string(trim(std::string_view(text).substr(start, comma - start)));
    const auto eq = item.find('=');
    const std::string field = eq == std::string::npos ? item : item.substr(0, eq);
    const auto it = fields.find(field);
    if (eq == std::string::npos || it == fields.end())
      throw ScenarioError("--columns", "FIELD=NAME items with FIELD one of enqueued, started, finished, queue, worker, "
                          "state, succeeded, failed, id",
                          loader::quoted(item));
    const std::string name(trim(std::string_view(item).substr(eq + 1)));
    if (name.empty()) throw ScenarioError("--columns", "a column name after \"" + field + "=\"", "nothing");
    if (name == kNoColumn && field != "state" && field != "id")
      throw ScenarioError("--columns", "a column name after \"" + field + "=\" (\"-\", no column, only for state and id, "
                                       "which are otherwise looked for by name)", loader::quoted(name));
    if (seen[field]) throw ScenarioError("--columns", "each field once", loader::quoted(field) + " twice");
    seen[field] = true;
    *it->second = name;
    start = comma + 1;
  }
  // The finish time from the outcome columns: no finished column needed unless one is named.
  if ((seen["succeeded"] || seen["failed"]) && !seen["finished"]) names.finished.clear();
  return names;
}

bool parse_state(std::string_view cell, Outcome& outcome) {
  // Celery's task states, and the words other frameworks and hand-written logs use.
  static const std::map<std::string, Outcome, std::less<>> kStates{
      {"SUCCESS", Outcome::Succeeded},   {"SUCCEEDED", Outcome::Succeeded}, {"OK", Outcome::Succeeded},
      {"COMPLETED", Outcome::Succeeded}, {"DONE", Outcome::Succeeded},      {"FAILURE", Outcome::Failed},
      {"FAILED", Outcome::Failed},       {"ERROR", Outcome::Failed},        {"RETRY", Outcome::Failed},
      {"TIMEOUT", Outcome::Failed},      {"TIMED_OUT", Outcome::Failed},    {"ABANDONED", Outcome::Failed},
      {"DEAD_LETTERED", Outcome::Failed}, {"REVOKED", Outcome::Failed},     {"REJECTED", Outcome::Failed},
      {"IGNORED", Outcome::Failed},      {"STARTED", Outcome::Running},     {"RUNNING", Outcome::Running},
      {"RECEIVED", Outcome::Queued},     {"PENDING", Outcome::Queued},      {"QUEUED", Outcome::Queued}};
  if (cell.size() > 20) return false;
  std::string upper;
  for (char c : cell) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  const auto it = kStates.find(upper);
  if (it == kStates.end()) return false;
  outcome = it->second;
  return true;
}

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Finished: return "finished";
    case Outcome::Succeeded: return "succeeded";
    case Outcome::Failed: return "failed";
    case Outcome::Running: return "running";
    case Outcome::Queued: return "queued";
  }
  return "?";
}

std::int64_t parse_skew_tolerance(const std::string& text, const std::string& option) {
  const std::string expected = "a duration from 0 to 1h: 0, 250us, 50ms, 1s, 1min";
  static constexpr std::pair<std::string_view, std::int64_t> kUnits[] = {
      {"us", 1'000}, {"ms", 1'000'000}, {"s", 1'000'000'000}, {"min", 60'000'000'000LL}, {"h", 3'600'000'000'000LL}};
  std::size_t split = 0;
  while (split < text.size() && ((text[split] >= '0' && text[split] <= '9') || text[split] == '.')) ++split;
  double x = 0;
  const auto r = std::from_chars(text.data(), text.data() + split, x);
  if (split == 0 || r.ec != std::errc() || r.ptr != text.data() + split) throw ScenarioError(option, expected, loader::quoted(text));
  const std::string_view unit = std::string_view(text).substr(split);
  if (unit.empty() && x == 0) return 0;
  for (const auto& [name, ns] : kUnits) {
    if (unit != name) continue;
    const double v = x * static_cast<double>(ns);
    if (!(v >= 0) || v > 3.6e12) throw ScenarioError(option, expected, loader::quoted(text));
    return std::llround(v);
  }
  throw ScenarioError(option, expected, loader::quoted(text));
}

TimeFormat parse_time_format(const std::string& text) {
  if (text == "auto") return TimeFormat::Auto;
  if (text == "iso") return TimeFormat::Iso8601;
  if (text == "s") return TimeFormat::Seconds;
  if (text == "ms") return TimeFormat::Milliseconds;
  throw ScenarioError("--time-unit", "one of \"auto\", \"iso\", \"s\", \"ms\"", loader::quoted(text));
}

}  // namespace brokersim::fit
