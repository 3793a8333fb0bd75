// Chinese word segmentation compatible with jieba 0.42 (default mode, HMM on), in C++.
//
// The data comes from Debian's python3-jieba, converted once by scripts/prepare_jieba.py into a
// directory holding jieba.bin (dictionary + HMM), idf.txt and stop_words.txt. See
// docs/chinese.md for the algorithm, the file format and the measured agreement with jieba.
#pragma once

#include <simdup/error.hpp>
#include <simdup/segmenter.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simdup {

struct jieba_options {
  /// Data directory made by scripts/prepare_jieba.py, or the path of its jieba.bin. Empty: env
  /// SIMDUP_JIEBA_DIR, else the installed or build-time default (jieba_default_dir()).
  std::string dict;
  /// User dictionaries in jieba's format (`word [freq] [tag]` per line, UTF-8), applied in
  /// order with jieba's load_userdict semantics (a missing freq is jieba's suggest_freq; freq 0
  /// forces the word apart).
  std::vector<std::string> user_dicts;
  /// Hidden Markov model for runs of characters the dictionary does not join (jieba's HMM=True).
  bool hmm = true;
};

/// The data directory used when jieba_options::dict is empty: env SIMDUP_JIEBA_DIR if set,
/// else PREFIX/share/simdup/jieba when simdup runs installed (PREFIX/bin/simdup or
/// PREFIX/lib/libsimdup.so, and that directory holds jieba.bin), else the directory compiled
/// in (the source tree's data/jieba).
std::string jieba_default_dir();

/// Resolves `dict` (a directory or a jieba.bin path; empty = default) to the data directory.
std::string jieba_data_dir(std::string_view dict);

/// jieba's segmenter: prefix dictionary, DAG of dictionary words, maximum-probability route,
/// HMM (Viterbi over B/M/E/S) for unknown runs, jieba's handling of non-Chinese text. Immutable
/// once created: segment() is safe to call from many threads.
class jieba_segmenter final : public segmenter {
 public:
  /// Loads the dictionary and user dictionaries. errc::not_found / corrupt_data / invalid_input
  /// name the offending file (and line for user dictionaries).
  static result<std::shared_ptr<const jieba_segmenter>> create(const jieba_options& options);

  /// Appends the words of `text` (views into it) to `words`, exactly as jieba.cut(text) would
  /// (whitespace and punctuation are words too). Bytes of invalid UTF-8 become one-byte words.
  void segment(std::string_view text, std::vector<std::string_view>& words) const override;

  /// The dictionary frequency of `word` (0 when absent or only a prefix of a word).
  uint64_t frequency(std::string_view word) const;
  /// Sum of all dictionary frequencies (jieba's `total`).
  uint64_t total() const noexcept;
  /// The directory the dictionary was loaded from (idf.txt and stop_words.txt live there too).
  const std::string& data_dir() const noexcept;

  ~jieba_segmenter() override;
  struct impl;

 private:
  explicit jieba_segmenter(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace simdup
