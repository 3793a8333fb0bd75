// What the batch and stream dedup engines both hold about the documents seen so far: the
// options, the exact-layer tables, every fingerprint, the verification shingle store and the
// pair counters, with one memory account. Each engine owns one and adds its own parts (batch:
// exact links, keep ranks, MinHash keys; stream: the online index).
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>
#include <simdup/exact_layer.hpp>
#include <simdup/verify.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace simdup::detail {

struct engine_state {
  /// Validates the detection profile; opens the shingle store (in options.detection.verify's
  /// tmp_dir) when near pairs are verified. Errors as shingle_store::create.
  static result<engine_state> create(const dedup_options& options);

  /// Records the next document's fingerprint and returns its ordinal (from 0);
  /// errc::too_large past 4294967294 documents.
  result<uint32_t> admit(const doc_signature& sig);
  /// Hamming distance of two admitted documents' fingerprints; -1 when either has none.
  int8_t distance(uint32_t a, uint32_t b) const noexcept;
  /// Bytes held by the exact tables, the fingerprints and the shingle store's index.
  std::size_t memory_bytes() const noexcept;
  /// Frees the exact tables (batch mode, once no key is looked up any more).
  void release_exact_tables() { urls = titles = contents = exact_table{}; }
  /// Bytes of shingle arrays in the temporary file (0 without verification).
  uint64_t spilled_bytes() const noexcept { return shingles ? shingles->stored_bytes() : 0; }

  dedup_options options;
  exact_table urls, titles, contents;
  std::vector<uint64_t> fingerprints;
  std::vector<bool> has_fingerprint;
  /// Shingle arrays of the documents verification may read, spilled to a temporary file;
  /// empty without verification.
  std::optional<shingle_store> shingles;
  uint32_t count = 0;
  /// Near candidates the generators proposed, and those verification rejected (the in-memory
  /// check of candidate_filter included: it is verification's first step, and counting it so
  /// keeps the counts equal to those of an engine without it, such as simdup.dask's).
  uint64_t candidate_pairs = 0;
  uint64_t rejected_pairs = 0;
  /// Of the rejected, those candidate_filter ruled out before the shingle arrays were read.
  uint64_t prefiltered_pairs = 0;
};

}  // namespace simdup::detail
