// Jaccard similarities of many pairs of arrays in a shingle_store, read back from its file with
// as few reads as possible and on all cores.
#pragma once

#include <simdup/dedup.hpp>
#include <simdup/error.hpp>
#include <simdup/verify.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace simdup::detail {

/// One comparison: the store ordinals of the two arrays, and where the result goes.
struct jaccard_job {
  uint32_t a = 0;
  uint32_t b = 0;
  uint32_t slot = 0;
};

/// Sets out[job.slot] to the Jaccard of arrays a and b for every job: sketch_jaccard with
/// max_hashes > 0, else jaccard_at_least(threshold) (exact when >= threshold; threshold 0:
/// always exact; below it, some value below it). Pairs ruled out by their sizes
/// (jaccard_size_bound) are not read; with threshold > 0 and max_hashes 0, a `b` is then read
/// only when the counts of its hashes' top bytes (shingle_store::top_byte_counts) leave enough
/// hashes to share. The jobs are sorted by (a, b) (that is why the span is mutable; its order
/// afterwards is unspecified), so that each distinct `a` is read once and its partners in
/// order; groups run in parallel. Fails with the store's read error.
status pair_jaccards(const shingle_store& store, std::span<jaccard_job> jobs,
                     std::size_t max_hashes, double threshold, std::span<double> out);

}  // namespace simdup::detail
