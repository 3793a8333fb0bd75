// libFuzzer harness for gzip and zstd inputs (untrusted: .jsonl.gz, .warc.gz, .zst files from
// anywhere): arbitrary bytes that start with a gzip or zstd magic are read as a compressed
// input and compared with an independent one-shot decompression (reader_fuzz_check.hpp): a
// sound stream gives the records of its decompressed bytes, a corrupt or truncated one fails
// (or, skipping failed inputs, is one bad record after the same records).
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_compressed_reader_fuzz fuzz/corpus/compressed_reader
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "reader_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string broken = simdup::fuzz::check_compressed(in);
  if (!broken.empty()) {
    std::fprintf(stderr, "compressed_reader_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
