#include "features/extract.hpp"

#include <simdup/utf8.hpp>

#include <utf8proc.h>

#include <algorithm>

namespace simdup::detail {
namespace {

bool is_word_char(char32_t c) noexcept {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

}  // namespace

void split_words(std::string_view text, std::vector<std::string_view>& words) {
  std::size_t start = std::string_view::npos;  // start of the current word
  const auto close = [&](std::size_t end) {
    if (start != std::string_view::npos) words.push_back(text.substr(start, end - start));
    start = std::string_view::npos;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t at = i;
    std::size_t invalid = 0;
    const char32_t c = utf8::decode(text, i, invalid);
    if (invalid == 0 && utf8::is_cjk_ideograph(c)) {
      close(at);
      words.push_back(text.substr(at, i - at));
    } else if (invalid == 0 && is_word_char(c)) {
      if (start == std::string_view::npos) start = at;
    } else {
      close(at);
    }
  }
  close(text.size());
}

void word_ngrams(std::span<const std::string_view> words, std::size_t n,
                 std::vector<std::string>& out) {
  if (words.empty()) return;
  const std::size_t count = words.size() >= n ? words.size() - n + 1 : 1;
  const std::size_t width = std::min(n, words.size());
  for (std::size_t i = 0; i < count; ++i) {
    std::string gram(words[i]);
    for (std::size_t k = 1; k < width; ++k) {
      gram.push_back(' ');
      gram.append(words[i + k]);
    }
    out.push_back(std::move(gram));
  }
}

}  // namespace simdup::detail
