// The job-log reader: a streaming CSV parser (quoted cells allowed, no line breaks inside them),
// time formats detected once per log and then required of every cell.
#include "experiments/cli/fit/log_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include "experiments/cli/fit/log_cells.hpp"
#include "experiments/cli/loader/checks.hpp"
#include "models/scenario.hpp"

namespace brokersim::fit {

using cells::looks_iso;
using cells::shown;
using cells::trim;

namespace {

// The log as it is read: header, then one row per line.
class LogParser {
 public:
  LogParser(std::string file, const ColumnNames& columns, TimeFormat requested, const ReadOptions& options) {
    log_.file = std::move(file);
    log_.columns = columns;
    log_.format = requested;
    log_.skew_tolerance_ns = options.skew_tolerance_ns;
  }

  void line(std::string_view text) {
    ++line_no_;
    if (text.size() > kMaxLineBytes) {
      fail(std::string(), "a line of at most " + std::to_string(kMaxLineBytes) + " bytes",
           std::to_string(text.size()) + " bytes");
    }
    if (line_no_ == 1 && text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    if (trim(text).empty()) return;
    split(text);
    if (!header_done_) {
      header();
      return;
    }
    row();
  }

  JobLog finish() {
    if (!header_done_) throw ScenarioError(log_.file + ": expected a header row naming the columns, got an empty file");
    if (log_.rows.empty()) throw ScenarioError(log_.file + ": expected at least one job row after the header, got none");
    if (log_.format == TimeFormat::Auto) log_.format = TimeFormat::Seconds;  // unreachable: set at the first row
    if (log_.queues.empty()) log_.queues.push_back("");
    if (log_.workers.empty()) log_.workers.push_back("");
    return std::move(log_);
  }

 private:
  enum Field { Enqueued, Started, Finished, Queue, Worker, State, Succeeded, Failed, Id, kFields };

  [[noreturn]] void fail(const std::string& column, const std::string& expected, const std::string& got) const {
    std::string where = log_.file + " line " + std::to_string(line_no_);
    if (!column.empty()) where += ", column " + column;
    throw ScenarioError(where, expected, got);
  }

  void split(std::string_view text) {
    cells_.clear();
    std::size_t i = 0;
    for (;;) {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
      if (i < text.size() && text[i] == '"') {
        std::string cell;
        ++i;
        for (;;) {
          if (i >= text.size()) fail(std::string(), "a closing quote", "the end of the line");
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              cell += '"';
              i += 2;
              continue;
            }
            ++i;
            break;
          }
          cell += text[i++];
        }
        // The unescaped text must outlive this call only until the row is read.
        owned_.push_back(std::move(cell));
        cells_.push_back(owned_.back());
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
        if (i < text.size() && text[i] != ',') fail(std::string(), "a comma after a quoted cell", shown(text.substr(i)));
      } else {
        const std::size_t comma = text.find(',', i);
        cells_.push_back(trim(text.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i)));
        i = comma == std::string_view::npos ? text.size() : comma;
      }
      if (i >= text.size()) break;
      ++i;  // the comma
    }
  }

  void header() {
    header_done_ = true;
    // The names are copied first: views into a vector that is still growing would dangle.
    header_names_.assign(cells_.begin(), cells_.end());
    std::map<std::string, std::size_t> at;
    for (std::size_t c = 0; c < header_names_.size(); ++c)
      if (!at.emplace(header_names_[c], c).second) fail(std::string(), "each column name once", shown(cells_[c]) + " twice");
    log_.state_by_name = look_for(log_.columns.state, kStateColumnNames, at);
    log_.id_by_name = look_for(log_.columns.id, kIdColumnNames, at);
    log_.has_outcome = !log_.columns.state.empty() || !log_.columns.succeeded.empty() || !log_.columns.failed.empty();
    const std::string* wanted[kFields] = {&log_.columns.enqueued, &log_.columns.started, &log_.columns.finished,
                                          &log_.columns.queue,    &log_.columns.worker,  &log_.columns.state,
                                          &log_.columns.succeeded, &log_.columns.failed, &log_.columns.id};
    std::string header_text;
    for (const auto& n : header_names_) header_text += (header_text.empty() ? "" : ",") + n;
    for (int f = 0; f < kFields; ++f) {
      index_[f] = -1;
      if (wanted[f]->empty()) continue;
      const auto it = at.find(*wanted[f]);
      if (it == at.end()) {
        fail(std::string(), "a header naming the column " + loader::quoted(*wanted[f]) +
                                (f < Queue ? " (map yours with --columns)" : ""),
             loader::quoted(header_text.size() > 200 ? header_text.substr(0, 200) + "..." : header_text));
      }
      index_[f] = static_cast<int>(it->second);
    }
    owned_.clear();
  }

  // A field the log may hold under one of the usual names: the first of `names` in the header when
  // `--columns` named none (true when found so), none for kNoColumn.
  static bool look_for(std::string& column, const std::vector<std::string>& names, const std::map<std::string, std::size_t>& at) {
    if (column == kNoColumn) {
      column.clear();
      return false;
    }
    if (column != kLookForColumn) return false;
    for (const std::string& name : names)
      if (at.count(name)) {
        column = name;
        return true;
      }
    return false;
  }

  void decide_format(std::string_view cell, const std::string& column) {
    if (looks_iso(cell)) {
      log_.format = TimeFormat::Iso8601;
      log_.format_reason = "ISO-8601 in " + column;
      return;
    }
    const auto ends = [&](std::string_view suffix) { return column.size() > suffix.size() && column.ends_with(suffix); };
    if (ends("_ms") || ends("_millis") || ends("_msec")) {
      log_.format = TimeFormat::Milliseconds;
      log_.format_reason = "numbers, and the column " + column + " is named in ms";
      return;
    }
    if (ends("_s") || ends("_sec") || ends("_seconds")) {
      log_.format = TimeFormat::Seconds;
      log_.format_reason = "numbers, and the column " + column + " is named in seconds";
      return;
    }
    std::int64_t v = 0;
    if (!parse_decimal_time(cell, 1, v)) return;  // the cell's own error follows
    // 1e11 s is the year 5138, 1e11 ms is 1973: larger values are epoch milliseconds.
    if (std::llabs(v) >= 100'000'000'000LL) {
      log_.format = TimeFormat::Milliseconds;
      log_.format_reason = "numbers above 1e11 in " + column + ": epoch milliseconds";
    } else {
      log_.format = TimeFormat::Seconds;
      log_.format_reason = "numbers below 1e11 in " + column + ": seconds (say --time-unit ms if they are milliseconds)";
    }
  }

  std::int64_t time_cell(int field, bool required) {
    const std::string& column = header_names_[static_cast<std::size_t>(index_[field])];
    const std::string_view cell = cells_[static_cast<std::size_t>(index_[field])];
    if (cell.empty()) {
      if (required) fail(column, "a time", "an empty cell");
      return kNoTime;
    }
    if (log_.format == TimeFormat::Auto) {
      decide_format(cell, column);
      if (log_.format == TimeFormat::Auto) fail(column, "a time (ISO-8601, or a number of seconds or milliseconds)", shown(cell));
    } else if (log_.format_reason.empty()) {
      log_.format_reason = "as --time-unit says";
    }
    std::int64_t ns = 0;
    bool naive = false, out_of_range = false;
    switch (log_.format) {
      case TimeFormat::Iso8601:
        if (!parse_iso8601(cell, ns, naive, &out_of_range)) {
          if (out_of_range)
            fail(column, "an ISO-8601 time from 1678 to 2262 (the times int64 nanoseconds since 1970 hold)", shown(cell));
          fail(column, "an ISO-8601 time like 2026-12-03T15:28:43.5Z (" + log_.format_reason + ")", shown(cell));
        }
        if (naive) log_.naive_iso = true;
        break;
      case TimeFormat::Seconds:
      case TimeFormat::Milliseconds: {
        const bool seconds = log_.format == TimeFormat::Seconds;
        const std::int64_t unit = seconds ? 1'000'000'000 : 1'000'000;
        if (!parse_decimal_time(cell, unit, ns, &out_of_range)) {
          if (out_of_range)
            fail(column, std::string("a number of ") + (seconds ? "seconds from -9e9 to 9e9" : "milliseconds from -9e12 to 9e12") +
                             " (the years 1678 to 2262 as times since 1970, which int64 nanoseconds hold; " +
                             log_.format_reason + ")", shown(cell));
          fail(column, std::string("a number of ") + (seconds ? "seconds" : "milliseconds") + " (" +
                           log_.format_reason + ")", shown(cell));
        }
        break;
      }
      case TimeFormat::Auto: break;
    }
    return ns;
  }

  // `may_be_empty`: a worker cell of a job that never started (brokersim's trace leaves it empty).
  std::uint32_t name_index(int field, std::vector<std::string>& names, std::unordered_map<std::string, std::uint32_t>& index,
                           bool may_be_empty = false) {
    if (index_[field] < 0) return 0;
    const std::string_view cell = cells_[static_cast<std::size_t>(index_[field])];
    if (cell.empty() && may_be_empty) return 0;
    if (cell.empty()) fail(header_names_[static_cast<std::size_t>(index_[field])], "a name", "an empty cell");
    const auto it = index.find(std::string(cell));
    if (it != index.end()) return it->second;
    // Checked here, at the row that names one more, so that a log of a million queues is refused
    // at its 65th name, before it is read, sorted and fitted.
    const std::size_t limit = field == Queue ? kMaxQueues : kMaxWorkers;
    if (names.size() >= limit) {
      const std::string column = header_names_[static_cast<std::size_t>(index_[field])];
      if (field == Queue)
        fail(column, "at most " + std::to_string(kMaxQueues) +
                         " distinct queue names (brokersim's limit on a scenario's queues: fit the log's queues in "
                         "groups of at most " + std::to_string(kMaxQueues) + ")",
             shown(cell) + ", the " + std::to_string(limit + 1) + "th");
      fail(column, "at most 1,000,000 distinct worker names (brokersim's limit on consumers)",
           shown(cell) + ", the 1,000,001st");
    }
    names.emplace_back(cell);
    const auto i = static_cast<std::uint32_t>(names.size() - 1);
    index.emplace(names.back(), i);
    return i;
  }

  void row() {
    if (cells_.size() != header_names_.size()) {
      fail(std::string(), std::to_string(header_names_.size()) + " cells, as the header has",
           std::to_string(cells_.size()));
    }
    if (log_.rows.size() >= kMaxRows) {
      fail(std::string(), "at most " + std::to_string(kMaxRows) + " job rows (split the log by time, or sample it)",
           "more");
    }
    JobRow r;
    r.enqueued = time_cell(Enqueued, true);
    r.started = time_cell(Started, false);
    const auto col = [&](int field) -> const std::string& { return header_names_[static_cast<std::size_t>(index_[field])]; };
    const auto cell = [&](int field) { return cells_[static_cast<std::size_t>(index_[field])]; };
    const std::int64_t t_finished = index_[Finished] >= 0 ? time_cell(Finished, false) : kNoTime;
    const std::int64_t t_succeeded = index_[Succeeded] >= 0 ? time_cell(Succeeded, false) : kNoTime;
    const std::int64_t t_failed = index_[Failed] >= 0 ? time_cell(Failed, false) : kNoTime;
    if (t_succeeded != kNoTime && t_failed != kNoTime)
      fail(col(Failed), "an empty cell when " + col(Succeeded) + " is set (a job succeeds or fails, not both)", shown(cell(Failed)));
    // The finish time: the finished column's, else whichever outcome column is set.
    int ff = t_finished != kNoTime ? Finished : t_succeeded != kNoTime ? Succeeded : t_failed != kNoTime ? Failed : -1;
    r.finished = ff == Finished ? t_finished : ff == Succeeded ? t_succeeded : ff == Failed ? t_failed : kNoTime;
    r.outcome = outcome(ff, t_succeeded, t_failed, r);
    const std::string& sc = col(Started);
    const std::string fc = ff >= 0 ? col(ff) : index_[Finished] >= 0 ? col(Finished) : "the finish";
    if (r.finished != kNoTime && r.started == kNoTime) {
      // A task revoked or failed before it started (Celery sends task-revoked / task-failed then).
      if (r.outcome == Outcome::Failed) r.finished = kNoTime;
      else fail(sc, "a time (the job has a " + fc + ")", "an empty cell");
    }
    const bool skewed = clamp_skew(r, sc, fc, ff);
    span(r, sc, fc, ff);
    if (r.started == kNoTime) ++log_.not_started;
    if (r.finished == kNoTime) ++log_.not_finished;
    r.queue = static_cast<std::uint16_t>(name_index(Queue, log_.queues, queue_index_));
    r.worker = name_index(Worker, log_.workers, worker_index_, r.started == kNoTime);
    SkewStats& k = log_.skew;
    if (log_.has_worker() && r.started != kNoTime) {
      if (k.rows_per_worker.size() <= r.worker) {
        k.rows_per_worker.resize(r.worker + 1, 0);
        k.per_worker.resize(r.worker + 1, 0);
      }
      ++k.rows_per_worker[r.worker];
      if (skewed) ++k.per_worker[r.worker];
    }
    if (index_[Id] >= 0) log_.message_keys.push_back(message_key());
    const std::size_t offset = line_no_ - log_.rows.size();
    if (log_.line_offsets.empty() || log_.line_offsets.back().second != offset)
      log_.line_offsets.emplace_back(log_.rows.size(), offset);
    log_.rows.push_back(r);
    owned_.clear();
  }

  // Clock skew: the enqueue is the producer's clock, the start and finish the worker's. Up to the
  // tolerance, a start before its enqueue is counted and left as it is (its wait is 0: JobRow::wait),
  // and a finish before its start is moved to it (a service time of 0). Moving the start, and the
  // finish with it, would make the worker's next execution overlap this one: a worker that ran one
  // job at a time would seem to run two. True when the row was clamped.
  bool clamp_skew(JobRow& r, const std::string& sc, const std::string& fc, int ff) {
    const auto col = [&](int field) -> const std::string& { return header_names_[static_cast<std::size_t>(index_[field])]; };
    const auto cell = [&](int field) { return cells_[static_cast<std::size_t>(index_[field])]; };
    const std::int64_t tol = log_.skew_tolerance_ns;
    const auto before = [&](std::int64_t a, std::int64_t b) {  // a - b in ms as text, a >= b
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g ms", (static_cast<double>(a) - static_cast<double>(b)) / 1e6);
      return std::string(buf);
    };
    const std::string bound = tol > 0 ? ", or at most " + before(tol, 0) + " before it (--skew-tolerance: clock skew)" : "";
    const bool early_start = r.started != kNoTime && r.started < r.enqueued;
    const bool early_finish = r.finished != kNoTime && r.finished < r.started;
    if (early_start && r.started < r.enqueued - tol)
      fail(sc, "a time at or after " + col(Enqueued) + " (" + std::string(cell(Enqueued)) + ")" + bound,
           shown(cell(Started)) + (tol > 0 ? ", " + before(r.enqueued, r.started) + " before it" : ""));
    if (early_finish && r.finished < r.started - tol)
      fail(fc, "a time at or after " + sc + " (" + std::string(cell(Started)) + ")" + bound,
           shown(cell(ff)) + (tol > 0 ? ", " + before(r.started, r.finished) + " before it" : ""));
    SkewStats& k = log_.skew;
    if (early_finish) {
      const std::int64_t by = r.started - r.finished;
      ++k.finishes;
      k.finish_max = std::max(k.finish_max, by);
      k.finish_sum += static_cast<double>(by);
      r.finished = r.started;
    }
    if (early_start) {
      const std::int64_t by = r.enqueued - r.started;
      ++k.starts;
      k.start_max = std::max(k.start_max, by);
      k.start_sum += static_cast<double>(by);
    }
    if (early_start || early_finish) ++k.rows;
    return early_start || early_finish;
  }

  // The row's message: its id cell hashed (FNV-1a, then SplitMix64's finaliser to spread the bits).
  std::uint64_t message_key() const {
    const std::string_view cell = cells_[static_cast<std::size_t>(index_[Id])];
    if (cell.empty())
      fail(header_names_[static_cast<std::size_t>(index_[Id])], "a message id (the column names each row's message)",
           "an empty cell");
    std::uint64_t h = 14695981039346656037ULL;
    for (const char c : cell) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ULL;
    }
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
  }

  // The outcome: from the state column, else from which outcome column holds the finish time, else
  // from the times. A state that contradicts the times is refused naming the column.
  Outcome outcome(int finish_field, std::int64_t t_succeeded, std::int64_t t_failed, const JobRow& r) {
    if (index_[State] >= 0) {
      const std::string& column = header_names_[static_cast<std::size_t>(index_[State])];
      const std::string_view cell = cells_[static_cast<std::size_t>(index_[State])];
      Outcome o = Outcome::Finished;
      if (!parse_state(cell, o))
        fail(column, std::string("a state: ") + kStateWords + ", in any case" +
                         (log_.state_by_name ? " (the column " + column + " was read as the state by its name: --columns state=- reads none)" : ""),
             cell.empty() ? std::string("an empty cell") : shown(cell));
      const auto field_name = [&](int f) { return header_names_[static_cast<std::size_t>(index_[f])]; };
      if (o == Outcome::Succeeded && t_failed != kNoTime)
        fail(field_name(Failed), "an empty cell (the state is " + std::string(cell) + ")", shown(cells_[static_cast<std::size_t>(index_[Failed])]));
      if (o == Outcome::Failed && t_succeeded != kNoTime)
        fail(field_name(Succeeded), "an empty cell (the state is " + std::string(cell) + ")", shown(cells_[static_cast<std::size_t>(index_[Succeeded])]));
      if ((o == Outcome::Running || o == Outcome::Queued) && finish_field >= 0)
        fail(field_name(finish_field), "an empty cell (the state is " + std::string(cell) + ": a task not finished)",
             shown(cells_[static_cast<std::size_t>(index_[finish_field])]));
      return o;
    }
    if (finish_field == Succeeded) return Outcome::Succeeded;
    if (finish_field == Failed) return Outcome::Failed;
    if (finish_field == Finished) return Outcome::Finished;
    return r.started != kNoTime ? Outcome::Running : Outcome::Queued;
  }

  // The enqueue times span at most kMaxSpanNs, and each job starts and finishes within it of its
  // enqueue: refused at the row that goes beyond, so a log of two rows 1e8 s apart is named here.
  void span(const JobRow& r, const std::string& started_column, const std::string& finished_column, int finish_field) {
    const std::string& ec = header_names_[static_cast<std::size_t>(index_[Enqueued])];
    const auto cell = [&](int field) { return shown(cells_[static_cast<std::size_t>(index_[field])]); };
    // a - b in ms, in double: times within +-9e18 ns differ by more than int64 holds.
    const auto ms = [](std::int64_t a, std::int64_t b) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g ms", (static_cast<double>(a) - static_cast<double>(b)) / 1e6);
      return std::string(buf);
    };
    const std::string limit = "1e11 ms (about 3 years)";
    if (log_.rows.empty()) {
      first_ = last_ = r.enqueued;
      first_line_ = last_line_ = line_no_;
    }
    if (r.enqueued < first_) {
      if (r.enqueued < last_ - kMaxSpanNs)
        fail(ec, "a time at most " + limit + " before the latest enqueue (line " + std::to_string(last_line_) +
                     "): a log spans at most that",
             cell(Enqueued) + ", " + ms(last_, r.enqueued) + " before it");
      first_ = r.enqueued;
      first_line_ = line_no_;
    }
    if (r.enqueued > last_) {
      if (r.enqueued > first_ + kMaxSpanNs)
        fail(ec, "a time at most " + limit + " after the earliest enqueue (line " + std::to_string(first_line_) +
                     "): a log spans at most that",
             cell(Enqueued) + ", " + ms(r.enqueued, first_) + " after it");
      last_ = r.enqueued;
      last_line_ = line_no_;
    }
    if (r.started != kNoTime && r.started > r.enqueued + kMaxSpanNs)
      fail(started_column, "a time at most " + limit + " after " + ec + " (" +
                               std::string(cells_[static_cast<std::size_t>(index_[Enqueued])]) + ")",
           cell(Started) + ", " + ms(r.started, r.enqueued) + " after it");
    if (r.finished != kNoTime && r.finished > r.enqueued + kMaxSpanNs)
      fail(finished_column, "a time at most " + limit + " after " + ec + " (" +
                                std::string(cells_[static_cast<std::size_t>(index_[Enqueued])]) + ")",
           cell(finish_field) + ", " + ms(r.finished, r.enqueued) + " after it");
  }

  JobLog log_;
  std::size_t line_no_ = 0;
  bool header_done_ = false;
  std::vector<std::string> header_names_;
  std::vector<std::string_view> cells_;
  std::deque<std::string> owned_;
  int index_[kFields] = {-1, -1, -1, -1, -1};
  std::unordered_map<std::string, std::uint32_t> queue_index_, worker_index_;
  std::int64_t first_ = 0, last_ = 0;          // the earliest and latest enqueue so far
  std::size_t first_line_ = 0, last_line_ = 0;  // and their lines
};

void parse_text(LogParser& parser, std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    parser.line(text.substr(start, end - start));
    start = end + 1;
  }
}

}  // namespace

std::size_t JobLog::line_of(std::size_t row) const {
  const auto after = std::upper_bound(line_offsets.begin(), line_offsets.end(), row,
                                      [](std::size_t r, const std::pair<std::size_t, std::size_t>& p) { return r < p.first; });
  return after == line_offsets.begin() ? row + 2 : row + std::prev(after)->second;
}

JobLog read_job_log_text(const std::string& text, const std::string& file, const ColumnNames& columns,
                         TimeFormat requested, const ReadOptions& options) {
  LogParser parser(file, columns, requested, options);
  parse_text(parser, text);
  return parser.finish();
}

JobLog read_job_log(const std::string& path, const ColumnNames& columns, TimeFormat requested,
                    const ReadOptions& options) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw ScenarioError(path + ": cannot read file (" + std::strerror(errno) + ")");
  LogParser parser(path, columns, requested, options);
  // Read in blocks; a line is handed over once its end is in the buffer.
  constexpr std::size_t kBlock = 4 << 20;
  std::string buffer;
  std::vector<char> block(kBlock);
  for (;;) {
    const std::size_t got = std::fread(block.data(), 1, kBlock, f.get());
    if (got == 0) {
      if (std::ferror(f.get())) throw ScenarioError(path + ": cannot read file (" + std::strerror(errno) + ")");
      break;
    }
    buffer.append(block.data(), got);
    const std::size_t last_nl = buffer.rfind('\n');
    if (last_nl == std::string::npos) {
      if (buffer.size() > kMaxLineBytes) parser.line(buffer);  // refused there, with its line number
      continue;
    }
    parse_text(parser, std::string_view(buffer).substr(0, last_nl + 1));
    buffer.erase(0, last_nl + 1);
  }
  if (!buffer.empty()) parser.line(buffer);
  return parser.finish();
}

}  // namespace brokersim::fit
