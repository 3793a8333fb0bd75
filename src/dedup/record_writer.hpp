// The dedup job's record outputs: kept or annotated records in their input's format, and the
// lines of duplicates.jsonl.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_job.hpp>
#include <simdup/document.hpp>

#include "dedup/output_dir.hpp"
#include "io/parquet.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// STEM.<ext>[.zst] per input format (usually one): "kept" with the kept records unchanged, or
/// "annotated" with every record and its decision (JSONL: a "simdup" object; CSV: six simdup_*
/// columns after the others; TSV: six columns before the record's id and text). Parquet records
/// go to STEM.parquet (never .zst: Parquet compresses its pages), written at close() from the
/// input files with every column (annotated: six simdup_* columns after them).
class record_writer {
 public:
  record_writer(std::filesystem::path dir, bool zstd, std::string stem = "kept")
      : dir_(std::move(dir)), zstd_(zstd), stem_(std::move(stem)) {}
  /// `csv_header` is written first when a CSV output is opened. With `note` the record is
  /// annotated; errc::invalid_argument for a format that cannot carry it (text, WARC).
  status write(const document& doc, std::string_view csv_header,
               const record_annotation* note = nullptr);
  status close();
  /// Writes an empty STEM.<ext>[.zst] of `format` (jsonl for auto_detect): the job's output
  /// has a kept file even when nothing was kept, so consumers can rely on it.
  /// `schema_from`: for Parquet, an input whose columns the empty file has.
  status write_empty(input_format format, const std::string& schema_from = {});
  /// File names written so far ("kept.jsonl").
  std::vector<std::string> names() const;
  /// Format of the first record written ("jsonl"), or "" when nothing was kept.
  std::string first_format() const { return first_; }

 private:
  std::filesystem::path dir_;
  bool zstd_;
  std::string stem_;
  std::map<input_format, file_sink> sinks_;
  std::optional<parquet_rows> parquet_;  ///< STEM.parquet's rows, written at close()
  std::string line_;
  std::vector<std::string> names_;
  std::string first_;
};

/// Appends one duplicates.jsonl line. `against`: the index named by a decision against an
/// earlier run (then "cluster" is null: the representative is in that run).
void append_duplicate_line(std::string& out, std::string_view id, bool id_is_number,
                           std::string_view rep_id, bool rep_is_number,
                           const dedup_decision& decision, std::string_view against = {});

}  // namespace simdup::detail
