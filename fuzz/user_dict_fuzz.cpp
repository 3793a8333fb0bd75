// libFuzzer harness for jieba user dictionaries (--user-dict: `word [freq] [tag]` lines).
// Checks: jieba_fuzz_check.hpp.
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_user_dict_fuzz fuzz/corpus/user_dict
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "jieba_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string broken = simdup::fuzz::check_user_dict(in);
  if (!broken.empty()) {
    std::fprintf(stderr, "user_dict_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
