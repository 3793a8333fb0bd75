// libFuzzer harness for untrusted text: UTF-8 repair, HTML to text, the normaliser (several
// option sets) and the fingerprinter in every mode (default shingles, words, word n-grams,
// binary weighting, fnv1a, md5, python-simhash, jieba-tfidf) on arbitrary bytes. Each must
// return, be deterministic and keep its invariants (normalize_fuzz_check.hpp); a violation
// traps so libFuzzer saves the input.
// Build: cmake -DSIMDUP_BUILD_FUZZ=ON with clang; run: fuzz_normalize_fuzz fuzz/corpus/normalize
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "normalize_fuzz_check.hpp"

namespace {

const simdup::fuzz::normalize_checker& checker() {
  static const simdup::fuzz::normalize_checker c = [] {
    simdup::fuzz::normalize_checker made;
    std::string error;
    if (!made.init(error)) {
      std::fprintf(stderr, "normalize_fuzz: %s\n", error.c_str());
      __builtin_trap();
    }
    return made;
  }();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string broken = checker().check(text);
  if (!broken.empty()) {
    std::fprintf(stderr, "normalize_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
