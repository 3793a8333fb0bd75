// The normaliser: HTML to text, then the fused character pass (fold.cpp), then OpenCC's
// traditional-to-simplified conversion (t2s.cpp) when the text contains a character it can
// change. The normaliser pair makes a second normalisation from the first where it can.
//
// t2s runs after the character pass although the documented order puts it before digit,
// punctuation and whitespace handling. The result is the same: the OpenCC keys that can match
// consist of CJK ideographs only (t2s_converter converts runs of key code points), and the
// digit, punctuation and whitespace steps never touch, create or join such characters. The
// pass also tells us for free whether any code point that OpenCC would change is present.
#include <simdup/normalize.hpp>

#include "text/fold.hpp"
#include "text/html.hpp"
#include "text/t2s.hpp"

#include <simdup/utf8.hpp>

#include <utf8proc.h>

#include <cstring>
#include <optional>
#include <utility>

namespace simdup {

namespace {

constexpr bool is_cjk_or_kana(char32_t cp) noexcept {
  return utf8::is_cjk_ideograph(cp) || (cp >= 0x3040 && cp <= 0x30FF);
}

// Unicode punctuation (P*) and white space: the separators (Z*) and the control characters
// that are white space (TAB..CR, the information separators U+001C..U+001F, NEL).
bool is_layout(char32_t cp) noexcept {
  if ((cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F) || cp == 0x85) return true;
  const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (category >= UTF8PROC_CATEGORY_PC && category <= UTF8PROC_CATEGORY_PO) ||
         (category >= UTF8PROC_CATEGORY_ZS && category <= UTF8PROC_CATEGORY_ZP);
}

// normalize_options::cjk_content, in place on valid UTF-8 (the output of the steps before).
void keep_cjk_content(std::string& text) {
  if (utf8::ascii_prefix_length(text) == text.size()) return;
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  std::size_t cjk = 0;
  std::size_t letters = 0;  // all letters, CJK included
  for (const char* p = begin; p < end;) {
    const char32_t cp = utf8::decode(p, end);
    if (cp < 0x80) {
      letters += (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    } else if (is_cjk_or_kana(cp)) {
      ++cjk;
      ++letters;
    } else {
      const auto category = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
      letters += category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO;
    }
  }
  if (cjk == 0 || static_cast<double>(cjk) < cjk_content_share * static_cast<double>(letters)) {
    return;
  }
  char* out = text.data();
  for (const char* p = begin; p < end;) {
    const char* const start = p;
    const char32_t cp = utf8::decode(p, end);
    if (utf8::is_cjk_ideograph(cp) || !is_layout(cp)) {  // ideographs skip the lookup
      const auto length = static_cast<std::size_t>(p - start);
      std::memmove(out, start, length);  // out <= start: the text only shrinks
      out += length;
    }
  }
  text.resize(static_cast<std::size_t>(out - begin));
}

}  // namespace

struct normalizer::impl {
  normalize_options options;
  detail::fold_plan plan;
  // Its const member functions only read OpenCC's loaded dictionaries, so one converter serves
  // every thread (OpenCC builds per-call segment lists).
  std::optional<detail::t2s_converter> t2s;
};

result<normalizer> normalizer::create(const normalize_options& options) {
  auto p = std::make_unique<impl>();
  p->options = options;
  p->plan = detail::fold_plan::make(options);
  if (options.t2s) {
    const std::string config =
        options.opencc_config.empty() ? default_opencc_config() : options.opencc_config;
    auto loaded = detail::t2s_converter::load(config);
    if (!loaded) return std::move(loaded).error();
    p->t2s = std::move(loaded).value();
    p->plan.t2s_triggers = p->t2s->trigger_bitmap();
  }
  return normalizer(std::move(p));
}

void normalizer::normalize(std::string_view text, std::string& out, normalize_stats* stats) const {
  const char* const out_begin = out.data();
  if (text.data() < out_begin + out.size() && out_begin < text.data() + text.size()) {
    const std::string copy(text);  // `text` views `out`, which is about to be overwritten
    normalize(copy, out, stats);
    return;
  }
  if (stats) *stats = normalize_stats{};
  // The HTML step's output is scratch reused per thread; released after a huge document.
  thread_local std::string html_text;
  std::string_view input = text;
  if (impl_->options.html) {
    detail::html_to_text(text, html_text);
    input = html_text;
  }
  const detail::fold_result r = detail::fold(input, impl_->plan, out);
  if (html_text.capacity() > (std::size_t{16} << 20)) std::string().swap(html_text);
  if (stats) stats->invalid_utf8 = r.invalid_utf8;
  if (impl_->t2s && (r.needs_t2s || impl_->t2s->has_ascii_keys())) {
    // fold() saw every non-ASCII code point, so nothing before its first trigger changes
    // (ASCII keys, never in OpenCC's own configurations, are not tracked there).
    const std::size_t from = impl_->t2s->has_ascii_keys() ? 0 : r.first_t2s_trigger;
    if (!impl_->t2s->convert(out, from) && stats) stats->t2s_failures = 1;
  }
  if (impl_->options.cjk_content) keep_cjk_content(out);
}

std::string normalizer::normalize(std::string_view text, normalize_stats* stats) const {
  std::string out;
  normalize(text, out, stats);
  return out;
}

const normalize_options& normalizer::options() const noexcept {
  return impl_->options;
}

std::string normalizer::default_opencc_config() {
  return std::string(SIMDUP_OPENCC_DATA_DIR) + "/t2s.json";
}

normalizer::normalizer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
normalizer::normalizer(normalizer&&) noexcept = default;
normalizer& normalizer::operator=(normalizer&&) noexcept = default;
normalizer::~normalizer() = default;

struct normalizer_pair::impl {
  // Once: verification's options without cjk_content. Twice: the fingerprint's options.
  normalizer first;
  // Twice: verification's options.
  std::optional<normalizer> second;
  // Once: the fingerprint's punctuation, digit and white space steps, alone.
  detail::fold_plan strip;
  bool cjk_content = false;
};

result<normalizer_pair> normalizer_pair::create(const normalize_options& fingerprint,
                                                const normalize_options& verify) {
  const normalize_options& f = fingerprint;
  const normalize_options& v = verify;
  // Digit removal may join two runs of t2s keys ("乾1燥" -> "乾燥") that verification's text
  // converts apart.
  const bool once = f.html == v.html && f.nfkc == v.nfkc && f.casefold == v.casefold &&
                    f.t2s == v.t2s && f.opencc_config == v.opencc_config && f.collapse_whitespace &&
                    v.collapse_whitespace && !f.cjk_content && !v.strip_punctuation &&
                    !v.strip_digits && !(f.t2s && f.strip_digits);
  normalize_options first_options = once ? v : f;
  if (once) first_options.cjk_content = false;
  auto first = normalizer::create(first_options);
  if (!first) return std::move(first).error();
  auto p = std::make_unique<impl>(impl{std::move(first).value(), std::nullopt, {}, v.cjk_content});
  const auto& t2s = p->first.impl_->t2s;
  if (once && (!t2s || t2s->word_characters_only())) {
    normalize_options strip_options{};
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
    auto fingerprint_only = normalizer::create(f);
    if (!fingerprint_only) return std::move(fingerprint_only).error();
    p->first = std::move(fingerprint_only).value();
  }
  auto second = normalizer::create(v);
  if (!second) return std::move(second).error();
  p->second = std::move(second).value();
  return normalizer_pair(std::move(p));
}

void normalizer_pair::normalize(std::string_view text, std::string& fingerprint_text,
                                std::string& verify_text, normalize_stats* stats) const {
  if (impl_->second) {
    impl_->first.normalize(text, fingerprint_text, stats);
    impl_->second->normalize(text, verify_text);
    return;
  }
  impl_->first.normalize(text, verify_text, stats);
  detail::fold(verify_text, impl_->strip, fingerprint_text);
  if (impl_->cjk_content) keep_cjk_content(verify_text);
}

bool normalizer_pair::normalizes_once() const noexcept {
  return !impl_->second;
}

normalizer_pair::normalizer_pair(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
normalizer_pair::normalizer_pair(normalizer_pair&&) noexcept = default;
normalizer_pair& normalizer_pair::operator=(normalizer_pair&&) noexcept = default;
normalizer_pair::~normalizer_pair() = default;

}  // namespace simdup
