// Parquet through DuckDB's C API (docs/formats.md#parquet): the reader of .parquet inputs
// (parquet_reader.cpp, behind format_reader) and the writer of the dedup job's Parquet outputs
// (parquet_writer.cpp). DuckDB reads and writes the files; simdup never decodes Parquet itself.
// Built only with SIMDUP_WITH_PARQUET; without it every entry point refuses with
// errc::unsupported and a message saying how to get a build that reads Parquet.
#pragma once

#include <simdup/error.hpp>
#include <simdup/reader.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// True when this build reads and writes Parquet.
bool parquet_supported() noexcept;

/// errc::unsupported: "`what`: this simdup was built without Parquet support ...".
error_info parquet_unsupported(std::string_view what);

/// One row's decision, as the simdup_* columns of an annotated Parquet output carry it (the
/// same six values as the CSV and JSONL annotations).
struct parquet_note {
  bool keep = true;
  uint64_t cluster = 0;
  std::string_view duplicate_of;  ///< empty (null) when kept
  int distance = -1;              ///< -1: null
  std::string_view layer;
  double jaccard = 0;  ///< NaN: null
};

/// The rows of Parquet inputs that go into one output file: kept.parquet (the kept rows) or
/// annotated.parquet (every record with its decision). The rows are collected while the job
/// writes its other outputs and written at the end by DuckDB, which reads the inputs again:
/// every column of the input, rows in input order, inputs in the order they were first added.
/// Memory: 16 bytes per run of consecutive kept rows; annotated, about 40 bytes a row.
class parquet_rows {
 public:
  explicit parquet_rows(bool annotated);
  ~parquet_rows();
  parquet_rows(parquet_rows&&) noexcept;
  parquet_rows& operator=(parquet_rows&&) noexcept;

  /// Row `row` (0-based) of the Parquet file `path`; `note` is required when annotated and
  /// ignored otherwise. Rows of one input come in increasing order.
  void add(const std::string& path, uint64_t row, const parquet_note* note);
  /// Writes `dest`: the selected rows of every input (schemas are unified by column name when
  /// there are several), snappy-compressed; annotated, with the columns simdup_keep,
  /// simdup_cluster, simdup_duplicate_of, simdup_distance, simdup_layer, simdup_jaccard after
  /// the input's. With no rows, an empty file with the schema of `schema_from` (when given and
  /// readable). errc::io_error (or no_space) naming the file when DuckDB fails.
  status write(const std::filesystem::path& dest, const std::string& schema_from = {}) const;

  struct impl;  // parquet_writer.cpp (public for the DuckDB callbacks there)

 private:
  std::unique_ptr<impl> impl_;
};

/// Converts the duplicates.jsonl at `jsonl` to a Parquet file at `dest` with the columns id,
/// duplicate_of (strings: a number id as its text), cluster, distance, layer, jaccard.
status write_duplicates_parquet(const std::filesystem::path& jsonl,
                                const std::filesystem::path& dest);

/// simdup::parquet_row_groups (include/simdup/reader.hpp), in the io component.
result<std::vector<parquet_row_group>> parquet_row_groups(const std::string& path);

}  // namespace simdup::detail
