// Feature extractors over normalised, valid UTF-8: code-point shingles, Unicode words and word
// n-grams. Shingles are views into the text, so the hot path allocates nothing per feature.
#pragma once

#include <simdup/utf8.hpp>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::detail {

/// Bytes in the sequence a lead byte starts; 1 for ASCII and for stray continuation bytes, so
/// a scan always advances. Text from the normaliser is well-formed.
inline std::size_t utf8_lead_length(unsigned char b) noexcept {
  if (b < 0xc0) return 1;
  if (b < 0xe0) return 2;
  return b < 0xf0 ? 3 : 4;
}

/// Calls fn(shingle) for every run of `width` consecutive code points of `text`, in order
/// (spaces included), except that stretches of all-ASCII shingles may go to
/// ascii_run(first, count) instead: the `count` shingles of `width` bytes starting at first,
/// first + 1, ..., first + count - 1. Text with fewer than `width` code points gives one
/// shingle, the whole text; empty text gives none. `width` must be at least 1.
template <class Fn, class AsciiRun>
inline void for_each_shingle_run(std::string_view text, std::size_t width, Fn&& fn,
                                 AsciiRun&& ascii_run) {
  const std::size_t n = text.size();
  if (n == 0) return;
  const auto* d = reinterpret_cast<const unsigned char*>(text.data());
  const auto next = [d, n](std::size_t p) {
    p += utf8_lead_length(d[p]);
    return p < n ? p : n;
  };
  std::size_t hi = 0;
  for (std::size_t k = 0; k < width; ++k) {
    if (hi == n) {  // fewer than `width` code points
      fn(text);
      return;
    }
    hi = next(hi);
  }
  std::size_t lo = 0;
  fn(std::string_view(text.data(), hi));
  while (hi < n) {
    if (hi - lo == width) {
      // An all-ASCII shingle followed by `run` ASCII bytes: the next `run` shingles are
      // all-ASCII too and need no boundary checks (most text is mostly ASCII).
      const std::size_t run = utf8::ascii_prefix_length(text.substr(hi));
      if (run > 0) {
        ascii_run(text.data() + lo + 1, run);
        lo += run;
        hi += run;
        continue;
      }
    }
    lo = next(lo);
    hi = next(hi);
    fn(std::string_view(text.data() + lo, hi - lo));
  }
}

/// Calls fn(shingle) for every run of `width` consecutive code points of `text`, in order
/// (spaces included). Text with fewer than `width` code points gives one shingle, the whole
/// text; empty text gives none. `width` must be at least 1.
template <class Fn>
inline void for_each_shingle(std::string_view text, std::size_t width, Fn&& fn) {
  for_each_shingle_run(text, width, fn, [&](const char* first, std::size_t count) {
    for (std::size_t k = 0; k < count; ++k) fn(std::string_view(first + k, width));
  });
}

/// Appends the Unicode words of `text` (views into it): maximal runs of letters, marks and
/// digits (categories L*, M*, N*); every CJK ideograph is a word on its own. Everything else
/// (spaces, punctuation, symbols, '_') separates words.
void split_words(std::string_view text, std::vector<std::string_view>& words);

/// Appends to `out` every run of `n` consecutive words joined by one space; fewer than `n`
/// (but at least one) words give one n-gram of all of them. `n` must be at least 1.
void word_ngrams(std::span<const std::string_view> words, std::size_t n,
                 std::vector<std::string>& out);

}  // namespace simdup::detail
