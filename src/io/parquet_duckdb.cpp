#include "io/parquet_duckdb.hpp"

#include <utility>

namespace simdup::detail::duck {

namespace {

/// A new in-memory database, or DuckDB's message.
result<duckdb_database> open_database(unsigned threads) {
  duckdb_config config = nullptr;
  if (duckdb_create_config(&config) == DuckDBError) {
    return make_error(errc::internal, "DuckDB: cannot create a configuration");
  }
  // Parquet is built into libduckdb; nothing may be downloaded or loaded behind the user's back.
  duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duckdb_set_config(config, "autoload_known_extensions", "false");
  if (threads != 0) duckdb_set_config(config, "threads", std::to_string(threads).c_str());
  duckdb_database db = nullptr;
  char* err = nullptr;
  const duckdb_state opened = duckdb_open_ext(nullptr, &db, config, &err);
  duckdb_destroy_config(&config);
  if (opened == DuckDBError) {
    std::string message = std::string("DuckDB: cannot open a database: ") + (err ? err : "");
    duckdb_free(err);
    return make_error(errc::internal, std::move(message));
  }
  return db;
}

}  // namespace

result<connection> connection::open(unsigned threads) {
  auto db = open_database(threads);
  if (!db) return std::move(db).error();
  connection c;
  c.db_ = *db;
  if (duckdb_connect(c.db_, &c.con_) == DuckDBError) {
    return make_error(errc::internal, "DuckDB: cannot connect to its database");
  }
  return c;
}

result<connection> connection::open_streaming() {
  auto c = open(1);
  if (!c) return c;
  // A streamed query copies every chunk it produces into a buffer that the fetches drain; the
  // default buffer (about 1 MB, or whole chunks beyond it) spread the copies over fresh memory.
  // A small one holds one chunk at a time, in memory that stays warm: a read of 140 MB of text
  // took 0.17 s of CPU instead of 0.45 s (docs/performance.md). (0 would return no rows.)
  if (auto st = c->run("SET streaming_buffer_size = '100KB'"); !st) {
    return make_error(errc::internal, "DuckDB: " + st.error().message);
  }
  return c;
}

connection::connection(connection&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)), con_(std::exchange(other.con_, nullptr)) {}

connection::~connection() {
  if (con_) duckdb_disconnect(&con_);
  if (db_) duckdb_close(&db_);
}

result<void> connection::run(const std::string& sql) {
  duckdb_result r{};
  const duckdb_state st = duckdb_query(con_, sql.c_str(), &r);
  std::string message = st == DuckDBError ? clean_message(duckdb_result_error(&r)) : "";
  duckdb_destroy_result(&r);
  if (st == DuckDBError) return make_error(errc::io_error, std::move(message));
  return {};
}

statement& statement::operator=(statement&& other) noexcept {
  if (this != &other) {
    duckdb_destroy_prepare(&p_);
    p_ = std::exchange(other.p_, nullptr);
  }
  return *this;
}

result<statement> statement::prepare(const connection& con, const std::string& sql) {
  statement s;
  if (duckdb_prepare(con.get(), sql.c_str(), &s.p_) == DuckDBError) {
    return make_error(errc::invalid_input, clean_message(duckdb_prepare_error(s.p_)));
  }
  return s;
}

stream::stream(stream&& other) noexcept
    : result_(other.result_),
      open_(std::exchange(other.open_, false)),
      chunk_(std::exchange(other.chunk_, nullptr)) {}

stream& stream::operator=(stream&& other) noexcept {
  if (this != &other) {
    this->~stream();
    new (this) stream(std::move(other));
  }
  return *this;
}

stream::~stream() {
  if (chunk_) duckdb_destroy_data_chunk(&chunk_);
  if (open_) duckdb_destroy_result(&result_);
}

result<stream> stream::execute(const statement& st) {
  duckdb_pending_result pending = nullptr;
  if (duckdb_pending_prepared_streaming(st.get(), &pending) == DuckDBError) {
    std::string message = clean_message(duckdb_pending_error(pending));
    duckdb_destroy_pending(&pending);
    return make_error(errc::invalid_input, std::move(message));
  }
  stream s;
  const duckdb_state ran = duckdb_execute_pending(pending, &s.result_);
  duckdb_destroy_pending(&pending);
  s.open_ = true;
  if (ran == DuckDBError) return make_error(errc::invalid_input, s.error());
  return s;
}

duckdb_data_chunk stream::next() {
  if (chunk_) duckdb_destroy_data_chunk(&chunk_);
  chunk_ = duckdb_fetch_chunk(result_);
  return chunk_;
}

std::string stream::error() {
  const char* e = duckdb_result_error(&result_);
  return e ? clean_message(e) : std::string();
}

std::string literal(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string identifier(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string clean_message(std::string_view message) {
  if (const std::size_t at = message.find("\n\nLINE "); at != std::string_view::npos) {
    message = message.substr(0, at);
  }
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.remove_suffix(1);
  }
  return std::string(message);
}

}  // namespace simdup::detail::duck
