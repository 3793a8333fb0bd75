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

#include "text/fold.hpp"
#include "text/html.hpp"
#include "text/t2s.hpp"

#include <optional>
#include <utility>

namespace simdup {

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

}  // namespace simdup
