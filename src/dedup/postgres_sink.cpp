// PostgreSQL sinks: decisions and fingerprints go out with COPY in batches, one transaction
// per batch, each row tagged with the run name. The rows a run has committed are its progress:
// a resumed run counts them and skips that many leading documents, so nothing is written
// twice (the id primary key would refuse it anyway) and nothing after them is lost.
#include <simdup/postgres_sink.hpp>

#include "io/postgres_common.hpp"

#include <pqxx/tablewriter>

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace simdup {
namespace {

// COPY text format: backslash escapes for the bytes that delimit fields and rows.
void append_copy_field(std::string& out, std::string_view value) {
  for (const char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out.push_back(c);
    }
  }
}

constexpr const char* kNull = "\\N";

// Rows buffered as COPY text and written one transaction per batch.
class copy_batches {
 public:
  copy_batches(const postgres_sink_options& o, std::string columns, std::string what)
      : options_(o),
        table_(detail::quote_table(o.table)),
        columns_(std::move(columns)),
        what_(std::move(what)) {}

  /// Connects, creates the table (`create_columns`) if missing, and either deletes the run's
  /// earlier rows or (resume) counts them.
  status open(const std::string& create_columns) {
    if (options_.table.empty()) return make_error(errc::invalid_argument, "--to-table is empty");
    if (options_.batch_rows == 0) return make_error(errc::invalid_argument, "batch_rows is 0");
    if (auto st = check_connection_string(options_.connection, "--to"); !st) return st;
    auto conn = detail::pg_connect(options_.connection, "simdup sink", "--to");
    if (!conn) return std::move(conn).error();
    conn_ = std::move(conn).value();
    try {
      conn_->set_client_encoding("UTF8");
      pqxx::work w(*conn_, "simdup setup");
      w.exec("CREATE TABLE IF NOT EXISTS " + table_ + " (" + create_columns + ")");
      if (options_.resume) {
        committed_ = w.exec("SELECT count(*) FROM " + table_ +
                            " WHERE run = " + detail::quote_literal(w, options_.run))[0][0]
                         .as<uint64_t>();
      } else {
        w.exec("DELETE FROM " + table_ + " WHERE run = " + detail::quote_literal(w, options_.run));
      }
      w.commit();
    } catch (const std::exception& e) {
      return detail::pg_error(e, what_ + " " + options_.table);
    }
    return {};
  }

  /// Rows of this run in the table (before the first batch: what open() counted).
  uint64_t committed() {
    std::lock_guard lock(mutex_);
    return committed_;
  }

  /// True when the run's row `id` is already in the table (the resume check).
  result<bool> has_row(std::string_view id) {
    try {
      pqxx::nontransaction n(*conn_);
      return !n.exec("SELECT 1 FROM " + table_ +
                     " WHERE id = " + detail::quote_literal(n, std::string(id)) +
                     " AND run = " + detail::quote_literal(n, options_.run))
                  .empty();
    } catch (const std::exception& e) {
      return detail::pg_error(e, what_ + " " + options_.table);
    }
  }

  /// The buffer the caller appends one row to (fields without the run, no newline).
  std::string& row() { return buffer_; }
  /// Ends the row the caller appended; hands a full batch to the writer thread.
  status end_row() {
    buffer_.push_back('\t');
    append_copy_field(buffer_, options_.run);
    buffer_.push_back('\n');
    if (++rows_ >= options_.batch_rows) return hand_off();
    return {};
  }

  /// Writes what is buffered and waits until every batch is committed.
  status flush() {
    if (auto st = hand_off(); !st) return st;
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return !pending_ && !writing_; });
    if (error_) return *error_;
    return {};
  }

  ~copy_batches() {
    if (!writer_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    work_.notify_all();
    writer_.join();
  }

 private:
  // The batch goes to the writer thread, which COPYs it while the caller fills the next one;
  // at most one batch waits, so memory holds three at most.
  status hand_off() {
    if (rows_ == 0) return {};
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return !pending_ || error_; });
    if (error_) return *error_;
    pending_ = batch{std::move(buffer_), rows_};
    buffer_ = std::string();
    rows_ = 0;
    lock.unlock();
    if (!writer_.joinable()) writer_ = std::thread([this] { write_loop(); });
    work_.notify_all();
    return {};
  }

  void write_loop() {
    for (;;) {
      batch b;
      {
        std::unique_lock lock(mutex_);
        work_.wait(lock, [&] { return pending_ || closing_; });
        if (!pending_) return;
        b = std::move(*pending_);
        pending_.reset();
        writing_ = true;
      }
      idle_.notify_all();
      std::optional<error_info> failure = write(b);
      {
        std::lock_guard lock(mutex_);
        writing_ = false;
        if (failure) {
          error_ = std::move(failure);
          pending_.reset();
        } else {
          committed_ += b.rows;
        }
      }
      idle_.notify_all();
      if (error_) return;  // set only by this thread
    }
  }

  struct batch {
    std::string lines;
    uint64_t rows = 0;
  };

  std::optional<error_info> write(batch& b) {
    try {
      pqxx::work w(*conn_, "simdup batch");
      {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        // tablewriter is libpqxx 6's COPY FROM STDIN with raw lines (stream_to hides them);
        // the last newline is its to add.
        pqxx::tablewriter copy(w, table_ + " (" + columns_ + ")");
#pragma GCC diagnostic pop
        b.lines.pop_back();
        copy.write_raw_line(b.lines);
        copy.complete();
      }
      w.commit();
    } catch (const std::exception& e) {
      const uint64_t first = committed_ + 1;  // committed_ changes only on this thread
      return detail::pg_error(e, what_ + " " + options_.table + " (rows " + std::to_string(first) +
                                     " to " + std::to_string(first + b.rows - 1) + ")");
    }
    return std::nullopt;
  }

  postgres_sink_options options_;
  std::string table_;
  std::string columns_;
  std::string what_;
  std::unique_ptr<pqxx::connection> conn_;  // the writer thread's alone once it runs
  std::string buffer_;
  uint64_t rows_ = 0;  // rows in buffer_
  std::thread writer_;
  std::mutex mutex_;
  std::condition_variable work_;     // pending_ or closing_ set
  std::condition_variable idle_;     // pending_ taken, or a batch done
  std::optional<batch> pending_;     // guarded by mutex_
  bool writing_ = false;             // guarded by mutex_
  bool closing_ = false;             // guarded by mutex_
  std::optional<error_info> error_;  // guarded by mutex_
  uint64_t committed_ = 0;           // rows of this run in the table; guarded by mutex_
};

class postgres_decisions final : public decision_sink {
 public:
  explicit postgres_decisions(const postgres_sink_options& o)
      : copy_(o, "id, keep, cluster, duplicate_of, distance, layer, jaccard, run",
              "writing decisions to") {}

  status open() {
    if (auto st = copy_.open("id text PRIMARY KEY, keep bool NOT NULL, cluster bigint NOT NULL, "
                             "duplicate_of text, distance int, layer text, jaccard real, "
                             "run text NOT NULL");
        !st)
      return st;
    skip_ = copy_.committed();
    return {};
  }

  status write(uint32_t ordinal, std::string_view id, const dedup_decision& d,
               std::string_view representative_id) override {
    if (ordinal < skip_) {
      // A resumed run: the last committed row must be this document, else the source changed.
      if (ordinal + 1 == skip_) {
        auto found = copy_.has_row(id);
        if (!found) return std::move(found).error();
        if (!*found) return source_changed(ordinal, id);
      }
      return {};
    }
    std::string& out = copy_.row();
    append_copy_field(out, id);
    const bool kept = d.kept(ordinal);
    out += kept ? "\tt\t" : "\tf\t";
    // A document dropped against an earlier run is its own cluster here (its cluster is there).
    out += std::to_string(d.against != 0 ? ordinal : d.representative);
    out.push_back('\t');
    if (kept) {
      out += kNull;
    } else {
      append_copy_field(out, representative_id);
    }
    out.push_back('\t');
    out += d.distance >= 0 ? std::to_string(d.distance) : kNull;
    out.push_back('\t');
    out += kept ? kNull : layer_name(d.layer);
    out.push_back('\t');
    if (std::isnan(d.jaccard)) {
      out += kNull;
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(d.jaccard));
      out += buf;
    }
    return copy_.end_row();
  }

  status finish() override { return copy_.flush(); }

 private:
  status source_changed(uint32_t ordinal, std::string_view id) {
    return make_error(errc::invalid_input,
                      "--resume: document " + std::to_string(ordinal + 1) + " (id " +
                          std::string(id) +
                          ") is not among the run's committed rows: the source changed since the "
                          "interrupted run; run again without --resume");
  }

  copy_batches copy_;
  uint64_t skip_ = 0;
};

}  // namespace

result<std::unique_ptr<decision_sink>> open_postgres_decision_sink(
    const postgres_sink_options& options) {
  auto sink = std::make_unique<postgres_decisions>(options);
  if (auto st = sink->open(); !st) return st.error();
  return std::unique_ptr<decision_sink>(std::move(sink));
}

result<uint64_t> copy_kept_rows(const postgres_sink_options& options,
                                const std::string& decisions_table,
                                const postgres_source_options& source) {
  if (auto st = check_connection_string(options.connection, "--to"); !st) return st.error();
  auto conn = detail::pg_connect(options.connection, "simdup sink", "--to");
  if (!conn) return std::move(conn).error();
  const std::string kept = detail::quote_table(options.table);
  const std::string decisions = detail::quote_table(decisions_table);
  const std::string id = "q." + detail::quote_identifier(source.id_column);
  // Appended, not "(" + ...: GCC 12 warns falsely (-Wrestrict) on that concatenation.
  std::string rows = "(";
  rows += detail::source_query(source);
  rows += ") AS q";
  try {
    pqxx::work w(**conn, "simdup kept rows");
    const std::string run = detail::quote_literal(w, options.run);
    w.exec("CREATE TABLE IF NOT EXISTS " + kept + " AS SELECT q.* FROM " + rows + " WITH NO DATA");
    // The run's earlier kept rows go first, so a re-run replaces them.
    w.exec("DELETE FROM " + kept + " AS q USING " + decisions + " AS d WHERE d.run = " + run +
           " AND d.id = " + id + "::text");
    const pqxx::result r =
        w.exec("INSERT INTO " + kept + " SELECT q.* FROM " + rows + " JOIN " + decisions +
               " AS d ON d.id = " + id + "::text WHERE d.run = " + run + " AND d.keep");
    w.commit();
    return static_cast<uint64_t>(r.affected_rows());
  } catch (const std::exception& e) {
    return detail::pg_error(e, "writing kept rows to " + options.table);
  }
}

struct postgres_fingerprint_sink::impl {
  explicit impl(const postgres_sink_options& o)
      : copy(o, "id, fingerprint, status, run", "writing fingerprints to") {}
  copy_batches copy;
};

postgres_fingerprint_sink::postgres_fingerprint_sink(std::unique_ptr<impl> p)
    : impl_(std::move(p)) {}
postgres_fingerprint_sink::~postgres_fingerprint_sink() = default;

result<std::unique_ptr<postgres_fingerprint_sink>> postgres_fingerprint_sink::open(
    const postgres_sink_options& options) {
  auto d = std::make_unique<impl>(options);
  if (auto st = d->copy.open("id text PRIMARY KEY, fingerprint bigint, status text NOT NULL, "
                             "run text NOT NULL");
      !st)
    return st.error();
  return std::unique_ptr<postgres_fingerprint_sink>(new postgres_fingerprint_sink(std::move(d)));
}

uint64_t postgres_fingerprint_sink::committed_rows() const noexcept {
  return impl_->copy.committed();
}

status postgres_fingerprint_sink::write(std::string_view id, std::optional<uint64_t> fingerprint,
                                        std::string_view fingerprint_status) {
  std::string& out = impl_->copy.row();
  append_copy_field(out, id);
  out.push_back('\t');
  // Two's complement: bigint holds the unsigned value's bits (docs/databases.md converts).
  out += fingerprint ? std::to_string(static_cast<int64_t>(*fingerprint)) : kNull;
  out.push_back('\t');
  append_copy_field(out, fingerprint_status);
  return impl_->copy.end_row();
}

status postgres_fingerprint_sink::finish() {
  return impl_->copy.flush();
}

}  // namespace simdup
