// A job log (CSV: one row per job, when it was enqueued, started and finished, and optionally its
// queue and worker) read and validated for `brokersim fit`. Every problem is a ScenarioError naming
// the file, the line and the column, what was expected and what was found.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace brokersim::fit {

// Which header names hold which field (`--columns enqueued=...,started=...`); queue and worker are
// optional ("" = the log has none). The outcome columns are optional too: `state` (a row's outcome
// in a task framework's words: Celery's SUCCESS, FAILURE, RETRY, ..., or success / ok / error /
// failed / retry / timeout; parse_state lists them), and `succeeded` / `failed` (timestamp columns:
// the finish time is whichever is set, and the outcome follows). With `succeeded` or `failed` and no
// `finished=` named, the log needs no finished column.
// `id` names each row's message, so that a log with a row per attempt counts a message once.
// `state` and `id` are looked for by name when not given (kLookForColumn): a column named status or
// state, and message_id, task_id or id; kNoColumn (`--columns id=-`) reads none.
inline constexpr const char* kLookForColumn = "";
inline constexpr const char* kNoColumn = "-";
struct ColumnNames {
  std::string enqueued = "enqueued_at", started = "started_at", finished = "finished_at";
  std::string queue, worker;
  std::string state, succeeded, failed;
  std::string id;
};
// The names `state` and `id` are looked for under, in order of preference.
inline const std::vector<std::string> kStateColumnNames{"status", "state"};
inline const std::vector<std::string> kIdColumnNames{"message_id", "task_id", "id"};

// "enqueued=created_ms,started=started_ms": unknown fields, empty names and repeats are refused.
ColumnNames parse_column_names(const std::string& text);

// What became of a job, from the log's outcome columns (or from its times without them).
enum class Outcome : std::uint8_t {
  Finished,   // no outcome column, a finish time: a job that ran to its end
  Succeeded,  // SUCCESS, OK, ..., or a time in the succeeded column
  Failed,     // FAILURE, ERROR, RETRY, TIMEOUT, ..., or a time in the failed column
  Running,    // STARTED, or (no outcome column) started without a finish time
  Queued,     // PENDING, RECEIVED, or never started
};
const char* outcome_name(Outcome o);
// A state cell's outcome, case-insensitively; false for a word it does not know.
bool parse_state(std::string_view cell, Outcome& outcome);
// The words parse_state knows, for error messages and the docs.
inline constexpr const char* kStateWords =
    "SUCCESS, SUCCEEDED, OK, COMPLETED, DONE (succeeded); FAILURE, FAILED, ERROR, RETRY, TIMEOUT, TIMED_OUT, "
    "ABANDONED, DEAD_LETTERED, REVOKED, REJECTED, IGNORED (failed); STARTED, RUNNING; RECEIVED, PENDING, QUEUED";

// Clock skew: a start before its enqueue, or a finish before its start, by at most this, is
// clamped and counted; beyond it the row is refused naming its line and column. A start before its
// enqueue clamps the wait only (JobRow::wait): the start and finish stay on the worker's clock, so
// that its executions keep the order and the gaps they had and the fleet's concurrency is the
// log's. `brokersim fit` passes --skew-tolerance (default kDefaultSkewNs); the reader's own
// default is 0 (strict).
inline constexpr std::int64_t kDefaultSkewNs = 1'000'000'000;  // 1 s
struct ReadOptions {
  std::int64_t skew_tolerance_ns = 0;
};

// The clamped rows: per kind (a start before its enqueue, a finish before its start), how many and
// by how much.
struct SkewStats {
  std::size_t rows = 0;        // rows with either clamped
  std::size_t starts = 0, finishes = 0;
  std::int64_t start_max = 0, finish_max = 0;        // ns
  double start_sum = 0, finish_sum = 0;              // ns
  std::vector<std::size_t> per_worker;               // rows clamped, per worker index (with a worker column)
  std::vector<std::size_t> rows_per_worker;          // rows per worker index
};

// How the times are written: ISO-8601, or numbers in seconds or milliseconds (since the epoch or
// any other origin: only differences matter, except in what the report prints).
enum class TimeFormat : std::uint8_t { Auto, Iso8601, Seconds, Milliseconds };
// "auto", "iso", "s", "ms"; anything else is a ScenarioError naming --time-unit.
TimeFormat parse_time_format(const std::string& text);

inline constexpr std::int64_t kNoTime = std::numeric_limits<std::int64_t>::min();
// At most this many rows: 32 bytes each in memory, so the largest log costs 1.6 GB.
inline constexpr std::size_t kMaxRows = 50'000'000;
// Longer lines are refused (a binary file, a log with no line breaks).
inline constexpr std::size_t kMaxLineBytes = 1 << 20;
// At most this many distinct queue names: brokersim's limit on a scenario's queues
// (broker.queues), checked as the log is read, at the row that names the next one, so a log of a
// million queues is refused at its 65th name rather than after it was read and fitted.
inline constexpr std::size_t kMaxQueues = 64;
// At most this many distinct worker names (each a consumer of the fitted scenario).
inline constexpr std::size_t kMaxWorkers = 1'000'000;
// A log's enqueue times span at most this (1e11 ms, about 3 years), and a job starts and finishes
// within it of its enqueue: each is then a duration a scenario can hold (at most 1e12 ms, with
// the runs of --check going to twice the span).
inline constexpr std::int64_t kMaxSpanNs = 100'000'000'000LL * 1'000'000LL;

struct JobRow {
  std::int64_t enqueued = 0;        // ns from the log's time origin (the producer's clock)
  std::int64_t started = kNoTime;   // kNoTime: not started (still queued, or expired) when logged; the worker's clock
  std::int64_t finished = kNoTime;  // kNoTime: not finished; the worker's clock, at or after started
  std::uint32_t worker = 0;         // index into JobLog::workers (0 without a worker column)
  std::uint16_t queue = 0;          // index into JobLog::queues (at most kMaxQueues)
  Outcome outcome = Outcome::Finished;
  // Enqueue to start, 0 when skew put the start before the enqueue; the row must have started.
  std::int64_t wait() const { return started > enqueued ? started - enqueued : 0; }
};
static_assert(sizeof(JobRow) == 32, "a job row is 32 bytes: 50,000,000 rows in 1.6 GB");

struct JobLog {
  std::string file;
  ColumnNames columns;
  TimeFormat format = TimeFormat::Auto;  // as detected (never Auto after reading)
  std::string format_reason;             // why: "ISO-8601 in enqueued_at", "the column name ends in _ms", ...
  bool naive_iso = false;                // an ISO time without a zone was read as UTC
  std::vector<JobRow> rows;              // in file order
  std::vector<std::string> queues;       // {""} without a queue column
  std::vector<std::string> workers;      // {""} without a worker column
  std::size_t not_started = 0, not_finished = 0;
  bool has_outcome = false;              // a state, succeeded or failed column
  // With an id column: a key per row (rows[i]'s message is message_keys[i]; empty without one). Ids
  // are kept as 64-bit hashes of their text: two of 50,000,000 distinct ids share one with a chance
  // below 1e-4, and a message's id text may be long.
  std::vector<std::uint64_t> message_keys;
  // The state and id columns were found by their names, not named with --columns.
  bool state_by_name = false, id_by_name = false;
  SkewStats skew;
  std::int64_t skew_tolerance_ns = 0;    // as read with
  // Where each row is in the file: rows[i] is on line i + offset, where offset is the second of
  // the last pair whose first is <= i (a pair is added only where blank lines shift the offset).
  std::vector<std::pair<std::size_t, std::size_t>> line_offsets;
  std::size_t line_of(std::size_t row) const;
  bool has_queue() const { return !columns.queue.empty(); }
  bool has_worker() const { return !columns.worker.empty(); }
  bool has_id() const { return !columns.id.empty(); }
};

// Reads LOG. `requested` is --time-unit. Throws ScenarioError for a missing or unreadable file, a
// missing column, a cell that is not a time in the log's format, started before enqueued, finished
// before started, finished without started, no data row, more than kMaxRows rows, a line longer
// than kMaxLineBytes, more than kMaxQueues queues or kMaxWorkers workers, or enqueue times spanning
// more than kMaxSpanNs (or a job starting or finishing later than that after its enqueue). Each
// error names the line and the column.
JobLog read_job_log(const std::string& path, const ColumnNames& columns, TimeFormat requested,
                    const ReadOptions& options = {});
// The same from text in memory (`file` names it in messages).
JobLog read_job_log_text(const std::string& text, const std::string& file, const ColumnNames& columns,
                         TimeFormat requested, const ReadOptions& options = {});

// "50ms", "1s", "250us", "0" -> ns, for --skew-tolerance (at most 1h); a ScenarioError naming
// `option` otherwise.
std::int64_t parse_skew_tolerance(const std::string& text, const std::string& option);

// "2026-12-03T15:28:43.5Z" (ISO-8601) -> ns since 1970-01-01T00:00:00Z; false when it is not one.
// `naive` is set when the text names no zone (read as UTC). `out_of_range` (when given) is set when
// the text is a valid ISO-8601 time outside what int64 nanoseconds hold (before 1678, after 2262).
bool parse_iso8601(std::string_view text, std::int64_t& ns, bool& naive, bool* out_of_range = nullptr);
// A decimal number ("1733239723.25", "-5", "12", "1.7e9") in `unit_ns` nanoseconds per unit,
// exactly to the nanosecond (but in exponent notation); false when it is not one or does not fit in
// int64 nanoseconds (`out_of_range`, when given, is set in that second case).
bool parse_decimal_time(std::string_view text, std::int64_t unit_ns, std::int64_t& ns, bool* out_of_range = nullptr);

}  // namespace brokersim::fit
