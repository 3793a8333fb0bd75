// The normaliser: HTML to text, then the fused character pass (fold.cpp), then OpenCC's
// traditional-to-simplified conversion when the text has CJK ideographs.
//
// t2s runs after the character pass although the documented order puts it before digit,
// punctuation and whitespace handling. The result is the same: OpenCC's t2s dictionaries map
// letters to letters only (checked over TSPhrases and TSCharacters), so removing non-letters
// first changes neither what matches nor what comes out, and the pass tells us for free
// whether any CJK ideograph is present.
#include <simdup/normalize.hpp>

#include "text/fold.hpp"
#include "text/html.hpp"

#include <opencc/Exception.hpp>
#include <opencc/SimpleConverter.hpp>

#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>
#include <utility>

namespace simdup {

struct normalizer::impl {
  normalize_options options;
  detail::fold_plan plan;
  // Convert() is const and OpenCC's dictionaries are read-only after loading, so one converter
  // serves all threads (each call builds its own segments and lookup state).
  std::unique_ptr<const opencc::SimpleConverter> t2s;

  // Converts `text` in place; false if OpenCC failed (text unchanged). OpenCC stops at a NUL
  // byte (it walks C strings), so text is converted between NULs.
  bool convert_t2s(std::string& text) const {
    try {
      std::string converted;
      converted.reserve(text.size());
      std::size_t pos = 0;
      while (pos <= text.size()) {
        const void* nul = std::memchr(text.data() + pos, '\0', text.size() - pos);
        const std::size_t end =
            nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - text.data())
                : text.size();
        if (end > pos) converted += t2s->Convert(text.data() + pos, end - pos);
        if (end == text.size()) break;
        converted += '\0';
        pos = end + 1;
      }
      text = std::move(converted);
      return true;
    } catch (const opencc::Exception&) {
    } catch (const std::exception&) {
    }
    return false;
  }
};

namespace {

std::string default_opencc_config() {
  return std::string(SIMDUP_OPENCC_DATA_DIR) + "/t2s.json";
}

}  // namespace

result<normalizer> normalizer::create(const normalize_options& options) {
  auto p = std::make_unique<impl>();
  p->options = options;
  p->plan = detail::fold_plan::make(options);
  if (options.t2s) {
    const std::string config =
        options.opencc_config.empty() ? default_opencc_config() : options.opencc_config;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(config, ec)) {
      return make_error(errc::not_found, "OpenCC configuration not found: " + config +
                                             " (install libopencc-data, or turn off t2s)");
    }
    try {
      p->t2s = std::make_unique<const opencc::SimpleConverter>(config);
    } catch (const opencc::FileNotFound& e) {
      return make_error(errc::not_found, "OpenCC data missing for " + config + ": " + e.what());
    } catch (const opencc::Exception& e) {
      return make_error(errc::corrupt_data,
                        "cannot load OpenCC configuration " + config + ": " + e.what());
    } catch (const std::exception& e) {
      return make_error(errc::corrupt_data,
                        "cannot load OpenCC configuration " + config + ": " + e.what());
    }
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
  if (r.has_cjk && impl_->t2s && !impl_->convert_t2s(out) && stats) stats->t2s_failures = 1;
}

std::string normalizer::normalize(std::string_view text, normalize_stats* stats) const {
  std::string out;
  normalize(text, out, stats);
  return out;
}

const normalize_options& normalizer::options() const noexcept {
  return impl_->options;
}

normalizer::normalizer(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
normalizer::normalizer(normalizer&&) noexcept = default;
normalizer& normalizer::operator=(normalizer&&) noexcept = default;
normalizer::~normalizer() = default;

}  // namespace simdup
