// Trace CSV files (arrivals {"trace_csv": "file.csv"}): a header row, then one job per data line:
// publish_ms, and optionally deadline_ms / service_ms overriding the producer's (an empty cell
// keeps the producer's). Errors name the key path, the file and the line.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>
#include <string_view>
#include <system_error>

#include "experiments/cli/loader/sections.hpp"
#include "experiments/cli/loader/arrival_trace.hpp"
#include "sim/rng.hpp"

namespace brokersim {

namespace {

using namespace loader;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_cell(std::string_view cell) {
  double x = 0;
  const auto result = std::from_chars(cell.data(), cell.data() + cell.size(), x);
  if (result.ec != std::errc() || result.ptr != cell.data() + cell.size()) return std::nullopt;
  if (!std::isfinite(x) || std::fabs(x) > sim::kMaxMs) return std::nullopt;
  return x;
}

std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  if (!lines.empty() && lines[0].starts_with("\xEF\xBB\xBF")) lines[0].remove_prefix(3);  // UTF-8 BOM
  return lines;
}

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    cells.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return cells;
    start = comma + 1;
  }
}

enum Column { Publish, Deadline, Service };
constexpr std::string_view kColumns[] = {"publish_ms", "deadline_ms", "service_ms"};

// One trace file being read: where its errors point, its lines and its header.
class TraceReader {
 public:
  TraceReader(const std::string& text, const std::string& file, const std::string& path)
      : file_(file), path_(path), lines_(split_lines(text)) {}

  std::vector<ArrivalSpec::TraceRow> rows() {
    read_header();
    std::vector<ArrivalSpec::TraceRow> rows;
    for (std::size_t i = header_line_ + 1; i < lines_.size(); ++i) {
      if (trim(lines_[i]).empty()) continue;
      rows.push_back(read_row(i, rows.empty() ? nullptr : &rows.back()));
    }
    if (rows.empty()) fail_message(path_, file_ + ": expected at least one data row after the header, got none");
    return rows;
  }

 private:
  [[noreturn]] void bad(std::size_t line, const std::string& expected, const std::string& got) const {
    fail_message(path_, file_ + " line " + std::to_string(line) + ": expected " + expected + ", got " + got);
  }

  std::string header_text() const { return std::string(trim(lines_[header_line_])); }

  void read_header() {
    while (header_line_ < lines_.size() && trim(lines_[header_line_]).empty()) ++header_line_;
    if (header_line_ == lines_.size()) bad(1, "a header row naming a publish_ms column", "an empty file");
    for (const auto name : split_cells(lines_[header_line_])) {
      const auto it = std::find(std::begin(kColumns), std::end(kColumns), name);
      if (it == std::end(kColumns)) bad(header_line_ + 1, "a column name among " + list(kColumns), quoted(std::string(name)));
      const auto column = static_cast<Column>(it - std::begin(kColumns));
      if (std::find(columns_.begin(), columns_.end(), column) != columns_.end()) {
        bad(header_line_ + 1, "each column once", quoted(std::string(name)) + " twice");
      }
      columns_.push_back(column);
    }
    if (std::find(columns_.begin(), columns_.end(), Publish) == columns_.end()) {
      bad(header_line_ + 1, "a header row naming a publish_ms column", quoted(header_text()));
    }
  }

  // Line `i` (0-based); publish times must not go back in time from `previous`.
  ArrivalSpec::TraceRow read_row(std::size_t i, const ArrivalSpec::TraceRow* previous) const {
    const std::size_t line = i + 1;
    const auto cells = split_cells(lines_[i]);
    if (cells.size() != columns_.size()) {
      bad(line, std::to_string(columns_.size()) + " cells (" + header_text() + ")", std::to_string(cells.size()));
    }
    ArrivalSpec::TraceRow row{};
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string cell(cells[c]);
      if (cell.empty()) {
        if (columns_[c] == Publish) bad(line, "publish_ms to be a number >= 0", "an empty cell");
        continue;
      }
      const auto x = parse_cell(cell);
      switch (columns_[c]) {
        case Publish:
          if (!x || *x < 0) bad(line, "publish_ms to be a number >= 0", x ? cell : quoted(cell));
          row.publish = sim::from_ms(*x);
          break;
        case Deadline:  // may be <= 0: that job is then rejected at publish, as a late job would be
          if (!x) bad(line, "deadline_ms to be a number", quoted(cell));
          row.deadline = sim::from_ms(*x);
          break;
        case Service:
          if (!x || *x < 0) bad(line, "service_ms to be a number >= 0", x ? cell : quoted(cell));
          row.service = sim::from_ms(*x);
          break;
      }
    }
    if (previous != nullptr && row.publish < previous->publish) {
      const auto publish = std::find(columns_.begin(), columns_.end(), Publish) - columns_.begin();
      bad(line, "publish_ms >= " + format_number(sim::to_ms(previous->publish)) + " (the line before's)",
          std::string(cells[static_cast<std::size_t>(publish)]));
    }
    return row;
  }

  const std::string& file_;
  const std::string& path_;
  std::vector<std::string_view> lines_;
  std::size_t header_line_ = 0;
  std::vector<Column> columns_;
};

}  // namespace

std::vector<ArrivalSpec::TraceRow> parse_trace_text(const std::string& text, const std::string& file,
                                                    const std::string& path) {
  return TraceReader(text, file, path).rows();
}

void loader::read_trace(ArrivalSpec& arrivals, const std::string& path) {
  const std::string text = read_text(arrivals.trace_path, path + ": " + arrivals.trace_path);
  arrivals.trace = parse_trace_text(text, arrivals.trace_path, path);
  arrivals.trace_fnv1a64 = sim::fnv1a(text);
}

}  // namespace brokersim
