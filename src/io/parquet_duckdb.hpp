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

// DuckDB's C functions that simdup calls. libduckdb.so is not linked: it is loaded by load(), the
// first time a Parquet file is read or written. Every command would otherwise pay for loading it
// at start (64 MB with 60,000 symbol relocations: about 13 ms, a third of `simdup --version`).
#define SIMDUP_DUCKDB_FUNCTIONS(X)           \
  X(duckdb_close)                            \
  X(duckdb_connect)                          \
  X(duckdb_create_config)                    \
  X(duckdb_create_logical_type)              \
  X(duckdb_create_scalar_function)           \
  X(duckdb_data_chunk_get_size)              \
  X(duckdb_data_chunk_get_vector)            \
  X(duckdb_destroy_config)                   \
  X(duckdb_destroy_data_chunk)               \
  X(duckdb_destroy_logical_type)             \
  X(duckdb_destroy_pending)                  \
  X(duckdb_destroy_prepare)                  \
  X(duckdb_destroy_result)                   \
  X(duckdb_destroy_scalar_function)          \
  X(duckdb_disconnect)                       \
  X(duckdb_execute_pending)                  \
  X(duckdb_fetch_chunk)                      \
  X(duckdb_free)                             \
  X(duckdb_open_ext)                         \
  X(duckdb_pending_error)                    \
  X(duckdb_pending_prepared_streaming)       \
  X(duckdb_prepare)                          \
  X(duckdb_prepare_error)                    \
  X(duckdb_query)                            \
  X(duckdb_register_scalar_function)         \
  X(duckdb_result_error)                     \
  X(duckdb_scalar_function_add_parameter)    \
  X(duckdb_scalar_function_get_extra_info)   \
  X(duckdb_scalar_function_set_extra_info)   \
  X(duckdb_scalar_function_set_function)     \
  X(duckdb_scalar_function_set_name)         \
  X(duckdb_scalar_function_set_return_type)  \
  X(duckdb_set_config)                       \
  X(duckdb_string_t_data)                    \
  X(duckdb_string_t_length)                  \
  X(duckdb_validity_row_is_valid)            \
  X(duckdb_validity_set_row_invalid)         \
  X(duckdb_vector_assign_string_element_len) \
  X(duckdb_vector_ensure_validity_writable)  \
  X(duckdb_vector_get_data)                  \
  X(duckdb_vector_get_validity)

/// Pointers to the functions above, filled from the loaded library.
struct functions {
#define SIMDUP_DUCKDB_POINTER(name) decltype(&::name) name = nullptr;
  SIMDUP_DUCKDB_FUNCTIONS(SIMDUP_DUCKDB_POINTER)
#undef SIMDUP_DUCKDB_POINTER
};

/// Loads libduckdb.so once (thread-safe): by name (LD_LIBRARY_PATH, the binary's RUNPATH, the
/// system's paths), then the one built against, then the installed copy (LIBDIR/simdup); only
/// from $SIMDUP_DUCKDB_LIBRARY when that is set.
/// errc::unsupported naming each place tried when none loads or one lacks a function.
result<const functions*> load();
/// The loaded functions; only after load() succeeded (connection::open calls it first).
const functions& loaded() noexcept;

// duck::duckdb_x(...) calls the loaded library's duckdb_x. Always qualified: an unqualified call
// would find the global declaration of duckdb.h through its arguments' types.
#define SIMDUP_DUCKDB_CALL(name)   \
  template <class... Args>         \
  inline auto name(Args... args) { \
    return loaded().name(args...); \
  }
SIMDUP_DUCKDB_FUNCTIONS(SIMDUP_DUCKDB_CALL)
#undef SIMDUP_DUCKDB_CALL

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
  ~statement() { duck::duckdb_destroy_prepare(&p_); }
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
