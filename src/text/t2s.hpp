// Traditional-to-simplified conversion with OpenCC, restricted to the spans it can change.
// Internal to the text component.
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace opencc {
class Converter;
}

namespace simdup::detail {

/// An OpenCC converter plus two sets of code points taken from its dictionaries: the keys'
/// code points, and the triggers (key code points that some entry actually changes). OpenCC
/// changes text only where a key matches, so no match spans a non-key code point: each maximal
/// run of key code points converts independently, and a run without a trigger comes out as it
/// went in. Text without triggers (English, nearly all simplified Chinese) skips OpenCC, and a
/// run where no multi-character key can start is converted character by character from a
/// table of OpenCC's own single-character results (OpenCC costs microseconds per call).
class t2s_converter {
 public:
  /// Loads an OpenCC configuration (e.g. /usr/share/opencc/t2s.json). Errors name the path:
  /// not_found when a file is missing, corrupt_data when OpenCC rejects it.
  static result<t2s_converter> load(const std::string& config_path);

  /// Bitmap over U+0000..U+10FFFF (bit cp % 64 of word cp / 64) of the trigger code points.
  const std::uint64_t* trigger_bitmap() const noexcept { return triggers_.data(); }
  /// Some dictionary key contains an ASCII character (never in OpenCC's own configurations).
  bool has_ascii_keys() const noexcept { return ascii_keys_; }
  /// No key and no conversion contains white space, a control, punctuation, a symbol or a
  /// decimal digit (true of OpenCC's own configurations): conversion then commutes with the
  /// normaliser's punctuation and white space steps, which never join or split a run of keys.
  bool word_characters_only() const noexcept { return word_characters_only_; }

  /// Converts the runs of `text` (valid UTF-8) that contain a trigger, in place. Returns false
  /// if OpenCC failed; `text` is then unchanged. Safe to call concurrently. `start` (a code
  /// point boundary) promises that no trigger starts before it: the scan begins at the start
  /// of the run of key code points that contains it.
  bool convert(std::string& text, std::size_t start = 0) const;

 private:
  static bool test(const std::vector<std::uint64_t>& bits, char32_t cp) noexcept {
    return cp < 0x110000 && ((bits[cp >> 6] >> (cp & 63)) & 1) != 0;
  }

  // False if a multi-character dictionary key may start in `run` (a non-empty run of keys).
  bool may_hold_phrase(std::string_view run) const;

  std::shared_ptr<const opencc::Converter> converter_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint64_t> triggers_;
  /// First two code points of every multi-character key, as (first << 21) | second.
  std::unordered_set<std::uint64_t> phrase_starts_;
  /// OpenCC's conversion of each trigger standing alone, where it differs from the input.
  std::unordered_map<char32_t, std::string> single_;
  /// Segmentation is max-match over a dictionary, so runs without phrase starts can use single_.
  bool single_chars_ = false;
  bool ascii_keys_ = false;
  bool word_characters_only_ = false;
};

}  // namespace simdup::detail
