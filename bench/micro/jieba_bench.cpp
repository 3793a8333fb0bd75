// jieba: dictionary load, segmentation, keywords + fingerprint (compat jieba-tfidf), and a
// document without punctuation. Bytes/s are of UTF-8 input. Real text (manpages-zh) and the
// comparison with Python jieba: bench/e2e/jieba_vs_python.py.
#include <simdup/fingerprint.hpp>
#include <simdup/jieba.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

// News-style prose (written for this benchmark), about 1 KB.
constexpr const char* paragraph =
    "近日，国家统计局发布了最新的经济运行数据。数据显示，今年前三季度国内生产总值同比增长，"
    "消费对经济增长的贡献率继续提高，制造业投资保持较快增长，高技术产业投资增长明显。"
    "专家表示，随着一系列稳增长政策落地见效，市场需求逐步恢复，企业预期有所改善，"
    "但外部环境依然复杂严峻，国内经济恢复的基础还不牢固。下一步要坚持稳中求进工作总基调，"
    "加大宏观政策调控力度，着力扩大有效需求，推动经济运行持续好转。与此同时，"
    "各地积极推进数字经济和实体经济深度融合，人工智能、云计算、大数据等新技术不断涌现，"
    "为传统产业转型升级注入了新的动力。网络爬虫每天抓取大量新闻网页，其中很多内容高度重复，"
    "去重系统使用SimHash指纹检测近似重复的文档，再用Jaccard相似度验证候选对。\n";

std::vector<std::string> documents(std::size_t count, std::size_t bytes_each) {
  std::vector<std::string> docs(count);
  for (std::size_t i = 0; i < count; ++i) {
    while (docs[i].size() < bytes_each) docs[i] += paragraph;
    docs[i] += std::to_string(i);
  }
  return docs;
}

// The default segmenter, loaded once; null (and the benchmark skipped) when data is missing.
const simdup::jieba_segmenter* segmenter() {
  static auto seg = simdup::jieba_segmenter::create({});
  return seg ? seg->get() : nullptr;
}

void BM_JiebaLoad(benchmark::State& state) {
  for (auto _ : state) {
    auto seg = simdup::jieba_segmenter::create({});
    if (!seg) {
      state.SkipWithError(seg.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(seg);
  }
}
BENCHMARK(BM_JiebaLoad)->Unit(benchmark::kMillisecond)->Iterations(5);

void BM_JiebaSegment(benchmark::State& state) {
  const auto docs = documents(64, static_cast<std::size_t>(state.range(0)));
  const auto* seg = segmenter();
  if (seg == nullptr) return state.SkipWithError("jieba data missing (make deps)");
  std::vector<std::string_view> words;
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& d : docs) {
      words.clear();
      seg->segment(d, words);
      bytes += d.size();
    }
    benchmark::DoNotOptimize(words.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_JiebaSegment)->Arg(256)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_JiebaKeywordsFingerprint(benchmark::State& state) {
  simdup::fingerprint_options o;
  o.compat = simdup::compat_mode::jieba_tfidf;
  o.weighting.top_k = 20;
  auto fp = simdup::fingerprinter::create(o);
  if (!fp) {
    state.SkipWithError(fp.error().message.c_str());
    return;
  }
  const auto docs = documents(64, static_cast<std::size_t>(state.range(0)));
  std::size_t bytes = 0;
  for (auto _ : state) {
    for (const auto& d : docs) {
      benchmark::DoNotOptimize(fp->fingerprint(d));
      bytes += d.size();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}
BENCHMARK(BM_JiebaKeywordsFingerprint)->Arg(4096)->Unit(benchmark::kMillisecond);

// 50 MB of Chinese without punctuation or spaces: one jieba block. Must stay linear.
void BM_JiebaNoPunctuation50MB(benchmark::State& state) {
  std::string text;
  const std::string sentence = "我们研究自然语言处理和中文分词技术在搜索引擎中的应用";
  while (text.size() < 50'000'000) text += sentence;
  const auto* seg = segmenter();
  if (seg == nullptr) return state.SkipWithError("jieba data missing (make deps)");
  std::vector<std::string_view> words;
  for (auto _ : state) {
    words.clear();
    seg->segment(text, words);
    benchmark::DoNotOptimize(words.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(text.size() * state.iterations()));
}
BENCHMARK(BM_JiebaNoPunctuation50MB)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
