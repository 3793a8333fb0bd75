// Real text for the feature and fingerprint micro-benchmarks: English prose (the GPL-3 text
// that Debian's base-files installs) and Chinese prose (Vim's Chinese tutor, vim-runtime),
// overridable with SIMDUP_BENCH_EN / SIMDUP_BENCH_ZH. Split into documents of about 4 KiB at
// whitespace or line ends, the size of a typical web page's main text.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace simdup::bench {

struct corpus {
  std::string text;                    ///< the whole file ("" when missing)
  std::vector<std::string_view> docs;  ///< ~4 KiB documents, views into text
  std::size_t bytes() const noexcept { return text.size(); }
};

inline corpus load_corpus(const char* env, const char* fallback) {
  const char* path = std::getenv(env);
  std::ifstream in(path != nullptr ? path : fallback, std::ios::binary);
  corpus c;
  if (!in) return c;
  std::ostringstream ss;
  ss << in.rdbuf();
  c.text = ss.str();
  std::string_view rest = c.text;
  while (!rest.empty()) {
    std::size_t cut = rest.size() <= 4096 ? rest.size() : rest.find_first_of(" \n", 4096);
    if (cut == std::string_view::npos) cut = rest.size();
    c.docs.push_back(rest.substr(0, cut));
    rest.remove_prefix(cut);
  }
  return c;
}

inline const corpus& english() {
  static const corpus c = load_corpus("SIMDUP_BENCH_EN", "/usr/share/common-licenses/GPL-3");
  return c;
}

inline const corpus& chinese() {
  static const corpus c =
      load_corpus("SIMDUP_BENCH_ZH", "/usr/share/vim/vim90/tutor/tutor.zh_cn.utf-8");
  return c;
}

}  // namespace simdup::bench
