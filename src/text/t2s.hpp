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

/// An OpenCC converter plus two sets of code points taken from its dictionaries: the keys'
/// code points, and the triggers (key code points that some entry actually changes). OpenCC
/// changes text only where a key matches, so no match spans a non-key code point: each maximal
/// run of key code points converts independently, and a run without a trigger comes out as it
/// went in. Text without triggers (English, nearly all simplified Chinese) skips OpenCC.
class t2s_converter {
 public:
  /// Loads an OpenCC configuration (e.g. /usr/share/opencc/t2s.json). Errors name the path:
  /// not_found when a file is missing, corrupt_data when OpenCC rejects it.
  static result<t2s_converter> load(const std::string& config_path);

  /// Bitmap over U+0000..U+10FFFF (bit cp % 64 of word cp / 64) of the trigger code points.
  const std::uint64_t* trigger_bitmap() const noexcept { return triggers_.data(); }
  /// Some dictionary key contains an ASCII character (never in OpenCC's own configurations).
  bool has_ascii_keys() const noexcept { return ascii_keys_; }

  /// Converts the runs of `text` (valid UTF-8) that contain a trigger, in place. Returns false
  /// if OpenCC failed; `text` is then unchanged. Safe to call concurrently.
  bool convert(std::string& text) const;

 private:
  static bool test(const std::vector<std::uint64_t>& bits, char32_t cp) noexcept {
    return cp < 0x110000 && ((bits[cp >> 6] >> (cp & 63)) & 1) != 0;
  }

  std::shared_ptr<const opencc::Converter> converter_;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint64_t> triggers_;
  bool ascii_keys_ = false;
};

}  // namespace simdup::detail
