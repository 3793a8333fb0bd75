// The dedup index: what a run keeps of its kept documents so that later runs can be checked
// against them without reading the old text again (`simdup dedup --against DIR`): fingerprints,
// exact-layer keys, ids, verification shingles and MinHash band keys, in column files under one
// directory with a manifest (docs/index-format.md, "Dedup index"). Indexes of runs with the same
// detection profile merge by concatenation (`simdup index merge`).
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace simdup {

/// Written by this build; readers refuse other versions.
inline constexpr uint32_t dedup_index_version = 1;

/// The settings that decide what an index's stored data means (fingerprint options, k,
/// verification, MinHash), as (name, value) pairs in a fixed order. A run may be checked against
/// an index only when these are equal, but for verify.max_hashes, and minhash.* when the index
/// holds no band keys (dedup_index::check_profile); indexes merge only when all are equal.
using index_profile = std::vector<std::pair<std::string, std::string>>;
index_profile make_index_profile(const dedup_options& options);

/// One kept document as an index stores it.
struct index_document {
  uint64_t fingerprint = 0;
  bool has_fingerprint = false;
  /// Exact-layer keys; 0 = none (layer off, or empty value).
  uint64_t url_key = 0, title_key = 0, content_key = 0;
  std::string_view id;
  bool id_is_number = false;
  /// Sorted distinct verification shingle hashes (empty without verification).
  std::span<const uint32_t> shingles;
  /// bands() keys, or empty (then stored as zeros: no MinHash candidate).
  std::span<const uint64_t> band_keys;
};

/// An index opened read-only: every file memory-mapped and checked (sizes, offsets and XXH3
/// checksums) once, when opened.
class dedup_index {
 public:
  /// Opens `path`: an index directory (with manifest.json) or a run's output directory (then its
  /// index/ subdirectory). errc::not_found when there is none, corrupt_data for a damaged file
  /// (naming it), unsupported for another version.
  static result<std::shared_ptr<const dedup_index>> open(const std::string& path);

  /// The directory as given to open(), and the index directory itself.
  const std::string& name() const noexcept;
  const std::string& directory() const noexcept;
  uint64_t size() const noexcept;
  const index_profile& profile() const noexcept;
  /// MinHash bands per document (0: none stored).
  std::size_t bands() const noexcept;
  /// The inputs of the runs the index holds, as their manifests name them.
  const std::vector<std::string>& sources() const noexcept;
  /// Bytes of every file (the manifest included).
  uint64_t bytes() const noexcept;
  /// Bytes of the verification data (shingles with their offsets, band keys) and of the ids
  /// (text and offsets).
  uint64_t verification_bytes() const noexcept;
  uint64_t id_bytes() const noexcept;
  /// Bytes of manifest.json: a fixed cost, not a cost per document.
  uint64_t manifest_bytes() const noexcept;

  std::span<const uint64_t> fingerprints() const noexcept;
  bool has_fingerprint(uint64_t j) const noexcept;
  std::span<const uint64_t> url_keys() const noexcept;
  std::span<const uint64_t> title_keys() const noexcept;
  std::span<const uint64_t> content_keys() const noexcept;
  /// Document-major, bands() per document; empty when bands() is 0.
  std::span<const uint64_t> band_keys() const noexcept;
  std::span<const uint32_t> shingles(uint64_t j) const noexcept;
  std::string_view id(uint64_t j) const noexcept;
  bool id_is_number(uint64_t j) const noexcept;
  /// Reads document j back whole.
  index_document document(uint64_t j) const noexcept;

  /// The profile's verify.max_hashes: the most verification shingles kept per document (its
  /// smallest hashes, a bottom-k sketch: a service collection's export keeps its sketch size);
  /// 0 when every distinct shingle is kept, or without verification.
  std::size_t max_hashes() const noexcept;

  /// ok when a run with the profile `run` may be checked against this index: every setting
  /// equal (by name) but verify.max_hashes (both sides are then compared over the smaller
  /// non-zero cap) and, when the index holds no band keys (bands() 0), minhash.* (it gives no
  /// MinHash candidates); otherwise errc::invalid_argument naming the first setting that
  /// differs and both values.
  status check_profile(const index_profile& run) const;

  ~dedup_index();

 private:
  struct impl;
  explicit dedup_index(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Writes an index directory document by document. The files are written in `dir` (created;
/// it must not exist); finish() writes the manifest last: a directory without one is not an
/// index.
class dedup_index_writer {
 public:
  /// errc::invalid_argument when `dir` exists; io_error when it cannot be created.
  static result<dedup_index_writer> create(const std::string& dir, index_profile profile,
                                           std::size_t bands);
  /// Appends a document. errc::no_space or io_error naming the file when a write fails.
  status add(const index_document& doc);
  /// Flushes the files and writes the manifest (`sources`: the inputs of the run or runs).
  status finish(const std::vector<std::string>& sources);
  uint64_t size() const noexcept;
  /// Bytes written, after finish(): as dedup_index's bytes(), manifest_bytes(), id_bytes() and
  /// verification_bytes() would give them.
  struct written {
    uint64_t total = 0, manifest = 0, ids = 0, verification = 0;
  };
  const written& sizes() const noexcept;

  dedup_index_writer(dedup_index_writer&&) noexcept;
  dedup_index_writer& operator=(dedup_index_writer&&) noexcept;
  ~dedup_index_writer();

 private:
  struct impl;
  explicit dedup_index_writer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

/// Writes one index holding the documents of `inputs` in order (their profiles must be equal:
/// errc::invalid_argument naming the first difference). Time and I/O proportional to the
/// inputs' sizes; `out_dir` must not exist.
status merge_dedup_indexes(std::span<const std::shared_ptr<const dedup_index>> inputs,
                           const std::string& out_dir);

}  // namespace simdup
