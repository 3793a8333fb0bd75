// The normaliser pair: verification's text first, then the fingerprint's made from it by the
// punctuation, digit and white space steps alone (fold() with every other step off).
#include <simdup/normalizer_pair.hpp>

#include "text/normalize_steps.hpp"

#include <optional>
#include <utility>

namespace simdup {

struct normalizer_pair::impl {
  // Once: verification's steps without cjk_content. Twice: the fingerprint's steps.
  detail::normalize_steps first;
  // Twice: verification's steps.
  std::optional<detail::normalize_steps> second;
  // Once: the fingerprint's punctuation, digit and white space steps, alone.
  detail::fold_plan strip{};
  bool cjk_content = false;
};

result<normalizer_pair> normalizer_pair::create(const normalize_options& fingerprint,
                                                const normalize_options& verify) {
  const normalize_options& f = fingerprint;
  const normalize_options& v = verify;
  // Digit removal may join two runs of t2s keys ("乾1隆" -> the name 乾隆) that verification's
  // text converts apart (干1隆).
  const bool once = f.html == v.html && f.nfkc == v.nfkc && f.casefold == v.casefold &&
                    f.t2s == v.t2s && f.opencc_config == v.opencc_config && f.collapse_whitespace &&
                    v.collapse_whitespace && !f.cjk_content && !v.strip_punctuation &&
                    !v.strip_digits && !(f.t2s && f.strip_digits);
  normalize_options first_options = once ? v : f;
  if (once) first_options.cjk_content = false;
  auto first = detail::normalize_steps::make(first_options);
  if (!first) return std::move(first).error();
  auto p = std::make_unique<impl>();
  p->first = std::move(first).value();
  p->cjk_content = v.cjk_content;
  if (once && (!p->first.t2s || p->first.t2s->word_characters_only())) {
    normalize_options strip_options;
    strip_options.nfkc = false;
    strip_options.casefold = false;
    strip_options.t2s = false;
    strip_options.strip_punctuation = f.strip_punctuation;
    strip_options.strip_digits = f.strip_digits;
    strip_options.collapse_whitespace = true;
    p->strip = detail::fold_plan::make(strip_options);
    return normalizer_pair(std::move(p));
  }
  if (once) {  // a configuration whose t2s could see punctuation: back to two normalisations
    auto fingerprint_steps = detail::normalize_steps::make(f);
    if (!fingerprint_steps) return std::move(fingerprint_steps).error();
    p->first = std::move(fingerprint_steps).value();
  }
  auto second = detail::normalize_steps::make(v);
  if (!second) return std::move(second).error();
  p->second = std::move(second).value();
  return normalizer_pair(std::move(p));
}

void normalizer_pair::normalize(std::string_view text, std::string& fingerprint_text,
                                std::string& verify_text, normalize_stats* stats) const {
  if (impl_->second) {
    impl_->first.run(text, fingerprint_text, stats);
    impl_->second->run(text, verify_text, nullptr);
    return;
  }
  impl_->first.run(text, verify_text, stats);
  detail::fold(verify_text, impl_->strip, fingerprint_text);
  if (impl_->cjk_content) detail::keep_cjk_content(verify_text);
}

bool normalizer_pair::normalizes_once() const noexcept {
  return !impl_->second;
}

normalizer_pair::normalizer_pair(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
normalizer_pair::normalizer_pair(normalizer_pair&&) noexcept = default;
normalizer_pair& normalizer_pair::operator=(normalizer_pair&&) noexcept = default;
normalizer_pair::~normalizer_pair() = default;

}  // namespace simdup
