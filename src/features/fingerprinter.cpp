// The configured pipeline: normalise -> features -> weights -> hash -> vote.
#include <simdup/fingerprint.hpp>

#include "features/accumulate.hpp"
#include "features/extract.hpp"
#include "features/hash.hpp"
#include "features/python_simhash.hpp"
#include "features/shingle_kernel.hpp"
#include "features/weighting.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace simdup {

const char* status_name(fingerprint_status s) noexcept {
  switch (s) {
    case fingerprint_status::ok:
      return "ok";
    case fingerprint_status::too_short:
      return "too_short";
  }
  return "unknown";
}

namespace {

// Per-thread buffers, so fingerprinting a document allocates nothing once they are warm and
// const member functions stay safe to call concurrently.
struct scratch {
  std::string text;
  std::vector<std::string_view> tokens;
  std::vector<std::string_view> words;
  std::vector<std::string> grams;
  std::vector<detail::feature_view> features;
  detail::count_map counts;
};

scratch& local_scratch() {
  thread_local scratch s;
  return s;
}

status validate(const fingerprint_options& o) {
  if (o.min_features == 0)
    return invalid_parameter(
        {.name = "min_features", .value = "0", .allowed = "1..", .reason = "must be at least 1"});
  if (o.compat == compat_mode::python_simhash) return {};
  const auto& f = o.features;
  if (f.kind == feature_kind::shingles && (f.shingle_width == 0 || f.shingle_width > 1024))
    return make_error(errc::invalid_argument,
                      "shingle_width must be in 1..1024, got " + std::to_string(f.shingle_width));
  if (f.kind == feature_kind::word_ngrams && (f.ngram == 0 || f.ngram > 64))
    return make_error(errc::invalid_argument,
                      "ngram must be in 1..64, got " + std::to_string(f.ngram));
  return {};
}

// Calls fn(hash) for each shingle, with the hash function fixed at compile time so the hot
// loop inlines it.
template <class Fn>
void hash_shingles(hash_kind kind, std::string_view text, std::size_t width, Fn&& fn) {
  switch (kind) {
    case hash_kind::xxh3:
      detail::for_each_shingle(text, width,
                               [&](std::string_view s) { fn(detail::xxh3_64_short(s)); });
      return;
    case hash_kind::fnv1a:
      detail::for_each_shingle(text, width, [&](std::string_view s) { fn(detail::fnv1a_64(s)); });
      return;
    case hash_kind::md5:
      detail::for_each_shingle(text, width, [&](std::string_view s) { fn(detail::md5_64(s)); });
      return;
  }
}

// The unit-weight votes of every shingle of `text`; the default (xxh3, width 4) has a fused
// SIMD path for ASCII stretches.
void vote_shingles(hash_kind kind, std::string_view text, std::size_t width,
                   detail::unit_votes& votes) {
  if (kind == hash_kind::xxh3 && width == 4) return detail::vote_ascii4_xxh3_shingles(text, votes);
  detail::add_streamed(votes, [&](auto&& sink) { hash_shingles(kind, text, width, sink); });
}

// Whether at least `needed` distinct features exist; stops as soon as they are seen, so it is
// cheap for the usual min_features of a few.
template <class ForEach>
bool has_distinct(std::size_t needed, ForEach&& for_each) {
  if (needed <= 1) return true;
  std::unordered_set<uint64_t> seen;
  bool enough = false;
  for_each([&](std::string_view s) {
    if (!enough) enough = seen.insert(detail::xxh3_64(s)).second && seen.size() >= needed;
  });
  return enough;
}

fingerprint_result finish(uint64_t fp, uint64_t votes, bool enough) {
  fingerprint_result r;
  r.features = static_cast<uint32_t>(std::min<uint64_t>(votes, UINT32_MAX));
  if (votes > 0 && enough) {
    r.fingerprint = fp;
    r.status = fingerprint_status::ok;
  }
  return r;
}

}  // namespace

uint64_t python_simhash_value(std::string_view text) {
  std::string& prepared = local_scratch().text;
  prepared.clear();
  detail::python_simhash_prepare(text, prepared);
  return detail::python_simhash_vote(prepared);
}

uint64_t python_simhash_value(std::u16string_view text) {
  std::string& prepared = local_scratch().text;
  prepared.clear();
  detail::python_simhash_prepare_ucs2(text, prepared);
  return detail::python_simhash_vote(prepared);
}

struct fingerprinter::impl {
  fingerprint_options options;
  std::optional<normalizer> norm;
  detail::feature_weigher weigher;

  // The tokens of normalised text for the token kinds (not shingles), into s.tokens.
  void tokenize(scratch& s) const {
    s.tokens.clear();
    const auto& f = options.features;
    switch (f.kind) {
      case feature_kind::shingles:
        break;
      case feature_kind::words:
        detail::split_words(s.text, s.tokens);
        break;
      case feature_kind::word_ngrams: {
        s.words.clear();
        detail::split_words(s.text, s.words);
        std::erase_if(s.words, [&](std::string_view w) { return !weigher.keep(w); });
        s.grams.clear();
        detail::word_ngrams(s.words, f.ngram, s.grams);
        s.tokens.assign(s.grams.begin(), s.grams.end());
        break;
      }
      case feature_kind::jieba:
      case feature_kind::keywords:
        f.segmenter->segment(s.text, s.tokens);
        break;
    }
  }

  // Tokens of the token kinds are filtered by the weigher; n-grams were filtered word by word.
  bool filter_tokens() const noexcept {
    return options.features.kind != feature_kind::shingles &&
           options.features.kind != feature_kind::word_ngrams;
  }

  // The weighted features of s.text (normalised), heaviest first, into s.features.
  void weigh(scratch& s) const {
    s.features.clear();
    if (options.features.kind == feature_kind::shingles) {
      s.tokens.clear();
      detail::for_each_shingle(s.text, options.features.shingle_width,
                               [&](std::string_view t) { s.tokens.push_back(t); });
    } else {
      tokenize(s);
    }
    weigher.weigh(s.tokens, filter_tokens(), s.features);
  }

  fingerprint_result python_simhash(std::string_view text, scratch& s) const {
    s.text.clear();
    const std::size_t invalid = detail::python_simhash_prepare(text, s.text);
    const auto counted = detail::python_simhash_fingerprint(s.text);
    fingerprint_result r;
    r.fingerprint = counted.fingerprint;
    r.features = counted.features;
    r.invalid_utf8 = invalid;
    // Python gives '' a fingerprint too; we keep its value but say the text had no features.
    r.status = !s.text.empty() && r.features >= options.min_features
                   ? fingerprint_status::ok
                   : fingerprint_status::too_short;
    return r;
  }

  // compat jieba-tfidf: the extract_tags keywords, voted like the Python simhash package votes
  // (feature, weight) pairs.
  fingerprint_result jieba_tfidf(std::string_view text, scratch& s) const {
    normalize_stats stats;
    norm->normalize(text, s.text, &stats);
    weigh(s);
    std::vector<weighted_feature> keywords;
    keywords.reserve(s.features.size());
    for (const auto& f : s.features) keywords.push_back({std::string(f.text), f.weight});
    fingerprint_result r;
    r.fingerprint = detail::python_simhash_weighted(keywords);
    r.features = static_cast<uint32_t>(keywords.size());
    if (keywords.empty() || keywords.size() < options.min_features)
      r.fingerprint = 0;
    else
      r.status = fingerprint_status::ok;
    r.invalid_utf8 = stats.invalid_utf8;
    return r;
  }

  fingerprint_result own(std::string_view text, scratch& s) const {
    normalize_stats stats;
    norm->normalize(text, s.text, &stats);
    fingerprint_result r;
    const auto& f = options.features;
    const std::size_t need = options.min_features;
    if (weigher.plain_count()) {
      detail::unit_votes votes;
      if (f.kind == feature_kind::shingles) {
        vote_shingles(options.hash, s.text, f.shingle_width, votes);
        const uint64_t n = votes.total();
        r = finish(votes.fingerprint(), n, has_distinct(need, [&](auto&& fn) {
                     detail::for_each_shingle(s.text, f.shingle_width, fn);
                   }));
      } else {
        tokenize(s);
        if (filter_tokens())
          std::erase_if(s.tokens, [&](std::string_view t) { return !weigher.keep(t); });
        detail::feature_hasher hasher(options.hash);
        detail::add_streamed(votes, [&](auto&& sink) {
          for (std::string_view t : s.tokens) sink(hasher(t));
        });
        const uint64_t n = votes.total();
        r = finish(votes.fingerprint(), n, has_distinct(need, [&](auto&& fn) {
                     for (std::string_view t : s.tokens) fn(t);
                   }));
      }
    } else {
      weigh(s);
      detail::weighted_votes votes;
      detail::feature_hasher hasher(options.hash);
      for (const auto& fv : s.features) votes.add(hasher(fv.text), fv.weight);
      r = finish(votes.fingerprint(), s.features.size(), s.features.size() >= need);
    }
    r.invalid_utf8 = stats.invalid_utf8;
    return r;
  }
};

result<fingerprinter> fingerprinter::create(const fingerprint_options& requested) {
  // jieba kinds and compat jieba-tfidf: loads the segmenter, fills in extract_tags' settings.
  auto resolved = resolve_jieba_options(requested);
  if (!resolved) return std::move(resolved).error();
  const fingerprint_options& options = *resolved;
  if (auto ok = validate(options); !ok) return std::move(ok).error();
  auto p = std::make_unique<impl>();
  p->options = options;
  if (options.compat != compat_mode::python_simhash) {
    auto norm = normalizer::create(options.normalize);
    if (!norm) return std::move(norm).error();
    p->norm.emplace(std::move(*norm));
    weighting_options w = options.weighting;
    // Keywords are jieba words weighted by TF-IDF, whatever the scheme says.
    if (options.features.kind == feature_kind::keywords) w.scheme = weighting_scheme::tfidf;
    auto weigher = detail::feature_weigher::create(w, options.features.min_token_length);
    if (!weigher) return std::move(weigher).error();
    p->weigher = std::move(*weigher);
  }
  return fingerprinter(std::move(p));
}

fingerprint_result fingerprinter::fingerprint(std::string_view text) const {
  scratch& s = local_scratch();
  if (impl_->options.compat == compat_mode::jieba_tfidf) return impl_->jieba_tfidf(text, s);
  return impl_->options.compat == compat_mode::python_simhash ? impl_->python_simhash(text, s)
                                                              : impl_->own(text, s);
}

fingerprint_result fingerprinter::fingerprint_features(
    std::span<const weighted_feature> features) const {
  scratch& s = local_scratch();
  s.counts.clear();
  for (const auto& f : features) s.counts.add(f.text);
  const std::size_t distinct = s.counts.entries().size();
  fingerprint_result r;
  r.features = static_cast<uint32_t>(std::min<std::size_t>(features.size(), UINT32_MAX));
  if (impl_->options.compat == compat_mode::python_simhash ||
      impl_->options.compat == compat_mode::jieba_tfidf) {
    r.fingerprint = detail::python_simhash_weighted(features);
  } else {
    detail::weighted_votes votes;
    detail::feature_hasher hasher(impl_->options.hash);
    for (const auto& f : features) votes.add(hasher(f.text), f.weight);
    r.fingerprint = votes.fingerprint();
  }
  if (distinct > 0 && distinct >= impl_->options.min_features) {
    r.status = fingerprint_status::ok;
  } else if (impl_->options.compat != compat_mode::python_simhash) {
    r.fingerprint = 0;
  }
  return r;
}

void fingerprinter::fingerprint_batch(std::span<const std::string_view> texts,
                                      std::span<fingerprint_result> out) const {
  const std::size_t n = std::min(texts.size(), out.size());
  for (std::size_t i = 0; i < n; ++i) out[i] = fingerprint(texts[i]);
}

std::vector<weighted_feature> fingerprinter::features(std::string_view text) const {
  scratch& s = local_scratch();
  std::vector<weighted_feature> out;
  if (impl_->options.compat == compat_mode::python_simhash) {
    s.text.clear();
    detail::python_simhash_prepare(text, s.text);
    s.counts.clear();
    detail::python_simhash_shingles(s.text, s.counts);
    for (const auto& e : s.counts.entries())
      out.push_back({std::string(e.key), static_cast<double>(e.count)});
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.weight > b.weight; });
    return out;
  }
  impl_->norm->normalize(text, s.text);
  impl_->weigh(s);
  out.reserve(s.features.size());
  for (const auto& f : s.features) out.push_back({std::string(f.text), f.weight});
  return out;
}

const fingerprint_options& fingerprinter::options() const noexcept {
  return impl_->options;
}

fingerprinter::fingerprinter(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
fingerprinter::fingerprinter(fingerprinter&&) noexcept = default;
fingerprinter& fingerprinter::operator=(fingerprinter&&) noexcept = default;
fingerprinter::~fingerprinter() = default;

}  // namespace simdup
