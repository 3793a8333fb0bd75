// Documents to 64-bit SimHash fingerprints: normalise, extract features, weight, hash, vote.
//
// The vote: bit i of a fingerprint is set iff the sum over features of +weight (feature hash
// bit i set) or -weight (clear) is > 0. A sum of exactly 0 (a tie) gives 0. With the default
// count weighting every feature occurrence votes +1/-1, so bit i is set iff more than half of
// the occurrences have it set. compat_mode::python_simhash follows the Python package's own
// rule instead (docs/compat.md).
#pragma once

#include <simdup/error.hpp>
#include <simdup/normalize.hpp>
#include <simdup/segmenter.hpp>
#include <simdup/simhash.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

/// Stable 64-bit feature hashes. Never a per-process seeded hash.
enum class hash_kind {
  xxh3,   ///< XXH3-64 with seed 0 (default): fast and stable across runs and machines
  fnv1a,  ///< FNV-1a 64
  md5,    ///< last 8 bytes of MD5, big-endian (python-simhash compatibility)
};

/// Hashes one feature's UTF-8 bytes.
uint64_t hash_feature(hash_kind kind, std::string_view feature) noexcept;

enum class feature_kind {
  shingles,     ///< overlapping character n-grams over code points, spaces included (default)
  words,        ///< Unicode words: runs of letters, marks, digits (L*, M*, N*); each CJK
                ///< ideograph is a word alone; everything else separates words
  word_ngrams,  ///< overlapping n-grams of (filtered) words, joined by one space; fewer words
                ///< than `ngram` give one n-gram of all of them
  jieba,        ///< every word from the jieba segmenter
  keywords,     ///< jieba words weighted by TF-IDF, top-K (jieba.analyse.extract_tags)
};

struct feature_options {
  feature_kind kind = feature_kind::shingles;
  /// Code points per shingle (shingles), 1..1024. A shorter (non-empty) document yields one
  /// feature: the whole text; an empty one yields none.
  std::size_t shingle_width = 4;
  /// Words per n-gram (word_ngrams), 1..64.
  std::size_t ngram = 2;
  /// Tokens with fewer code points (after trimming surrounding whitespace) are dropped (words,
  /// word_ngrams before joining, jieba, keywords); whitespace-only tokens are always dropped.
  /// 0 and 1 keep every other token. Shingles are never filtered.
  std::size_t min_token_length = 1;
  /// Segmenter for kind jieba/keywords (any segmenter works: its words become the tokens).
  std::shared_ptr<const simdup::segmenter> segmenter;
  /// Path of the jieba dictionary (converted form); empty means the built-in default location.
  std::string jieba_dict;
  /// jieba user dictionaries (`word [freq] [tag]` per line), loaded in order on top of
  /// jieba_dict when the segmenter is created here (not when `segmenter` is given). A missing
  /// file is errc::not_found naming the path.
  std::vector<std::string> jieba_user_dicts;
};

enum class weighting_scheme {
  count,   ///< weight = occurrences of the feature (default)
  binary,  ///< weight = 1 per distinct feature
  tfidf,   ///< weight = count * (idf / total), total = occurrences of all kept tokens
           ///< (jieba's extract_tags formula and order of operations)
};

struct weighting_options {
  weighting_scheme scheme = weighting_scheme::count;
  /// IDF file, `word idf` per line (jieba's idf.txt format; blank lines skipped, a repeated
  /// word's last line wins). Required for tfidf. A missing file is errc::not_found and a bad
  /// line errc::invalid_input, both naming the path (and line number).
  std::string idf_path;
  /// IDF for words not in the file; negative means the median IDF of the file (jieba's rule:
  /// the value at index n/2 of the sorted IDFs of the n distinct words).
  double unknown_idf = -1.0;
  /// Stop-word file, one word per line; matched after normalisation, case-insensitively (both
  /// sides lowercased). Applies to token kinds, not shingles. Missing: errc::not_found.
  std::string stopwords_path;
  /// Keep only the K heaviest features (ties: first occurrence first). 0 keeps all.
  std::size_t top_k = 0;
};

/// Bit-for-bit compatibility with other tools.
enum class compat_mode {
  none,            ///< simdup's own pipeline, configured by the options
  python_simhash,  ///< the Python `simhash` package v2.x (docs/compat.md); ignores the
                   ///< normalize, features, weighting and hash options
  jieba_tfidf,     ///< jieba.analyse.extract_tags(text, topK=K, withWeight=True) -> SimHash
};

struct fingerprint_options {
  normalize_options normalize;
  feature_options features;
  weighting_options weighting;
  hash_kind hash = hash_kind::xxh3;
  compat_mode compat = compat_mode::none;
  /// Documents with fewer distinct features get status too_short. At least 1 (0 is
  /// errc::invalid_argument).
  std::size_t min_features = 1;
};

enum class fingerprint_status {
  ok,
  too_short,  ///< fewer than min_features distinct features: no fingerprint (never the value 0
              ///< silently; in python_simhash mode `fingerprint` still holds the package's
              ///< value, e.g. for '' the hash of the single feature '')
};
const char* status_name(fingerprint_status s) noexcept;

struct fingerprint_result {
  uint64_t fingerprint = 0;  ///< meaningful only when status == ok
  fingerprint_status status = fingerprint_status::too_short;
  /// Votes cast: one per feature occurrence under count weighting (shingles, words,
  /// supplied features), one per distinct feature under binary/tfidf/top-K and in
  /// python_simhash text mode (which counts distinct shingles like the package does).
  uint32_t features = 0;
  std::size_t invalid_utf8 = 0;  ///< invalid UTF-8 sequences replaced while normalising
};

/// Returns `o` completed for jieba: for the jieba kinds and compat jieba-tfidf, a segmenter
/// loaded from features.jieba_dict (default location when empty) plus features.jieba_user_dicts
/// unless one is given. For keywords and compat jieba-tfidf, the data directory's idf.txt and
/// stop_words.txt unless other files are given. For compat jieba-tfidf also: jieba feature kind
/// keywords; no normalisation besides UTF-8 repair (extract_tags sees the raw text; HTML stripping
/// stays if asked for); tokens of at least 2 code points; TF-IDF, unknown words get the median
/// IDF; top-K (0 = 20). Other options pass unchanged. fingerprinter::create does this itself.
/// Errors: the segmenter's (missing or corrupt dictionary, naming the file).
result<fingerprint_options> resolve_jieba_options(fingerprint_options o);

/// The Python `simhash` package's (v2.x) Simhash(text).value at its defaults: the
/// `fingerprint` a compat_mode::python_simhash fingerprinter gives `text`, whatever its status,
/// without counting distinct shingles (the result's `features`), which the value does not
/// need. Ill-formed UTF-8 is replaced as there. Safe to call from many threads.
uint64_t python_simhash_value(std::string_view text);
/// The same for text held as UCS-2, one code point per element (how Python stores a str whose
/// code points are all below U+10000, read without converting it to UTF-8); a surrogate is a
/// code point of its own, as in Python.
uint64_t python_simhash_value(std::u16string_view text);

/// The configured pipeline. Create once (loads dictionaries, IDF and stop words); the const
/// member functions are safe to call from many threads.
class fingerprinter {
 public:
  /// Errors name the offending file or option (missing IDF file, shingle_width 0, ...).
  static result<fingerprinter> create(const fingerprint_options& options);

  fingerprint_result fingerprint(std::string_view text) const;
  /// Caller-supplied features (tokens with weights); no normalisation, filtering or weighting
  /// is applied: each entry votes with its weight (a repeated token votes again).
  fingerprint_result fingerprint_features(std::span<const weighted_feature> features) const;
  /// Fingerprints many texts; fills min(texts.size(), out.size()) results.
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
