// Where a job's records come from, apart from files: the interface a database source
// implements (PostgreSQL in postgres.hpp; a MongoDB source would implement record_source the
// same way, docs/databases.md). Decisions go to a decision_sink (decision_sink.hpp).
#pragma once

#include <simdup/document.hpp>
#include <simdup/error.hpp>
#include <simdup/reader.hpp>

#include <cstdint>
#include <memory>
#include <string_view>

namespace simdup {

/// A stream of records in a stable order, read on one thread. `reader` (files) is one; a
/// database cursor is another. Same contract as reader::next: a bad record names its place
/// (table, row, column) and reading goes on; failed is fatal.
class record_source {
 public:
  virtual ~record_source() = default;
  /// The next record into `doc` (every field overwritten), or bad_record/end/failed.
  virtual read_status next(document& doc, error_info& error) = 0;
  /// The CSV header row of the current input (files only); empty otherwise.
  virtual std::string_view header() const noexcept { return {}; }
  /// A short stable name for the last bad_record, for skip counts ("null_text", ...).
  virtual std::string_view last_skip_reason() const noexcept = 0;
  /// True when the last bad_record was a whole input that failed, not one record (summaries
  /// count skipped inputs apart from skipped records). A database source has one input.
  virtual bool last_skip_was_input() const noexcept { return false; }
  /// Running totals (bytes: text bytes read so far).
  virtual const reader_stats& stats() const noexcept = 0;
};

/// Wraps a file reader as a record_source.
std::unique_ptr<record_source> make_file_source(reader in);

}  // namespace simdup
