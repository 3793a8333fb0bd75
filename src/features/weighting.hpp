// The "tokens -> weighted features" step shared by every extractor and segmenter: token
// filters (minimum length, stop words), weighting (count, binary, TF-IDF) and top-K, with
// jieba.analyse.extract_tags semantics for TF-IDF.
#pragma once

#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>

#include "features/detail/count_map.hpp"

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace simdup::detail {

/// Heterogeneous lookup so string_view tokens find std::string keys without a copy.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>{}(s);
  }
};

/// An IDF table from a file of `word idf` lines (jieba's idf.txt format; a later line for the
/// same word wins; blank lines are skipped).
class idf_table {
 public:
  /// Shared and built in place: the table is never moved (GCC 12 misreports moved
  /// unordered_maps under -Wfree-nonheap-object).
  /// errc::not_found naming the path when it cannot be opened; errc::invalid_input naming the
  /// path and line for a line that is not `word idf` with a finite number, or an empty file.
  static result<std::shared_ptr<const idf_table>> load(const std::string& path);

  /// The IDF of `word`, or `unknown` when the file does not list it.
  double get(std::string_view word, double unknown) const noexcept {
    const auto it = map_.find(word);
    return it == map_.end() ? unknown : it->second;
  }
  /// jieba's median: sorted(values)[n / 2].
  double median() const noexcept { return median_; }
  std::size_t size() const noexcept { return map_.size(); }

 private:
  std::unordered_map<std::string, double, string_hash, std::equal_to<>> map_;
  double median_ = 0;
};

using stopword_set = std::unordered_set<std::string, string_hash, std::equal_to<>>;

/// Stop words from a file, one per line (trimmed, blank lines skipped), stored lowercased.
/// errc::not_found naming the path when it cannot be opened.
result<std::shared_ptr<const stopword_set>> load_stopwords(const std::string& path);

/// A feature viewing text owned elsewhere, with its weight.
struct feature_view {
  std::string_view text;
  double weight;
};

/// Turns the tokens of one document (from any extractor or segmenter) into weighted features.
class feature_weigher {
 public:
  /// Loads the IDF and stop-word files named in `options`. `min_token_length` is in code
  /// points (0 and 1 keep everything).
  static result<feature_weigher> create(const weighting_options& options,
                                        std::size_t min_token_length);

  /// True when weighing is "every kept token votes +1": count weighting without top-K. The
  /// fingerprinter then streams tokens straight into the vote.
  bool plain_count() const noexcept;

  /// Whether `token` is kept: at least min_token_length code points once surrounding
  /// whitespace is trimmed (so whitespace-only tokens are always dropped, as in jieba) and not
  /// a stop word (compared lowercased).
  bool keep(std::string_view token) const;

  /// Counts the tokens (only kept ones when `filter`; shingles are not filtered), in
  /// first-occurrence order, weighs them (count: occurrences;
  /// binary: 1; tfidf: count * idf / total count of kept tokens, unknown words get the
  /// configured IDF or the file's median) and keeps the top-K heaviest. Output is heaviest
  /// first, ties in first-occurrence order; views point into the tokens' text.
  void weigh(std::span<const std::string_view> tokens, bool filter,
             std::vector<feature_view>& out) const;

 private:
  weighting_scheme scheme_ = weighting_scheme::count;
  std::size_t min_token_length_ = 1;
  std::size_t top_k_ = 0;
  double unknown_idf_ = 0;
  std::shared_ptr<const idf_table> idf_;
  std::shared_ptr<const stopword_set> stop_;
};

}  // namespace simdup::detail
