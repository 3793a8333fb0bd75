// Strict UTF-8 decoding for the segmenter: one code point at a time, invalid bytes one by one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace simdup::detail {

/// Stands for one byte that does not start a valid UTF-8 sequence. Outside Unicode, so it
/// matches no dictionary word and no character class of jieba's.
inline constexpr uint32_t invalid_code_point = 0xFFFFFFFFu;

struct decoded_char {
  uint32_t cp;   ///< the code point, or invalid_code_point
  uint32_t len;  ///< bytes consumed: 1..4 (1 for an invalid byte)
};

/// Decodes the code point starting at text[pos] (pos < text.size()). Overlong forms,
/// surrogates, values above U+10FFFF and truncated sequences are invalid (one byte consumed),
/// the same rule Python's strict UTF-8 decoder applies.
inline decoded_char decode_utf8(std::string_view text, std::size_t pos) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data()) + pos;
  const std::size_t left = text.size() - pos;
  const unsigned char b0 = s[0];
  if (b0 < 0x80) return {b0, 1};
  auto cont = [&](std::size_t i) { return i < left && (s[i] & 0xC0) == 0x80; };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (cont(1)) return {(uint32_t(b0 & 0x1F) << 6) | (s[1] & 0x3F), 2};
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (cont(1) && cont(2)) {
      const uint32_t cp =
          (uint32_t(b0 & 0x0F) << 12) | (uint32_t(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) return {cp, 3};
    }
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (cont(1) && cont(2) && cont(3)) {
      const uint32_t cp = (uint32_t(b0 & 0x07) << 18) | (uint32_t(s[1] & 0x3F) << 12) |
                          (uint32_t(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
      if (cp >= 0x10000 && cp <= 0x10FFFF) return {cp, 4};
    }
  }
  return {invalid_code_point, 1};
}

}  // namespace simdup::detail
