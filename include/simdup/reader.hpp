// Streaming record readers: JSONL, TSV, CSV, plain text, WARC/WET, Parquet; gzip and zstd
// transparently; several inputs and globs in one run. Memory stays bounded by the largest record.
#pragma once

#include <simdup/document.hpp>
#include <simdup/error.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// Names of the record fields (JSONL keys, CSV header columns).
struct field_names {
  std::string id = "id";              ///< document id (string or number)
  std::string text = "text";          ///< document text (a record without it is a bad record,
                                      ///< unless it has `features`)
  std::string url = "url";            ///< optional URL
  std::string title = "title";        ///< optional title
  std::string time = "time";          ///< optional time: integer unix seconds or ISO-8601 string
  std::string features = "features";  ///< optional supplied features (JSONL only)
};

struct reader_options {
  /// Format of every input; auto_detect decides per input (extension, then content sniffing).
  input_format format = input_format::auto_detect;
  field_names fields;
  /// Records longer than this many bytes are bad records (errc::too_large). Default 1 GiB.
  std::size_t max_record_bytes = std::size_t{1} << 30;
  /// An input that is a regular file (not stdin or another pipe, not WARC) whose first 64 KiB
  /// hold a NUL byte or are mostly invalid UTF-8 is not text: it fails like an unreadable
  /// input (errc::unsupported, skip reason "binary_input") instead of yielding garbage records.
  /// When true, an input that cannot be read to its end (missing, a directory, a pattern
  /// without matches, a truncated or corrupt .gz/.zst, not text, an I/O error) is one bad_record
  /// naming it (and, for a truncation, the line where it was hit) and reading goes on with the next
  /// input; the records before a truncation are returned normally. When false (default) it
  /// is read_status::failed. --on-error skip sets it.
  bool skip_failed_inputs = false;
  /// Optional. Once it holds true, a read waiting on a pipe or terminal (stdin) gives up within
  /// 0.1 s and next() returns failed ("... interrupted"); never skipped. Regular files are not
  /// polled: the caller checks the flag between records.
  const std::atomic<bool>* cancel = nullptr;
  /// JSONL records come back framed only: `raw` and the provenance (source, line, offset,
  /// format) set, the other fields empty and `needs_decoding` true. The caller decodes each
  /// with decode_record, on any thread: a reading thread that only frames lines keeps up with
  /// many threads that parse and fingerprint. A malformed JSON line is then a bad_record of
  /// decode_record, not of next() (stats().records counts it). Other formats are unaffected.
  bool defer_decoding = false;
};

/// Outcome of reader::next().
enum class read_status {
  record,      ///< `doc` holds the next record
  bad_record,  ///< a malformed record (bad JSON, missing text, ...): `error` names
               ///< SOURCE:LINE; the reader has moved past it, call next() again to continue
  end,         ///< every input has been read
  failed,      ///< a fatal error (unreadable or truncated .gz/.zst, I/O error): `error` names the
               ///< input; later calls return failed again
};

/// Running totals, for progress and summaries.
struct reader_stats {
  uint64_t records = 0;           ///< records returned (read_status::record)
  uint64_t bad_records = 0;       ///< read_status::bad_record results
  uint64_t bytes = 0;             ///< decompressed bytes consumed so far
  uint64_t compressed_bytes = 0;  ///< bytes read from files/stdin so far (before decompression)
  uint64_t inputs_opened = 0;     ///< inputs started so far
};

/// Expands shell-like globs (`*`, `?`, `[...]`, sorted matches). A path that exists is taken
/// literally; "-" is stdin. A pattern without matches, or a missing file, is errc::not_found
/// naming it, unless `keep_missing`: then it stays in the list as given (a reader with
/// skip_failed_inputs reports it when its turn comes). An empty list yields {"-"}.
result<std::vector<std::string>> expand_inputs(std::span<const std::string> inputs,
                                               bool keep_missing = false);

/// Reads the records of several inputs, one input after the other, in order. Not thread-safe:
/// use one reader per thread (the pipeline reads on one thread and fans out).
class reader {
 public:
  /// Expands globs (expand_inputs) and checks that every input exists; inputs are opened lazily
  /// in order. Fails with errc::not_found naming a missing input (unless
  /// options.skip_failed_inputs: then next() reports it in its turn).
  static result<reader> open(std::span<const std::string> inputs, const reader_options& options);
  /// Reads records from a buffer (tests, HTTP bodies, Python); `name` is used as the source.
  /// Compressed buffers are decompressed. `lines_before`: lines of the source before the
  /// buffer (a byte range of a file cut at a line start, as simdup.dask splits large files),
  /// so that line numbers, generated ids and messages are those of the whole file.
  static reader from_memory(std::string name, std::string data, const reader_options& options,
                            uint64_t lines_before = 0);

  /// Reads rows [first_row, first_row + rows) of one Parquet file (simdup.dask partitions it by
  /// row group); record lines, generated ids and messages are those of the whole file.
  static result<reader> parquet_rows(std::string path, uint64_t first_row, uint64_t rows,
                                     const reader_options& options);

  /// Reads the next record into `doc` (all fields overwritten). On bad_record and failed,
  /// `error` holds the reason; on bad_record `doc.source/line/offset/raw` describe the record.
  read_status next(document& doc, error_info& error);

  /// The first line of the current CSV input (its header row), empty for other formats. Lets
  /// a writer reproduce kept records in the input's own format.
  std::string_view header() const noexcept;

  /// A short stable name for the last bad_record, for skip counts: errc_name of a record
  /// error ("invalid_input", "too_large", ...), or for an input that failed (with
  /// skip_failed_inputs) "missing_file", "not_a_file", "truncated_input", "corrupt_input",
  /// "binary_input", "unreadable_input".
  std::string_view last_skip_reason() const noexcept;
  /// True when the last bad_record was a whole input that failed (skip_failed_inputs), not a
  /// record: summaries count skipped inputs apart from skipped records.
  bool last_skip_was_input() const noexcept;

  const reader_stats& stats() const noexcept;
  /// The expanded input list.
  const std::vector<std::string>& inputs() const noexcept;

  reader(reader&&) noexcept;
  reader& operator=(reader&&) noexcept;
  ~reader();

 private:
  struct impl;
  explicit reader(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Fills the fields of a record read with reader_options::defer_decoding from its `raw` bytes,
/// by `fields` (the reader's field names): read_status::record, or bad_record with `error`
/// naming SOURCE:LINE and the reason (errc::invalid_input) as next() would have. A document
/// that needs no decoding is left as it is (record). Thread-safe: each thread has its parser.
read_status decode_record(document& doc, const field_names& fields, error_info& error);

/// decode_record over `docs` in order, the decoded ones moved to the front (in their order).
/// Each that fails is handed to `on_bad(position, error)`, its place in `docs`; false from
/// on_bad stops there, dropping it and the rest. Returns how many were decoded.
std::size_t decode_records(std::span<document> docs, const field_names& fields,
                           const std::function<bool(std::size_t, error_info&)>& on_bad);

/// Appends `text` with the TSV escapes the TSV reader undoes (\t \n \r \\): the one TSV
/// writer of every TSV output (fingerprint, features, segment, annotated records).
void append_tsv_escaped(std::string& out, std::string_view text);

/// Parses a format name ("jsonl", "ndjson", "json", "tsv", "csv", "text", "txt", "warc",
/// "wet", "parquet", "auto"); anything else is errc::invalid_argument.
result<input_format> parse_input_format(std::string_view name);

/// The format implied by a file name's extension, looking through .gz/.zst/.zstd
/// ("a.jsonl.gz" -> jsonl); auto_detect when unknown.
input_format format_from_extension(std::string_view path) noexcept;

/// True when `head`, an input's first bytes (4 suffice), starts a stream the readers decompress:
/// gzip (1f 8b), zstd (28 b5 2f fd) or a zstd skippable frame (5? 2a 4d 18, as pzstd writes).
bool starts_compressed(std::string_view head) noexcept;

/// Parses ISO-8601 date-times to unix seconds: "2024-05-01", "2024-05-01T12:00:00",
/// fractional seconds (truncated), "Z" or "+hh:mm"/"-hh:mm"/"+hhmm" offsets (none means UTC);
/// a space may replace the "T". Anything else is errc::invalid_input.
result<int64_t> parse_iso8601(std::string_view text);

/// One row group of a Parquet file: its first row and its row count.
struct parquet_row_group {
  uint64_t first_row = 0;
  uint64_t rows = 0;
};

/// The row groups of a Parquet file in file order (simdup.dask makes partitions of them and
/// reads each with reader::parquet_rows). errc::corrupt_data or not_found naming the file;
/// unsupported in a build without Parquet.
result<std::vector<parquet_row_group>> parquet_row_groups(const std::string& path);

}  // namespace simdup
