#include "jieba/segmenter_impl.hpp"
#include "jieba/utf8.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace simdup {
namespace {

// The data an installed simdup carries (cmake/install.cmake): PREFIX/share/simdup/jieba, found
// from the file that holds this code, PREFIX/bin/simdup or PREFIX/lib[/ARCH]/libsimdup.so. The
// compiled-in default names the build's source tree, which an installed copy must not need.
std::string installed_jieba_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> images;
  // dladdr names the shared library; for a program it may give argv[0], so ask /proc as well.
  if (Dl_info info{}; dladdr(reinterpret_cast<const void*>(&installed_jieba_dir), &info) != 0 &&
                      info.dli_fname != nullptr && info.dli_fname[0] == '/') {
    images.emplace_back(info.dli_fname);
  }
  if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec) images.push_back(exe);
  for (const fs::path& image : images) {
    fs::path dir = image.parent_path();
    for (int up = 0; up < 2 && dir.has_parent_path(); ++up) {
      dir = dir.parent_path();
      const fs::path data = dir / "share" / "simdup" / "jieba";
      if (fs::is_regular_file(data / "jieba.bin", ec)) return data.string();
    }
  }
  return {};
}

}  // namespace

std::string jieba_default_dir() {
  if (const char* env = std::getenv("SIMDUP_JIEBA_DIR"); env != nullptr && *env != '\0') return env;
  if (std::string installed = installed_jieba_dir(); !installed.empty()) return installed;
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
