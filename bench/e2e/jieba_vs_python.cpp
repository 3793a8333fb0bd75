// Segmentation speed of simdup's jieba, driven by jieba_vs_python.py (which runs Python jieba on
// the same text, compares the words and prints the ratio). Standalone use:
//   bench_jieba_vs_python [--dict DIR] [--repeat N] [--words OUT] CORPUS
// CORPUS has one document per line; OUT gets each line's words joined by U+001F. Times are CPU
// time of the one segmenting thread (best of N).
#include <simdup/jieba.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "process_stats.hpp"

namespace {

using simdup::bench::seconds_since;
using simdup::bench::thread_cpu_seconds;

int usage() {
  std::cerr << "usage: bench_jieba_vs_python [--dict DIR] [--repeat N] [--words OUT] CORPUS\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  simdup::jieba_options options;
  std::string corpus_path, words_path;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dict" && i + 1 < argc)
      options.dict = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--words" && i + 1 < argc)
      words_path = argv[++i];
    else if (!arg.starts_with("-") && corpus_path.empty())
      corpus_path = arg;
    else
      return usage();
  }
  if (corpus_path.empty()) return usage();

  std::ifstream in(corpus_path, std::ios::binary);
  if (!in) {
    std::cerr << "cannot open " << corpus_path << "\n";
    return 1;
  }
  std::vector<std::string> docs;
  std::size_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    bytes += line.size();
    docs.push_back(std::move(line));
  }

  const double c_load = thread_cpu_seconds();
  auto seg = simdup::jieba_segmenter::create(options);
  const double load_s = thread_cpu_seconds() - c_load;
  if (!seg) {
    std::cerr << seg.error().message << "\n";
    return 1;
  }

  std::vector<std::string_view> words;
  double best = 1e300, best_wall = 1e300;
  std::size_t word_count = 0;
  for (int r = 0; r < repeat; ++r) {
    word_count = 0;
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    for (const std::string& d : docs) {
      words.clear();
      (*seg)->segment(d, words);
      word_count += words.size();
    }
    best = std::min(best, thread_cpu_seconds() - c0);
    best_wall = std::min(best_wall, seconds_since(t0));
  }
  std::printf("cpp_load_s %.4f\n", load_s);
  std::printf("cpp_bytes %zu\ncpp_words %zu\n", bytes, word_count);
  std::printf("cpp_segment_s %.4f\ncpp_segment_mb_s %.2f\n", best, bytes / 1e6 / best);
  std::printf("cpp_segment_wall_mb_s %.2f\n", bytes / 1e6 / best_wall);

  if (!words_path.empty()) {
    std::ofstream out(words_path, std::ios::binary);
    std::string line;
    for (const std::string& d : docs) {
      words.clear();
      (*seg)->segment(d, words);
      line.clear();
      for (std::size_t i = 0; i < words.size(); ++i) {
        if (i) line += '\x1f';
        line += words[i];
      }
      line += '\n';
      out << line;
    }
    if (!out) {
      std::cerr << "cannot write " << words_path << "\n";
      return 1;
    }
  }
  return 0;
}
