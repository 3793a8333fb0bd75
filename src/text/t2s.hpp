// Traditional-to-simplified conversion with OpenCC, restricted to the spans it can change.
// Internal to the text component.
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace opencc {
class Converter;
}

namespace simdup::detail {

/// An OpenCC converter plus the set of code points that occur in any of its dictionary keys.
/// OpenCC changes text only where a key matches, so a code point outside that set is never
/// part of a match: each maximal run of key code points converts independently, and text with
/// none is left as it is without calling OpenCC at all (most simplified Chinese, all English).
class t2s_converter {
 public:
  /// Loads an OpenCC configuration (e.g. /usr/share/opencc/t2s.json). Errors name the path:
  /// not_found when a file is missing, corrupt_data when OpenCC rejects it.
  static result<t2s_converter> load(const std::string& config_path);

  /// True if `cp` occurs in some dictionary key.
  bool is_key_code_point(char32_t cp) const noexcept {
    return cp < 0x110000 && ((bitmap_[cp >> 6] >> (cp & 63)) & 1) != 0;
  }
  /// The set as a bitmap over U+0000..U+10FFFF (bit cp % 64 of word cp / 64).
  const std::uint64_t* key_bitmap() const noexcept { return bitmap_.data(); }
  /// Some key contains an ASCII character (never with OpenCC's own configurations).
  bool has_ascii_keys() const noexcept { return ascii_keys_; }

  /// Converts each run of key code points in `text` (valid UTF-8) in place. Returns false if
  /// OpenCC failed; `text` is then unchanged. Safe to call concurrently.
  bool convert(std::string& text) const;

 private:
  std::shared_ptr<const opencc::Converter> converter_;
  std::vector<std::uint64_t> bitmap_;
  bool ascii_keys_ = false;
};

}  // namespace simdup::detail
