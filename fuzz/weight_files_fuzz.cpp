// libFuzzer harness for IDF files (--idf, `word idf` lines) and stop-word files (--stopwords),
// both loaded from the same bytes by the jieba-tfidf fingerprinter. Checks: jieba_fuzz_check.hpp.
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_weight_files_fuzz fuzz/corpus/weight_files
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "jieba_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string broken = simdup::fuzz::check_weight_files(in);
  if (!broken.empty()) {
    std::fprintf(stderr, "weight_files_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
