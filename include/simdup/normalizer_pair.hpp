// Two normalisations of each text from one pass where the options allow: the dedup job's
// fingerprint text and verification text.
#pragma once

#include <simdup/error.hpp>
#include <simdup/normalize.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace simdup {

/// Two normalisations of each text, as two normalizers would make them: `fingerprint`'s and
/// `verify`'s (the dedup job's fingerprint text and verification text). Where `verify` differs
/// from `fingerprint` only in keeping punctuation and digits (and in cjk_content), with white
/// space collapsed in both, the text is normalised once, under `verify`, and the fingerprint's
/// text is made from that by one pass of the punctuation, digit and white space steps: the same
/// text, because NFKC and case folding act alike on either side of those steps and t2s never
/// matches across them. Otherwise each text is normalised twice.
class normalizer_pair {
 public:
  /// Fails as normalizer::create does.
  static result<normalizer_pair> create(const normalize_options& fingerprint,
                                        const normalize_options& verify);

  /// Replaces `fingerprint_text` and `verify_text` (neither may alias `text`). `stats` are
  /// those of the normalisation of `text` (the fingerprint's when there are two).
  void normalize(std::string_view text, std::string& fingerprint_text, std::string& verify_text,
                 normalize_stats* stats = nullptr) const;

  /// Whether each text is normalised once (the fingerprint's text made from verification's).
  bool normalizes_once() const noexcept;

  normalizer_pair(normalizer_pair&&) noexcept;
  normalizer_pair& operator=(normalizer_pair&&) noexcept;
  ~normalizer_pair();

 private:
  struct impl;
  explicit normalizer_pair(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
