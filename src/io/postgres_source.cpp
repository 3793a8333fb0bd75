// The PostgreSQL record source: a server-side cursor (DECLARE ... NO SCROLL, FETCH n) inside
// one read-only REPEATABLE READ transaction. Memory holds a few FETCHes of rows: a prefetch
// thread runs the next FETCH while the job's pipeline converts and fingerprints the last one.
#include <simdup/json.hpp>
#include <simdup/postgres.hpp>

#include "io/postgres_common.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace simdup {
namespace {

constexpr const char* kCursor = "simdup_cursor";

// Type OIDs (pg_type.dat) that decide how the time column is selected.
constexpr pqxx::oid kInt2 = 21, kInt4 = 23, kInt8 = 20, kNumeric = 1700, kFloat4 = 700,
                    kFloat8 = 701, kDate = 1082, kTimestamp = 1114, kTimestamptz = 1184, kText = 25,
                    kVarchar = 1043, kBpchar = 1042;

bool is_number_type(pqxx::oid t) {
  return t == kInt2 || t == kInt4 || t == kInt8 || t == kNumeric || t == kFloat4 || t == kFloat8;
}

// Types a time column may have: a point in time, unix seconds, or text holding ISO-8601.
bool is_time_type(pqxx::oid t) {
  return t == kTimestamp || t == kTimestamptz || t == kDate || is_number_type(t) || t == kText ||
         t == kVarchar || t == kBpchar;
}

// The default names of the optional columns: those of the file fields (reader.hpp).
const postgres_source_options kDefaults;

enum class time_kind { none, seconds, text };

}  // namespace

struct postgres_records::impl {
  postgres_source_options options;
  std::string description;
  std::unique_ptr<pqxx::connection> conn;
  std::unique_ptr<
      pqxx::transaction<pqxx::isolation_level::repeatable_read, pqxx::readwrite_policy::read_only>>
      txn;
  std::string select;  // the cursor's query
  bool id_is_number = false;
  time_kind time = time_kind::none;
  bool cursor_open = false;
  record_source* active = nullptr;  // the cursor object open() returned, while it lives
};

namespace {

class postgres_cursor final : public record_source {
 public:
  postgres_cursor(postgres_records::impl& db, uint64_t skipped)
      : db_(db), row_number_(skipped), fetched_rows_(skipped) {
    db_.active = this;
    fetcher_ = std::thread([this] { fetch_loop(); });
  }
  ~postgres_cursor() override {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    fetcher_.join();  // waits for at most the FETCH in flight
    db_.active = nullptr;
  }
  postgres_cursor(const postgres_cursor&) = delete;
  postgres_cursor& operator=(const postgres_cursor&) = delete;

  read_status next(document& doc, error_info& error) override {
    if (failed_) {
      error = *failed_;
      return read_status::failed;
    }
    if (next_row_ >= rows_.size()) {
      if (done_) return read_status::end;
      if (db_.options.cancel && db_.options.cancel->load(std::memory_order_relaxed)) {
        failed_ = make_error(errc::io_error, "interrupted: stopped before the end");
        error = *failed_;
        return read_status::failed;
      }
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !ready_.empty() || fetch_done_; });
      if (ready_.empty()) {
        done_ = true;
        if (fetch_error_) {
          failed_ = fetch_error_;
          error = *failed_;
          return read_status::failed;
        }
        return read_status::end;
      }
      rows_ = std::move(ready_.front());
      ready_.pop_front();
      next_row_ = 0;
      lock.unlock();
      changed_.notify_all();
    }
    const pqxx::row row = rows_[static_cast<pqxx::result::size_type>(next_row_++)];
    ++row_number_;
    return convert(row, doc, error);
  }

  std::string_view last_skip_reason() const noexcept override { return skip_reason_; }
  const reader_stats& stats() const noexcept override { return stats_; }

 private:
  // The prefetch thread: the next FETCH runs on the server while the job converts and
  // fingerprints the rows of the last one. It alone uses the connection while the cursor lives.
  void fetch_loop() {
    const std::string fetch =
        "FETCH FORWARD " + std::to_string(db_.options.fetch_rows) + " FROM " + kCursor;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return ready_.size() < kPrefetch || closing_; });
        if (closing_) return;
      }
      pqxx::result rows;
      std::optional<error_info> failure;
      try {
        rows = db_.txn->exec(fetch);
      } catch (const std::exception& e) {
        failure = detail::pg_error(
            e, db_.description + ": reading after row " + std::to_string(fetched_rows_));
      }
      fetched_rows_ += rows.size();
      // A short batch is the last: no FETCH round trip just to learn the cursor is exhausted.
      const bool last = failure || rows.size() < db_.options.fetch_rows;
      {
        std::lock_guard lock(mutex_);
        if (!rows.empty()) ready_.push_back(std::move(rows));
        fetch_error_ = std::move(failure);
        fetch_done_ = last;
      }
      changed_.notify_all();
      if (last) return;
    }
  }

  read_status bad(error_info& error, const char* reason, std::string what) {
    skip_reason_ = reason;
    ++stats_.bad_records;
    error = make_error(errc::invalid_input,
                       db_.description + " row " + std::to_string(row_number_) + ": " + what);
    return read_status::bad_record;
  }

  read_status convert(const pqxx::row& row, document& doc, error_info& error) {
    const postgres_source_options& o = db_.options;
    doc.source = db_.description;
    doc.line = row_number_;
    doc.offset = 0;
    doc.format = input_format::jsonl;
    doc.id_generated = false;
    doc.id_is_number = db_.id_is_number;
    doc.text_is_html = false;
    doc.features.reset();
    doc.invalid_utf8 = 0;
    doc.time.reset();
    doc.raw.clear();
    const pqxx::field id = row[0];
    const pqxx::field text = row[1];
    if (id.is_null()) {
      doc.id.clear();
      return bad(error, "null_id", "id column \"" + o.id_column + "\" is NULL");
    }
    doc.id.assign(id.c_str(), id.size());
    const std::string where = " (id " + doc.id + ")";
    if (text.is_null()) {
      return bad(error, "null_text", "text column \"" + o.text_column + "\" is NULL" + where);
    }
    if (text.size() == 0) {
      return bad(error, "empty_text", "text column \"" + o.text_column + "\" is empty" + where);
    }
    doc.text.assign(text.c_str(), text.size());
    int column = 2;
    const auto optional_text = [&](const std::string& name, std::string& out) {
      out.clear();
      if (name.empty()) return;
      const pqxx::field f = row[column++];
      if (!f.is_null()) out.assign(f.c_str(), f.size());
    };
    optional_text(o.url_column, doc.url);
    optional_text(o.title_column, doc.title);
    if (db_.time != time_kind::none) {
      const pqxx::field f = row[column++];
      if (!f.is_null()) {
        const std::string_view value(f.c_str(), f.size());
        if (db_.time == time_kind::seconds) {
          int64_t seconds = 0;
          if (!f.to(seconds)) {
            return bad(error, "invalid_time",
                       "time column \"" + o.time_column + "\": not a number" + where);
          }
          doc.time = seconds;
        } else {
          auto parsed = parse_iso8601(value);
          if (!parsed) {
            return bad(error, "invalid_time",
                       "time column \"" + o.time_column + "\": " + parsed.error().message + where);
          }
          doc.time = *parsed;
        }
      }
    }
    stats_.bytes += doc.text.size();
    ++stats_.records;
    if (o.json_raw) {
      json::writer w(doc.raw);
      w.begin_object().key("id").id(doc.id, doc.id_is_number).key("text").value(doc.text);
      if (!o.url_column.empty()) w.key("url").value(doc.url);
      if (!o.title_column.empty()) w.key("title").value(doc.title);
      if (doc.time) w.key("time").value(*doc.time);
      w.end_object();
    } else {
      // Kept-record files are not written; raw only sizes the pipeline's chunks.
      doc.raw.clear();
    }
    return read_status::record;
  }

  static constexpr std::size_t kPrefetch = 2;  // FETCH results waiting to be converted

  postgres_records::impl& db_;
  pqxx::result rows_;
  uint64_t next_row_ = 0;
  uint64_t row_number_;    // 1-based number of the last row converted
  uint64_t fetched_rows_;  // rows fetched (and skipped) so far; the prefetch thread's
  bool done_ = false;
  std::thread fetcher_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<pqxx::result> ready_;         // guarded by mutex_
  bool fetch_done_ = false;                // guarded by mutex_
  bool closing_ = false;                   // guarded by mutex_
  std::optional<error_info> fetch_error_;  // guarded by mutex_
  std::optional<error_info> failed_;
  std::string skip_reason_;
  reader_stats stats_;
};

}  // namespace

postgres_records::postgres_records(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
postgres_records::~postgres_records() = default;

const std::string& postgres_records::description() const noexcept {
  return impl_->description;
}

const postgres_source_options& postgres_records::columns() const noexcept {
  return impl_->options;
}

result<std::unique_ptr<postgres_records>> postgres_records::connect(
    const postgres_source_options& options) {
  if (options.table.empty() == options.query.empty()) {
    return make_error(errc::invalid_argument, "give exactly one of --table and --query");
  }
  if (options.id_column.empty() || options.text_column.empty()) {
    return make_error(errc::invalid_argument, "--id-column and --text-column must not be empty");
  }
  if (options.fetch_rows == 0) return make_error(errc::invalid_argument, "fetch_rows must be > 0");
  if (auto st = check_connection_string(options.connection, "--from"); !st) return st.error();
  auto d = std::make_unique<impl>();
  d->options = options;
  d->description = options.table.empty() ? "query" : "table " + options.table;
  auto conn = detail::pg_connect(options.connection, "simdup source", "--from");
  if (!conn) return std::move(conn).error();
  d->conn = std::move(conn).value();
  const std::string base = detail::source_query(options);
  try {
    // The server converts other encodings to UTF-8; SQL_ASCII stores bytes it cannot convert.
    const std::string encoding =
        pqxx::nontransaction(*d->conn).exec("SHOW server_encoding")[0][0].c_str();
    if (encoding == "SQL_ASCII") {
      return make_error(errc::invalid_input,
                        "--from: the database's encoding is SQL_ASCII, whose texts cannot be "
                        "converted to UTF-8; recreate it with ENCODING 'UTF8' (or any real "
                        "encoding)");
    }
    d->conn->set_client_encoding("UTF8");
    // Every scan starts at the table's first page, so a second cursor reads the same order.
    pqxx::nontransaction(*d->conn).exec("SET synchronize_seqscans = off");
    d->txn = std::make_unique<decltype(d->txn)::element_type>(*d->conn, "simdup source");
  } catch (const std::exception& e) {
    return detail::pg_error(e, "--from");
  }
  pqxx::result probe;
  try {
    pqxx::subtransaction sub(*d->txn, "probe");
    probe = sub.exec("SELECT * FROM (" + base + ") AS simdup_q LIMIT 0");
    sub.commit();
  } catch (const std::exception& e) {
    return detail::pg_error(e, options.table.empty() ? "--query" : "--table " + options.table);
  }
  std::vector<std::string> names;
  for (pqxx::row::size_type i = 0; i < probe.columns(); ++i)
    names.emplace_back(probe.column_name(i));
  const auto find = [&](const std::string& name) -> std::optional<pqxx::row::size_type> {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return std::nullopt;
    return static_cast<pqxx::row::size_type>(it - names.begin());
  };
  // Every column named below is read, in this order (convert() reads the row so); the
  // optional ones the source lacks under their default names are cleared first.
  postgres_source_options& columns = d->options;
  for (const auto& [name, default_name] :
       {std::pair<std::string*, const std::string*>{&columns.url_column, &kDefaults.url_column},
        {&columns.title_column, &kDefaults.title_column},
        {&columns.time_column, &kDefaults.time_column}}) {
    if (*name != *default_name) continue;
    const auto column = find(*name);
    if (!column || (name == &columns.time_column && !is_time_type(probe.column_type(*column)))) {
      name->clear();
    }
  }
  std::string select = "SELECT ";
  for (const auto& [option, name] :
       {std::pair<const char*, const std::string*>{"--id-column", &columns.id_column},
        {"--text-column", &columns.text_column},
        {"--url-column", &columns.url_column},
        {"--title-column", &columns.title_column},
        {"--time-column", &columns.time_column}}) {
    if (name->empty()) continue;
    const auto column = find(*name);
    if (!column) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      return make_error(errc::invalid_argument, std::string(option) + " " + *name + ": " +
                                                    d->description + " has no column \"" + *name +
                                                    "\" (its columns: " + list + ")");
    }
    const std::string q = "q." + detail::quote_identifier(*name);
    const pqxx::oid type = probe.column_type(*column);
    if (name == &columns.id_column)
      d->id_is_number = type == kInt2 || type == kInt4 || type == kInt8;
    if (select.size() > 7) select += ", ";
    if (name == &columns.time_column) {
      if (type == kTimestamp || type == kTimestamptz || type == kDate) {
        d->time = time_kind::seconds;
        select += "floor(extract(epoch FROM " + q + "))::bigint";
      } else if (is_number_type(type)) {
        d->time = time_kind::seconds;
        select += q + "::bigint";
      } else {
        d->time = time_kind::text;
        select += q + "::text";
      }
    } else {
      select += q + "::text";
    }
  }
  d->select = select + " FROM (" + base + ") AS q";
  return std::unique_ptr<postgres_records>(new postgres_records(std::move(d)));
}

result<std::unique_ptr<record_source>> postgres_records::open(uint64_t skip_rows) {
  impl& d = *impl_;
  if (d.active) {
    return make_error(errc::internal, d.description + ": a cursor is still open");
  }
  try {
    if (d.cursor_open) d.txn->exec(std::string("CLOSE ") + kCursor);
    d.cursor_open = false;
    d.txn->exec(std::string("DECLARE ") + kCursor + " NO SCROLL CURSOR FOR " + d.select);
    d.cursor_open = true;
    if (skip_rows > 0) d.txn->exec("MOVE FORWARD " + std::to_string(skip_rows) + " IN " + kCursor);
  } catch (const std::exception& e) {
    return detail::pg_error(e, d.description + ": opening a cursor");
  }
  return std::unique_ptr<record_source>(new postgres_cursor(d, skip_rows));
}

namespace detail {

std::string source_query(const postgres_source_options& o) {
  if (!o.table.empty()) return "SELECT * FROM " + quote_table(o.table);
  std::string q = o.query;
  while (!q.empty() && (q.back() == ';' || q.back() == ' ' || q.back() == '\n' || q.back() == '\t'))
    q.pop_back();
  return q;
}

}  // namespace detail
}  // namespace simdup
