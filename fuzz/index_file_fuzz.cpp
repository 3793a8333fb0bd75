// libFuzzer harness for online index files: `online_index::load` of what `save` writes, the
// format of the service's segment files too (docs/index-format.md). Checks (a corrupt file is an
// error, never a crash or a wrong answer): index_file_fuzz_check.hpp.
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_index_file_fuzz fuzz/corpus/index_file
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "index_file_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  static simdup::fuzz::mem_file file;
  const std::string broken = simdup::fuzz::check_index_file(in, file);
  if (!broken.empty()) {
    std::fprintf(stderr, "index_file_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
