// libFuzzer harness for untrusted text: UTF-8 repair, HTML to text, the normaliser (several
// option sets) and the fingerprinter in every mode (default shingles, words, word n-grams,
// binary weighting, fnv1a, md5, python-simhash, jieba-tfidf) on arbitrary bytes. Each must
// return, be deterministic and keep its invariants (normalize_fuzz_check.hpp); a violation
// traps so libFuzzer saves the input.
//
// The first byte picks one of the checks (normalize_checker::check_one), the rest is the text,
// and texts are at most 1 KiB. Running every check on every input (about fifty normaliser and
// fingerprinter passes, an OpenCC conversion, a std::string per feature, each allocation
// recording its stack under ASan) cost about 45 us per input byte: 141 runs/s, as libFuzzer
// grew inputs towards 4 KiB. One check per input, on at most 1 KiB, runs thousands per second
// and libFuzzer's coverage feedback still reaches every check through the first byte.
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_normalize_fuzz fuzz/corpus/normalize
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

// Loading the normalisers and fingerprinters (OpenCC, the whole jieba dictionary) takes seconds
// under ASan: done before the first input, so that it does not count against -timeout.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  checker();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 1025) return -1;  // -1: not added to the corpus
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string broken = checker().check_one(data[0], text);
  if (!broken.empty()) {
    std::fprintf(stderr, "normalize_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
