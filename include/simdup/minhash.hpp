// MinHash-LSH, a second candidate generator beside SimHash: documents whose shingle sets agree
// on every row of at least one band become candidate pairs. At Jaccard J a band of r rows
// agrees with probability J^r, so b bands find a pair with probability 1 - (1 - J^r)^b:
// 16 bands of 4 rows find 99.98 % of the pairs at J = 0.8 whatever their SimHash distance
// (SimHash finds a pair at 0.8 only when its fingerprints are within k, about 10 bits apart on
// average). Signatures are one-permutation MinHash (Li et al. 2012) with rotation
// densification (Shrivastava and Li 2014) over the verification's shingle hashes: one pass over
// a document's sorted hashes, no per-row hash functions.
#pragma once

#include <simdup/all_pairs.hpp>
#include <simdup/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace simdup {

struct minhash_options {
  /// Bands (hash tables); 0 turns the generator off. At most 64.
  std::size_t bands = 0;
  /// Rows (MinHash values) per band, 1..16.
  std::size_t rows = 4;
  /// A bucket (documents sharing a band key) of more than this many documents pairs each
  /// member only with the bucket's first max_bucket members (in ordinal order): a family of
  /// thousands of near copies must not become millions of pairs; linking every member to the
  /// same few keeps them together.
  std::size_t max_bucket = 64;
};

/// Parses "off" or "BANDSxROWS" (e.g. "16x4").
result<minhash_options> parse_minhash_spec(std::string_view spec);

/// Replaces `out` with the options.bands band keys of the set given by its sorted distinct
/// 32-bit `hashes` (uniformly mixed, as shingle_hashes gives). Never 0, so 0 can mean "none".
/// An empty set gives no keys.
void minhash_band_keys(std::span<const uint32_t> hashes, const minhash_options& options,
                       std::vector<uint64_t>& out);

/// Candidate pairs of documents 0..n-1 whose `keys` (n * bands, document-major; a document
/// whose keys are all 0 takes no part) agree in some band, appended to `out` as (a < b) pairs,
/// each once; pairs for which `skip(a, b)` is true are left out (e.g. those SimHash finds).
template <typename Skip>
void minhash_pairs(std::span<const uint64_t> keys, std::size_t n, const minhash_options& options,
                   Skip&& skip, std::vector<index_pair>& out);

namespace detail {
/// Sorts out[first, end) by (a, b) and keeps one of each pair (a pair sharing several bands is
/// one candidate).
inline void sort_unique_pairs(std::vector<index_pair>& out, std::size_t first) {
  const auto begin = out.begin() + static_cast<std::ptrdiff_t>(first);
  std::sort(begin, out.end(), [](const index_pair& x, const index_pair& y) {
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  });
  out.erase(std::unique(
                begin, out.end(),
                [](const index_pair& x, const index_pair& y) { return x.a == y.a && x.b == y.b; }),
            out.end());
}
/// (key, document) of one band, for minhash_pairs.
void band_buckets(std::span<const uint64_t> keys, std::size_t n, std::size_t bands,
                  std::size_t band, std::vector<std::pair<uint64_t, uint32_t>>& out);
}  // namespace detail

template <typename Skip>
void minhash_pairs(std::span<const uint64_t> keys, std::size_t n, const minhash_options& options,
                   Skip&& skip, std::vector<index_pair>& out) {
  const std::size_t first = out.size();
  std::vector<std::pair<uint64_t, uint32_t>> bucket;
  for (std::size_t band = 0; band < options.bands; ++band) {
    detail::band_buckets(keys, n, options.bands, band, bucket);
    for (std::size_t i = 0; i < bucket.size();) {
      std::size_t end = i + 1;
      while (end < bucket.size() && bucket[end].first == bucket[i].first) ++end;
      const std::size_t anchors = std::min(end - i, options.max_bucket);
      for (std::size_t x = i; x < i + anchors; ++x) {
        for (std::size_t y = x + 1; y < end; ++y) {
          const uint32_t a = bucket[x].second, b = bucket[y].second;  // a < b: sorted
          if (!skip(a, b)) out.push_back(index_pair{a, b, 0});
        }
      }
      i = end;
    }
  }
  detail::sort_unique_pairs(out, first);
}

}  // namespace simdup
