// The normaliser: HTML to text, then the fused character pass (fold.cpp), then OpenCC's
// traditional-to-simplified conversion (t2s.cpp) when the text contains a character it can
// change.
//
// t2s runs after the character pass although the documented order puts it before digit,
// punctuation and whitespace handling. The result is the same: the OpenCC keys that can match
// consist of CJK ideographs only (t2s_converter converts runs of key code points), and the
// digit, punctuation and whitespace steps never touch, create or join such characters. The
// pass also tells us for free whether any code point that OpenCC would change is present.
#include <simdup/normalize.hpp>

#include "text/html.hpp"
#include "text/normalize_steps.hpp"

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

}  // namespace

namespace detail {

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

result<normalize_steps> normalize_steps::make(const normalize_options& options) {
  normalize_steps steps;
  steps.options = options;
  steps.plan = fold_plan::make(options);
  if (options.t2s) {
    const std::string config =
        options.opencc_config.empty() ? normalizer::default_opencc_config() : options.opencc_config;
    auto loaded = t2s_converter::load(config);
    if (!loaded) return std::move(loaded).error();
    steps.t2s = std::move(loaded).value();
    steps.plan.t2s_triggers = steps.t2s->trigger_bitmap();
  }
  return steps;
}

void normalize_steps::run(std::string_view text, std::string& out, normalize_stats* stats) const {
  const char* const out_begin = out.data();
  if (text.data() < out_begin + out.size() && out_begin < text.data() + text.size()) {
    const std::string copy(text);  // `text` views `out`, which is about to be overwritten
    run(copy, out, stats);
    return;
  }
  if (stats) *stats = normalize_stats{};
  // The HTML step's output is scratch reused per thread; released after a huge document.
  thread_local std::string html_text;
  std::string_view input = text;
  if (options.html) {
    html_to_text(text, html_text);
    input = html_text;
  }
  const fold_result r = fold(input, plan, out);
  if (html_text.capacity() > (std::size_t{16} << 20)) std::string().swap(html_text);
  if (stats) stats->invalid_utf8 = r.invalid_utf8;
  if (t2s && (r.needs_t2s || t2s->has_ascii_keys())) {
    // fold() saw every non-ASCII code point, so nothing before its first trigger changes
    // (ASCII keys, never in OpenCC's own configurations, are not tracked there).
    const std::size_t from = t2s->has_ascii_keys() ? 0 : r.first_t2s_trigger;
    if (!t2s->convert(out, from) && stats) stats->t2s_failures = 1;
  }
  if (options.cjk_content) keep_cjk_content(out);
}

}  // namespace detail

struct normalizer::impl {
  detail::normalize_steps steps;
};

result<normalizer> normalizer::create(const normalize_options& options) {
  auto steps = detail::normalize_steps::make(options);
  if (!steps) return std::move(steps).error();
  return normalizer(std::make_unique<impl>(impl{std::move(steps).value()}));
}

void normalizer::normalize(std::string_view text, std::string& out, normalize_stats* stats) const {
  impl_->steps.run(text, out, stats);
}

std::string normalizer::normalize(std::string_view text, normalize_stats* stats) const {
  std::string out;
  normalize(text, out, stats);
  return out;
}

const normalize_options& normalizer::options() const noexcept {
  return impl_->steps.options;
}

std::string normalizer::default_opencc_config() {
  return std::string(SIMDUP_OPENCC_DATA_DIR) + "/t2s.json";
}

normalizer::normalizer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
normalizer::normalizer(normalizer&&) noexcept = default;
normalizer& normalizer::operator=(normalizer&&) noexcept = default;
normalizer::~normalizer() = default;

}  // namespace simdup
