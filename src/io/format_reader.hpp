// The per-format record parsers behind simdup::reader. Each reads one input through a
// line_input and fills documents.
#pragma once

#include <simdup/reader.hpp>

#include "io/line_input.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

class format_reader {
 public:
  virtual ~format_reader() = default;
  /// Same contract as reader::next for one input; `end` when the input is exhausted.
  virtual read_status next(document& doc, error_info& error) = 0;
  /// CSV header row; empty for other formats.
  virtual std::string_view header() const noexcept { return {}; }
};

/// Shared state of one input's parser.
struct input_context {
  line_input* in;      ///< the input's bytes (owned by the caller, outlives the parser)
  std::string source;  ///< name for messages and generated ids
  const reader_options* options;
  /// More than one input is read: plain-text ids become "SOURCE:LINE" instead of the bare line
  /// number, which would repeat in every input.
  bool several_inputs = false;
};

std::unique_ptr<format_reader> make_jsonl_reader(input_context ctx);
std::unique_ptr<format_reader> make_tsv_reader(input_context ctx);
std::unique_ptr<format_reader> make_text_reader(input_context ctx);
std::unique_ptr<format_reader> make_csv_reader(input_context ctx);
std::unique_ptr<format_reader> make_warc_reader(input_context ctx);

/// Rows [first_row, first_row + rows) of a Parquet file (simdup.dask's row-group partitions).
inline constexpr uint64_t kAllRows = UINT64_MAX;
struct parquet_slice {
  uint64_t first_row = 0;
  uint64_t rows = kAllRows;
};
/// Parquet (parquet_reader.cpp): reads the file at `path` itself, through DuckDB; ctx.in is
/// unused (null). Fails like an unreadable input: missing, not Parquet, a text field column
/// that is missing or not a string, a field column of the wrong type.
result<std::unique_ptr<format_reader>> make_parquet_reader(input_context ctx,
                                                           const std::string& path,
                                                           const parquet_slice& slice);

/// Clears every field of `doc` (keeping capacity) and sets the provenance fields.
void reset_document(document& doc, const input_context& ctx, input_format format, uint64_t line,
                    uint64_t offset);
/// The two halves of reset_document: the record's fields (id, text, metadata, features, the
/// repair count, needs_decoding) cleared, and raw cleared with the provenance set.
void clear_fields(document& doc);
void set_provenance(document& doc, const input_context& ctx, input_format format, uint64_t line,
                    uint64_t offset);

/// decode_record of a JSONL record (jsonl_reader.cpp).
read_status decode_jsonl(document& doc, const field_names& fields, error_info& error);

/// Gives `doc` the id "SOURCE:LINE" (or "SOURCE:OFFSET" when line is 0).
void generate_id(document& doc);

/// Maps a line_status that is not `ok` to a read_status, filling `error` for too_long.
read_status line_failure(line_status st, const input_context& ctx, error_info& error);

/// "SOURCE:LINE: what" for record errors.
error_info record_error(const document& doc, errc code, std::string_view what);

/// True when `s` is empty or only spaces and tabs.
bool is_blank(std::string_view s) noexcept;

/// Decodes the TSV escapes \t \n \r \\ into `out` (cleared first); any other backslash is
/// kept literally.
void tsv_unescape(std::string_view in, std::string& out);

/// Splits one CSV record (RFC 4180: quoted fields, "" for a quote inside) into `out`. Lenient
/// about '"' inside unquoted fields. False, with `what` set, for an unterminated quoted field or
/// a character after a closing quote.
bool split_csv_record(std::string_view rec, std::vector<std::string>& out, std::string& what);

}  // namespace simdup::detail
