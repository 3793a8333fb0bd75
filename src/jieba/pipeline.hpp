// How the fingerprinter gets jieba: the segmenter for feature_kind::jieba/keywords, and the
// options that make compat_mode::jieba_tfidf reproduce jieba.analyse.extract_tags.
#pragma once

#include <simdup/error.hpp>
#include <simdup/fingerprint.hpp>

namespace simdup::detail {

/// extract_tags' default topK, used by compat jieba-tfidf when top_k is 0.
inline constexpr std::size_t jieba_default_top_k = 20;

/// Returns `o` completed for jieba: for the jieba kinds and compat jieba-tfidf, a segmenter
/// loaded from features.jieba_dict (default location when empty) plus
/// features.jieba_user_dicts unless one is given. For
/// keywords and compat jieba-tfidf, the data directory's idf.txt and stop_words.txt unless
/// other files are given. For compat jieba-tfidf also: jieba feature kind keywords; no
/// normalisation besides UTF-8 repair (extract_tags sees the raw text; HTML stripping stays if
/// asked for); tokens of at least 2 code points; TF-IDF, unknown words get the median IDF; top-K (0
/// = 20). Other options pass unchanged. Errors: the segmenter's (missing or corrupt dictionary,
/// naming the file).
result<fingerprint_options> resolve_jieba_options(fingerprint_options o);

}  // namespace simdup::detail
