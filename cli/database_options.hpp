// The PostgreSQL flags of `simdup dedup` and `simdup fingerprint` (--from/--table/--query/
// --*-column, --to/--to-table/--to-kept-table/--run/--resume), defined once with their help,
// and the connections they open (docs/databases.md).
#pragma once

#include <simdup/dedup_job.hpp>
#include <simdup/postgres_sink.hpp>

#include <CLI/CLI.hpp>

#include <atomic>
#include <memory>
#include <string>

namespace simdup::cli {

struct database_options {
  postgres_source_options source;  ///< --from (connection), --table, --query, --*-column
  postgres_sink_options sink;      ///< --to (connection), --to-table, --run, --resume
  std::string kept_table;          ///< --to-kept-table (dedup)

  bool reads_database() const { return !source.connection.empty(); }
  bool writes_database() const { return !sink.connection.empty(); }
  /// Cross-option checks: --table/--query only with --from, --to-table with --to, no
  /// passwords in the connection strings. `has_inputs`: INPUT files were given too.
  /// `resume_alone`: --resume means something without --to too (dedup: the --out run).
  status validate(bool has_inputs, bool resume_alone = false) const;
};

/// Adds --from, --table, --query, --id-column, --text-column, --url-column, --title-column,
/// --time-column, --fetch-rows.
void add_database_source_options(CLI::App& cmd, database_options& opts);
/// Adds --to, --to-table, --run, --resume, --batch-rows, and with `kept` --to-kept-table.
void add_database_sink_options(CLI::App& cmd, database_options& opts, bool kept);

/// The database side of a dedup run: opens the source and the decisions sink the options
/// name and wires them into `job`; after the job, finish() fills the kept table.
class dedup_database {
 public:
  /// `json_raw`: kept rows are also written to files (--out).
  status open(const database_options& opts, dedup_job_options& job, bool json_raw,
              const std::atomic<bool>* stop);
  /// Writes --to-kept-table (when given); returns the rows written there.
  result<uint64_t> finish(const database_options& opts) const;

 private:
  /// Turns off the layers whose column the source lacks (a default name it has not), saying
  /// so on stderr.
  void drop_missing_columns(const postgres_source_options& asked, dedup_job_options& job) const;

  std::unique_ptr<postgres_records> records_;
  std::unique_ptr<decision_sink> decisions_;
};

}  // namespace simdup::cli
