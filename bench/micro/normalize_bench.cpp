// Normaliser and UTF-8 throughput on real text shipped with Debian: the common licences
// (English), Vim's Chinese tutors (simplified and traditional) and the traditional-Chinese
// Debian maintainer guide (HTML). Bytes/s counts input bytes.
//
// Each benchmark takes the document size as its argument: the corpus is cut into documents of
// about that many bytes (at line ends), as a deduplication job would feed them; 0 means the
// whole corpus as one document.
#include <simdup/normalize.hpp>
#include <simdup/utf8.hpp>

#include <benchmark/benchmark.h>

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::string read_files(std::initializer_list<const char*> paths) {
  std::string all;
  for (const char* path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    std::ostringstream ss;
    ss << in.rdbuf();
    all += ss.str();
    all += '\n';
  }
  return all;
}

const std::string& english() {
  static const std::string text =
      read_files({"/usr/share/common-licenses/GPL-3", "/usr/share/common-licenses/GPL-2",
                  "/usr/share/common-licenses/LGPL-3", "/usr/share/common-licenses/Apache-2.0",
                  "/usr/share/common-licenses/MPL-2.0", "/usr/share/common-licenses/GFDL-1.3",
                  "/usr/share/common-licenses/Artistic"});
  return text;
}

const std::string& chinese_simplified() {
  static const std::string text = read_files({"/usr/share/vim/vim90/tutor/tutor.zh_cn.utf-8"});
  return text;
}

const std::string& chinese_traditional() {
  static const std::string text = read_files({"/usr/share/vim/vim90/tutor/tutor.zh_tw.utf-8"});
  return text;
}

const std::string& chinese_html() {
  static const std::string text =
      read_files({"/usr/share/doc/maint-guide-zh-tw/html/dreq.zh-tw.html",
                  "/usr/share/doc/maint-guide-zh-tw/html/dother.zh-tw.html",
                  "/usr/share/doc/maint-guide-zh-tw/html/build.zh-tw.html",
                  "/usr/share/doc/maint-guide-zh-tw/html/modify.zh-tw.html"});
  return text;
}

// Cuts `text` into documents of about `size` bytes, ending at a newline; 0: one document.
std::vector<std::string_view> documents(const std::string& text, std::size_t size) {
  std::vector<std::string_view> docs;
  if (size == 0) {
    docs.emplace_back(text);
    return docs;
  }
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', std::min(text.size(), pos + size));
    end = end == std::string::npos ? text.size() : end + 1;
    docs.emplace_back(text.data() + pos, end - pos);
    pos = end;
  }
  return docs;
}

void run_normalize(benchmark::State& state, const std::string& corpus,
                   const simdup::normalize_options& options) {
  if (corpus.size() < 2) {
    state.SkipWithError("corpus files not found");
    return;
  }
  auto created = simdup::normalizer::create(options);
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  const simdup::normalizer& n = *created;
  const auto docs = documents(corpus, static_cast<std::size_t>(state.range(0)));
  std::string out;
  for (auto _ : state) {
    for (std::string_view doc : docs) {
      n.normalize(doc, out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(corpus.size()));
}

void BM_normalize_english(benchmark::State& state) {
  run_normalize(state, english(), {});
}

void BM_normalize_english_no_punct(benchmark::State& state) {
  simdup::normalize_options o;
  o.strip_punctuation = false;
  run_normalize(state, english(), o);
}

void BM_normalize_chinese_simplified(benchmark::State& state) {
  run_normalize(state, chinese_simplified(), {});
}

void BM_normalize_chinese_traditional(benchmark::State& state) {
  run_normalize(state, chinese_traditional(), {});
}

void BM_normalize_chinese_no_t2s(benchmark::State& state) {
  simdup::normalize_options o;
  o.t2s = false;
  run_normalize(state, chinese_traditional(), o);
}

void BM_normalize_chinese_html(benchmark::State& state) {
  simdup::normalize_options o;
  o.html = true;
  run_normalize(state, chinese_html(), o);
}

void BM_utf8_decode_chinese(benchmark::State& state) {
  const std::string& text = chinese_traditional();
  for (auto _ : state) {
    std::size_t invalid = 0;
    char32_t sum = 0;
    for (const char* p = text.data(); p < text.data() + text.size();) {
      sum += simdup::utf8::decode(p, text.data() + text.size(), invalid);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

void BM_utf8_validate_english(benchmark::State& state) {
  const std::string& text = english();
  for (auto _ : state) benchmark::DoNotOptimize(simdup::utf8::is_valid(text));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

}  // namespace

BENCHMARK(BM_normalize_english)->Arg(4096)->Arg(0);
BENCHMARK(BM_normalize_english_no_punct)->Arg(4096);
BENCHMARK(BM_normalize_chinese_simplified)->Arg(4096)->Arg(0);
BENCHMARK(BM_normalize_chinese_traditional)->Arg(4096)->Arg(0);
BENCHMARK(BM_normalize_chinese_no_t2s)->Arg(4096);
BENCHMARK(BM_normalize_chinese_html)->Arg(4096);
BENCHMARK(BM_utf8_decode_chinese);
BENCHMARK(BM_utf8_validate_english);
