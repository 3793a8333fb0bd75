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
  /// ASCII letters and digits are kept and every other ASCII byte separates words (the
  /// default options): enables the 16-byte path. simd_fold: letters fold to lower case there.
  bool simd_words = false;
  bool simd_fold = false;
  /// Code points that traditional-to-simplified conversion may change, as a bitmap over
  /// U+0000..U+10FFFF (t2s_converter::trigger_bitmap()); null when t2s is off.
  const std::uint64_t* t2s_triggers = nullptr;

  static fold_plan make(const normalize_options& options) noexcept;
};

struct fold_result {
  std::size_t invalid_utf8 = 0;
  bool needs_t2s = false;  ///< the output contains a non-ASCII code point of plan.t2s_triggers
};

/// Replaces `out` with `text` after the character-level steps (`text` must not alias `out`).
fold_result fold(std::string_view text, const fold_plan& plan, std::string& out);

}  // namespace simdup::detail
