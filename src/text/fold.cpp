// The fused character pass. ASCII is invariant under NFKC and folds with a table, so ASCII runs
// go through a branch-free table loop; only non-ASCII runs decode code points and call utf8proc.
#include "text/fold.hpp"

#include <simdup/utf8.hpp>

#include <utf8proc.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSSE3__)
#include <tmmintrin.h>
#endif

namespace simdup::detail {

namespace {

// Codes in fold_plan::ascii (outputs are < 0x80).
constexpr unsigned char act_separator = 0x80;  // collapse mode: whitespace, controls, punctuation
constexpr unsigned char act_drop = 0x81;       // removed digits
constexpr unsigned char act_punct = 0x82;      // no collapse: a punctuation run becomes one space

// Non-ASCII runs are normalised in chunks of about this many code points, split before a
// code point that can neither reorder nor compose with what precedes it.
constexpr std::size_t chunk_code_points = 4096;
// utf8proc's longest decomposition is 18 code points (U+FDFA); room per decomposed code point.
constexpr std::size_t max_decomposition = 32;

bool is_ascii_punctuation(unsigned char c) noexcept {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// A starter that no composition uses as its second element and whose decomposition starts with
// such a starter: CJK ideographs and Hangul syllables, which make up long non-ASCII runs.
bool is_chunk_boundary(char32_t cp) noexcept {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0xAC00 && cp <= 0xD7A3);
}

#if defined(__SSSE3__)
// For each 8-bit mask, the positions of its set bits in order, then 0x80 (pshufb writes 0):
// the shuffle that packs the kept bytes of 8 to the front.
struct compress_table {
  alignas(8) unsigned char index[256][8];
};

constexpr compress_table make_compress_table() {
  compress_table t{};
  for (unsigned m = 0; m < 256; ++m) {
    unsigned k = 0;
    for (unsigned b = 0; b < 8; ++b)
      if ((m >> b) & 1) t.index[m][k++] = static_cast<unsigned char>(b);
    for (; k < 8; ++k) t.index[m][k] = 0x80;
  }
  return t;
}

constexpr compress_table compress = make_compress_table();
#endif

// Canonical ordering (UAX #15): a stable sort of each run of non-starters by combining class.
// utf8proc_normalize_utf32 composes but expects this to have happened.
void canonical_order(utf8proc_int32_t* cps, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const int ccc = utf8proc_get_property(cps[i])->combining_class;
    if (ccc == 0) continue;
    std::size_t j = i;
    while (j > 0) {
      const int prev = utf8proc_get_property(cps[j - 1])->combining_class;
      if (prev <= ccc) break;
      std::swap(cps[j - 1], cps[j]);
      --j;
    }
  }
}

class folder {
 public:
  folder(const fold_plan& plan, std::string& out, std::vector<utf8proc_int32_t>& buffer,
         std::size_t expected)
      : plan_(plan), out_(out), buf_(buffer) {
    out_.clear();
    out_.resize(expected + 16);
    base_ = out_.data();
    o_ = base_;
    cap_end_ = base_ + out_.size();
  }

  void run(std::string_view text) {
    const char* const d = text.data();
    const std::size_t n = text.size();
    std::size_t pos = 0;
    while (pos < n) {
      const std::size_t a = pos + utf8::ascii_prefix_length(text.substr(pos));
      if (a == n) {
        ascii_run(d + pos, d + n);
        break;
      }
      // NFKC may compose the ASCII character before a non-ASCII run with it ("e" + U+0301),
      // so that character travels with the run. ASCII never composes with what precedes it.
      const std::size_t split = (a > pos && plan_.utf8proc_options != 0) ? a - 1 : a;
      ascii_run(d + pos, d + split);
      std::size_t k = a;
      while (k < n && static_cast<unsigned char>(d[k]) >= 0x80) ++k;
      unicode_run(d + split, d + k);
      pos = k;
    }
    out_.resize(static_cast<std::size_t>(o_ - base_));
  }

  fold_result result() const noexcept { return {invalid_, needs_t2s_, first_trigger_}; }

 private:
  void ensure(std::size_t room) {
    if (static_cast<std::size_t>(cap_end_ - o_) >= room) return;
    const std::size_t used = static_cast<std::size_t>(o_ - base_);
    out_.resize(std::max(out_.size() * 2, used + room));
    base_ = out_.data();
    o_ = base_ + used;
    cap_end_ = base_ + out_.size();
  }

  // Branch-free: word boundaries are too frequent to predict. A separator sets `pending_`; the
  // next character writes the one space first. A separator still pending at the end is never
  // written (trims the back). The only loop-carried dependencies are one add on `o` and, when
  // digits are dropped, one select on `pending`.
  template <bool kDrops>
  char* collapse_loop(const char* s, const char* e, const unsigned char* map, char* o) {
    bool pending = pending_;
    const auto scalar = [&](const char* to) {
      for (; s < to; ++s) {
        const unsigned char m = map[static_cast<unsigned char>(*s)];
        const std::size_t emit = m < 0x80;
        const std::size_t space = pending & emit;
        o[0] = ' ';
        o[space] = static_cast<char>(m);
        o += space + emit;
        if constexpr (kDrops) {
          pending = m == act_drop ? pending : m == act_separator;
        } else {
          pending = !emit;
        }
      }
    };
#if defined(__SSSE3__)
    if constexpr (!kDrops) {
      if (plan_.simd_words) {
        for (; e - s >= 16; s += 16) words_block(s, o, pending);
      }
    }
#endif
    scalar(e);
    pending_ = pending;
    return o;
  }

#if defined(__SSSE3__)
  // The default plan (letters and digits kept, every other ASCII byte a separator), or with
  // simd_punctuation the printable bytes kept, on 16 bytes, after the front is trimmed. A separator
  // is written (as ' ') only when it ends its run and a kept byte follows in the block; one ending
  // the block stays pending. The kept bytes and those spaces are packed with two 8-byte shuffles.
  void words_block(const char* s, char*& o, bool& pending) const {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
    const __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                        _mm_cmplt_epi8(lower, _mm_set1_epi8('z' + 1)));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    const __m128i keep = plan_.simd_punctuation
                             ? _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(' ')),
                                             _mm_cmplt_epi8(v, _mm_set1_epi8(0x7F)))
                             : _mm_or_si128(alpha, digit);
    const unsigned kept = static_cast<unsigned>(_mm_movemask_epi8(keep));
    const unsigned separators = ~kept & 0xFFFF;
    const unsigned written = kept | (separators & (kept >> 1));
    // Letters fold to lower case by setting bit 5; separators become ' '.
    const __m128i letters =
        plan_.simd_fold ? _mm_or_si128(v, _mm_and_si128(alpha, _mm_set1_epi8(0x20))) : v;
    const __m128i mapped =
        _mm_or_si128(_mm_and_si128(keep, letters), _mm_andnot_si128(keep, _mm_set1_epi8(' ')));
    // A run pending from before ends at a kept first byte: its space comes first.
    if (pending && (kept & 1) != 0) *o++ = ' ';
    const unsigned lo = written & 0xFF;
    const unsigned hi = written >> 8;
    // The high half's indices are offset by 8 (0x80 + 8 still has its top bit set).
    const __m128i shuffle = _mm_add_epi8(
        _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(compress.index[lo])),
                           _mm_loadl_epi64(reinterpret_cast<const __m128i*>(compress.index[hi]))),
        _mm_set_epi64x(0x0808080808080808LL, 0));
    const __m128i packed = _mm_shuffle_epi8(mapped, shuffle);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o), packed);
    o += __builtin_popcount(lo);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(o), _mm_unpackhi_epi64(packed, packed));
    o += __builtin_popcount(hi);
    pending = (separators & 0x8000) != 0;
  }
#endif

  void ascii_run(const char* s, const char* e) {
    const std::size_t n = static_cast<std::size_t>(e - s);
    ensure(n + 2);
    const unsigned char* map = plan_.ascii;
    char* o = o_;
    if (plan_.collapse_whitespace) {
      // Until something is written, separators and dropped bytes are skipped: trims the front.
      if (o == base_) {
        while (s < e && map[static_cast<unsigned char>(*s)] >= 0x80) ++s;
      }
      o = plan_.strip_digits ? collapse_loop<true>(s, e, map, o)
                             : collapse_loop<false>(s, e, map, o);
    } else {
      for (; s < e; ++s) {
        const unsigned char m = map[static_cast<unsigned char>(*s)];
        if (m < 0x80) {
          *o++ = static_cast<char>(m);
          in_punct_ = false;
        } else if (m == act_punct && !in_punct_) {
          *o++ = ' ';
          in_punct_ = true;
        }
      }
    }
    o_ = o;
  }

  void unicode_run(const char* s, const char* e) {
    if (plan_.utf8proc_options == 0) {
      while (s < e) emit(utf8::decode(s, e, invalid_));
      return;
    }
    std::size_t len = 0;
    int boundclass = 0;
    while (s < e) {
      const char32_t cp = utf8::decode(s, e, invalid_);
      if (plan_.nfkc) {
        bool composes_after = false;
        const char32_t image = nfkc_fast_image(cp, composes_after);
        if (image != 0 && (!composes_after || next_is_fast(s, e))) {
          flush(len);
          len = 0;
          emit(image);
          continue;
        }
      }
      if (len >= chunk_code_points && is_chunk_boundary(cp)) {
        flush(len);
        len = 0;
      }
      if (buf_.size() - len < max_decomposition)
        buf_.resize(std::max<std::size_t>(1024, buf_.size() * 2));
      const utf8proc_ssize_t got = utf8proc_decompose_char(
          static_cast<utf8proc_int32_t>(cp), buf_.data() + len, max_decomposition,
          static_cast<utf8proc_option_t>(plan_.utf8proc_options), &boundclass);
      if (got >= 0 && static_cast<std::size_t>(got) <= max_decomposition) {
        len += static_cast<std::size_t>(got);
      } else {  // cannot happen for a scalar value; keep the character rather than lose it
        buf_[len++] = static_cast<utf8proc_int32_t>(cp);
      }
    }
    flush(len);
  }

  // Whether the code point at `s` takes the fast path too. At the end of the run (`s == e`)
  // comes ASCII or the end of the text, and no ASCII character composes with what precedes it.
  static bool next_is_fast(const char* s, const char* e) noexcept {
    if (s == e) return true;
    std::size_t ignored = 0;
    bool composes_after = false;
    return nfkc_fast_image(utf8::decode(s, e, ignored), composes_after) != 0;
  }

  void flush(std::size_t len) {
    if (len == 0) return;
    if (plan_.nfkc) {
      canonical_order(buf_.data(), len);
      const utf8proc_ssize_t composed =
          utf8proc_normalize_utf32(buf_.data(), static_cast<utf8proc_ssize_t>(len),
                                   static_cast<utf8proc_option_t>(plan_.utf8proc_options));
      if (composed >= 0) len = static_cast<std::size_t>(composed);
    }
    for (std::size_t i = 0; i < len; ++i) emit(static_cast<char32_t>(buf_[i]));
  }

  // One code point through the removal and whitespace steps.
  void emit(char32_t cp) {
    ensure(8);
    if (cp < 0x80) {
      ascii_run_one(static_cast<char>(cp));
      return;
    }
    // CJK unified ideographs (Lo) are most of Chinese text: skip the property lookup.
    const auto category = cp >= 0x4E00 && cp <= 0x9FFF
                              ? UTF8PROC_CATEGORY_LO
                              : utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    const bool digit = category == UTF8PROC_CATEGORY_ND;
    const bool punct = category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_SO;
    const bool space = (category >= UTF8PROC_CATEGORY_ZS && category <= UTF8PROC_CATEGORY_CC);
    if (digit && plan_.strip_digits) return;
    if (plan_.collapse_whitespace && (space || (punct && plan_.strip_punctuation))) {
      pending_ = o_ != base_;
      return;
    }
    if (punct && plan_.strip_punctuation) {
      if (!in_punct_) *o_++ = ' ';
      in_punct_ = true;
      return;
    }
    if (pending_) *o_++ = ' ';
    pending_ = false;
    in_punct_ = false;
    if (plan_.t2s_triggers != nullptr && !needs_t2s_ && cp < 0x110000 &&
        ((plan_.t2s_triggers[cp >> 6] >> (cp & 63)) & 1) != 0) {
      needs_t2s_ = true;
      first_trigger_ = static_cast<std::size_t>(o_ - base_);
    }
    o_ += utf8::encode(cp, o_);
  }

  void ascii_run_one(char c) {
    ascii_run(&c, &c + 1);
  }

  const fold_plan& plan_;
  std::string& out_;
  std::vector<utf8proc_int32_t>& buf_;
  char* base_ = nullptr;
  char* o_ = nullptr;
  char* cap_end_ = nullptr;
  bool pending_ = false;   // collapse mode: a separator awaits the next character
  bool in_punct_ = false;  // no collapse: inside a punctuation run already written as a space
  std::size_t invalid_ = 0;
  bool needs_t2s_ = false;
  std::size_t first_trigger_ = 0;  // output offset of the first t2s trigger
};

}  // namespace

fold_plan fold_plan::make(const normalize_options& options) noexcept {
  fold_plan plan;
  plan.nfkc = options.nfkc;
  plan.strip_digits = options.strip_digits;
  plan.strip_punctuation = options.strip_punctuation;
  plan.collapse_whitespace = options.collapse_whitespace;
  plan.simd_words = options.collapse_whitespace && !options.strip_digits;
  plan.simd_punctuation = !options.strip_punctuation;
  plan.simd_fold = options.casefold;
  int flags = 0;
  // Default ignorables go with NFKC (NFKC_Casefold removes them); STABLE keeps compositions to
  // those Unicode guarantees never to change.
  if (options.nfkc) flags |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_STABLE | UTF8PROC_IGNORE;
  if (options.casefold) flags |= UTF8PROC_CASEFOLD;
  plan.utf8proc_options = flags;
  for (unsigned c = 0; c < 128; ++c) {
    unsigned char out = static_cast<unsigned char>(c);
    const bool space = c == ' ' || (c >= 0x09 && c <= 0x0D);
    const bool control = c < 0x20 || c == 0x7F;
    if (options.casefold && c >= 'A' && c <= 'Z') out = static_cast<unsigned char>(c + 32);
    if (options.strip_digits && c >= '0' && c <= '9') out = act_drop;
    if (options.strip_punctuation && is_ascii_punctuation(static_cast<unsigned char>(c))) {
      out = options.collapse_whitespace ? act_separator : act_punct;
    }
    if (options.collapse_whitespace && (space || control)) out = act_separator;
    plan.ascii[c] = out;
  }
  return plan;
}

fold_result fold(std::string_view text, const fold_plan& plan, std::string& out) {
  // Reused per thread: no allocation per call once warm. Dropped after a huge input so one
  // 100 MB document does not pin its buffer for the life of the thread.
  thread_local std::vector<utf8proc_int32_t> buffer;
  folder f(plan, out, buffer, text.size());
  f.run(text);
  if (buffer.size() > (std::size_t{1} << 20)) std::vector<utf8proc_int32_t>().swap(buffer);
  return f.result();
}

}  // namespace simdup::detail
