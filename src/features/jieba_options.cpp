// How the fingerprinter gets jieba: the segmenter for feature_kind::jieba/keywords, and the
// options that make compat_mode::jieba_tfidf reproduce jieba.analyse.extract_tags.
#include <simdup/fingerprint.hpp>
#include <simdup/jieba.hpp>

namespace simdup {

namespace {
/// extract_tags' default topK, used by compat jieba-tfidf when top_k is 0.
constexpr std::size_t jieba_default_top_k = 20;
}  // namespace

result<fingerprint_options> resolve_jieba_options(fingerprint_options o) {
  const bool compat = o.compat == compat_mode::jieba_tfidf;
  const bool jieba_kind =
      o.features.kind == feature_kind::jieba || o.features.kind == feature_kind::keywords;
  if (!compat && !jieba_kind) return o;
  std::string data_dir = jieba_data_dir(o.features.jieba_dict);
  if (!o.features.segmenter) {
    jieba_options jo;
    jo.dict = o.features.jieba_dict;
    jo.user_dicts = o.features.jieba_user_dicts;
    auto seg = jieba_segmenter::create(jo);
    if (!seg) return std::move(seg).error();
    data_dir = (*seg)->data_dir();
    o.features.segmenter = std::move(*seg);
  }
  // keywords are extract_tags' TF-IDF: jieba's IDF table and stop words unless others are given.
  if (o.features.kind == feature_kind::keywords || compat) {
    if (o.weighting.idf_path.empty()) o.weighting.idf_path = data_dir + "/idf.txt";
    if (o.weighting.stopwords_path.empty())
      o.weighting.stopwords_path = data_dir + "/stop_words.txt";
  }
  if (!compat) return o;
  normalize_options raw;
  raw.html = o.normalize.html;
  raw.nfkc = raw.casefold = raw.t2s = false;
  raw.strip_punctuation = raw.strip_digits = raw.collapse_whitespace = false;
  o.normalize = raw;
  o.features.kind = feature_kind::keywords;
  o.features.min_token_length = 2;  // extract_tags: len(w.strip()) < 2 is dropped
  o.weighting.scheme = weighting_scheme::tfidf;
  o.weighting.unknown_idf = -1.0;
  if (o.weighting.top_k == 0) o.weighting.top_k = jieba_default_top_k;
  return o;
}

}  // namespace simdup
