// jieba.cut (default mode): dictionary DAG + maximum-probability route per block of Chinese
// characters and ASCII word characters, HMM for leftover runs, one word per other character.
#include "jieba/segmenter_impl.hpp"
#include "jieba/utf8.hpp"

#include <algorithm>

namespace simdup {

namespace {

// A block longer than this many code points is cut into pieces at positions no dictionary word
// spans, so memory stays bounded and time linear on text without punctuation. jieba routes the
// whole block at once; the routes agree except for floating-point rounding (docs/chinese.md).
constexpr std::size_t max_block = std::size_t{1} << 16;
constexpr std::size_t block_slack = 4096;

// Per-thread buffers, reused across calls: most documents are short, and allocating these per
// call costs more than segmenting a sentence.
struct scratch {
  std::vector<uint32_t> cps;      // code points of the current block
  std::vector<std::size_t> offs;  // byte offset of each, then the block's end
  std::vector<double> best;
  std::vector<uint32_t> next;
  std::vector<uint8_t> states, back;
};

class cutter {
 public:
  cutter(const jieba_segmenter::impl& d, std::string_view text, bool hmm,
         std::vector<std::string_view>& out, scratch& s)
      : d_(d),
        text_(text),
        hmm_(hmm),
        out_(out),
        cps_(s.cps),
        offs_(s.offs),
        best_(s.best),
        next_(s.next),
        states_(s.states),
        back_(s.back) {
    cps_.clear();
    offs_.clear();
  }

  void run() {
    std::size_t p = 0;
    while (p < text_.size()) {
      const detail::decoded_char c = detail::decode_utf8(text_, p);
      if (detail::block_char(c.cp)) {
        cps_.push_back(c.cp);
        offs_.push_back(p);
        p += c.len;
        if (cps_.size() >= max_block + block_slack) cut_long_block();
        continue;
      }
      finish_block(p);
      const std::size_t len =
          (c.cp == '\r' && p + 1 < text_.size() && text_[p + 1] == '\n') ? 2 : c.len;
      out_.push_back(text_.substr(p, len));
      p += len;
    }
    finish_block(p);
  }

 private:
  // Words are ranges [a, b) of code points of the current block; offs_ maps them to bytes.
  void word(std::size_t a, std::size_t b) {
    out_.push_back(text_.substr(offs_[a], offs_[b] - offs_[a]));
  }

  void finish_block(std::size_t end) {
    if (cps_.empty()) return;
    offs_.push_back(end);
    cut_block(cps_.size());
    cps_.clear();
    offs_.clear();
  }

  // Cuts the first part of an overlong block at the first position past max_block that no
  // dictionary word crosses (or at max_block if there is none) and drops it from the buffers.
  void cut_long_block() {
    const std::size_t reach = std::max<std::size_t>(d_.trie.max_word_length(), 1);
    std::size_t cut = max_block;
    for (std::size_t e = max_block; e + reach <= cps_.size(); ++e) {
      if (!crossed(e, reach)) {
        cut = e;
        break;
      }
    }
    cut_block(cut);
    cps_.erase(cps_.begin(), cps_.begin() + static_cast<std::ptrdiff_t>(cut));
    offs_.erase(offs_.begin(), offs_.begin() + static_cast<std::ptrdiff_t>(cut));
  }

  bool crossed(std::size_t e, std::size_t reach) const {
    for (std::size_t j = e - std::min(e, reach - 1); j < e; ++j) {
      uint32_t node = 0;
      for (std::size_t i = j; i < cps_.size(); ++i) {
        node = d_.trie.child(node, cps_[i]);
        if (node == detail::word_trie::none) break;
        if (i >= e && d_.trie.freq(node) != 0) return true;
      }
    }
    return false;
  }

  // jieba's get_DAG + calc fused: best_[i] is the log probability of the best route from i,
  // next_[i] the last character of its first word.
  void route(std::size_t n) {
    best_.resize(n + 1);
    next_.resize(n);
    best_[n] = 0.0;
    const auto& trie = d_.trie;
    const double log_total = d_.log_total;
    for (std::size_t idx = n; idx-- > 0;) {
      double bv = 0.0;
      std::size_t bx = n;
      uint32_t node = 0;
      for (std::size_t i = idx; i < n; ++i) {
        node = trie.child(node, cps_[i]);
        if (node == detail::word_trie::none) break;
        if (trie.freq(node) == 0) continue;
        // Python: log(freq) - logtotal + route[x + 1][0], max over (value, x): ties to later x.
        const double v = trie.log_freq(node) - log_total + best_[i + 1];
        if (bx == n || v >= bv) {
          bv = v;
          bx = i;
        }
      }
      if (bx == n) {  // no word starts here: the character alone, frequency treated as 1
        bv = 0.0 - log_total + best_[idx + 1];
        bx = idx;
      }
      best_[idx] = bv;
      next_[idx] = static_cast<uint32_t>(bx);
    }
  }

  void cut_block(std::size_t n) {
    route(n);
    std::size_t x = 0;
    std::size_t buf = 0;  // single characters gather in [buf, x)
    if (!hmm_) {
      // jieba's __cut_DAG_NO_HMM: single ASCII letters/digits join into one word.
      while (x < n) {
        const std::size_t y = next_[x] + 1;
        if (y - x == 1 && detail::ascii_alnum(cps_[x])) {
          x = y;
          continue;
        }
        if (buf < x) word(buf, x);
        word(x, y);
        buf = x = y;
      }
      if (buf < x) word(buf, x);
      return;
    }
    while (x < n) {
      const std::size_t y = next_[x] + 1;
      if (y - x == 1) {
        x = y;
        continue;
      }
      flush_singles(buf, x);
      word(x, y);
      buf = x = y;
    }
    flush_singles(buf, x);
  }

  // A run of single-character route steps: a known word stays characters; an unknown run goes
  // to the HMM (jieba's finalseg.cut).
  void flush_singles(std::size_t a, std::size_t b) {
    if (b - a == 0) return;
    if (b - a == 1) return word(a, b);
    const uint32_t node = d_.trie.find(std::span(cps_).subspan(a, b - a));
    if (node != detail::word_trie::none && d_.trie.freq(node) != 0) {
      for (std::size_t i = a; i < b; ++i) word(i, i + 1);
      return;
    }
    for (std::size_t i = a; i < b;) {
      std::size_t j = i;
      const bool han = detail::hmm_char(cps_[i]);
      while (j < b && detail::hmm_char(cps_[j]) == han) ++j;
      if (han)
        hmm_cut(i, j);
      else
        skip_split(i, j);
      i = j;
    }
  }

  // finalseg.re_skip = ([a-zA-Z0-9]+(?:\.\d+)?%?): matches are words, and so is each
  // non-empty stretch between them.
  void skip_split(std::size_t a, std::size_t b) {
    auto digit = [&](std::size_t i) { return cps_[i] >= '0' && cps_[i] <= '9'; };
    std::size_t pending = a;
    for (std::size_t i = a; i < b;) {
      if (!detail::ascii_alnum(cps_[i])) {
        ++i;
        continue;
      }
      const std::size_t s = i;
      while (i < b && detail::ascii_alnum(cps_[i])) ++i;
      if (i + 1 < b && cps_[i] == '.' && digit(i + 1)) {
        i += 2;
        while (i < b && digit(i)) ++i;
      }
      if (i < b && cps_[i] == '%') ++i;
      if (pending < s) word(pending, s);
      word(s, i);
      pending = i;
    }
    if (pending < b) word(pending, b);
  }

  void hmm_cut(std::size_t a, std::size_t b) {
    d_.hmm.viterbi(std::span(cps_).subspan(a, b - a), states_, back_);
    // jieba's finalseg.__cut, including its use of a stale `begin` after an E without a B.
    std::size_t begin = 0, next = 0;
    for (std::size_t i = 0; i < b - a; ++i) {
      switch (states_[i]) {
        case detail::hmm_model::B:
          begin = i;
          break;
        case detail::hmm_model::E:
          hmm_word(a + begin, a + i + 1), next = i + 1;
          break;
        case detail::hmm_model::S:
          hmm_word(a + i, a + i + 1), next = i + 1;
          break;
        default:
          break;
      }
    }
    if (next < b - a) hmm_word(a + next, b);
  }

  void hmm_word(std::size_t a, std::size_t b) {
    if (!d_.force_split.empty() &&
        d_.force_split.contains(std::string(text_.substr(offs_[a], offs_[b] - offs_[a])))) {
      for (std::size_t i = a; i < b; ++i) word(i, i + 1);
      return;
    }
    word(a, b);
  }

  const jieba_segmenter::impl& d_;
  std::string_view text_;
  bool hmm_;
  std::vector<std::string_view>& out_;
  std::vector<uint32_t>& cps_;
  std::vector<std::size_t>& offs_;
  std::vector<double>& best_;
  std::vector<uint32_t>& next_;
  std::vector<uint8_t>& states_;
  std::vector<uint8_t>& back_;
};

}  // namespace

void jieba_segmenter::impl::cut(std::string_view text, bool with_hmm,
                                std::vector<std::string_view>& out) const {
  thread_local scratch buffers;
  cutter(*this, text, with_hmm, out, buffers).run();
}

}  // namespace simdup
