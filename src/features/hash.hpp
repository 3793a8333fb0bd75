// Feature hashes used inside the fingerprint pipeline. xxh3 is inlined from libxxhash's header
// (XXH_INLINE_ALL) because the default pipeline hashes one short shingle per input byte: a call
// through the shared library would cost more than the hash itself.
#pragma once

#include <simdup/fingerprint.hpp>

#include "features/md5.hpp"

#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>
#undef XXH_INLINE_ALL

namespace simdup::detail {

/// XXH3-64, seed 0.
inline uint64_t xxh3_64(std::string_view s) noexcept {
  return XXH3_64bits(s.data(), s.size());
}

/// xxh3_64 for inputs longer than 16 bytes, out of line (hash.cpp) so the short paths below
/// stay small enough to inline into the shingle loop.
uint64_t xxh3_64_long(std::string_view s) noexcept;

/// xxh3_64 for the shingle loop. Up to 16 bytes (width-4 shingles of ASCII, 4 bytes, and of
/// CJK text, 12 bytes) take the header's force-inlined short-input path, the path
/// XXH3_64bits takes for them with the default secret and seed 0; four bytes get a constant
/// length. The golden vectors (xxhsum) pin the equivalence. Forced inline: as a call it cost
/// half the fingerprinting time.
[[gnu::always_inline]] inline uint64_t xxh3_64_short(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const xxh_u8*>(s.data());
  if (s.size() == 4) [[likely]] {
    return XXH3_len_0to16_64b(p, 4, XXH3_kSecret, 0);
  }
  if (s.size() <= 16) return XXH3_len_0to16_64b(p, s.size(), XXH3_kSecret, 0);
  return xxh3_64_long(s);
}

/// FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
inline uint64_t fnv1a_64(std::string_view s) noexcept {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// One hash function chosen at run time.
class feature_hasher {
 public:
  explicit feature_hasher(hash_kind kind) noexcept : kind_(kind) {}
  uint64_t operator()(std::string_view s) noexcept {
    switch (kind_) {
      case hash_kind::xxh3:
        return xxh3_64(s);
      case hash_kind::fnv1a:
        return fnv1a_64(s);
      case hash_kind::md5:
        return md5_64(s);
    }
    return xxh3_64(s);
  }

 private:
  hash_kind kind_;
};

}  // namespace simdup::detail
