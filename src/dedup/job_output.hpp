// The dedup job's last phase, its outputs: the staging directory with the kept (and
// annotated) records and duplicates.jsonl, the caller's decision sink, and at the end
// summary.json and report.html, committed as DIR in one rename. Without an output directory
// only the decision sink is written.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_job.hpp>
#include <simdup/dedup_report.hpp>
#include <simdup/document.hpp>

#include "dedup/output_dir.hpp"
#include "dedup/record_writer.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

class job_output {
 public:
  /// Creates the staging directory next to options.out_dir (stale ones of killed runs are
  /// removed and named on `log`) and opens its files; none without an output directory.
  static result<job_output> create(const dedup_job_options& options, std::FILE* log);

  /// Files are written (else only options.decisions).
  bool has_files() const noexcept { return dir_.has_value(); }
  /// Where files are written until commit(); empty without files.
  std::filesystem::path staging_path() const;
  /// The staging directory is an interrupted run's, taken over to resume it (--resume).
  bool resumed() const noexcept { return dir_ && dir_->resumed(); }
  /// The staging directory's resume journal (output_dir::journal_dir).
  std::filesystem::path journal_dir() const {
    return dir_ ? dir_->journal_dir() : std::filesystem::path();
  }
  /// A failed run leaves the journal for --resume (output_dir::keep_journal_on_failure).
  void keep_journal_on_failure(bool keep) noexcept {
    if (dir_) dir_->keep_journal_on_failure(keep);
  }
  /// Ids by ordinal, for naming representatives. The job adds every document's (stream mode:
  /// an empty one for a dropped document, which is never a representative).
  id_store& ids() noexcept { return ids_; }
  /// The indexes that decisions with `against` set refer to (dedup_options::against).
  void set_against(std::vector<std::shared_ptr<const dedup_index>> indexes) {
    against_ = std::move(indexes);
  }

  /// Writes the decision on record `ordinal` to the decision sink and, with files, to the
  /// annotated records and to the kept records or duplicates.jsonl. The representative of a
  /// duplicate must have its id in ids(). `csv_header` is the header row of a CSV record's input.
  status write(uint32_t ordinal, const document& doc, const dedup_decision& decision,
               std::string_view csv_header);
  /// Closes the record files, creating an empty kept file when nothing was kept, and sets
  /// summary.output_format (from the first kept record, else from the first of `inputs`).
  status close_files(dedup_summary& summary, const std::vector<std::string>& inputs);
  /// Writes summary.json and report.html and moves the staging directory to DIR; a stop request
  /// before the move fails the job and leaves DIR as it was.
  status commit(const dedup_summary& summary);

 private:
  job_output(const dedup_job_options& options, std::optional<output_dir> dir);
  const dedup_job_options* options_;
  std::optional<output_dir> dir_;
  std::optional<record_writer> kept_;
  std::optional<record_writer> annotated_;  // --annotate
  std::optional<file_sink> duplicates_;
  id_store ids_;
  std::vector<std::shared_ptr<const dedup_index>> against_;
  std::string line_;
};

}  // namespace simdup::detail
