#include "database_options.hpp"

#include <cstdio>
#include <string>

namespace simdup::cli {

status database_options::validate(bool has_inputs, bool resume_alone) const {
  const bool from = reads_database();
  if (from && has_inputs) {
    return make_error(errc::invalid_argument, "INPUT files and --from cannot be combined");
  }
  if (from && source.table.empty() == source.query.empty()) {
    return make_error(errc::invalid_argument, "--from needs exactly one of --table and --query");
  }
  if (!from && (!source.table.empty() || !source.query.empty())) {
    return make_error(errc::invalid_argument, "--table and --query need --from");
  }
  if (writes_database() && sink.table.empty()) {
    return make_error(errc::invalid_argument, "--to needs --to-table");
  }
  if (resume_alone && sink.resume && reads_database() && !writes_database()) {
    return make_error(errc::invalid_argument,
                      "--resume with --from continues a --to run; a run reading a database "
                      "starts over");
  }
  if (!writes_database() &&
      (!sink.table.empty() || !kept_table.empty() || (sink.resume && !resume_alone))) {
    return make_error(errc::invalid_argument, "--to-table, --to-kept-table and --resume need --to");
  }
  if (!kept_table.empty() && !from) {
    return make_error(errc::invalid_argument,
                      "--to-kept-table copies rows of the --from table or query; give --from");
  }
  if (from) {
    if (auto st = check_connection_string(source.connection, "--from"); !st) return st;
  }
  if (writes_database()) {
    if (auto st = check_connection_string(sink.connection, "--to"); !st) return st;
  }
  return {};
}

void add_database_source_options(CLI::App& cmd, database_options& opts) {
  const char* g = "PostgreSQL source (docs/databases.md)";
  postgres_source_options& s = opts.source;
  cmd.add_option("--from", s.connection,
                 "Read documents from PostgreSQL instead of INPUT files: a libpq URI or "
                 "connection string (postgresql:///db, 'host=/run/db dbname=db'); the password "
                 "comes from PGPASSWORD, ~/.pgpass or a service file, never from here")
      ->group(g);
  cmd.add_option("--table", s.table, "Source table (name or schema.name)")->group(g);
  cmd.add_option("--query", s.query, "Source query (a SELECT) instead of --table")->group(g);
  cmd.add_option("--id-column", s.id_column, "Column of the document id (any type)")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--text-column", s.text_column,
                 "Column of the document text (NULL or empty: a bad record)")
      ->capture_default_str()
      ->group(g);
  // As the file fields: the default names are read where the source has them.
  cmd.add_option("--url-column", s.url_column,
                 "URL column (the url layer); the default is read if the source has it, '' "
                 "reads none")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--title-column", s.title_column,
                 "Title column (the title layer); the default is read if the source has it")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--time-column", s.time_column,
                 "Time column: timestamp, date, unix seconds or ISO-8601 text (--keep newest); "
                 "the default is read if the source has it")
      ->capture_default_str()
      ->group(g);
  cmd.add_option("--fetch-rows", s.fetch_rows, "Rows per FETCH from the server-side cursor")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 24))
      ->capture_default_str()
      ->group(g);
}

void add_database_sink_options(CLI::App& cmd, database_options& opts, bool kept) {
  const char* g = "PostgreSQL output (docs/databases.md)";
  postgres_sink_options& s = opts.sink;
  cmd.add_option("--to", s.connection,
                 "Write results to PostgreSQL: a libpq URI or connection string (no password)")
      ->group(g);
  cmd.add_option("--to-table", s.table, "Table for one row per document (created when missing)")
      ->group(g);
  if (kept) {
    cmd.add_option("--to-kept-table", opts.kept_table,
                   "Also copy the kept source rows, all columns, to this table (same database "
                   "as --from)")
        ->group(g);
  }
  cmd.add_option("--run", s.run,
                 "Run name stored in every row; a new run of the same name replaces its rows")
      ->capture_default_str()
      ->group(g);
  cmd.add_flag("--resume", s.resume,
               kept ? "Continue an interrupted run: with --out, the run for DIR that was killed, "
                      "stopped or failed (a full disk), from the journal in its DIR.tmp-* "
                      "directory (what it read and signed, its decisions once made; same "
                      "settings and inputs; starts from the beginning when there is nothing to "
                      "continue); with --to, the run of this name after its last committed batch"
                    : "Continue an interrupted run of this name after its last committed batch")
      ->group(kept ? "Dedup" : g);  // dedup: mostly the --out run's
  cmd.add_option("--batch-rows", s.batch_rows, "Rows per COPY transaction")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26))
      ->capture_default_str()
      ->group(g);
}

void dedup_database::drop_missing_columns(const postgres_source_options& asked,
                                          dedup_job_options& job) const {
  const postgres_source_options& read = records_->columns();
  const auto note = [&](const std::string& what) {
    // -q prints errors only; summary.json's layers still show what ran.
    if (job.progress != progress_style::none) {
      std::fprintf(stderr, "simdup dedup: note: %s\n", what.c_str());
    }
  };
  const auto missing = [&](const std::string& column, const char* flag) {
    return column.empty() ? std::string(flag) + " is empty"
                          : records_->description() + " has no column \"" + column + "\"";
  };
  // A layer without its column would compare nothing and still be listed as run.
  if (job.dedup.url_layer && read.url_column.empty()) {
    job.dedup.url_layer = false;
    note(missing(asked.url_column, "--url-column") +
         ": the url layer does not run (name the URL column with --url-column)");
  }
  if (job.dedup.title_layer && read.title_column.empty()) {
    job.dedup.title_layer = false;
    note(missing(asked.title_column, "--title-column") +
         ": the title layer does not run (name the title column with --title-column)");
  }
  if (job.dedup.keep.rule == keep_rule::newest && read.time_column.empty()) {
    note(missing(asked.time_column, "--time-column") +
         " (or not a time): --keep newest sees no times (name the time column with "
         "--time-column)");
  }
}

status dedup_database::open(const database_options& opts, dedup_job_options& job, bool json_raw,
                            const std::atomic<bool>* stop) {
  if (opts.reads_database()) {
    postgres_source_options source = opts.source;
    source.json_raw = json_raw;
    source.cancel = stop;
    auto records = postgres_records::connect(source);
    if (!records) return std::move(records).error();
    records_ = std::move(records).value();
    job.open_source = [this] { return records_->open(); };
    job.source_name = records_->description();
    drop_missing_columns(opts.source, job);
  }
  if (opts.writes_database()) {
    auto sink = open_postgres_decision_sink(opts.sink);
    if (!sink) return std::move(sink).error();
    decisions_ = std::move(sink).value();
    job.decisions = decisions_.get();
  }
  return {};
}

result<uint64_t> dedup_database::finish(const database_options& opts) const {
  if (opts.kept_table.empty()) return uint64_t{0};
  postgres_sink_options kept = opts.sink;
  kept.table = opts.kept_table;
  return copy_kept_rows(kept, opts.sink.table, opts.source);
}

}  // namespace simdup::cli
