// User dictionaries with jieba's load_userdict / add_word / suggest_freq semantics.
#include "jieba/segmenter_impl.hpp"
#include "jieba/utf8.hpp"

#include <charconv>
#include <fstream>

namespace simdup {

namespace {

// jieba parses a line with ^(.+?)( [0-9]+)?( [a-z]+)?$: the shortest word after which the rest
// is an optional " digits" then an optional " lowercase letters".
bool optional_tail(std::string_view rest, std::string_view& freq) {
  auto run = [&](std::size_t i, bool digits) {
    std::size_t j = i;
    while (j < rest.size() &&
           (digits ? (rest[j] >= '0' && rest[j] <= '9') : (rest[j] >= 'a' && rest[j] <= 'z'))) {
      ++j;
    }
    return j;
  };
  std::size_t i = 0;
  freq = {};
  if (i < rest.size() && rest[i] == ' ' && run(i + 1, true) > i + 1) {
    const std::size_t j = run(i + 1, true);
    freq = rest.substr(i + 1, j - i - 1);
    i = j;
  }
  if (i < rest.size() && rest[i] == ' ' && run(i + 1, false) > i + 1) i = run(i + 1, false);
  return i == rest.size();
}

// Python's bytes.strip(): ASCII whitespace.
std::string_view strip(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\v\f";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::vector<uint32_t> code_points(std::string_view s) {
  std::vector<uint32_t> cps;
  for (std::size_t p = 0; p < s.size();) {
    const detail::decoded_char c = detail::decode_utf8(s, p);
    cps.push_back(c.cp);
    p += c.len;
  }
  return cps;
}

}  // namespace

status jieba_segmenter::impl::load_user_dict(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "user dictionary " + path + " not found");
  std::string raw;
  for (std::size_t lineno = 1; std::getline(in, raw); ++lineno) {
    std::string_view line = strip(raw);
    while (line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);  // jieba: lstrip(BOM)
    if (line.empty()) continue;
    const std::vector<uint32_t> cps = code_points(line);
    for (uint32_t cp : cps) {
      if (cp == detail::invalid_code_point) {
        return make_error(errc::invalid_input,
                          "user dictionary " + path + ":" + std::to_string(lineno) + ": not UTF-8");
      }
    }
    // Shortest word first; the word needs at least one character.
    std::size_t word_len = 0;
    std::string_view freq_text;
    const detail::decoded_char first = detail::decode_utf8(line, 0);
    for (std::size_t end = first.len;; end += detail::decode_utf8(line, end).len) {
      if (optional_tail(line.substr(end), freq_text)) {
        word_len = end;
        break;
      }
    }
    const std::string_view word = line.substr(0, word_len);
    int64_t freq = -1;
    if (!freq_text.empty()) {
      const auto [ptr, ec] =
          std::from_chars(freq_text.data(), freq_text.data() + freq_text.size(), freq);
      if (ec != std::errc{}) {
        return make_error(
            errc::invalid_input,
            "user dictionary " + path + ":" + std::to_string(lineno) + ": frequency too large");
      }
    }
    add_word(word, code_points(word), freq);
  }
  if (in.bad()) return make_error(errc::io_error, "cannot read user dictionary " + path);
  return {};
}

void jieba_segmenter::impl::add_word(std::string_view word, std::span<const uint32_t> cps,
                                     int64_t freq) {
  if (freq < 0) {
    // suggest_freq(word, tune=False): enough to beat the word's no-HMM segmentation.
    const auto ftotal = static_cast<double>(total);
    double f = 1.0;
    std::vector<std::string_view> segs;
    cut(word, false, segs);
    for (std::string_view seg : segs) {
      const uint32_t node = trie.find(code_points(seg));
      const double seg_freq =
          node != detail::word_trie::none ? static_cast<double>(trie.freq(node)) : 1.0;
      f *= seg_freq / ftotal;
    }
    const uint32_t node = trie.find(cps);
    const uint64_t known = node != detail::word_trie::none ? trie.freq(node) : 1;
    const auto suggested = static_cast<uint64_t>(f * static_cast<double>(total)) + 1;
    freq = static_cast<int64_t>(std::max(suggested, known));
  }
  trie.set(cps, static_cast<uint64_t>(freq));
  total += static_cast<uint64_t>(freq);
  log_total = std::log(static_cast<double>(total));
  if (freq == 0) force_split.emplace(word);
}

}  // namespace simdup
