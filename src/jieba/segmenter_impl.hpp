// Internals of jieba_segmenter shared by its source files: the loaded model and jieba.cut.
#pragma once

#include <simdup/error.hpp>
#include <simdup/jieba.hpp>

#include "jieba/hmm.hpp"
#include "jieba/trie.hpp"

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace simdup {

struct jieba_segmenter::impl {
  std::string dir;
  detail::word_trie trie;
  uint64_t total = 0;
  double log_total = 0.0;  ///< log(total), recomputed whenever total changes
  detail::hmm_model hmm;
  bool use_hmm = true;
  /// Words added with frequency 0: the HMM must not emit them whole (jieba's Force_Split_Words).
  std::unordered_set<std::string> force_split;

  /// Reads jieba.bin. Errors name the file.
  status load(const std::string& path);
  /// jieba's load_userdict.
  status load_user_dict(const std::string& path);
  /// jieba's add_word; `freq` < 0 means "suggest one" (jieba's suggest_freq).
  void add_word(std::string_view word, std::span<const uint32_t> cps, int64_t freq);

  /// jieba.cut(text, HMM=with_hmm): appends the words to `out`.
  void cut(std::string_view text, bool with_hmm, std::vector<std::string_view>& out) const;
};

namespace detail {

/// Characters jieba cuts with the dictionary (re_han_default): U+4E00..U+9FD5, ASCII letters and
/// digits, and + # & . _ % -. Everything else is a word of its own ("\r\n" is one word).
inline bool block_char(uint32_t cp) noexcept {
  if (cp >= 0x4E00 && cp <= 0x9FD5) return true;
  if (cp >= 0x80) return false;
  const auto c = static_cast<char>(cp);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '#' || c == '&' || c == '.' || c == '_' || c == '%' || c == '-';
}

inline bool ascii_alnum(uint32_t cp) noexcept {
  return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9');
}

}  // namespace detail
}  // namespace simdup
