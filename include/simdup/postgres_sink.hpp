// Writing to PostgreSQL: the dedup job's decisions, the kept rows and fingerprints
// (docs/databases.md). Reading is in postgres.hpp.
#pragma once

#include <simdup/decision_sink.hpp>
#include <simdup/error.hpp>
#include <simdup/postgres.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace simdup {

struct postgres_sink_options {
  /// libpq connection string or URI (no password), as for the source.
  std::string connection;
  /// The table to write ("name" or "schema.name"); created when missing.
  std::string table;
  /// The run name stored with every row. A run without `resume` first deletes the rows an
  /// earlier run of this name wrote (idempotent); with `resume` it keeps them and skips as
  /// many leading documents as the table already holds for the run.
  std::string run = "default";
  bool resume = false;
  /// Rows per COPY transaction: a crash loses at most the batch in flight.
  std::size_t batch_rows = 20000;
};

/// Writes dedup decisions, one row per document: (id text primary key, keep bool, cluster
/// bigint, duplicate_of text, distance int, layer text, jaccard real, run text).
result<std::unique_ptr<decision_sink>> open_postgres_decision_sink(
    const postgres_sink_options& options);

/// After the decisions of `options.run` are in `decisions_table`: replaces the rows of that
/// run in `kept_table` by the kept source rows, all columns (INSERT ... SELECT on the server,
/// one transaction; the table is created like the source when missing). The source table or
/// query must be reachable from `options.connection` (the same database). Returns the rows
/// inserted.
result<uint64_t> copy_kept_rows(const postgres_sink_options& options,
                                const std::string& decisions_table,
                                const postgres_source_options& source);

/// Fingerprints, one row per document: (id text primary key, fingerprint bigint, status
/// text, run text). fingerprint is the unsigned 64-bit value's two's complement (NULL when
/// the document has none).
class postgres_fingerprint_sink {
 public:
  static result<std::unique_ptr<postgres_fingerprint_sink>> open(
      const postgres_sink_options& options);
  /// Rows a resumed run finds already written (and skips); 0 without resume.
  uint64_t committed_rows() const noexcept;
  /// One document's row, in input order.
  status write(std::string_view id, std::optional<uint64_t> fingerprint, std::string_view status);
  status finish();

  ~postgres_fingerprint_sink();
  struct impl;

 private:
  explicit postgres_fingerprint_sink(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
