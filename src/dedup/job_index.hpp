// The run's index (DIR/index, simdup/dedup_index.hpp): while reading, each document's
// fingerprint and exact keys go to a staging file beside the outputs (33 bytes a document, on
// disk, not in memory); once decided, the kept documents are written to the index with their ids
// and the shingles the engine keeps, and their MinHash band keys computed again from those.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/dedup_index.hpp>
#include <simdup/dedup_report.hpp>

#include "dedup/job_output.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace simdup::detail {

class index_stage {
 public:
  /// Creates the staging file in `dir` (the output's staging directory).
  static result<index_stage> create(const std::filesystem::path& dir);
  /// The next document's fingerprint and keys.
  status add(const doc_signature& sig);
  /// Writes `out_dir` (it must not exist) from the kept documents (`kept`, by ordinal), their
  /// ids and `shingles(ordinal, out)`; fills summary.index_*. Removes the staging file.
  status write(const std::filesystem::path& out_dir, const dedup_options& options,
               const std::vector<bool>& kept, const id_store& ids,
               const std::function<status(uint32_t, std::vector<uint32_t>&)>& shingles,
               const std::vector<std::string>& sources, dedup_summary& summary);

  index_stage(index_stage&&) noexcept;
  index_stage& operator=(index_stage&&) noexcept;
  ~index_stage();

 private:
  index_stage(std::filesystem::path path, std::FILE* f) : path_(std::move(path)), f_(f) {}
  std::filesystem::path path_;
  std::FILE* f_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace simdup::detail
