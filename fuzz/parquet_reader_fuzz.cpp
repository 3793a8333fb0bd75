// libFuzzer harness for the Parquet reader (untrusted: files from other teams, downloads cut
// short). The first byte picks the field names (odd: text "body", id "key"); the rest is the
// file. Checks: parquet_fuzz_check.hpp. DuckDB decodes the file; the harness covers simdup's
// side (schema mapping, types, nulls, errors) and DuckDB's handling of damaged files.
// Build: make fuzz; run: build/fuzz/fuzz/fuzz_parquet_reader_fuzz fuzz/corpus/parquet_reader
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "parquet_fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string broken = simdup::fuzz::check_parquet(in);
  if (!broken.empty()) {
    std::fprintf(stderr, "parquet_reader_fuzz: %s\n", broken.c_str());
    __builtin_trap();
  }
  return 0;
}
