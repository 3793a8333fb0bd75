// libFuzzer harness for the TSV and CSV reader (untrusted: exports from other teams). The first
// byte picks how the rest is fed: byte % 3 = 0 plain, 1 gzip-compressed, 2 zstd-compressed by the
// harness; (byte / 3) % 2 picks TSV (0) or CSV (1); the compressed reads must give exactly the
// plain read's records. Checks: reader_fuzz_check.hpp. Build: make fuzz; run:
// build/fuzz/fuzz/fuzz_delimited_reader_fuzz fuzz/corpus/delimited_reader
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "reader_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using simdup::input_format;
  const auto wrap = static_cast<simdup::fuzz::wrapping>(data[0] % 3);
  const input_format format = (data[0] / 3) % 2 ? input_format::csv : input_format::tsv;
  const std::string_view payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string broken = simdup::fuzz::check_reader(format, wrap, payload);
  if (!broken.empty()) {
    std::fprintf(stderr, "delimited_reader_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
