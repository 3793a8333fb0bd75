// Pieces of the dedup job shared by its passes: document ids by ordinal, kept-record and
// duplicate-line writers, and the report's sample texts.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/document.hpp>

#include "dedup/output_dir.hpp"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace simdup::detail {

/// Every document's id, by ordinal, in one arena (ids are what duplicates.jsonl names).
class id_store {
 public:
  void add(std::string_view id, bool is_number) {
    data_.append(id);
    ends_.push_back(data_.size());
    numeric_.push_back(is_number);
  }
  std::string_view id(uint32_t ordinal) const {
    const std::size_t begin = ordinal == 0 ? 0 : ends_[ordinal - 1];
    return std::string_view(data_).substr(begin, ends_[ordinal] - begin);
  }
  bool is_number(uint32_t ordinal) const { return numeric_[ordinal]; }
  std::size_t memory_bytes() const {
    return data_.capacity() + ends_.capacity() * sizeof(uint64_t) + numeric_.capacity() / 8;
  }

 private:
  std::string data_;
  std::vector<uint64_t> ends_;
  std::vector<bool> numeric_;
};

/// The decision written beside a record by --annotate.
struct annotation {
  const dedup_decision& decision;
  /// Id of the representative; ignored for a kept record.
  std::string_view rep_id;
  bool rep_is_number = false;
  bool kept = false;
};

/// STEM.<ext>[.zst] per input format (usually one): "kept" with the kept records unchanged, or
/// "annotated" with every record and its decision (JSONL: a "simdup" object; CSV: six simdup_*
/// columns after the others; TSV: six columns before the record's id and text).
class record_writer {
 public:
  record_writer(std::filesystem::path dir, bool zstd, std::string stem = "kept")
      : dir_(std::move(dir)), zstd_(zstd), stem_(std::move(stem)) {}
  /// `csv_header` is written first when a CSV output is opened. With `note` the record is
  /// annotated; errc::invalid_argument for a format that cannot carry it (text, WARC).
  status write(const document& doc, std::string_view csv_header, const annotation* note = nullptr);
  status close();
  /// File names written so far ("kept.jsonl").
  std::vector<std::string> names() const;
  /// Format of the first record written ("jsonl"), or "" when nothing was kept.
  std::string first_format() const { return first_; }

 private:
  std::filesystem::path dir_;
  bool zstd_;
  std::string stem_;
  std::map<input_format, file_sink> sinks_;
  std::string line_;
  std::vector<std::string> names_;
  std::string first_;
};

/// Appends one duplicates.jsonl line.
void append_duplicate_line(std::string& out, std::string_view id, bool id_is_number,
                           std::string_view rep_id, bool rep_is_number,
                           const dedup_decision& decision);

/// The report's sample clusters: which ordinals to fetch, then their texts.
class sample_collector {
 public:
  /// Clusters as (representative ordinal, size, member ordinals in display order).
  struct cluster {
    uint32_t representative;
    uint64_t size;
    std::vector<uint32_t> members;
  };
  explicit sample_collector(std::vector<cluster> clusters);
  /// True when `ordinal`'s text is needed.
  bool wants(uint32_t ordinal) const { return wanted_.count(ordinal) != 0; }
  /// The largest ordinal needed (a re-read may stop after it); nullopt when none.
  std::optional<uint32_t> last() const;
  void take(uint32_t ordinal, const document& doc);
  /// Builds the report's samples (decisions give layer, distance and Jaccard of members).
  std::vector<cluster_sample> build(
      const std::function<dedup_decision(uint32_t)>& decision_of) const;

 private:
  std::vector<cluster> clusters_;
  std::unordered_map<uint32_t, std::pair<std::string, std::string>> wanted_;  // id, text
};

}  // namespace simdup::detail
