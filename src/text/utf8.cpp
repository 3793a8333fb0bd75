// Non-inline UTF-8 utilities: the vectorised ASCII scan and whole-string helpers built on it.
#include <simdup/utf8.hpp>

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace simdup::utf8 {

std::size_t ascii_prefix_length(std::string_view text) noexcept {
  const char* const begin = text.data();
  const char* p = begin;
  const char* const end = begin + text.size();
#if defined(__SSE2__)
  // 64 bytes per iteration: OR four vectors, one movemask; locate the exact byte only on a hit.
  while (end - p >= 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
    const __m128i any = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
    if (_mm_movemask_epi8(any) != 0) break;
    p += 64;
  }
  while (end - p >= 16) {
    const int mask = _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    if (mask != 0) return static_cast<std::size_t>(p - begin) + __builtin_ctz(mask);
    p += 16;
  }
#else
  while (end - p >= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    if (word & 0x8080808080808080ULL) break;
    p += 8;
  }
#endif
  while (p < end && static_cast<unsigned char>(*p) < 0x80) ++p;
  return static_cast<std::size_t>(p - begin);
}

bool is_valid(std::string_view text) noexcept {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::size_t invalid = 0;
  while (p < end) {
    p += ascii_prefix_length(std::string_view(p, static_cast<std::size_t>(end - p)));
    // Decode the non-ASCII run; the next ASCII byte goes back to the vectorised scan.
    while (p < end && static_cast<unsigned char>(*p) >= 0x80) {
      decode(p, end, invalid);
      if (invalid != 0) return false;
    }
  }
  return true;
}

std::size_t count_code_points(std::string_view text) noexcept {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::size_t invalid = 0;
  std::size_t count = 0;
  while (p < end) {
    const std::size_t ascii =
        ascii_prefix_length(std::string_view(p, static_cast<std::size_t>(end - p)));
    count += ascii;
    p += ascii;
    while (p < end && static_cast<unsigned char>(*p) >= 0x80) {
      decode(p, end, invalid);
      ++count;
    }
  }
  return count;
}

std::size_t append_repaired(std::string_view text, std::string& out) {
  const char* p = text.data();
  const char* const end = p + text.size();
  std::size_t invalid = 0;
  out.reserve(out.size() + text.size());
  // Copy valid stretches (ASCII and well-formed sequences) in bulk; only repairs are encoded.
  const char* run = p;
  while (p < end) {
    p += ascii_prefix_length(std::string_view(p, static_cast<std::size_t>(end - p)));
    if (p == end) break;
    const char* seq = p;
    const std::size_t before = invalid;
    decode(p, end, invalid);
    if (invalid != before) {
      out.append(run, seq);
      append(out, replacement_character);
      run = p;
    }
  }
  out.append(run, p);
  return invalid;
}

}  // namespace simdup::utf8
