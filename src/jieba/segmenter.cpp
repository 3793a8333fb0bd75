#include "jieba/segmenter_impl.hpp"
#include "jieba/utf8.hpp"

#include <cstdlib>
#include <filesystem>

namespace simdup {

std::string jieba_default_dir() {
  if (const char* env = std::getenv("SIMDUP_JIEBA_DIR"); env != nullptr && *env != '\0') return env;
  return SIMDUP_JIEBA_DEFAULT_DIR;
}

std::string jieba_data_dir(std::string_view dict) {
  if (dict.empty()) return jieba_default_dir();
  std::filesystem::path p(dict);
  if (p.filename() == "jieba.bin") return p.parent_path().string();
  return p.string();
}

result<std::shared_ptr<const jieba_segmenter>> jieba_segmenter::create(
    const jieba_options& options) {
  auto d = std::make_unique<impl>();
  d->dir = jieba_data_dir(options.dict);
  d->use_hmm = options.hmm;
  if (status s = d->load((std::filesystem::path(d->dir) / "jieba.bin").string()); !s) {
    return std::move(s).error();
  }
  for (const std::string& path : options.user_dicts) {
    if (status s = d->load_user_dict(path); !s) return std::move(s).error();
  }
  return std::shared_ptr<const jieba_segmenter>(new jieba_segmenter(std::move(d)));
}

jieba_segmenter::jieba_segmenter(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
jieba_segmenter::~jieba_segmenter() = default;

void jieba_segmenter::segment(std::string_view text, std::vector<std::string_view>& words) const {
  impl_->cut(text, impl_->use_hmm, words);
}

uint64_t jieba_segmenter::frequency(std::string_view word) const {
  std::vector<uint32_t> cps;
  for (std::size_t p = 0; p < word.size();) {
    const detail::decoded_char c = detail::decode_utf8(word, p);
    cps.push_back(c.cp);
    p += c.len;
  }
  if (cps.empty()) return 0;
  const uint32_t node = impl_->trie.find(cps);
  return node == detail::word_trie::none ? 0 : impl_->trie.freq(node);
}

uint64_t jieba_segmenter::total() const noexcept {
  return impl_->total;
}
const std::string& jieba_segmenter::data_dir() const noexcept {
  return impl_->dir;
}

}  // namespace simdup
