// --verify: shingle hash sets of normalised text (shingle_hashes) and their Jaccard similarity
// (exact, bounded by sizes, or bottom-k). The spill file of the sets is shingle_store.cpp.
#include <simdup/verify.hpp>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "dedup/verify_kernel.hpp"
#include "util/cpu.hpp"

namespace simdup {
namespace {

// Decodes one code point of (normalised, valid) UTF-8 and advances; a stray byte is taken as
// itself so the loop always ends.
uint32_t decode(const unsigned char*& p, const unsigned char* end) {
  const uint32_t lead = *p++;
  int extra = lead < 0xC0 ? 0 : lead < 0xE0 ? 1 : lead < 0xF0 ? 2 : 3;
  uint32_t cp = extra == 0 ? lead : lead & (0x3Fu >> extra);
  for (; extra > 0 && p < end && (*p & 0xC0) == 0x80; --extra) cp = (cp << 6) | (*p++ & 0x3F);
  return cp;
}

// MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit over the output.
uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= detail::fmix64_mul1;
  h ^= h >> 33;
  h *= detail::fmix64_mul2;
  h ^= h >> 33;
  return h;
}

// Sorting dominated --verify. Most repeats are dropped first (drop_most_repeats), then the
// histogram of the hashes' top bits is taken (about one bucket per shingle, as the bucket count
// follows the text length); one pass puts each hash into its bucket with an insertion sort
// among the bucket's few earlier hashes, and one pass drops the remaining repeats: three
// passes instead of the six of an LSD radix sort.
struct sort_scratch {
  std::vector<uint32_t> raw;
  std::vector<uint32_t> count;
  std::vector<uint32_t> ring;
  std::vector<uint32_t> seen;
  std::vector<uint32_t> cps;
};

// Drops most repeated hashes before the sort (English repeats half its 5-grams): a direct-mapped
// table of the last hash seen per slot, without branches. A repeat whose slot was taken by
// another hash in between stays, for the unique pass after the sort. Returns the new count.
std::size_t drop_most_repeats(uint32_t* raw, std::size_t n, std::vector<uint32_t>& table) {
  const int bits = std::clamp(static_cast<int>(std::bit_width(n)), 4, 20);
  const uint32_t mask = (uint32_t{1} << bits) - 1;
  table.resize(std::size_t{mask} + 1);
  // Slot k starts with a value that belongs to another slot, so it matches no hash.
  for (uint32_t k = 0; k <= mask; ++k) table[k] = k ^ 1u;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t v = raw[i];
    uint32_t& slot = table[v & mask];
    const bool repeat = slot == v;
    slot = v;
    raw[kept] = v;
    kept += repeat ? 0 : 1;
  }
  return kept;
}

// The code points of `text` into cps (one slot per byte is enough); returns their number.
std::size_t code_points(std::string_view text, uint32_t* cps) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  std::size_t m = 0;
  while (p < end) {
    const uint32_t byte = *p;
    if (byte < 0x80) {
      ++p;
      cps[m++] = byte;
    } else {
      cps[m++] = decode(p, end);
    }
  }
  return m;
}

sort_scratch& scratch() {
  thread_local sort_scratch s;
  return s;
}

}  // namespace

namespace detail {

window_hash_kernel best_window_hash_kernel() noexcept {
#if defined(__x86_64__)
  static const window_hash_kernel best = cpu_has_avx512f_dq() ? &window_hashes_avx512 : nullptr;
  return best;
#else
  return nullptr;
#endif
}

}  // namespace detail

normalize_options verify_normalize_options(const normalize_options& fingerprint) {
  normalize_options o = fingerprint;
  o.strip_punctuation = false;
  o.strip_digits = false;
  o.collapse_whitespace = true;
  o.cjk_content = true;
  return o;
}

result<verify_options> parse_verify_spec(std::string_view spec) {
  constexpr std::string_view prefix = "jaccard:";
  const auto bad = [&] {
    return invalid_parameter(
        {.name = "verify",
         .value = std::string(spec),
         .allowed = "jaccard:T with T in (0, 1]",
         .reason = ": expected jaccard:T with T in (0, 1], got '" + std::string(spec) + "'"});
  };
  if (!spec.starts_with(prefix)) return bad();
  const std::string number(spec.substr(prefix.size()));
  double threshold = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), threshold);
  if (ec != std::errc{} || end != number.data() + number.size() || !(threshold > 0) ||
      threshold > 1) {
    return bad();
  }
  verify_options options;
  options.threshold = threshold;
  return options;
}

namespace {

// A text longer than this is hashed in pieces of about this size, so that the scratch arrays
// (4 bytes per byte of text, twice) stay a few MB for a record of any size.
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

// The sorted distinct shingle hashes of `text` (not empty), uncut.
void sorted_shingles(std::string_view text, std::size_t width, std::vector<uint32_t>& out) {
  // A polynomial rolling hash over code points (mod 2^64), finalised by a bijective mixer:
  // one multiply-add per code point instead of hashing every shingle's bytes again.
  constexpr uint64_t base = detail::shingle_hash_base;
  uint64_t drop = 1;  // base^(width-1): weight of the code point leaving the window
  for (std::size_t i = 1; i < width; ++i) drop *= base;
  sort_scratch& s = scratch();
  // The last `width` code points, in a ring whose size is a power of two (no division).
  const std::size_t ring_mask = std::bit_ceil(width) - 1;
  s.ring.assign(ring_mask + 1, 0);
  // At most one shingle per byte; the bucket count is the next power of two of that bound.
  if (s.raw.size() < text.size() + 1) s.raw.resize(text.size() + 1);
  const int bits = std::clamp(static_cast<int>(std::bit_width(text.size())), 4, 16);
  const int shift = 32 - bits;
  s.count.assign(std::size_t{1} << bits, 0);
  uint32_t* raw = s.raw.data();
  uint32_t* count = s.count.data();
  uint32_t* ring = s.ring.data();
  std::size_t n = 0;
  uint64_t h = 0;
  std::size_t seen = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  if (const auto kernel = detail::best_window_hash_kernel(); kernel && text.size() >= width) {
    // All windows at once instead of the rolling chain: weights[i] = base^(width - 1 - i).
    if (s.cps.size() < text.size()) s.cps.resize(text.size());
    const std::size_t m = code_points(text, s.cps.data());
    if (m >= width) {
      thread_local std::vector<uint64_t> weights;
      weights.assign(width, 1);
      for (std::size_t i = width - 1; i-- > 0;) weights[i] = weights[i + 1] * base;
      n = m - width + 1;
      kernel(s.cps.data(), n, weights.data(), width, raw);
      p = end;  // done: the rolling hash below does not run
      seen = m;
    }
  }
  while (p < end) {
    uint32_t cp = *p;
    if (cp < 0x80) {
      ++p;
    } else {
      cp = decode(p, end);
    }
    if (seen >= width) h -= drop * ring[(seen - width) & ring_mask];
    h = h * base + cp;
    ring[seen & ring_mask] = cp;
    ++seen;
    if (seen >= width) raw[n++] = static_cast<uint32_t>(mix(h) >> 32);
  }
  if (seen < width) raw[n++] = static_cast<uint32_t>(mix(h) >> 32);
  n = drop_most_repeats(raw, n, s.seen);
  for (std::size_t i = 0; i < n; ++i) ++count[raw[i] >> shift];
  uint32_t sum = 0;
  for (uint32_t& c : s.count) sum += std::exchange(c, sum);
  // Scatter by bucket and insertion-sort inside the bucket at once: slots not yet filled hold
  // 0, and filled slots of earlier buckets are smaller, so the shifting stops at the bucket's
  // start without knowing it.
  out.assign(n + 1, 0);
  uint32_t* sorted = out.data() + 1;  // sorted[-1] == 0 stops the shifting at the front
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t v = raw[i];
    uint32_t* slot = sorted + count[v >> shift]++;
    for (; slot[-1] > v; --slot) *slot = slot[-1];
    *slot = v;
  }
  // Branch-free unique, moving the array one slot to the front (English text repeats many
  // shingles, at random places in the order). Writes never overtake reads.
  std::size_t kept = 0;
  uint32_t previous = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t v = sorted[i];
    out[kept] = v;
    kept += i == 0 || v != previous ? 1 : 0;
    previous = v;
  }
  out.resize(kept);
}

// The start of the code point at or after `i`.
std::size_t code_point_start(std::string_view text, std::size_t i) {
  while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  return i;
}

}  // namespace

void shingle_hashes(std::string_view text, std::size_t width, std::size_t max_hashes,
                    std::vector<uint32_t>& out) {
  out.clear();
  if (text.empty() || width == 0) return;
  if (text.size() <= 2 * kPieceBytes) {
    sorted_shingles(text, width, out);
  } else {
    // Pieces that overlap the next by width - 1 code points hold every shingle whole, and the
    // set is the union of theirs (kept sorted, and cut to max_hashes as it grows). The last
    // piece takes the rest, so it is never shorter than the width.
    thread_local std::vector<uint32_t> piece, merged;
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t stop = text.size() - start <= 2 * kPieceBytes
                                   ? text.size()
                                   : code_point_start(text, start + kPieceBytes);
      std::size_t reach = stop;
      for (std::size_t cps = 1; cps < width && reach < text.size(); ++cps)
        reach = code_point_start(text, reach + 1);
      sorted_shingles(text.substr(start, reach - start), width, piece);
      merged.clear();
      merged.reserve(out.size() + piece.size());
      std::set_union(out.begin(), out.end(), piece.begin(), piece.end(),
                     std::back_inserter(merged));
      if (max_hashes != 0 && merged.size() > max_hashes) merged.resize(max_hashes);
      out.swap(merged);
      start = stop;
    }
    // These grew with the record's set: released, so that no thread keeps them.
    piece = {};
    merged = {};
  }
  if (max_hashes != 0 && out.size() > max_hashes) out.resize(max_hashes);
}

double sketch_jaccard(std::span<const uint32_t> a, std::span<const uint32_t> b,
                      std::size_t max_hashes) noexcept {
  // A cut array knows membership only up to its largest hash; above that bound nothing can be
  // compared, so the walk stops there (and after max_hashes union elements, the bottom-k rule).
  uint64_t bound = std::numeric_limits<uint64_t>::max();
  std::size_t limit = std::numeric_limits<std::size_t>::max();
  if (max_hashes != 0) {
    limit = max_hashes;
    if (a.size() >= max_hashes && !a.empty()) bound = std::min<uint64_t>(bound, a.back());
    if (b.size() >= max_hashes && !b.empty()) bound = std::min<uint64_t>(bound, b.back());
  }
  std::size_t i = 0, j = 0, both = 0, total = 0;
  while (total < limit && (i < a.size() || j < b.size())) {
    uint32_t next;
    bool in_both = false;
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      next = a[i++];
    } else if (i == a.size() || b[j] < a[i]) {
      next = b[j++];
    } else {
      next = a[i];
      ++i, ++j;
      in_both = true;
    }
    if (next > bound) break;
    ++total;
    both += in_both ? 1 : 0;
  }
  return total == 0 ? 0.0 : static_cast<double>(both) / static_cast<double>(total);
}

namespace {

// J = both / (total - both) >= t  <=>  both >= t * total / (1 + t); the margin keeps a pair
// exactly at the threshold (4 of 5 at 0.8) from being cut by rounding.
double needed_shared(std::size_t total, double threshold) {
  return threshold * static_cast<double>(total) / (1.0 + threshold) - 1e-6;
}

}  // namespace

std::optional<double> jaccard_shared_bound(std::size_t most_shared, std::size_t na, std::size_t nb,
                                           double threshold) noexcept {
  const std::size_t total = na + nb;
  most_shared = std::min({most_shared, na, nb});
  if (total == 0 || static_cast<double>(most_shared) >= needed_shared(total, threshold)) {
    return std::nullopt;
  }
  return static_cast<double>(most_shared) / static_cast<double>(total - most_shared);
}

std::optional<double> jaccard_size_bound(std::size_t na, std::size_t nb,
                                         double threshold) noexcept {
  return jaccard_shared_bound(std::min(na, nb), na, nb, threshold);
}

double jaccard_at_least(std::span<const uint32_t> a, std::span<const uint32_t> b,
                        double threshold) noexcept {
  const std::size_t total = a.size() + b.size();
  if (total == 0) return 0.0;
  if (const auto ruled_out = jaccard_size_bound(a.size(), b.size(), threshold)) return *ruled_out;
  const double need = needed_shared(total, threshold);
  const auto bound = [&](std::size_t most_shared) {  // J if most_shared were all shared
    return static_cast<double>(most_shared) / static_cast<double>(total - most_shared);
  };
  std::size_t i = 0, j = 0, both = 0;
#if defined(__SSE2__)
  // Blocks of 4 hashes against 4: all 16 pairs compared at once (the second block rotated three
  // times), then the block with the smaller last hash is done (both when equal). A common hash
  // lies in exactly one pair of blocks and that pair is visited, so it is counted once; a
  // finished block can share nothing with what follows the other array's current block.
  // Checked every 64 rounds against the most that could still be shared.
  for (std::size_t round = 1; i + 4 <= a.size() && j + 4 <= b.size(); ++round) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a.data() + i));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.data() + j));
    __m128i equal = _mm_cmpeq_epi32(x, y);
    equal = _mm_or_si128(equal, _mm_cmpeq_epi32(x, _mm_shuffle_epi32(y, _MM_SHUFFLE(0, 3, 2, 1))));
    equal = _mm_or_si128(equal, _mm_cmpeq_epi32(x, _mm_shuffle_epi32(y, _MM_SHUFFLE(1, 0, 3, 2))));
    equal = _mm_or_si128(equal, _mm_cmpeq_epi32(x, _mm_shuffle_epi32(y, _MM_SHUFFLE(2, 1, 0, 3))));
    both += static_cast<std::size_t>(
        std::popcount(static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(equal)))));
    const uint32_t last_a = a[i + 3], last_b = b[j + 3];
    i += last_a <= last_b ? 4 : 0;
    j += last_b <= last_a ? 4 : 0;
    if (round % 64 == 0) {
      const std::size_t most = both + std::min(a.size() - i, b.size() - j);
      if (static_cast<double>(most) < need) return bound(most);
    }
  }
#endif
  // The rest (all of it without SSE2): a branch-free merge (the order of two random hashes is a
  // coin flip for a branch predictor), checked every 256 steps.
  while (i < a.size() && j < b.size()) {
    const std::size_t steps = std::min({a.size() - i, b.size() - j, std::size_t{256}});
    for (std::size_t s = 0; s < steps && i < a.size() && j < b.size(); ++s) {
      const uint32_t x = a[i], y = b[j];
      both += x == y ? 1 : 0;
      i += x <= y ? 1 : 0;
      j += y <= x ? 1 : 0;
    }
    const std::size_t most = both + std::min(a.size() - i, b.size() - j);
    if (static_cast<double>(most) < need) return bound(most);
  }
  return bound(both);
}

}  // namespace simdup
