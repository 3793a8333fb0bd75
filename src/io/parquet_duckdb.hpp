// Owning handles over DuckDB's C API for the Parquet reader and writer (only built with
// SIMDUP_WITH_PARQUET). Each user opens its own in-memory database: nothing is shared between
// inputs or threads (a database shared by the readers cost little less, and DuckDB decoding a
// corrupt page can hand out stale memory of an earlier input: docs/fuzzing.md), and no
// extension is installed or loaded from the network.
#pragma once

#include <simdup/error.hpp>

#include <duckdb.h>

#include <string>
#include <string_view>

namespace simdup::detail::duck {

/// An in-memory database and one connection to it.
class connection {
 public:
  /// A database of its own; `threads`: DuckDB's worker threads (0: DuckDB's default, one per
  /// core).
  static result<connection> open(unsigned threads);
  /// open(1) for a streamed read: one DuckDB thread (a query runs in the thread that fetches
  /// its chunks) and a streaming buffer of one chunk (docs/performance.md).
  static result<connection> open_streaming();
  connection(connection&& other) noexcept;
  connection& operator=(connection&&) = delete;
  ~connection();
  duckdb_connection get() const noexcept { return con_; }
  /// Runs `sql`, discarding its result; the error is DuckDB's message.
  result<void> run(const std::string& sql);

 private:
  connection() = default;
  duckdb_database db_ = nullptr;
  duckdb_connection con_ = nullptr;
};

/// A prepared statement.
class statement {
 public:
  statement() = default;
  statement(statement&& other) noexcept : p_(other.p_) { other.p_ = nullptr; }
  statement& operator=(statement&& other) noexcept;
  ~statement() { duckdb_destroy_prepare(&p_); }
  /// Prepares `sql`; the error is DuckDB's message, errc::invalid_input.
  static result<statement> prepare(const connection& con, const std::string& sql);
  duckdb_prepared_statement get() const noexcept { return p_; }

 private:
  duckdb_prepared_statement p_ = nullptr;
};

/// A query result read chunk by chunk (streaming: DuckDB produces the next chunks while the
/// caller works on this one, and holds only a few of them).
class stream {
 public:
  stream() = default;
  stream(stream&& other) noexcept;
  stream& operator=(stream&& other) noexcept;
  ~stream();
  static result<stream> execute(const statement& st);
  /// The next chunk (owned by the stream until the next call), or null at the end or on an
  /// error (then error() is non-empty).
  duckdb_data_chunk next();
  std::string error();

 private:
  duckdb_result result_{};
  bool open_ = false;
  duckdb_data_chunk chunk_ = nullptr;
};

/// `s` as an SQL string literal ('...' with quotes doubled).
std::string literal(std::string_view s);
/// `s` as an SQL identifier ("..." with quotes doubled).
std::string identifier(std::string_view s);
/// DuckDB's message without its "LINE 1: ..." context (which shows our own query, not the
/// user's file).
std::string clean_message(std::string_view message);

}  // namespace simdup::detail::duck
