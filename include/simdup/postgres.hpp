// PostgreSQL as a record source (a server-side cursor over a table or a query); writing is in
// postgres_sink.hpp. Layouts, the run and resume semantics and connection strings:
// docs/databases.md.
#pragma once

#include <simdup/record_source.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace simdup {

/// Checks a libpq connection string or URI given on the command line: it must parse, and it
/// must not hold a password (use PGPASSWORD, ~/.pgpass or a service file).
/// errc::invalid_argument naming `option` otherwise.
status check_connection_string(std::string_view connection, std::string_view option);

struct postgres_source_options {
  /// libpq connection string or URI ("postgresql:///db", "host=/tmp dbname=db", "" for the
  /// PG* environment). Passwords come from the environment or ~/.pgpass, never from here.
  std::string connection;
  /// A table ("name" or "schema.name"); exactly one of table and query is set.
  std::string table;
  /// A SELECT (or any query returning rows) whose columns are named below.
  std::string query;
  std::string id_column = "id";      ///< becomes document::id (any type, as text)
  std::string text_column = "text";  ///< becomes document::text; NULL or '' is a bad record
  /// Optional columns, named by default as the file fields are (field_names in reader.hpp).
  /// A column named otherwise must exist (errc::invalid_argument); one left at its default
  /// name is read when the table or query has it and left out when not (its documents have
  /// no url, title or time, as JSONL records without the field), and so is a default time
  /// column of a type that holds no point in time. Empty: not read. columns() says which
  /// were found.
  std::string url_column = "url";
  std::string title_column = "title";
  /// A timestamp, date, integer (unix seconds) or ISO-8601 text column.
  std::string time_column = "time";
  /// Rows per FETCH from the server-side cursor: memory holds about this many rows.
  std::size_t fetch_rows = 1000;
  /// Fill document::raw with the row as a JSONL record (id, text, url, title, time), so
  /// kept rows can be written to a file; off when only the database is written.
  bool json_raw = false;
  /// Optional stop request, checked between fetches.
  const std::atomic<bool>* cancel = nullptr;
};

/// One connection holding one read-only REPEATABLE READ transaction: every cursor open()
/// returns reads the same snapshot in the same order, so a job may read twice (batch dedup)
/// while the table is being written, and a resumed run sees the rows in the order it saw them.
class postgres_records {
 public:
  /// Connects, checks the database encoding (converted to UTF-8 by the server; SQL_ASCII,
  /// which cannot be converted, is refused), that the table or query exists and that it has
  /// the named columns. Errors name the table, query or column.
  static result<std::unique_ptr<postgres_records>> connect(const postgres_source_options& options);

  /// A new cursor over the rows, starting after the first `skip_rows` rows (which the server
  /// skips without sending them). Only one cursor is open at a time: opening another closes
  /// the last one, which must not be used afterwards.
  result<std::unique_ptr<record_source>> open(uint64_t skip_rows = 0);

  /// "table news" or "query", for messages.
  const std::string& description() const noexcept;

  /// The columns read: the options given to connect() with each optional column that was
  /// left out (a default name the source lacks) set to "".
  const postgres_source_options& columns() const noexcept;

  ~postgres_records();
  postgres_records(const postgres_records&) = delete;
  postgres_records& operator=(const postgres_records&) = delete;

  struct impl;

 private:
  explicit postgres_records(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
