// UTF-8 utilities: decoding with replacement of ill-formed sequences, encoding, counting and
// validation. Decoding is header-inline so per-code-point loops (shingles, normalisation) stay
// fast; ASCII takes a one-branch path.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace simdup::utf8 {

/// U+FFFD, substituted for each ill-formed sequence.
inline constexpr char32_t replacement_character = U'\uFFFD';

namespace detail {

constexpr bool is_continuation(unsigned char c) noexcept {
  return (c & 0xC0) == 0x80;
}

// The multi-byte part of decode(). Follows Unicode's "maximal subpart" practice (also Python's
// errors="replace" and the WHATWG decoder): a truncated or otherwise ill-formed sequence is
// consumed up to the first byte that cannot continue it and yields one U+FFFD, so the byte that
// broke the sequence starts the next decode. Overlong forms, surrogates (U+D800..U+DFFF) and
// values above U+10FFFF are ill-formed because their second byte is out of range.
inline char32_t decode_multibyte(const unsigned char*& p, const unsigned char* end,
                                 std::size_t& invalid) noexcept {
  const unsigned char c0 = p[0];
  const std::size_t avail = static_cast<std::size_t>(end - p);
  if (c0 < 0xC2 || c0 > 0xF4) {  // lone continuation byte, overlong 2-byte lead, or F5..FF
    ++p;
    ++invalid;
    return replacement_character;
  }
  if (c0 < 0xE0) {
    if (avail >= 2 && is_continuation(p[1])) {
      const char32_t cp = (char32_t(c0 & 0x1F) << 6) | (p[1] & 0x3F);
      p += 2;
      return cp;
    }
    ++p;
    ++invalid;
    return replacement_character;
  }
  // The second byte's valid range excludes overlongs (E0, F0), surrogates (ED) and > U+10FFFF (F4).
  unsigned char lo = 0x80;
  unsigned char hi = 0xBF;
  if (c0 == 0xE0) lo = 0xA0;
  if (c0 == 0xED) hi = 0x9F;
  if (c0 == 0xF0) lo = 0x90;
  if (c0 == 0xF4) hi = 0x8F;
  if (avail < 2 || p[1] < lo || p[1] > hi) {
    ++p;
    ++invalid;
    return replacement_character;
  }
  if (avail < 3 || !is_continuation(p[2])) {
    p += 2;
    ++invalid;
    return replacement_character;
  }
  if (c0 < 0xF0) {
    const char32_t cp = (char32_t(c0 & 0x0F) << 12) | (char32_t(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    p += 3;
    return cp;
  }
  if (avail < 4 || !is_continuation(p[3])) {
    p += 3;
    ++invalid;
    return replacement_character;
  }
  const char32_t cp = (char32_t(c0 & 0x07) << 18) | (char32_t(p[1] & 0x3F) << 12) |
                      (char32_t(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
  p += 4;
  return cp;
}

}  // namespace detail

/// Decodes the code point at `p` (requires p < end) and advances `p` past it. An ill-formed
/// sequence yields U+FFFD, increments `invalid` and is skipped as one maximal subpart (so
/// "\xE4\xB8" then "a" gives U+FFFD then 'a'). Never reads at or beyond `end`.
inline char32_t decode(const char*& p, const char* end, std::size_t& invalid) noexcept {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  if (*u < 0x80) {
    ++p;
    return *u;
  }
  const char32_t cp =
      detail::decode_multibyte(u, reinterpret_cast<const unsigned char*>(end), invalid);
  p = reinterpret_cast<const char*>(u);
  return cp;
}

/// decode() for callers that do not count repairs.
inline char32_t decode(const char*& p, const char* end) noexcept {
  std::size_t ignored = 0;
  return decode(p, end, ignored);
}

/// Index-based decode over a string_view: decodes at text[pos] (pos < size) and advances pos.
inline char32_t decode(std::string_view text, std::size_t& pos, std::size_t& invalid) noexcept {
  const char* p = text.data() + pos;
  const char32_t cp = decode(p, text.data() + text.size(), invalid);
  pos = static_cast<std::size_t>(p - text.data());
  return cp;
}

/// True for code points that have a UTF-8 encoding (not surrogates, at most U+10FFFF).
constexpr bool is_scalar_value(char32_t cp) noexcept {
  return cp < 0xD800 || (cp > 0xDFFF && cp <= 0x10FFFF);
}

/// Writes the UTF-8 form of `cp` to out[0..4) and returns its length (1 to 4). A value that is
/// not a scalar value (surrogate, > U+10FFFF) is written as U+FFFD.
inline std::size_t encode(char32_t cp, char* out) noexcept {
  if (cp < 0x80) {
    out[0] = static_cast<char>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<char>(0xC0 | (cp >> 6));
    out[1] = static_cast<char>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (!is_scalar_value(cp)) cp = replacement_character;
  if (cp < 0x10000) {
    out[0] = static_cast<char>(0xE0 | (cp >> 12));
    out[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<char>(0xF0 | (cp >> 18));
  out[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<char>(0x80 | (cp & 0x3F));
  return 4;
}

/// Appends the UTF-8 form of `cp` (U+FFFD for non-scalar values) to `out`.
inline void append(std::string& out, char32_t cp) {
  char buf[4];
  out.append(buf, encode(cp, buf));
}

/// CJK ideographs that traditional-to-simplified conversion can change: the unified block, its
/// extension A, the compatibility block, and the supplementary ideographic planes 2 and 3.
constexpr bool is_cjk_ideograph(char32_t cp) noexcept {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x3FFFF);
}

/// Length of the longest prefix of `text` that is pure ASCII (bytes < 0x80). Vectorised.
std::size_t ascii_prefix_length(std::string_view text) noexcept;

/// True if `text` is well-formed UTF-8 (no ill-formed sequence that decode() would replace).
bool is_valid(std::string_view text) noexcept;

/// The number of code points decode() yields for `text`: each ill-formed sequence counts as one
/// (its U+FFFD).
std::size_t count_code_points(std::string_view text) noexcept;

/// Appends `text` to `out` with every ill-formed sequence replaced by U+FFFD; returns how many
/// were replaced. Valid text is appended unchanged.
std::size_t append_repaired(std::string_view text, std::string& out);

}  // namespace simdup::utf8
