// The fused per-character pass of the normaliser: UTF-8 repair, NFKC, case folding, digit and
// punctuation removal and whitespace collapsing in one sweep. Internal to the text component.
#pragma once

#include <simdup/normalize.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace simdup::detail {

/// What fold() needs from normalize_options, precomputed once per normalizer.
struct fold_plan {
  /// Per ASCII byte: the output byte (< 0x80) or one of the fold_action_* codes.
  unsigned char ascii[128];
  /// utf8proc options for non-ASCII text; 0 when neither NFKC nor case folding is on.
  int utf8proc_options = 0;
  bool nfkc = false;
  bool strip_digits = false;
  bool strip_punctuation = false;
  bool collapse_whitespace = false;
  /// White space collapses and no digit is dropped: enables the 16-byte path, where ASCII
  /// letters and digits are kept and every other byte separates words (the default options),
  /// or with simd_punctuation every printable byte is kept and only white space and controls
  /// separate (verification's options). simd_fold: letters fold to lower case there.
  bool simd_words = false;
  bool simd_punctuation = false;
  bool simd_fold = false;
  /// Code points that traditional-to-simplified conversion may change, as a bitmap over
  /// U+0000..U+10FFFF (t2s_converter::trigger_bitmap()); null when t2s is off.
  const std::uint64_t* t2s_triggers = nullptr;

  static fold_plan make(const normalize_options& options) noexcept;
};

struct fold_result {
  std::size_t invalid_utf8 = 0;
  bool needs_t2s = false;  ///< the output contains a non-ASCII code point of plan.t2s_triggers
  /// Where the first of them starts in the output (bytes), when needs_t2s.
  std::size_t first_t2s_trigger = 0;
};

/// Code points that skip utf8proc when NFKC is on: each maps, under NFKC with or without case
/// folding, to the single code point cp - offset (case folding of an ASCII image is left to
/// the plan's ASCII table), has combining class 0 and never composes with what precedes it;
/// so it ends a normalisation segment and can be emitted directly. Unless `composes_after`,
/// its image never composes with what follows either; otherwise (full-width letters: "Ａ" is
/// "A", and "A" + U+030A composes) the next code point must be fast too, or ASCII, or the end.
/// tests/unit/text/fold_fast_path_test.cpp proves all this for every code point against
/// utf8proc.
struct nfkc_fast_range {
  char32_t first;
  char32_t last;  ///< inclusive
  char32_t offset;
  bool composes_after;
};

inline constexpr nfkc_fast_range nfkc_fast_ranges[] = {
    {0x2010, 0x2010, 0, false},       // hyphen
    {0x2012, 0x2016, 0, false},       // dashes, double vertical line
    {0x2018, 0x2023, 0, false},       // quotation marks, daggers, bullets
    {0x2027, 0x2027, 0, false},       // hyphenation point
    {0x3000, 0x3000, 0x2FE0, false},  // ideographic space -> ' '
    {0x3001, 0x3003, 0, false},       // ideographic comma, full stop, ditto mark
    {0x3008, 0x3011, 0, false},       // CJK brackets
    {0x3014, 0x301F, 0, false},       // CJK brackets, wave dash, quotation marks
    {0x3400, 0x4DBF, 0, false},       // CJK unified ideographs extension A
    {0x4E00, 0x9FFF, 0, false},       // CJK unified ideographs
    {0xFF01, 0xFF5E, 0xFEE0, true},   // full-width ASCII -> ASCII
};

/// The image of `cp` from nfkc_fast_ranges, or 0 if `cp` is not in them.
inline char32_t nfkc_fast_image(char32_t cp, bool& composes_after) noexcept {
  composes_after = false;
  if (cp >= 0x4E00 && cp <= 0x9FFF) return cp;  // by far the most frequent
  for (const nfkc_fast_range& r : nfkc_fast_ranges) {
    if (cp >= r.first && cp <= r.last) {
      composes_after = r.composes_after;
      return cp - r.offset;
    }
  }
  return 0;
}

/// Replaces `out` with `text` after the character-level steps (`text` must not alias `out`).
fold_result fold(std::string_view text, const fold_plan& plan, std::string& out);

}  // namespace simdup::detail
