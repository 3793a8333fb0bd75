// Text normalisation: the configurable steps applied before feature extraction.
#pragma once

#include <simdup/error.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace simdup {

/// Steps, applied in this order: html, utf-8 repair, nfkc, casefold, t2s, digits, punctuation,
/// whitespace, cjk_content. Defaults suit web text in English and Chinese.
struct normalize_options {
  /// Treat input as HTML: drop tags, comments and <script>/<style> bodies; decode entities
  /// (&amp; &nbsp; &#x4e2d; ...). Block-level and unknown tags become whitespace; phrasing
  /// tags (a, b, i, span, em, ...) do not, so "<b>bo</b>ld" reads "bold".
  bool html = false;
  /// Unicode NFKC: full-width forms to half-width, compatibility characters folded. Default
  /// ignorable code points (soft hyphen, zero-width space, BOM, ...) are removed too, as in
  /// Unicode's NFKC_Casefold.
  bool nfkc = true;
  /// Unicode case folding (full folding, e.g. "Straße" -> "strasse").
  bool casefold = true;
  /// Traditional to simplified Chinese with OpenCC's t2s conversion. OpenCC only sees runs of
  /// characters that occur in its dictionaries, so English and most simplified text skip it.
  bool t2s = true;
  /// Remove Unicode punctuation (P*) and symbols (S*), replacing each run with one space.
  bool strip_punctuation = true;
  /// Remove decimal digits (Nd).
  bool strip_digits = false;
  /// Collapse runs of whitespace (Unicode White_Space, and other control characters) to one
  /// ASCII space and trim both ends.
  bool collapse_whitespace = true;
  /// In CJK text (CJK ideographs, hiragana and katakana are at least cjk_content_share of its
  /// letters), remove every white space and punctuation (P*) character; symbols (S*) stay. CJK
  /// writing puts no space between words, so spaces and punctuation there are layout, in which
  /// two editions of one text differ (zh-CN and zh-TW punctuation, line breaks). Other text is
  /// left as the steps before made it. Off by default; the dedup job's verification shingles use
  /// it (verify.hpp).
  bool cjk_content = false;
  /// OpenCC configuration used for t2s. Empty means "t2s.json" in the OpenCC data directory
  /// chosen at build time (CMake's SIMDUP_OPENCC_DATA_DIR, /usr/share/opencc on Debian).
  std::string opencc_config;
};

/// normalize_options::cjk_content: the least share of CJK characters among a text's letters
/// (Unicode L*) that makes it CJK text. Below it, a Latin text that quotes Chinese words or
/// carries a Chinese site's navigation is compared as a Latin text (docs/tuning.md).
inline constexpr double cjk_content_share = 0.3;

/// What normalisation had to repair. normalize() overwrites every field.
struct normalize_stats {
  /// Invalid UTF-8 sequences, each replaced by U+FFFD (then removed as a symbol if
  /// strip_punctuation is on). A sequence is counted once however many bytes it spans.
  std::size_t invalid_utf8 = 0;
  /// 1 if OpenCC failed on this text (it is then returned without t2s conversion), else 0.
  std::size_t t2s_failures = 0;
};

/// Applies normalize_options. Create once (OpenCC dictionaries load here); normalize() is const
/// and safe to call from many threads at once.
class normalizer {
 public:
  /// Fails with errc::not_found if OpenCC data is needed (t2s) and missing, and with
  /// errc::corrupt_data if OpenCC cannot load it; the message names the path.
  static result<normalizer> create(const normalize_options& options);

  /// Replaces `out` with the normalised form of `text` (which may be a view into `out`).
  /// Linear in the input size; ASCII takes a fast path, and OpenCC runs only on text that
  /// contains a character it would change.
  void normalize(std::string_view text, std::string& out, normalize_stats* stats = nullptr) const;
  std::string normalize(std::string_view text, normalize_stats* stats = nullptr) const;

  const normalize_options& options() const noexcept;

  /// The OpenCC configuration t2s loads when normalize_options::opencc_config is empty.
  static std::string default_opencc_config();

  normalizer(normalizer&&) noexcept;
  normalizer& operator=(normalizer&&) noexcept;
  ~normalizer();

 private:
  struct impl;
  explicit normalizer(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
