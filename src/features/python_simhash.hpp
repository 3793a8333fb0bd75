// compat=python-simhash: the Python `simhash` package v2.x (Simhash(text) with its defaults),
// reproduced bit for bit. The corner cases where parity depends on the Unicode version are in
// docs/compat.md.
#pragma once

#include <simdup/fingerprint.hpp>

#include "features/detail/count_map.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace simdup::detail {

/// Appends Python's `text.lower()` (full lowercase mapping, final sigma) of UTF-8 `text` to
/// `out`; ill-formed sequences become U+FFFD. Returns how many were replaced.
std::size_t python_lower(std::string_view text, std::string& out);

/// Appends `''.join(re.findall(r'[\w\u4e00-\u9fcc]+', text.lower()))` to `out`: the text the
/// package shingles. Returns the number of ill-formed UTF-8 sequences replaced.
std::size_t python_simhash_prepare(std::string_view text, std::string& out);

/// python_simhash_prepare of text held as UCS-2: one code point per element, as Python stores a
/// str whose code points are all below U+10000. A surrogate is a code point of its own (not
/// a word character), as in Python.
void python_simhash_prepare_ucs2(std::u16string_view text, std::string& out);

/// Counts the width-4 code-point shingles of prepared text the way the package slides them:
/// `[s[i:i+4] for i in range(max(len(s) - 3, 1))]`, so empty text gives the one feature ''.
void python_simhash_shingles(std::string_view prepared, count_map& counts);

struct python_simhash_counted {
  uint64_t fingerprint;
  uint32_t features;  ///< distinct shingles
};

/// The package's Simhash(text).value from prepared text: of its shingles (as
/// python_simhash_shingles slides them), hashed with the last 8 bytes of MD5 read big-endian,
/// bit i set iff the number with bit i set is > half the number of shingles. (The package
/// counts each distinct shingle and votes its hash with the count as weight: the same sums.)
uint64_t python_simhash_vote(std::string_view prepared);

/// python_simhash_vote(prepared) and the number of distinct shingles.
python_simhash_counted python_simhash_fingerprint(std::string_view prepared);

/// Simhash(features) for supplied (token, weight) pairs, following the package's
/// build_by_features: every pair adds its weight to the total; an integral weight <= 0 adds
/// nothing to the bit sums (Python repeats the digest `w` times, i.e. zero times).
uint64_t python_simhash_weighted(std::span<const weighted_feature> features);

}  // namespace simdup::detail
