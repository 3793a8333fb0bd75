// Documents to 64-bit SimHash fingerprints: normalise, extract features, weight, hash, vote.
#pragma once

#include <simdup/error.hpp>
#include <simdup/normalize.hpp>
#include <simdup/simhash.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// A feature and its weight, as extracted from text or supplied by the caller.
struct weighted_feature {
  std::string text;
  double weight = 1.0;
};

/// Splits normalised text into words. Implemented by the jieba segmenter; the extension point
/// for any other language-specific tokenizer. Must be safe to call concurrently.
class segmenter {
 public:
  virtual ~segmenter() = default;
  /// Appends the words of `text` (views into `text`) to `words`.
  virtual void segment(std::string_view text, std::vector<std::string_view>& words) const = 0;
};

enum class feature_kind {
  shingles,     ///< overlapping character n-grams over code points (default)
  words,        ///< Unicode words (UAX #29-like: letters/digits runs; each CJK ideograph alone)
  word_ngrams,  ///< overlapping n-grams of words, joined by one space
  jieba,        ///< every word from the jieba segmenter
  keywords,     ///< jieba words weighted by TF-IDF, top-K (jieba.analyse.extract_tags)
};

struct feature_options {
  feature_kind kind = feature_kind::shingles;
  /// Code points per shingle (shingles). A shorter document yields one feature: the whole text.
  std::size_t shingle_width = 4;
  /// Words per n-gram (word_ngrams).
  std::size_t ngram = 2;
  /// Tokens with fewer code points are dropped (words, jieba, keywords). 1 keeps everything.
  std::size_t min_token_length = 1;
  /// Segmenter for kind jieba/keywords; when null, the jieba dictionary is loaded from
  /// `jieba_dict` (or the default location).
  std::shared_ptr<const segmenter> segmenter;
  /// Path of the jieba dictionary (converted form); empty means the built-in default location.
  std::string jieba_dict;
};

enum class weighting_scheme {
  count,   ///< weight = occurrences of the feature (default)
  binary,  ///< weight = 1 per distinct feature
  tfidf,   ///< weight = count * idf / total count (jieba's extract_tags formula)
};

struct weighting_options {
  weighting_scheme scheme = weighting_scheme::count;
  /// IDF file, `word idf` per line (jieba's idf.txt format). Required for tfidf.
  std::string idf_path;
  /// IDF for words not in the file; negative means the median IDF of the file (jieba's rule).
  double unknown_idf = -1.0;
  /// Stop-word file, one word per line; matched after normalisation, case-insensitively.
  std::string stopwords_path;
  /// Keep only the K heaviest features (ties: first occurrence first). 0 keeps all.
  std::size_t top_k = 0;
};

/// Bit-for-bit compatibility with other tools.
enum class compat_mode {
  none,            ///< simdup's own pipeline, configured by the options
  python_simhash,  ///< the Python `simhash` package v2.x (docs/compat.md)
  jieba_tfidf,     ///< jieba.analyse.extract_tags(text, topK=K, withWeight=True) -> SimHash
};

struct fingerprint_options {
  normalize_options normalize;
  feature_options features;
  weighting_options weighting;
  hash_kind hash = hash_kind::xxh3;
  compat_mode compat = compat_mode::none;
  /// Documents with fewer distinct features get status too_short. At least 1.
  std::size_t min_features = 1;
};

enum class fingerprint_status {
  ok,
  too_short,  ///< fewer than min_features features: no fingerprint (never the value 0)
};
const char* status_name(fingerprint_status s) noexcept;

struct fingerprint_result {
  uint64_t fingerprint = 0;  ///< meaningful only when status == ok
  fingerprint_status status = fingerprint_status::too_short;
  uint32_t features = 0;     ///< distinct features that voted
  std::size_t invalid_utf8 = 0;  ///< invalid UTF-8 sequences replaced while normalising
};

/// The configured pipeline. Create once (loads dictionaries, IDF and stop words); the const
/// member functions are safe to call from many threads.
class fingerprinter {
 public:
  /// Errors name the offending file or option (missing IDF file, shingle_width 0, ...).
  static result<fingerprinter> create(const fingerprint_options& options);

  fingerprint_result fingerprint(std::string_view text) const;
  /// Caller-supplied features (tokens with weights); no normalisation is applied.
  fingerprint_result fingerprint_features(std::span<const weighted_feature> features) const;
  /// Fingerprints many texts; out.size() must equal texts.size().
  void fingerprint_batch(std::span<const std::string_view> texts,
                         std::span<fingerprint_result> out) const;

  /// The weighted features fingerprint() would vote with, heaviest first, for debugging.
  std::vector<weighted_feature> features(std::string_view text) const;

  const fingerprint_options& options() const noexcept;

  fingerprinter(fingerprinter&&) noexcept;
  fingerprinter& operator=(fingerprinter&&) noexcept;
  ~fingerprinter();

 private:
  struct impl;
  explicit fingerprinter(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
