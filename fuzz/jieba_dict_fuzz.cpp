// libFuzzer harness for jieba.bin, the converted jieba dictionary and HMM (--jieba-dict takes
// any file). Checks: jieba_fuzz_check.hpp.
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_jieba_dict_fuzz fuzz/corpus/jieba_dict
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "jieba_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  static const simdup::fuzz::shm_dir dir;
  const std::string broken = simdup::fuzz::check_jieba_dict(in, dir);
  if (!broken.empty()) {
    std::fprintf(stderr, "jieba_dict_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
