// The normaliser's fast path (nfkc_fast_ranges in src/text/fold.hpp) skips utf8proc for CJK
// ideographs, common punctuation and full-width ASCII. These tests prove, for every code point
// of those ranges, what the fast path assumes, asking utf8proc itself; then compare the
// normaliser with a plain utf8proc_map reference on random mixtures of fast code points with
// the characters that compose or reorder around them.
#include <simdup/normalize.hpp>
#include <simdup/utf8.hpp>

#include <gtest/gtest.h>
#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "text/fold.hpp"

namespace simdup::detail {
namespace {

constexpr int nfkc_flags =
    UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_STABLE | UTF8PROC_IGNORE;  // as fold_plan

std::string map(const std::string& text, int flags) {
  utf8proc_uint8_t* out = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &out,
                                          static_cast<utf8proc_option_t>(flags));
  std::string result = n < 0 ? "<error>" : std::string(reinterpret_cast<char*>(out), n);
  std::free(out);
  return result;
}

std::string utf8_of(char32_t cp) {
  std::string s;
  utf8::append(s, cp);
  return s;
}

// utf8proc marks the first element of a canonical composition with comb_index < 0x8000 and
// the second with 0x8000..0xFFFE; UINT16_MAX takes part in none. Hangul is algorithmic.
bool composes_with_following(char32_t cp) {
  const bool hangul_l_or_lv =
      (cp >= 0x1100 && cp <= 0x1112) || (cp >= 0xAC00 && cp <= 0xD7A3 && (cp - 0xAC00) % 28 == 0);
  return hangul_l_or_lv ||
         utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->comb_index < 0x8000;
}

bool composes_with_preceding(char32_t cp) {
  const bool hangul_v_or_t = (cp >= 0x1161 && cp <= 0x1175) || (cp >= 0x11A8 && cp <= 0x11C2);
  const auto index = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->comb_index;
  return hangul_v_or_t || (index >= 0x8000 && index != UINT16_MAX);
}

TEST(FoldFastPath, EveryCodePointIsWhatUtf8procSays) {
  std::size_t checked = 0;
  for (const nfkc_fast_range& r : nfkc_fast_ranges) {
    ASSERT_LE(r.first, r.last);
    for (char32_t cp = r.first; cp <= r.last; ++cp) {
      bool after = false;
      const char32_t image = nfkc_fast_image(cp, after);
      ASSERT_EQ(image, cp - r.offset) << std::hex << static_cast<uint32_t>(cp);
      ASSERT_EQ(after, r.composes_after) << std::hex << static_cast<uint32_t>(cp);
      // NFKC maps it alone to its image; case folding changes only ASCII images (which the
      // plan's ASCII table folds).
      const char32_t folded = image >= 'A' && image <= 'Z' ? image + 32 : image;
      ASSERT_EQ(map(utf8_of(cp), nfkc_flags), utf8_of(image))
          << std::hex << static_cast<uint32_t>(cp);
      ASSERT_EQ(map(utf8_of(cp), nfkc_flags | UTF8PROC_CASEFOLD), utf8_of(folded))
          << std::hex << static_cast<uint32_t>(cp);
      // A starter that nothing before it can compose with or reorder around.
      for (char32_t c : {cp, image}) {
        const auto* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
        ASSERT_EQ(p->combining_class, 0) << std::hex << static_cast<uint32_t>(c);
        ASSERT_FALSE(composes_with_preceding(c)) << std::hex << static_cast<uint32_t>(c);
      }
      // And unless flagged, nothing after it composes with its image.
      if (!r.composes_after) {
        ASSERT_FALSE(composes_with_following(image)) << std::hex << static_cast<uint32_t>(cp);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 27000u);
}

// The default options without t2s, spelled out on top of utf8proc_map: NFKC_Casefold of the
// whole text, then digits kept, punctuation, symbols, spaces and controls as separators.
std::string reference(const std::string& text) {
  const std::string mapped = map(text, nfkc_flags | UTF8PROC_CASEFOLD);
  std::string out;
  bool pending = false;
  for (const char* p = mapped.data(); p < mapped.data() + mapped.size();) {
    const char32_t cp = utf8::decode(p, mapped.data() + mapped.size());
    const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
    const bool separator = (category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_SO) ||
                           (category >= UTF8PROC_CATEGORY_ZS && category <= UTF8PROC_CATEGORY_CC);
    if (separator) {
      pending = !out.empty();
      continue;
    }
    if (pending) out += ' ';
    pending = false;
    utf8::append(out, cp);
  }
  return out;
}

TEST(FoldFastPath, NormaliserMatchesUtf8procOnMixtures) {
  normalize_options o;
  o.t2s = false;
  auto n = normalizer::create(o);
  ASSERT_TRUE(n) << n.error().message;
  // Fast code points next to what composes or reorders: combining marks (acute, ring, long
  // solidus overlay, kana voicing), Hangul jamo and syllables, kana, ASCII that composes.
  const std::vector<char32_t> alphabet = {
      U'a',   U'A',   U'e',   U'<',   U'=',   U' ',   U',',   U'1',   0x4E00,
      0x4E2D, 0x9FFF, 0x3400, 0x3001, 0x3002, 0x300C, 0x3000, 0x201C, 0x2014,
      0x2022, 0xFF21, 0xFF45, 0xFF1C, 0xFF1D, 0xFF0C, 0xFF10, 0x0301, 0x030A,
      0x0338, 0x0300, 0x0323, 0x3099, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x304B,
      0x212B, 0xFB01, 0x00C5, 0x00AD, 0x200B, 0x2011, 0x2024, 0xFF5F, 0x3003};
  std::mt19937 rng(99);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const std::size_t len = rng() % 12;
    for (std::size_t i = 0; i < len; ++i) utf8::append(text, alphabet[rng() % alphabet.size()]);
    ASSERT_EQ(n->normalize(text), reference(text)) << text;
  }
}

}  // namespace
}  // namespace simdup::detail
