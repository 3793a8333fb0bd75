#include "io/parquet_duckdb.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace simdup::detail::duck {

namespace {

functions table;

// dlsym's result as the pointer type of `slot`.
template <class F>
bool resolve(void* library, const char* name, F& slot) {
  slot = reinterpret_cast<F>(::dlsym(library, name));
  return slot != nullptr;
}

result<const functions*> load_once() {
  // By name first, so that LD_LIBRARY_PATH and an installed binary's RUNPATH win; then the
  // library the build found (build-tree binaries have no RUNPATH for it) and the installed copy
  // (cmake/install.cmake), for a program linked to the static libsimdup.
  // SIMDUP_DUCKDB_LIBRARY, when set, is the only place: the user's own DuckDB.
  std::vector<const char*> places = {"libduckdb.so", SIMDUP_DUCKDB_BUILT, SIMDUP_DUCKDB_INSTALLED};
  if (const char* own = std::getenv("SIMDUP_DUCKDB_LIBRARY"); own && *own) places = {own};
  std::string tried;
  void* library = nullptr;
  for (const char* place : places) {
    library = ::dlopen(place, RTLD_NOW | RTLD_LOCAL);
    if (library) break;
    const char* why = ::dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (why ? why : place);
  }
  if (!library) {
    return make_error(errc::unsupported,
                      "Parquet needs DuckDB's libduckdb.so, which cannot be loaded (" + tried +
                          "); docs/install.md says where to get it");
  }
  std::string missing;
#define SIMDUP_DUCKDB_RESOLVE(name)         \
  if (!resolve(library, #name, table.name)) \
    missing += std::string(missing.empty() ? "" : ", ") + #name;
  SIMDUP_DUCKDB_FUNCTIONS(SIMDUP_DUCKDB_RESOLVE)
#undef SIMDUP_DUCKDB_RESOLVE
  if (!missing.empty()) {
    // The library stays loaded: unloading DuckDB is not worth the risk of its static state.
    return make_error(errc::unsupported, "the libduckdb.so that was loaded lacks " + missing +
                                             ": a DuckDB older than the one simdup was built "
                                             "against (" SIMDUP_DUCKDB_BUILT ")");
  }
  return &table;
}

/// A new in-memory database, or DuckDB's message.
result<duckdb_database> open_database(unsigned threads) {
  duckdb_config config = nullptr;
  if (duck::duckdb_create_config(&config) == DuckDBError) {
    return make_error(errc::internal, "DuckDB: cannot create a configuration");
  }
  // Parquet is built into libduckdb; nothing may be downloaded or loaded behind the user's back.
  duck::duckdb_set_config(config, "autoinstall_known_extensions", "false");
  duck::duckdb_set_config(config, "autoload_known_extensions", "false");
  if (threads != 0) duck::duckdb_set_config(config, "threads", std::to_string(threads).c_str());
  duckdb_database db = nullptr;
  char* err = nullptr;
  const duckdb_state opened = duck::duckdb_open_ext(nullptr, &db, config, &err);
  duck::duckdb_destroy_config(&config);
  if (opened == DuckDBError) {
    std::string message = std::string("DuckDB: cannot open a database: ") + (err ? err : "");
    duck::duckdb_free(err);
    return make_error(errc::internal, std::move(message));
  }
  return db;
}

}  // namespace

result<const functions*> load() {
  static std::once_flag once;
  static result<const functions*> loaded_table = make_error(errc::internal, "not loaded");
  std::call_once(once, [] { loaded_table = load_once(); });
  return loaded_table;
}

const functions& loaded() noexcept {
  return table;
}

result<connection> connection::open(unsigned threads) {
  if (auto library = load(); !library) return std::move(library).error();
  auto db = open_database(threads);
  if (!db) return std::move(db).error();
  connection c;
  c.db_ = *db;
  if (duck::duckdb_connect(c.db_, &c.con_) == DuckDBError) {
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
  if (con_) duck::duckdb_disconnect(&con_);
  if (db_) duck::duckdb_close(&db_);
}

result<void> connection::run(const std::string& sql) {
  duckdb_result r{};
  const duckdb_state st = duck::duckdb_query(con_, sql.c_str(), &r);
  std::string message = st == DuckDBError ? clean_message(duck::duckdb_result_error(&r)) : "";
  duck::duckdb_destroy_result(&r);
  if (st == DuckDBError) return make_error(errc::io_error, std::move(message));
  return {};
}

statement& statement::operator=(statement&& other) noexcept {
  if (this != &other) {
    duck::duckdb_destroy_prepare(&p_);
    p_ = std::exchange(other.p_, nullptr);
  }
  return *this;
}

result<statement> statement::prepare(const connection& con, const std::string& sql) {
  statement s;
  if (duck::duckdb_prepare(con.get(), sql.c_str(), &s.p_) == DuckDBError) {
    return make_error(errc::invalid_input, clean_message(duck::duckdb_prepare_error(s.p_)));
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
  if (chunk_) duck::duckdb_destroy_data_chunk(&chunk_);
  if (open_) duck::duckdb_destroy_result(&result_);
}

result<stream> stream::execute(const statement& st) {
  duckdb_pending_result pending = nullptr;
  if (duck::duckdb_pending_prepared_streaming(st.get(), &pending) == DuckDBError) {
    std::string message = clean_message(duck::duckdb_pending_error(pending));
    duck::duckdb_destroy_pending(&pending);
    return make_error(errc::invalid_input, std::move(message));
  }
  stream s;
  const duckdb_state ran = duck::duckdb_execute_pending(pending, &s.result_);
  duck::duckdb_destroy_pending(&pending);
  s.open_ = true;
  if (ran == DuckDBError) return make_error(errc::invalid_input, s.error());
  return s;
}

duckdb_data_chunk stream::next() {
  if (chunk_) duck::duckdb_destroy_data_chunk(&chunk_);
  chunk_ = duck::duckdb_fetch_chunk(result_);
  return chunk_;
}

std::string stream::error() {
  const char* e = duck::duckdb_result_error(&result_);
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
